#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu-bundle.sh — run HERE (the build machine), before a session's GPU run: builds
# build-release and gathers into .gpu/ (ignored by git) everything scripts/gpu-run.sh
# needs on a lent GPU machine, which has PyTorch and CUDA but none of our Debian
# packages and no network (docs/performance.md "Running the GPU figures"):
#   .gpu/bin/NAME            wrappers: run libexec/NAME with LD_LIBRARY_PATH=lib
#   .gpu/libexec/            the release binaries: bench_vulkan, and the Vulkan kernel
#                            tests (device, kernels, cast, matmul: coop checked on a GPU)
#   .gpu/lib/                every shared library they link, less glibc and the C/C++
#                            runtime (libstdc++, libgcc_s: the GPU driver loads into the
#                            same process and needs the machine's own, newer ones)
#   .gpu/debs/               the Vulkan loader and GL dispatch .debs (amd64), unpacked
#                            there by gpu-run.sh when the machine has no libvulkan
# Then a `run` with carry [".gpu"] and command `bash scripts/gpu-run.sh` gets every figure.
# Usage: scripts/gpu-bundle.sh [--no-build] [--no-debs]
set -euo pipefail
cd "$(dirname "$0")/.."
build=1 debs=1
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    --no-debs) debs=0 ;;
    *) echo "usage: scripts/gpu-bundle.sh [--no-build] [--no-debs]" >&2; exit 2 ;;
  esac
done
[ "$build" = 1 ] && bash scripts/build.sh release >/dev/null
bins=(build-release/bench/vulkan/bench_vulkan)
for t in device kernels cast matmul; do
  bins+=("build-release/tests/kernels/vulkan/test_vulkan_$t")
done
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "gpu-bundle.sh: $b not built (Vulkan support off?)" >&2; exit 1; }
done

keep_debs=
if [ "$debs" = 0 ] && [ -d .gpu/debs ]; then
  keep_debs=$(mktemp -d) && mv .gpu/debs "$keep_debs/"
fi
rm -rf .gpu
mkdir -p .gpu/bin .gpu/libexec .gpu/lib
[ -n "$keep_debs" ] && mv "$keep_debs/debs" .gpu/ && rmdir "$keep_debs"
for b in "${bins[@]}"; do
  name=$(basename "$b")
  cp "$b" ".gpu/libexec/$name"
  strip --strip-debug ".gpu/libexec/$name"
  if ldd "$b" | grep -q 'not found'; then
    echo "gpu-bundle.sh: unresolved libraries of $b:" >&2; ldd "$b" | grep 'not found' >&2; exit 1
  fi
  # Every resolved dependency except the glibc family and the compiler runtime.
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
      libstdc++.so.*|libgcc_s.so.*) ;;
      *) cp -L "$lib" .gpu/lib/ ;;
    esac
  done
  cat > ".gpu/bin/$name" <<'EOF'
#!/bin/sh
# From scripts/gpu-bundle.sh: runs ../libexec/<this name> with the bundled libraries first.
here=$(cd "${0%/*}/.." && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$here/libexec/${0##*/}" "$@"
EOF
  chmod +x ".gpu/bin/$name"
done

# The Vulkan loader and what NVIDIA's ICD loads beside it, as amd64 .debs
# (/work/.library/device/README.md): fetched with this machine's apt into a private list.
if [ "$debs" = 1 ]; then
  mkdir -p .gpu/debs /tmp/amd64/partial
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
  apt-get "${o[@]}" update >/dev/null
  (cd .gpu/debs && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 \
    libglx0 libgles2 2>&1 | grep '^E:' >&2 || true)
fi
ls .gpu/debs/*.deb >/dev/null 2>&1 || echo "gpu-bundle.sh: warning: no .debs in .gpu/debs" >&2
echo "bundle: $(du -sh .gpu | cut -f1) in .gpu ($(ls .gpu/lib | wc -l) libraries," \
  "$(ls .gpu/debs 2>/dev/null | wc -l) debs)"
