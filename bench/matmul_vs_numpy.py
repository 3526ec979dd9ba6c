#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""float32 matmul, stagd CPU kernel (kn_matmul via bench/matmul_bench) vs NumPy
(`a @ b`), in the same run on the same machine. Rounds alternate between the two and
the best time of each is kept, so background load hits both alike.
Usage: matmul_vs_numpy.py PATH/TO/matmul_bench [N ...]   (default 512 1024 2048)
Prints per size: stagd GFLOPS, NumPy GFLOPS, ratio (target >= 0.8)."""
import subprocess
import sys
import time

import numpy as np

exe = sys.argv[1]
sizes = [int(s) for s in sys.argv[2:]] or [512, 1024, 2048]
ours = {n: 0.0 for n in sizes}
theirs = {n: 0.0 for n in sizes}
blas = ""
for rnd in range(3):
    for n in sizes:
        out = subprocess.run([exe, str(n)], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("#"):
                blas = line
            else:
                ours[n] = max(ours[n], float(line.split()[2]))
        rng = np.random.default_rng(0)
        a = rng.random((n, n), dtype=np.float32)
        b = rng.random((n, n), dtype=np.float32)
        best = 1e30
        for _ in range(10 if n <= 512 else 5 if n <= 1024 else 3):
            t0 = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t0)
        theirs[n] = max(theirs[n], 2 * n ** 3 / best * 1e-9)
print(blas)
print(f"{'N':>6} {'stagd GFLOPS':>13} {'numpy GFLOPS':>13} {'ratio':>6}")
for n in sizes:
    print(f"{n:>6} {ours[n]:>13.1f} {theirs[n]:>13.1f} {ours[n] / theirs[n]:>6.2f}")
