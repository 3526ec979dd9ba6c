#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu-run.sh — run THERE, on a lent GPU machine, as the device tool's command (with
# carry [".gpu"], made here by scripts/gpu-bundle.sh): issue #6's figures in one call.
#   1. puts the Vulkan loader in place if the machine has none (the bundled .debs) and
#      points the loader at NVIDIA's ICD when no driver file in the usual places names it;
#   2. bench/vulkan/torch_compare.py: every stagd matmul variant on float32 and float16
#      squares 256..4096 and a staged MLP forward (4096 x 4096->4096->4096->10) beside
#      torch.matmul / the same MLP on CUDA (TF32 off);
#   3. the Vulkan kernel tests (device, kernels, cast, matmul: the coop variant against
#      the CPU, run twice: STAGD_VK_COOP=khr for matmul_coop_khr, the build-time KHR
#      rewrite, and STAGD_VK_COOP=nv for matmul_coop), each capped at 60 s, skipped once
#      the run is past 7 minutes;
#   4. writes $OUT/gpu.md (the markdown tables), $OUT/gpu.log (raw bench output, written
#      as it comes), $OUT/tests.txt (the tests' output) and $OUT/env.txt (nvidia-smi,
#      loader, library resolution).
# Takes about 2-4 minutes on an H100 (an estimate; torch_compare.py kills each of its two
# bench runs after 240 s, keeping the figures so far).
# Usage: bash scripts/gpu-run.sh [torch_compare.py options, e.g. --quick]
# Without $OUT (a hand run) the results go to ./gpu-out/.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/sbin:/sbin
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
bench=.gpu/bin/bench_vulkan
if [ ! -x "$bench" ]; then
  echo "gpu-run.sh: no $bench: run scripts/gpu-bundle.sh first and carry .gpu"
  exit 1
fi

# The loader (as /work/.library/device/README.md says): only where there is none, and
# only as root (the lent machines run commands as root).
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  if [ "$(id -u)" = 0 ] && command -v dpkg >/dev/null && ls .gpu/debs/*.deb >/dev/null 2>&1; then
    echo "== no libvulkan on this machine: unpacking the bundled loader .debs"
    for f in .gpu/debs/*.deb; do dpkg -x "$f" /; done
    ldconfig
  else
    echo "== no libvulkan on this machine, and no way to unpack .gpu/debs (root, dpkg)"
  fi
fi
# NVIDIA's ICD file sits outside the loader's search path on the lent machines.
nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nv_listed=0
for d in /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
  grep -qil nvidia "$d"/*.json 2>/dev/null && nv_listed=1
done
if [ "$nv_listed" = 0 ] && [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nv_icd" ]; then
  export VK_DRIVER_FILES=$nv_icd
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  echo "== VK_DRIVER_FILES=$VK_DRIVER_FILES"
fi

{
  echo "# gpu-run.sh environment, $(date -u)"
  nvidia-smi 2>&1 | head -20
  echo; echo "ldconfig: $(ldconfig -p | grep libvulkan)"
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
  echo; echo "ldd bench:"; LD_LIBRARY_PATH=.gpu/lib ldd .gpu/libexec/bench_vulkan
  echo; python3 -c 'import sys, torch; print(sys.version)
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' 2>&1
} > "$out/env.txt" 2>&1
nvidia-smi -L 2>&1 | head -2

python3 bench/vulkan/torch_compare.py "$bench" --out "$out/gpu.md" "$@"
rc=$?

echo "== Vulkan kernel tests (output in $out/tests.txt)"
export STAGD_VK_TEST_NO_LAVAPIPE=1 # the lent machines' loader lists the NVIDIA driver alone
: > "$out/tests.txt"
# name[:flavour]: the matmul test once per cooperative-matrix flavour (STAGD_VK_COOP)
for run in device cast matmul:khr matmul:nv kernels; do
  t=${run%%:*} coop=${run#"$t"}; coop=${coop#:}
  if [ "$SECONDS" -gt 420 ]; then
    echo "test_vulkan_$t${coop:+ (STAGD_VK_COOP=$coop)}: skipped (the run is at ${SECONDS} s)" |
      tee -a "$out/tests.txt"
    continue
  fi
  echo "== test_vulkan_$t${coop:+ STAGD_VK_COOP=$coop}" >> "$out/tests.txt"
  STAGD_VK_COOP=$coop timeout 60 ".gpu/bin/test_vulkan_$t" >> "$out/tests.txt" 2>&1
  trc=$?
  echo "test_vulkan_$t${coop:+ (STAGD_VK_COOP=$coop)}: exit $trc; so far" \
    "$(grep -c '^\[       OK' "$out/tests.txt") OK," \
    "$(grep -c '^\[  FAILED' "$out/tests.txt") FAILED" | tee -a "$out/tests.txt"
  [ "$trc" = 0 ] || rc=1
done
echo "== gpu-run.sh: exit $rc after ${SECONDS} s; in $out: gpu.md gpu.log tests.txt env.txt"
exit $rc
