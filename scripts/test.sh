#!/usr/bin/env bash
# Builds sluice and runs every test: the whole googletest suite in a release
# build and under ASan+UBSan, pytest, a 60-second soak run, the libFuzzer
# targets for a short fixed time, and the concurrency tests under TSan.
# Installs missing Debian packages first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

jobs=$(nproc)
started=$SECONDS

section() { printf '\n== %s (%ds elapsed)\n' "$1" $((SECONDS - started)); }

build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "$jobs"
}

mkdir -p out
section "release build"
build out/release -DCMAKE_BUILD_TYPE=Release
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

section "soak: the training pipeline for 60 s while files keep arriving"
out/release/bench/soak_benchmark --seconds 60 --single-pass-check

section "fuzz build (clang: libFuzzer + ASan + UBSan)"
build out/fuzz -DCMAKE_BUILD_TYPE=Release -DSLUICE_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
fuzz_seconds=${SLUICE_FUZZ_SECONDS:-30}
section "fuzzing, ${fuzz_seconds}s per target (tests/fuzz/README.md)"
mkdir -p out/fuzz/artifacts
fuzz() {
  local target=$1
  shift
  local corpus
  corpus=$(mktemp -d)
  echo "-- $target"
  "out/fuzz/tests/fuzz/$target" -max_total_time="$fuzz_seconds" \
    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix=out/fuzz/artifacts/ "$corpus" "$@" 2>&1 | tail -n 12
  local status=${PIPESTATUS[0]}
  rm -rf "$corpus"
  return "$status"
}
fuzz tar_index_fuzzer tests/data/tar
fuzz gzip_fuzzer tests/data/golden
fuzz chunk_records_fuzzer tests/fuzz/corpus/chunk_records
fuzz pipeline_config_fuzzer tests/fuzz/corpus/pipeline_config
fuzz batch_file_fuzzer tests/fuzz/corpus/batch_file
fuzz arrow_ipc_fuzzer tests/fuzz/corpus/arrow_ipc
fuzz audio_decode_fuzzer tests/fuzz/corpus/audio
fuzz rescorer_game_fuzzer tests/fuzz/corpus/rescorer_game
fuzz syzygy_table_fuzzer tests/fuzz/corpus/syzygy_table

# The sanitizer builds use -Og -g1 (line tables only): GCC compiles the
# coroutine-heavy sources under ASan+UBSan about twice as fast as at -O2 -g,
# and the reports still name file and line.
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG"
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DSLUICE_BUILD_BENCH=OFF)

section "ASan+UBSan build"
build out/asan "${sanitizer_flags[@]}" -DSLUICE_ASAN=ON
section "ASan+UBSan tests"
# alloc_dealloc_mismatch=0: asio 1.22 frees its thread-local recycled
# frames (made by aligned_alloc) with operator delete.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:alloc_dealloc_mismatch=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir out/asan --output-on-failure -j "$jobs" --timeout 900

section "TSan build (concurrency tests)"
build out/tsan "${sanitizer_flags[@]}" -DSLUICE_TSAN=ON
section "TSan tests"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir out/tsan --output-on-failure -j "$jobs" --timeout 900

section "done"
