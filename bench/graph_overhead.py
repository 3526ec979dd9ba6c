#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Interpretive overhead: a graph of 10,000 dependent tiny scalar float ops, staged
once and executed repeatedly by gr_tool (--no-optimize would not change it: nothing
folds), reported as ns per op; baseline: the same ops done one by one in Python
with NumPy float64 scalars. Usage: graph_overhead.py PATH/TO/gr_tool [NOPS]"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

tool = sys.argv[1]
nops = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
ops = [("+", 1.5), ("*", 0.5), ("-", 0.25)]
binds = []
prev = "x"
for i in range(nops):
    op, c = ops[i % 3]
    binds.append(f"(v{i} ({op} {prev} {c}))")
    prev = f"v{i}"
src = f"(def chain (x) (let* ({' '.join(binds)}) {prev}))\n"
with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as f:
    f.write(src)
repeat = 200
p = subprocess.run([tool, "run", f.name, "--args", "[1.0]", "--repeat", str(repeat)],
                   capture_output=True, text=True, check=True)
os.unlink(f.name)
ns_run = float([l for l in p.stderr.splitlines() if l.startswith("time_per_run_ns")][0].split()[1])
ours = ns_run / nops
result = float(p.stdout)

fns = [np.add, np.multiply, np.subtract]
consts = [np.float64(c) for _, c in ops]
best = 1e30
for _ in range(5):
    v = np.float64(1.0)
    t0 = time.perf_counter_ns()
    for i in range(nops):
        v = fns[i % 3](v, consts[i % 3])
    best = min(best, time.perf_counter_ns() - t0)
py = best / nops
assert abs(float(v) - result) <= 1e-9 * max(1.0, abs(result)), (float(v), result)
print(f"ops per graph: {nops}")
print(f"stagd executor: {ours:.1f} ns/op (target < 1000)")
print(f"python+numpy op by op: {py:.1f} ns/op")
print(f"ratio (python / stagd): {py / ours:.1f}x")
