#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""How Stage scales with the number of defs (issue 24 D5): stagctl --local stage of
generated S-expression programs of N and 4N defs, two shapes —
  flat   N independent defs and a main that calls two of them
  chain  def i calls def i-1 (inference and the inliner walk the whole chain)
and prints each time and the ratio t(4N)/t(N) against the baseline "linear", 4.0
(quadratic would be 16). Usage: stage_defs_bench.py PATH/TO/stagctl [N]  (default 500;
a release build)"""
import os
import subprocess
import sys
import tempfile
import time

exe = sys.argv[1]
n0 = int(sys.argv[2]) if len(sys.argv) > 2 else 500


def program(kind, n):
    if kind == "chain":
        lines = ["(def f0 (x) (+ x 1))"] + [f"(def f{i} (x) (+ (f{i - 1} x) {i}))" for i in range(1, n)]
    else:
        lines = [f"(def f{i} (x) (+ x {i}))" for i in range(n)] + ["(def main (x) (+ (f0 x) (f1 x)))"]
    return "\n".join(lines)


def stage_time(src):
    fd, path = tempfile.mkstemp(suffix=".sexp")
    os.write(fd, src.encode())
    os.close(fd)
    try:
        t = time.perf_counter()
        subprocess.run([exe, "--local", "stage", path], check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t
    finally:
        os.unlink(path)


for kind in ("flat", "chain"):
    t1 = stage_time(program(kind, n0))
    t4 = stage_time(program(kind, 4 * n0))
    print(f"{kind:5s}  {n0:6d} defs {t1:7.2f} s   {4 * n0:6d} defs {t4:7.2f} s   "
          f"ratio {t4 / t1:5.2f} (baseline linear: 4.00; quadratic: 16)")
