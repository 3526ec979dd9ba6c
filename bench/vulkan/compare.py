#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""compare.py — one run, side by side: bench_vulkan (CPU backend, naive loop, every Vulkan
device, per-dispatch/per-graph overheads) and NumPy (OpenBLAS) matmul GFLOPS and add
bandwidth for the same sizes, with the ratios of each device to NumPy.
Usage: compare.py PATH/TO/bench_vulkan [--quick] [--max N] [--naive-max N]
       compare.py PATH/TO/bench_vulkan --matmul-variants [--quick]
         (each matmul variant per device vs the CPU backend and NumPy, per dtype and shape)
"""
import re
import subprocess
import sys
import time

import numpy as np


def best_of(fn, reps):
    fn()  # warm-up
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def matmul_variants(tool, opts):
    """bench_vulkan --matmul-variants, then NumPy on the same products, side by side."""
    out = subprocess.run([tool] + opts, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"mmv (\w+)\s+(\d+)x(\d+)x(\d+)\s+(.+?)\s+([\d.]+) GFLOPS", line)
        if m:
            rows.append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                         m.group(5), float(m.group(6))))
    rng = np.random.default_rng(0)
    numpy_gflops = {}
    for dt, m, n, k, _, _ in rows:
        if (dt, m, n, k) not in numpy_gflops:
            a = rng.random((m, k)).astype(dt)
            b = rng.random((k, n)).astype(dt)
            t = best_of(lambda: a @ b, 1 if dt == "float16" else 3)
            numpy_gflops[(dt, m, n, k)] = 2.0 * m * n * k / t / 1e9
    print(out, end="")
    print("\n# side by side: GFLOPS (NumPy %s in the same run)" % np.__version__)
    print("%-8s %-16s %-22s %10s %10s %10s %9s %9s" % ("dtype", "MxNxK", "kernel", "GFLOPS",
                                                     "cpu", "numpy", "x cpu", "x numpy"))
    cpu = {(dt, m, n, k): g for dt, m, n, k, who, g in rows if who == "cpu"}
    for dt, m, n, k, who, g in rows:
        if who == "cpu":
            continue
        key = (dt, m, n, k)
        print("%-8s %-16s %-22s %10.2f %10.2f %10.2f %9.3f %9.3f" % (
            dt, "%dx%dx%d" % (m, n, k), who, g, cpu[key], numpy_gflops[key], g / cpu[key],
            g / numpy_gflops[key]))


def main():
    tool, opts = sys.argv[1], sys.argv[2:]
    if "--matmul-variants" in opts:
        matmul_variants(tool, opts)
        return
    quick = "--quick" in opts
    max_n = int(opts[opts.index("--max") + 1]) if "--max" in opts else 2048
    sizes = [n for n in (256, 512, 1024, 2048, 4096) if n <= (512 if quick else max_n)]
    rng = np.random.default_rng(0)
    numpy_gflops = {}
    for n in sizes:
        a = rng.random((n, n), dtype=np.float32)
        b = rng.random((n, n), dtype=np.float32)
        t = best_of(lambda: a @ b, 2 if n >= 2048 else 5)
        numpy_gflops[n] = 2.0 * n ** 3 / t / 1e9
    add_n = 1 << (22 if quick else 24)
    x = rng.random(add_n, dtype=np.float32)
    y = rng.random(add_n, dtype=np.float32)
    numpy_bw = 12.0 * add_n / best_of(lambda: x + y, 5) / 1e9

    out = subprocess.run([tool] + opts, capture_output=True, text=True, check=True).stdout
    print(out, end="")
    print("\n# NumPy %s (same run)" % np.__version__)
    for n in sizes:
        print("matmul f32 n=%-5d numpy       %8.2f GFLOPS" % (n, numpy_gflops[n]))
    print("add f32 n=%d         numpy       %8.2f GB/s" % (add_n, numpy_bw))
    print("\n# ratios to NumPy")
    for line in out.splitlines():
        m = re.match(r"matmul f32 n=(\d+)\s+(\S+)\s+([\d.]+) GFLOPS", line)
        if m:
            n, dev, g = int(m.group(1)), m.group(2), float(m.group(3))
            print("matmul f32 n=%-5d %-10s  %6.2fx numpy" % (n, dev, g / numpy_gflops[n]))
        m = re.match(r"add f32 n=\d+\s+(\S+)\s+([\d.]+) GB/s", line)
        if m:
            print("add f32            %-10s  %6.2fx numpy" % (m.group(1), float(m.group(2)) / numpy_bw))


if __name__ == "__main__":
    main()
