#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build.sh — configures and builds stagd. Usage: scripts/build.sh [release|test]
#   release  build-release/: optimised, for the demo and real use
#   test     build/: warnings as errors, AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-release}
case "$mode" in
  release) dir=build-release; flags=(-DCMAKE_BUILD_TYPE=Release -DSTAGD_WERROR=ON -DSTAGD_SANITIZE=OFF) ;;
  test) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGD_WERROR=ON -DSTAGD_SANITIZE=ON) ;;
  *) echo "usage: scripts/build.sh [release|test]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "$dir"
