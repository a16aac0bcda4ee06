#!/usr/bin/env bash
# Checks the pip-installable package end to end: builds the wheel from an
# existing CMake build (default out/release; its package targets must be
# built, so nothing is compiled again), installs it into a fresh virtual
# environment that sees Debian's numpy and torch, and runs pytest's smoke
# subset from a directory outside the tree, with no PYTHONPATH, against the
# installed package; then the `sluice` console script.
#
#   scripts/wheel_smoke.sh [BUILD_DIR]
#
# Leaves the wheel in out/wheel-dist and the venv in out/wheel-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=$(realpath "${1:-out/release}")
python_file=$build_dir/bindings/python/PYTHON
[ -f "$python_file" ] ||
  { echo "wheel_smoke: no Python module in $build_dir (build it first)"; exit 1; }
python=$(cat "$python_file")

rm -rf out/wheel-dist out/wheel-venv
SLUICE_CMAKE_BUILD_DIR=$build_dir "$python" -m build --wheel --no-isolation \
  --outdir out/wheel-dist . >out/wheel.build.log 2>&1 ||
  { tail -n 40 out/wheel.build.log; exit 1; }
wheel=$(ls out/wheel-dist/sluice-*.whl)
echo "wheel_smoke: built $wheel ($(du -h "$wheel" | cut -f1))"

"$python" -m venv --system-site-packages out/wheel-venv
venv=$root/out/wheel-venv
"$venv/bin/python" -m pip install --no-index --quiet "$wheel"

smoke_dir=$(mktemp -d)
trap 'rm -rf "$smoke_dir"' EXIT
cd "$smoke_dir"
export -n PYTHONPATH
export PYTHONDONTWRITEBYTECODE=1
# The package comes from the venv, not from the tree.
"$venv/bin/python" -c '
import sys, sluice
assert sluice.__file__.startswith(sys.prefix), sluice.__file__
print("wheel_smoke: sluice imported from", sluice.__file__)'
"$venv/bin/python" -m pytest -p no:cacheprovider -m smoke -q \
  "$root/tests/python"
"$venv/bin/sluice" gen loose games --games 3 >/dev/null
[ -n "$(ls games)" ] || { echo "wheel_smoke: sluice gen wrote nothing"; exit 1; }
"$venv/bin/python" -m sluice --help >/dev/null
echo "wheel_smoke: OK"
