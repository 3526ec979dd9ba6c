#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install-deps.sh — installs every Debian package stagd needs to build, test and run.
# Idempotent and non-interactive: packages already present are not fetched again.
# Needs root (or sudo) on Debian 12.
# Usage: scripts/install-deps.sh [--build]   (--build: only what configuring, building
# and `cpack -G DEB` need; deploy/Containerfile's build stage uses it)
set -euo pipefail

BUILD_PACKAGES=(
  build-essential cmake pkg-config file   # file: cpack's dependency scan (dpkg-shlibdeps)
  libuv1-dev libgrpc-dev libprotobuf-c-dev protobuf-c-compiler libcjson-dev
  libmicrohttpd-dev libzip-dev libssl-dev help2man
  libvulkan-dev libvulkan-volk-dev glslc spirv-tools
  libopenblas-dev libopenblas0-pthread
  libcmocka-dev
  python3 protobuf-compiler   # code generators; the Python client's protobuf modules
  unicode-data   # the parser's Unicode tables (convert/unicode_gen.py)
)
PACKAGES=(
  "${BUILD_PACKAGES[@]}"
  # run: Vulkan on the CPU (Mesa lavapipe) for machines without a GPU
  mesa-vulkan-drivers vulkan-tools
  # tests and clients
  clang
  python3-grpcio python3-protobuf python3-numpy python3-pytest
  graphviz
  # installing (tests/integration/test_install.py): pip in a venv offline, the unit check
  python3-venv python3-pip python3-setuptools python3-wheel-whl systemd
  # serving (tests/integration/test_metrics.py, test_replicas.py; deploy/test.sh manifests):
  # promtool and a real Prometheus, HAProxy in front of replicas, yamllint, curl
  prometheus haproxy yamllint curl
  zsh   # stagctl's zsh completion is tested in a real zsh
  # benchmark baselines (bench/, docs/performance.md): PyTorch on the CPU
  python3-torch
  # notebooks (docs/notebook.md): kernel, nbclient for the example-notebook test, plots
  python3-ipykernel python3-jupyter-client python3-nbformat python3-nbclient
  python3-pygments python3-matplotlib
  # notebook front ends the tests drive: the classic Notebook, nbconvert's HTML export,
  # and headless Chromium screenshots of both (read with Pillow)
  jupyter-notebook python3-notebook python3-nbconvert chromium python3-pil
  # editor integration tests: Neovim's LSP client, Emacs with eglot (docs/editors.md),
  # Node for the VS Code extension
  neovim emacs-nox elpa-eglot
)
# Node.js and npm: Debian's, unless a newer one is already on the machine.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
case "${1:-}" in
  "") ;;
  --build) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  *) echo "usage: scripts/install-deps.sh [--build]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
