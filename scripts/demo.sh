#!/usr/bin/env bash
# Installs missing Debian packages, builds sluice (release) and runs the demo:
# a generated lc0 data set, the default training pipeline, live throughput.
# Extra arguments go to `sluice demo` (e.g. --seconds 30, --data DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p out
cmake -S . -B out/release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  >out/release.configure.log 2>&1 || { cat out/release.configure.log; exit 1; }
cmake --build out/release -j "$(nproc)" --target sluice
exec out/release/bindings/cli/sluice demo "$@"
