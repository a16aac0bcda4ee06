#!/usr/bin/env bash
# Runs the installed-package example trainer (examples/cpp_trainer) on
# generated data, in deterministic mode with fixed seeds and tiny models.
#
#   cpp_trainer_test.sh CASE TRAINER WORKLOAD DATA_DIR WORK_DIR
#   cpp_trainer_test.sh gen SLUICE_CLI - DATA_DIR -
#
# Cases:
#   gen      writes the data: DATA_DIR/lc0 (40 games in tars) and
#            DATA_DIR/audio (160 clips of 4 classes)
#   learns   the mean loss of the last 5 steps is below that of the first 5
#   resume   N steps straight, against k steps + a checkpoint + a resumed
#            run to N: steps k+1..N have the same losses, digit for digit
#   sigint   SIGINT mid-run exits 0 with a checkpoint; resuming from it
#            gives the losses of the uninterrupted run
#   flags    bad flags and a foreign checkpoint give clear errors (exit 2)
set -euo pipefail
case_name=$1 trainer=$2 workload=$3 data=$4 work=$5
if [ "$case_name" = gen ]; then
  rm -rf "$data"
  "$trainer" gen tar "$data/lc0" --games 40 --seed 3
  "$trainer" gen audio "$data/audio" --clips 160 --classes 4 --seed 3
  exit 0
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# The same tiny setup in every run of a workload.
common=(--workload "$workload" --data "$data" --deterministic --seed 7
  --loader-threads 1 --torch-threads 1 --log-every 1000)
if [ "$workload" = lc0 ]; then
  common+=(--blocks 1 --filters 8 --batch-size 32 --shuffle-buffer 2000
    --lr 0.005)
  loss_columns=5  # step, loss, loss_policy, loss_value, loss_moves_left
else
  common+=(--channels 4 --batch-size 16 --shuffle-buffer 100 --lr 0.005)
  loss_columns=2  # step, loss
fi

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The step and loss columns of a report's training rows from step $2 on.
losses_from() {
  awk -F, -v from="$2" -v n="$loss_columns" '
    NR > 1 && $2 != "" && $1 >= from {
      line = $1; for (i = 2; i <= n; ++i) line = line "," $i; print line }' "$1"
}

# Training rows in a report.
rows() { awk -F, 'NR > 1 && $2 != ""' "$1" | wc -l; }

train() {
  "$trainer" "${common[@]}" "$@"
}

case $case_name in
learns)
  train --steps 40 --report run.csv | tee run.log
  [ "$(rows run.csv)" -eq 40 ] || fail "expected 40 report rows"
  awk -F, 'NR > 1 && $2 != "" { loss[++n] = $2 }
    END {
      for (i = 1; i <= 5; ++i) { first += loss[i]; last += loss[n - 5 + i] }
      printf "mean loss: first 5 steps %.4f, last 5 steps %.4f\n",
        first / 5, last / 5
      exit !(last < first) }' run.csv || fail "the loss did not go down"
  ;;
resume)
  train --steps 24 --report straight.csv >straight.log
  train --steps 10 --checkpoint run.ckpt --report first.csv >first.log
  [ -f run.ckpt ] || fail "no checkpoint written"
  train --steps 24 --resume run.ckpt --report resumed.csv | tee resumed.log
  grep -q "resumed from run.ckpt after step 10" resumed.log ||
    fail "the run did not resume after step 10"
  diff <(losses_from straight.csv 11) <(losses_from resumed.csv 1) ||
    fail "the resumed run's losses differ from the uninterrupted run's"
  [ "$(rows resumed.csv)" -eq 14 ] || fail "expected steps 11..24"
  echo "steps 11..24 match the uninterrupted run"
  ;;
sigint)
  # The trainer itself in the background (not the train function, whose
  # subshell would get the signal and ignore it).
  "$trainer" "${common[@]}" --steps 1000000 --checkpoint run.ckpt \
    --report interrupted.csv >interrupted.log 2>&1 &
  pid=$!
  # Interrupt once a few steps are done (a condition with a generous
  # deadline, not a fixed sleep).
  for _ in $(seq 1200); do
    if [ -f interrupted.csv ] && [ "$(rows interrupted.csv)" -ge 3 ]; then
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  cat interrupted.log
  [ "$status" -eq 0 ] || fail "exit status $status after SIGINT, not 0"
  [ -f run.ckpt ] || fail "no checkpoint after SIGINT"
  stopped=$(sed -n 's/^stopped after step \([0-9]*\).*/\1/p' interrupted.log)
  [ -n "$stopped" ] || fail "no 'stopped after step' line"
  [ "$(rows interrupted.csv)" -eq "$stopped" ] ||
    fail "the report has $(rows interrupted.csv) steps, not $stopped"
  grep -q "checkpoint after step $stopped:" interrupted.log ||
    fail "the checkpoint is not of step $stopped"
  total=$((stopped + 4))
  train --steps "$total" --report straight.csv >straight.log
  train --steps "$total" --resume run.ckpt --report resumed.csv >resumed.log
  diff <(losses_from straight.csv $((stopped + 1))) \
    <(losses_from resumed.csv 1) ||
    fail "the run resumed after SIGINT differs from the uninterrupted one"
  echo "stopped cleanly after step $stopped; resumed steps match"
  ;;
flags)
  expect_error() {
    local pattern=$1
    shift
    local status=0
    "$trainer" "$@" >out.log 2>err.log || status=$?
    [ "$status" -eq 2 ] || fail "'$*' exited $status, not 2"
    grep -q -- "$pattern" err.log ||
      fail "'$*' said '$(cat err.log)', not '$pattern'"
    echo "ok: $* -> $(cat err.log)"
  }
  expect_error "--data DIR is required" --workload "$workload"
  expect_error "--workload: must be lc0 or audio, not 'chess'" \
    --workload chess --data "$data"
  expect_error "--steps: 'ten' is not a number" \
    --workload "$workload" --data "$data" --steps ten
  expect_error "--batch-size: must be at least 1, not 0" \
    --workload "$workload" --data "$data" --batch-size 0
  expect_error "unknown flag --bogus" --workload "$workload" --data "$data" \
    --bogus 1
  expect_error "--checkpoint-every needs --checkpoint FILE" \
    --workload "$workload" --data "$data" --checkpoint-every 5
  expect_error "no checkpoint at missing.ckpt" "${common[@]}" \
    --resume missing.ckpt
  # A checkpoint of one model does not load into another.
  train --steps 2 --checkpoint small.ckpt >small.log
  if [ "$workload" = lc0 ]; then other=(--filters 16); else other=(--channels 8); fi
  expect_error "use the same flags" "${common[@]}" "${other[@]}" \
    --resume small.ckpt --steps 4
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
