#!/usr/bin/python3
"""compare.py — one run, side by side: bench_vulkan (CPU backend, naive loop, every Vulkan
device, per-dispatch/per-graph overheads) and NumPy (OpenBLAS) matmul GFLOPS and add
bandwidth for the same sizes, with the ratios of each device to NumPy.
Usage: compare.py PATH/TO/bench_vulkan [--quick] [--max N] [--naive-max N]
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


def main():
    tool, opts = sys.argv[1], sys.argv[2:]
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
