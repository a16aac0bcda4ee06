#!/usr/bin/env bash
# Installs the Debian packages sluice needs to build and test, when missing,
# and the pinned apache-arrow JavaScript package (the reference writer of
# tests/io/arrow) under out/node.
# Safe to run again: it installs nothing when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  ccache lld
  libasio-dev libprotobuf-dev protobuf-compiler libabsl-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdeflate-dev libisal-dev zlib1g-dev
  pybind11-dev python3-dev python3-pybind11 python3-numpy python3-protobuf
  python3-pytest nlohmann-json3-dev
  python3-setuptools python3-wheel python3-build python3-venv prometheus
  clang libclang-rt-14-dev
  libflatbuffers-dev flatbuffers-compiler nodejs npm
  fio chromium
  libsndfile1-dev libsoxr-dev libfftw3-dev
  libfathom-dev
  python3-torch python3-torchaudio python3-soundfile alsa-utils espeak-ng
  libtorch-dev python3-matplotlib
)

missing=()
for package in "${packages[@]}"; do
  # Some nodejs builds (NodeSource's) bundle npm and conflict with Debian's.
  if [ "$package" = npm ] && command -v npm >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "sluice setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      sudo_cmd=(sudo)
    else
      echo "sluice setup: not root and no sudo; install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    </dev/null
fi

# apache-arrow (JavaScript), pinned: tests/io/arrow/write_reference_files.mjs
# writes the Arrow IPC reference files with it.
arrow_js_version=21.2.0
arrow_js_package=out/node/node_modules/apache-arrow/package.json
if ! grep -qs "\"version\": \"$arrow_js_version\"" "$arrow_js_package"; then
  echo "sluice setup: installing apache-arrow@$arrow_js_version under out/node"
  npm install --prefix out/node --no-audit --no-fund --loglevel=error \
    "apache-arrow@$arrow_js_version"
fi
