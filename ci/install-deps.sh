#!/usr/bin/env bash
# Installs every Debian package heapscope needs to build, test, benchmark and publish.
# Idempotent and quick when everything is present: apt is only touched for missing packages.
set -euo pipefail

packages=(
  # toolchain and build
  build-essential cmake ninja-build pkg-config git binutils clang-14 clang-format clang-tidy
  libclang-rt-14-dev libfuzzer-14-dev
  # libraries
  googletest libgtest-dev libgmock-dev libbenchmark-dev libboost-math-dev nlohmann-json3-dev
  libcli11-dev libssl-dev zlib1g-dev libvalijson-dev
  # peer allocators
  libmimalloc2.0 libjemalloc2 libtcmalloc-minimal4 libgoogle-perftools4 google-perftools
  # profile readers, schema checks, scheduling, browser checks
  golang-go python3 python3-jsonschema parallel chromium procps
  # the Rust crate (rust/: built offline from Debian's packaged crates) and the .deb checks
  cargo rustc librust-cc-dev lintian dpkg-dev debootstrap
  # man pages of the tools, generated from their --help at build time
  help2man
  # the engine cross-built for 64-bit Arm Linux and tested under user-mode emulation
  # (ci/cross-test.sh arm64; GoogleTest compiled from the googletest sources above)
  g++-aarch64-linux-gnu qemu-user
  # the engine cross-built for Windows with MinGW-w64 (POSIX threads flavour) and tested under
  # Wine (ci/cross-test.sh windows; `wine` holds the wine, wineboot and wineserver commands, only
  # recommended by wine64)
  g++-mingw-w64-x86-64-posix wine wine64
  # the programs of `hsbench suite debian` (harness/suites/debian/)
  lua5.4 z3 ghostscript sqlite3 rocksdb-tools redis-server redis-tools
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
