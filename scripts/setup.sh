#!/usr/bin/env bash
# Installs the Debian packages sluice needs to build and test, when missing.
# Safe to run again: it installs nothing when everything is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libasio-dev libprotobuf-dev protobuf-compiler libabsl-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdeflate-dev libisal-dev zlib1g-dev
  pybind11-dev python3-dev python3-pybind11 python3-numpy python3-protobuf
  python3-pytest nlohmann-json3-dev
  clang libclang-rt-14-dev
  fio
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

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
