#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs everything schedlab needs to build and test: packages from Debian's
# archive, then the HTML report's charting libraries from the npm registry
# (`npm ci` from package-lock.json, into ./node_modules). Idempotent: what is
# already present is left alone; run as root or with sudo available.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  rt-app        # the rt-app tests run its example files (/usr/share/doc/rt-app/examples)
  libzstd-dev   # trace export to .zst; results in the store are zstd-compressed
  zlib1g-dev    # trace export to .gz
  liblzma-dev   # reading .xz traces (schedlab replay)
  libtracecmd-dev libtraceevent-dev libtracefs-dev  # reading trace-cmd .dat traces (schedlab replay)
  trace-cmd     # the test that trace-cmd report reads schedlab's --trace FILE.dat
  clang-14 libclang-rt-14-dev  # make test-asan and make fuzz: their sanitizer build, libFuzzer
  lld           # CI links with it (.ci/run: -DSCHEDLAB_LINKER=lld)
  help2man      # the man page, from the CLI's help
  universal-ctags  # scripts/long-functions.sh: no function in src/ over ~150 lines
  libsqlite3-dev libssl-dev  # the results store (SQLite), its keys (SHA-256, OpenSSL's libcrypto)
  libtomlplusplus-dev        # sweep specs in TOML
  libboost-dev  # Boost.Math's headers (libboost1.74-dev): Student's t in src/analysis/stats.cc
  libopenmpi-dev openmpi-bin # distributed sweeps (mpirun -np N schedlab sweep); CI runs 3 ranks
  chromium      # the HTML report test renders the charts headless
  valgrind      # bench/cachegrind.sh: instruction and cache-miss counts that do not depend on load
)
# Node.js and npm fetch the chart libraries; a machine may already have them
# from elsewhere (e.g. NodeSource), which is fine.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The chart libraries the HTML report inlines (vega, vega-lite, vega-embed; d3 for the timeline),
# at the versions of package-lock.json; skipped when already installed from it.
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci (chart libraries for the HTML report)"
  npm ci --no-audit --no-fund --loglevel=error
fi
