#!/usr/bin/env bash
# Builds sluice and runs every test: the whole googletest suite in a release
# build and under ASan+UBSan, pytest, the installed wheel's smoke tests, a
# 60-second soak run, the libFuzzer targets (built with the ASan+UBSan suite)
# for a short fixed time each, and the concurrency tests under TSan.
# Installs missing Debian packages first (scripts/setup.sh). Prints each
# section's time at the end, also when a section fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

jobs=$(nproc)
started=$SECONDS
section_names=()
section_starts=()

section() {
  section_names+=("$1")
  section_starts+=("$SECONDS")
  printf '\n== %s (%ds elapsed)\n' "$1" $((SECONDS - started))
}

print_times() {
  local status=$1
  local count=${#section_names[@]} i end
  [ "$count" -gt 0 ] || return 0
  printf '\n== section times\n'
  for ((i = 0; i < count; i++)); do
    if ((i + 1 < count)); then end=${section_starts[i + 1]}; else end=$SECONDS; fi
    printf '%6ds  %s\n' $((end - section_starts[i])) "${section_names[i]}"
  done
  printf '%6ds  total%s\n' $((SECONDS - started)) \
    "$([ "$status" -eq 0 ] || echo " (failed in the last section)")"
}
# On exit: a background build still running is stopped, then the times.
tsan_build=
on_exit() {
  local status=$?
  [ -z "$tsan_build" ] || kill -- "-$tsan_build" 2>/dev/null || true
  print_times "$status"
}
trap on_exit EXIT

configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
}
build() {
  configure "$@"
  cmake --build "$1" -j "$jobs"
}

mkdir -p out
# The sanitizer builds use -Og -g1 (line tables only): the coroutine-heavy
# sources compile about twice as fast as at -O2 -g under the sanitizers, and
# the reports still name file and line. The ASan+UBSan build is clang's so
# that it also holds the libFuzzer targets: one build for both. Its test
# binaries are compiled at -O0, which halves clang's time on them; the
# libraries they test keep -Og (GCC's TSan build gains nothing from it).
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG"
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DSLUICE_BUILD_BENCH=OFF)

section "release build"
# The test binaries at -O1 (the libraries keep -O3): a third less compile
# time for the tests' own code, which does little work itself.
build out/release -DCMAKE_BUILD_TYPE=Release -DSLUICE_TEST_COMPILE_OPTIONS=-O1
# The TSan build starts now in the background at the lowest CPU priority: it
# takes the CPU that the release tests, pytest, the wheel and the soak leave
# idle, and what is left of it runs in the TSan section. It builds the test
# binaries alone (target sluice_tests): the concurrency suite needs no
# command-line tool or Python module.
configure out/tsan "${sanitizer_flags[@]}" -DSLUICE_TSAN=ON
# setsid gives the build its own session, so that the exit trap can stop it
# whole. Where the kernel groups sessions for scheduling (autogroup), the
# group's own nice level is what yields the CPU to the tests; the build sets
# it from inside its new session before it starts (set from outside, it
# could land before setsid and lower the tests' own group instead).
setsid -w sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec "$@"' \
  tsan-build nice -n 19 cmake --build out/tsan -j "$jobs" \
  --target sluice_tests >out/tsan.build.log 2>&1 &
tsan_build=$!

section "release tests"
ctest --test-dir out/release --output-on-failure -j "$jobs" --timeout 600
section "Python tests (pytest)"
# The build writes the interpreter it built the module for (the one with
# numpy) to bindings/python/PYTHON. pytest's non-zero exits, 5 (no tests
# collected) included, fail the run.
python_dir=out/release/bindings/python
[ -f "$python_dir/PYTHON" ] ||
  { echo "the Python module was not built (see out/release.configure.log)"; exit 1; }
PYTHONPATH="$python_dir" PYTHONDONTWRITEBYTECODE=1 \
  "$(cat "$python_dir/PYTHON")" -m pytest -p no:cacheprovider tests/python -q

section "Python wheel: build, install into a fresh venv, smoke tests"
scripts/wheel_smoke.sh out/release

section "soak: the training pipeline for 60 s while files keep arriving"
out/release/bench/soak_benchmark --seconds 60 --single-pass-check

section "ASan+UBSan build with the libFuzzer targets (clang)"
build out/asan "${sanitizer_flags[@]}" -DSLUICE_ASAN=ON -DSLUICE_FUZZ=ON \
  -DSLUICE_TEST_COMPILE_OPTIONS=-O0 \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
section "ASan+UBSan tests"
# alloc_dealloc_mismatch=0: asio 1.22 frees its thread-local recycled
# frames (made by aligned_alloc) with operator delete.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:alloc_dealloc_mismatch=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir out/asan --output-on-failure -j "$jobs" --timeout 900

fuzz_seconds=${SLUICE_FUZZ_SECONDS:-10}
section "fuzzing, ${fuzz_seconds}s per target, $jobs at once (tests/fuzz/README.md)"
mkdir -p out/asan/fuzz-artifacts
# target seed-directory...
fuzz_targets=(
  "tar_index_fuzzer tests/data/tar"
  "gzip_fuzzer tests/data/golden"
  "chunk_records_fuzzer tests/fuzz/corpus/chunk_records"
  "pipeline_config_fuzzer tests/fuzz/corpus/pipeline_config"
  "batch_file_fuzzer tests/fuzz/corpus/batch_file"
  "arrow_ipc_fuzzer tests/fuzz/corpus/arrow_ipc"
  "audio_decode_fuzzer tests/fuzz/corpus/audio"
  "rescorer_game_fuzzer tests/fuzz/corpus/rescorer_game"
  "syzygy_table_fuzzer tests/fuzz/corpus/syzygy_table"
)
# Runs one target into its own log; its exit status is the fuzzer's.
fuzz() {
  local target=$1
  shift
  local corpus status=0
  corpus=$(mktemp -d)
  "out/asan/tests/fuzz/$target" -max_total_time="$fuzz_seconds" \
    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="out/asan/fuzz-artifacts/$target-" "$corpus" "$@" \
    >"out/asan/fuzz-$target.log" 2>&1 || status=$?
  rm -rf "$corpus"
  return "$status"
}
fuzz_failed=0
for ((first = 0; first < ${#fuzz_targets[@]}; first += jobs)); do
  pids=()
  names=()
  for ((i = first; i < first + jobs && i < ${#fuzz_targets[@]}; i++)); do
    read -r -a entry <<<"${fuzz_targets[i]}"
    fuzz "${entry[@]}" &
    pids+=($!)
    names+=("${entry[0]}")
  done
  for ((i = 0; i < ${#pids[@]}; i++)); do
    status=0
    wait "${pids[i]}" || status=$?
    echo "-- ${names[i]} (exit $status)"
    tail -n 12 "out/asan/fuzz-${names[i]}.log"
    [ "$status" -eq 0 ] || fuzz_failed=1
  done
done
[ "$fuzz_failed" -eq 0 ] || { echo "a fuzz target failed (out/asan/fuzz-artifacts/)"; exit 1; }

section "TSan build (concurrency tests): the rest of the background build"
wait "$tsan_build" || { tail -n 60 out/tsan.build.log; exit 1; }
tsan_build=
section "TSan tests"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir out/tsan --output-on-failure -j "$jobs" --timeout 900
