#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Unary ops and reductions on large tensors: the CPU executor with all cores versus
the same kernels on one core (STAGD_CPU_THREADS=1), side by side in one run, plus
NumPy on the same data for reference (softmax: the usual exp(a - max) / sum in NumPy). Each program fills a float32 tensor of N
elements from a run-time value (so nothing folds) and applies one op K times and once
(--no-optimize: no CSE); the time of the same program without the ops is
subtracted from the K-op one and the rest divided by K-1. gr_tool --repeat times execution only.
Usage: unary_reduce_threads.py PATH/TO/gr_tool [N] [K]"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

tool = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 22
k = int(sys.argv[3]) if len(sys.argv) > 3 else 10
x = np.full(n, 0.25, np.float32)
OPS = [("exp", "(getitem (exp x) 0)", lambda: np.exp(x)), ("tanh", "(getitem (tanh x) 0)", lambda: np.tanh(x)),
       ("sigmoid", "(getitem (sigmoid x) 0)", lambda: 1 / (1 + np.exp(-x))),
       ("relu", "(getitem (relu x) 0)", lambda: np.maximum(x, 0)),
       ("sum", "(sum x)", lambda: x.sum()), ("max", "(max x)", lambda: x.max()),
       ("argmax", "(argmax x)", lambda: x.argmax()),
       ("sum axis 1", f"(getitem (sum (reshape x (tuple {n // 64} 64)) 1) 0)",
        lambda: x.reshape(n // 64, 64).sum(1)),
       ("sum axis 0", f"(getitem (sum (reshape x (tuple {n // 1024} 1024)) 0) 0)",
        lambda: x.reshape(n // 1024, 1024).sum(0)),
       ("max axis 0", f"(getitem (max (reshape x (tuple {n // 1024} 1024)) 0) 0)",
        lambda: x.reshape(n // 1024, 1024).max(0)),
       ("argmax ax 0", f"(getitem (argmax (reshape x (tuple {n // 1024} 1024)) 0) 0)",
        lambda: x.reshape(n // 1024, 1024).argmax(0)),
       ("transpose", f"(getitem (transpose (reshape x (tuple {n // 2048} 2048))) 0)",
        lambda: np.ascontiguousarray(x.reshape(n // 2048, 2048).T)),
       ("softmax 1024", f"(getitem (softmax (reshape x (tuple {n // 1024} 1024))) 0)",
        lambda: softmax_rows(x.reshape(n // 1024, 1024)))]


def softmax_rows(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def run(body, times, threads):
    with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as f:
        f.write(f"(def f (v) (let x (fill (tuple {n}) v float32) (tuple {' '.join([body] * times)})))\n")
    env = dict(os.environ)
    if threads:
        env["STAGD_CPU_THREADS"] = str(threads)
    p = subprocess.run([tool, "run", f.name, "--args", "[0.25]", "--repeat", "5", "--no-optimize"],
                       capture_output=True, text=True, env=env)
    os.unlink(f.name)
    if p.returncode:
        sys.exit(p.stderr)
    return float([l for l in p.stderr.splitlines() if l.startswith("time_per_run_ns")][0].split()[1]) / 1e6


print(f"N = {n} float32, {os.cpu_count()} cores, {k} ops per program")
print(f"{'op':12} {'1 thread ms':>12} {'all ms':>10} {'speedup':>8} {'numpy ms':>9} {'numpy/ours':>10}")
for name, body, ref in OPS:
    one = (run(body, k, 1) - run(body, 1, 1)) / (k - 1)
    allc = (run(body, k, 0) - run(body, 1, 0)) / (k - 1)
    best = 1e30
    for _ in range(5):
        t0 = time.perf_counter()
        ref()
        best = min(best, time.perf_counter() - t0)
    print(f"{name:12} {one:12.3f} {allc:10.3f} {one / allc:7.2f}x {best * 1e3:9.3f} {best * 1e3 / allc:9.2f}x")
