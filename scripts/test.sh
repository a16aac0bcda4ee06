#!/usr/bin/env bash
# Builds sluice and runs every test: the whole googletest suite in a release
# build and under ASan+UBSan, the concurrency tests under TSan, and pytest.
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

section "ASan+UBSan build"
build out/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_ASAN=ON \
  -DSLUICE_BUILD_BENCH=OFF
section "ASan+UBSan tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir out/asan --output-on-failure -j "$jobs" --timeout 900

section "TSan build (concurrency tests)"
build out/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_TSAN=ON \
  -DSLUICE_BUILD_BENCH=OFF
section "TSan tests"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir out/tsan --output-on-failure -j "$jobs" --timeout 900

section "done"
