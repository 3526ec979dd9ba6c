# SPDX-License-Identifier: Apache-2.0
"""bench_parse.py — stagd's Python front end vs CPython's ast, on the 3.12 stdlib.

    python3.12 bench/parse/bench_parse.py --tool BUILD/tests/convert/pyast_tool [--repeat N]

Prints, for every .py file of the stdlib that CPython parses (site-packages excluded),
all read into memory first:
  * parse + dump: CPython's ast.dump(ast.parse(src)) vs ours, same files, same run,
    as a ratio (target: ours >= 2x faster);
  * parse only: our throughput in MB/s (and CPython's ast.parse for reference);
  * peak memory: our parser's RSS growth while parsing the whole corpus as one file,
    per MB of source (target <= 10x).
Best of --repeat runs for each timing.
"""
import argparse
import ast
import os
import subprocess
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")


def stdlib_files():
    root = os.path.dirname(ast.__file__)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "site-packages")
        out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    return out


def tool_time(tool, mode, files):
    """Runs the tool in chunks (argv limits); returns (bytes, seconds)."""
    total_b, total_s = 0, 0.0
    for i in range(0, len(files), 400):
        out = subprocess.run([tool, mode] + files[i:i + 400], capture_output=True, text=True,
                             check=True).stdout.split()
        total_b += int(out[0])
        total_s += float(out[1])
    return total_b, total_s


def main():
    if sys.version_info[:2] != (3, 12):
        print("FAIL: run this with CPython 3.12 (the baseline)", file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files, srcs = [], []
    for f in stdlib_files():
        with open(f, "rb") as fh:
            b = fh.read()
        try:
            ast.parse(b)
        except (SyntaxError, ValueError):
            continue
        files.append(f)
        srcs.append(b)
    size = sum(len(s) for s in srcs)
    mb = size / 1e6

    def cpython(dump):
        t0 = time.perf_counter()
        for s in srcs:
            t = ast.parse(s)
            if dump:
                ast.dump(t)
        return time.perf_counter() - t0

    cp_dump = min(cpython(True) for _ in range(args.repeat))
    cp_parse = min(cpython(False) for _ in range(args.repeat))
    our_dump = min(tool_time(args.tool, "time", files)[1] for _ in range(args.repeat))
    our_parse = min(tool_time(args.tool, "time-parse", files)[1] for _ in range(args.repeat))

    # peak memory: the corpus (UTF-8 files) as one module
    with tempfile.NamedTemporaryFile("wb", suffix=".py", delete=False) as big:
        for s in srcs:
            if b"coding" in s[:200]:
                continue
            big.write(s)
            if not s.endswith(b"\n"):
                big.write(b"\n")
        big_path = big.name
    try:
        out = subprocess.run([args.tool, "mem", big_path], capture_output=True, text=True)
        mem = out.stdout.split()
    finally:
        os.unlink(big_path)

    print("corpus: %d files, %.1f MB (CPython %s stdlib)" % (len(files), mb, sys.version.split()[0]))
    print("parse+dump  CPython ast.parse+ast.dump %.3f s   stagd %.3f s   ratio %.2fx faster"
          % (cp_dump, our_dump, cp_dump / our_dump))
    print("parse only  CPython ast.parse %.3f s (%.1f MB/s)   stagd %.3f s (%.1f MB/s)   ratio %.2fx"
          % (cp_parse, mb / cp_parse, our_parse, mb / our_parse, cp_parse / our_parse))
    if out.returncode == 0 and len(mem) == 3:
        src_b, rss, arena = int(mem[0]), int(mem[1]), int(mem[2])
        print("memory      one %.1f MB module: peak RSS growth %.1f MB = %.2fx source "
              "(AST arena %.2fx)" % (src_b / 1e6, rss / 1e6, rss / src_b, arena / src_b))
    else:
        print("memory      the concatenated corpus did not parse: %s" % out.stderr.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
