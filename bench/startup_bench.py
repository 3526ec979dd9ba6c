#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Start-up cost of stagctl as whole processes (issue 26: devices start on first use, so
commands that need none pay nothing for Vulkan). Runs each command RUNS times,
interleaved, and prints medians, peak RSS and ratios:
  stagctl --help                      the floor: process start, no work
  stagctl --local version             the service created, no request work
  stagctl --local parse small.py      a real parse (goal: within 3x of --help)
  python3 -c 'ast.dump(ast.parse())'  CPython's parser on the same file (baseline)
  stagctl --local devices             enumerates devices (what the others avoid)
Usage: startup_bench.py PATH/TO/stagctl [RUNS]   (a release build)"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

exe = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
src = "def f(x, y=2):\n    if x > y:\n        return [i * x for i in range(y)]\n    return {'x': x}\n"
fd, path = tempfile.mkstemp(suffix=".py")
os.write(fd, src.encode())
os.close(fd)
cmds = {
    "stagctl --help": [exe, "--help"],
    "stagctl --local version": [exe, "--local", "version"],
    "stagctl --local parse small.py": [exe, "--local", "parse", path],
    "python3 ast.parse+ast.dump": ["/usr/bin/python3", "-c",
                                   f"import ast; print(ast.dump(ast.parse(open({path!r}).read())))"],
    "stagctl --local devices": [exe, "--local", "devices"],
}


def run(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


times = {k: [] for k in cmds}
rss = {}
for k, argv in cmds.items():  # warm-up, and each command's own peak RSS in a fresh child
    run(argv)
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True)
    rss[k] = int(p.stderr.strip().splitlines()[-1])
for _ in range(runs):
    for k, argv in cmds.items():
        times[k].append(run(argv)[0])
os.unlink(path)
med = {k: statistics.median(v) for k, v in times.items()}
print(f"{'command':34} {'median ms':>10} {'peak RSS MB':>12}")
for k in cmds:
    print(f"{k:34} {med[k] * 1e3:10.2f} {rss[k] / 1024:12.1f}")
print(f"parse / --help: {med['stagctl --local parse small.py'] / med['stagctl --help']:.2f}x (goal <= 3x)")
print(f"CPython / stagctl parse: {med['python3 ast.parse+ast.dump'] / med['stagctl --local parse small.py']:.2f}x")
