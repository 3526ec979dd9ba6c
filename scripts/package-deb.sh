#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# package-deb.sh — builds the Debian package: a release build installed under /usr
# (build-deb/), the VS Code extension's .vsix when npm is there, then `cpack -G DEB`.
# Prints the path of the .deb (build-deb/stagd_VERSION_ARCH.deb). docs/deploy.md "Install".
# Usage: scripts/package-deb.sh [--no-vsix]
set -euo pipefail
cd "$(dirname "$0")/.."
vsix=1
for a in "$@"; do
  case "$a" in
    --no-vsix) vsix=0 ;;
    *) echo "usage: scripts/package-deb.sh [--no-vsix]" >&2; exit 2 ;;
  esac
done
cmake -S . -B build-deb -DCMAKE_BUILD_TYPE=Release -DSTAGD_WERROR=ON -DSTAGD_SANITIZE=OFF \
  -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build-deb -j"$(nproc)" >/dev/null
if [ "$vsix" = 1 ] && command -v npm >/dev/null; then
  cmake --build build-deb --target vsix >/dev/null
fi
(cd build-deb && cpack -G DEB >/dev/null)
ls -1 build-deb/stagd_*.deb | tail -1
