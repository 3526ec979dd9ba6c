#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_torch_compare.py — ctest bench.vulkan.torch_compare: torch_compare.py --quick end
to end against a real bench_vulkan (lavapipe here) with PyTorch absent; on canned bench
output, with a stand-in `torch` module that has "CUDA" (NumPy underneath, so the cuBLAS
columns and ratios are filled the way a GPU run fills them), one failing half way, and
without CUDA; a bench past --timeout; the bench's argument errors; a
failing bench and an MLP result off the CPU backend's; the goal line at n = 4096.
Usage: test_torch_compare.py PATH/TO/bench_vulkan   (under 30 s)
"""
import os
import re
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "torch_compare.py")

# A stand-in for PyTorch with CUDA: the calls torch_compare.py makes, on NumPy.
FAKE_TORCH = textwrap.dedent('''
    import time
    import numpy as np
    __version__ = "0.0-fake"
    HAS_CUDA = True
    class _NS: pass
    version = _NS(); version.cuda = "0.0"
    backends = _NS(); backends.cuda = _NS(); backends.cuda.matmul = _NS(); backends.cudnn = _NS()
    backends.cuda.matmul.allow_tf32 = True
    backends.cudnn.allow_tf32 = True
    float32, float16 = np.float32, np.float16
    class Tensor(np.ndarray):
        def cuda(self):
            assert not backends.cuda.matmul.allow_tf32, "TF32 left on"
            return self
        def cpu(self):
            return self
    def _t(a):
        return np.asarray(a).view(Tensor)
    class Generator:
        def manual_seed(self, s):
            self.rng = np.random.default_rng(s)
            return self
    def rand(*shape, device="cpu", dtype=np.float32, generator=None):
        rng = generator.rng if generator else np.random.default_rng(1)
        return _t(rng.random(shape).astype(dtype))
    def matmul(a, b):
        return _t(np.asarray(a) @ np.asarray(b))
    def relu(x):
        return _t(np.maximum(x, 0))
    def abs(x):
        return _t(np.abs(x))
    def sqrt(x):
        return _t(np.sqrt(x))
    def tanh(x):
        return _t(np.tanh(x))
    def neg(x):
        return _t(-np.asarray(x))
    def softmax(x, dim):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return _t(e / e.sum(axis=dim, keepdims=True))
    class _Event:
        def __init__(self, enable_timing=False):
            self.t = None
        def record(self):
            self.t = time.perf_counter()
        def synchronize(self):
            pass
        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3
    class _Props:
        name, multi_processor_count, total_memory = "Fake GPU", 7, 3 << 30
    cuda = _NS()
    cuda.is_available = lambda: HAS_CUDA
    cuda.get_device_properties = lambda i: _Props()
    cuda.synchronize = lambda: None
    cuda.Event = _Event
''')


def run(args, pythonpath=None):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True,
                          env=env, timeout=120)


def table_rows(md, heading):
    part = md.split(heading, 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("| ") and
            not line.startswith("| ---") and not line.startswith("| device") and
            not line.startswith("| where")]


def check(cond, what, detail=""):
    if not cond:
        print("FAIL: %s\n%s" % (what, detail))
        sys.exit(1)
    print("ok: %s" % what)


def main():
    bench = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="torch_compare_")
    no_torch = os.path.join(tmp, "no_torch")
    os.makedirs(os.path.join(no_torch, "torch"))
    with open(os.path.join(no_torch, "torch", "__init__.py"), "w") as f:
        f.write('raise ImportError("stub: no torch here")\n')
    fake = os.path.join(tmp, "fake")
    os.makedirs(os.path.join(fake, "torch"))
    with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
        f.write(FAKE_TORCH)
    broken = os.path.join(tmp, "broken")
    os.makedirs(os.path.join(broken, "torch"))
    with open(os.path.join(broken, "torch", "__init__.py"), "w") as f:
        f.write(FAKE_TORCH + "def matmul(a, b):\n    raise RuntimeError('CUDA out of memory')\n")
    nocuda = os.path.join(tmp, "nocuda")
    os.makedirs(os.path.join(nocuda, "torch"))
    with open(os.path.join(nocuda, "torch", "__init__.py"), "w") as f:
        f.write(FAKE_TORCH.replace("HAS_CUDA = True", "HAS_CUDA = False"))

    # 1. No PyTorch: the stagd rows alone, exit 0, the markdown and log written.
    out = os.path.join(tmp, "a.md")
    p = run([bench, "--quick", "--out", out], no_torch)
    check(p.returncode == 0, "no torch: exit 0", p.stdout + p.stderr)
    md = open(out).read()
    check("PyTorch is not installed (stub: no torch here)" in md, "no torch: says why", md)
    rows = table_rows(md, "## Matmul")
    check(len(rows) == 4, "no torch: a matmul row per dtype and quick size", md)
    for dt, n in (("float32", 64), ("float32", 128), ("float16", 64), ("float16", 128)):
        row = next((r for r in rows if "| %s | %d |" % (dt, n) in r), "")
        check(re.search(r"\| [\d.]+ \(tiled\) \| [\d.]+ \| [\d.]+ \|", row)
              and row.endswith("| — | — | — |"),
              "no torch: %s %d has stagd GFLOPS, no cuBLAS" % (dt, n), row)
    mlp = table_rows(md, "## Staged MLP")
    check([r.split(" | ")[0] for r in mlp] == ["| cpu", "| vulkan:0 resident", "| vulkan:0 host",
                                                "| vulkan:0 resident, STAGD_FUSE=0",
                                                "| vulkan:0 host, STAGD_FUSE=0"],
          "no torch: MLP rows cpu, resident, host, and the device's again without epilogues", md)
    for r in mlp[1:]:
        err = float(r.split(" | ")[3])
        check(err < 1e-5, "no torch: %s within 1e-5 of the CPU backend" % r.split(" | ")[0], r)
    fused = table_rows(md, "## Fused elementwise chain")
    check([r.split(" | ")[1] for r in fused] == ["tanh (11 ops)", "arith (11 ops)"],
          "no torch: a fused-chain row per chain", md)
    check("from op by op" not in md, "no torch: the fused chains have the bits of op by op", md)
    log = open(os.path.join(tmp, "a.log")).read()
    check("mmv float32 128x128x128" in log and "mlp 32x64x64x10" in log and "--fused-chain" in log
          and "STAGD_FUSE=0 " in log, "log holds raw lines")

    # Bench output as the real one prints it (the cases below test the Python side).
    canned = os.path.join(tmp, "canned_bench")
    with open(canned, "w") as f:
        f.write("#!/bin/sh\ncase \"$*\" in *--mlp*) cat <<'X'\n"
                "mlp 32x64x64x10  cpu  0.1 ms  3.0 GFLOPS\n"
                "mlp 32x64x64x10  vulkan:0 resident  2.0 ms  0.15 GFLOPS  (rel err 1.0e-07 vs "
                "CPU backend)\nmlp 32x64x64x10  vulkan:0 host  3.0 ms  0.10 GFLOPS  (rel err "
                "1.0e-07 vs CPU backend)\nX\n;; *--fused-chain*) echo 'tanh chain (11 ops) f32 "
                "n=1024 vulkan:0  fused    2.000 ms (4.10 GB/s, 80% of one-op), op by op   "
                "9.000 ms (11 dispatches): fused 4.50x; bits equal';; *) echo '# vulkan:0  Canned GPU'\n"
                "for dt in float32 float16; do for n in 64 128; do\n"
                "echo \"mmv $dt ${n}x${n}x${n}  vulkan:0 auto=tiled  1.50 GFLOPS\"; done; done;; esac\n")
    os.chmod(canned, 0o755)

    # 2. A "CUDA" PyTorch: every row gets its baseline and ratio.
    p = run([canned, "--quick", "--out", out], fake)
    check(p.returncode == 0, "fake torch: exit 0", p.stdout + p.stderr)
    md = open(out).read()
    check("Fake GPU (7 SMs, 3 GiB; PyTorch 0.0-fake, CUDA 0.0)" in md, "fake torch: GPU named", md)
    for r in table_rows(md, "## Matmul"):
        cells = r.strip("|").split(" | ")
        auto, ref, ratio = float(cells[3].split()[0]), float(cells[-3]), float(cells[-2])
        check(ref > 0 and abs(ratio - auto / ref) <= 0.0005 + 0.02 * ratio,
              "fake torch: x cuBLAS = auto / cuBLAS (%s)" % cells[1:3], r)
    for r in table_rows(md, "## Staged MLP")[1:]:
        cells = r.strip("|").split(" | ")
        check(float(cells[-2]) > 0 and float(cells[-1]) > 0,
              "fake torch: MLP %s ratio" % cells[0], r)
    check("Goal" not in md, "no goal line without n = 4096")
    chain = table_rows(md, "## Fused elementwise chain")
    cells = chain[0].strip("|").split(" | ") if chain else []
    check(len(chain) == 1 and cells[3] == "2.000" and cells[5] == "80%" and float(cells[-2]) > 0
          and float(cells[-1].rstrip("x")) > 0, "fake torch: the chain gets PyTorch's time and ratio", md)

    # 2b. PyTorch failing half way: the stagd figures stay, the failure is named, exit 1.
    p = run([canned, "--quick", "--out", out], broken)
    md = open(out).read()
    check(p.returncode == 1 and "PyTorch run failed: RuntimeError: CUDA out of memory" in md
          and len(table_rows(md, "## Matmul")) == 4, "torch failing: stagd rows kept", md)

    # 3. PyTorch without CUDA: says so, exit 0.
    p = run([canned, "--quick", "--out", out], nocuda)
    check(p.returncode == 0 and "sees no CUDA device" in open(out).read(), "no CUDA: says so",
          p.stdout + p.stderr)

    # 4. Failures: a bench that cannot run, a bench that fails, an MLP off the CPU backend.
    p = run([os.path.join(tmp, "missing"), "--quick", "--out", out], no_torch)
    check(p.returncode == 1 and "cannot run" in open(out).read(),
          "missing bench: exit 1, says so", p.stdout + p.stderr)
    bad = os.path.join(tmp, "bad_bench")
    with open(bad, "w") as f:
        f.write("#!/bin/sh\n"
                "case \"$*\" in *--mlp*) ;; *) echo '# vulkan:0  Bad GPU'; "
                "echo '  (failed: out of device memory)'; exit 0;; esac\n"
                "echo 'mlp 32x64x64x10  vulkan:0 resident  1.0 ms  1.0 GFLOPS  (rel err 2.0e-02 vs "
                "CPU backend)'\nexit 3\n")
    os.chmod(bad, 0o755)
    p = run([bad, "--quick", "--out", out], no_torch)
    md = open(out).read()
    check(p.returncode == 1 and "MLP forward: exit status 3" in md and
          "off the CPU backend by 2.0e-02" in md and
          "a matmul variant failed: out of device memory" in md,
          "failing bench, failed variant, wrong MLP: exit 1, each named", md)
    differ = os.path.join(tmp, "differ_bench")
    with open(differ, "w") as f:
        f.write("#!/bin/sh\ncase \"$*\" in *--fused-chain*) echo 'arith chain (11 ops) f32 n=1024 "
                "vulkan:0  fused    1.000 ms (8.20 GB/s, 90% of one-op), op by op   9.000 ms (11 "
                "dispatches): fused 9.00x; bits DIFFER'; exit 1;; *) echo '# vulkan:0  GPU';; esac\n")
    os.chmod(differ, 0o755)
    p = run([differ, "--quick", "--out", out], no_torch)
    md = open(out).read()
    check(p.returncode == 1 and "fused arith chain on vulkan:0: bits DIFFER from op by op" in md
          and "fused chain: exit status 1" in md, "fused chain with other bits: exit 1, named", md)
    p = run([bad, "--quick", "--out", out], fake)
    md = open(out).read()
    check(p.returncode == 1 and "No stagd matmul figures; cuBLAS alone" in md and
          len(re.findall(r"^\| float(32|16) \| (64|128) \| [\d.]+ \|$", md, re.M)) == 4,
          "no stagd matmul rows: cuBLAS figures alone", md)

    slow = os.path.join(tmp, "slow_bench")
    with open(slow, "w") as f:
        f.write("#!/bin/sh\necho '# vulkan:0  Slow GPU'\n"
                "echo 'mmv float32 64x64x64  vulkan:0 auto=tiled  1.50 GFLOPS'\nexec sleep 30\n")
    os.chmod(slow, 0o755)
    p = run([slow, "--quick", "--timeout", "1", "--out", out], no_torch)
    md = open(out).read()
    check(p.returncode == 1 and "matmul sweep: killed after 1 s (partial figures)" in md and
          "| vulkan:0 | float32 | 64 | 1.5 (tiled) |" in md, "bench past --timeout: killed, "
          "figures so far kept", md)

    # 5. The bench's own argument errors.
    for args, msg in ((["--mlp", "4"], "--mlp needs B,D0,D1"), (["--sizes", "x"], "usage:"),
                      (["--sizes", "0"], "usage:"), (["--mlp", "4,,2"], "usage:")):
        p = subprocess.run([bench] + args, capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and msg in p.stderr, "bench_vulkan %s: exit 2" % " ".join(args),
              p.stdout + p.stderr)

    # 6. The goal line, from the table alone.
    sys.path.insert(0, HERE)
    import torch_compare
    rows = [{"device": "vulkan:0", "dtype": "float32", "n": 4096, "variant": v, "gflops": g,
             "torch": 1000.0} for v, g in (("auto=tiled", 400.0), ("tiled", 400.0),
                                          ("subgroup", 600.0))]
    text = "\n".join(torch_compare.matmul_table(rows))
    check("| 400.0 (tiled) | 400.0 | 600.0 | 1000.0 | 0.400 | 0.600 |" in text and
          "Goal (issue #6: float32 n=4096 at >= 0.5x cuBLAS): met, best variant 0.600x" in text,
          "goal line from the best variant", text)
    rows[2]["gflops"] = 450.0
    check("NOT met, best variant 0.450x" in "\n".join(torch_compare.matmul_table(rows)),
          "goal line: not met")


if __name__ == "__main__":
    main()
