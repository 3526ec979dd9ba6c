# SPDX-License-Identifier: Apache-2.0
"""convert_bench.py — the converter end to end through gRPC vs CPython's ast.

    STAGD_BIN=build-release/server/stagd STAGD_GENERATED_DIR=build-release/python/stagd_gen \\
    PYTHONPATH=clients/python python3 bench/convert_bench.py [--repeat N] [--style autograph|snek]

Starts a stagd, then prints:
  * a 1,000-line module (generated: functions with loops, branches, early returns,
    calls) converted through the Convert RPC: median latency in ms (target < 20 ms),
    next to CPython 3.12's ast.parse + ast.unparse of the same text (ratio);
  * throughput over the standard-library corpus (every .py file of CPython 3.12's
    stdlib that it parses): lines/s through gRPC, and CPython's ast.parse + ast.unparse
    lines/s over the same files, with the ratio.
The CPython side runs in a CPython 3.12 subprocess on the same files in the same run.
Use a release build of stagd (sanitizers off) for meaningful figures.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
CPYTHON312 = "/root/.pyenv/versions/3.12.1/bin/python3"

import grpc  # noqa: E402

import harness  # noqa: E402

FUNC = '''
def func_{i}(xs, n={i}):
    """Function {i}."""
    total = 0
    best = None
    for k, x in enumerate(xs):
        if x is None:
            continue
        if x > n and (best is None or x > best):
            best = x
        elif x < 0:
            break
        total += x * k
    else:
        total = -total
    while n > 0:
        n -= 1
        if total > 1000:
            return best
    assert total >= -10 ** 9, "overflow"
    values = []
    values.append(total)
    label = "big" if total > 100 else "small"
    print(label, len(values), sep=":")
    return helper_{i}(values[0], best) if best else max(values)
'''


def module_1000_lines():
    parts, i = ["import math\n"], 0
    while sum(p.count("\n") for p in parts) < 1000:
        parts.append(FUNC.format(i=i))
        i += 1
    text = "".join(parts)
    return "\n".join(text.splitlines()[:1000]) + "\n"


CPY_BASELINE = r'''
import ast, json, sys, time, warnings
warnings.filterwarnings("ignore")
files = json.load(sys.stdin)
repeat = int(sys.argv[1])
out = []
for group in files:
    srcs = [open(f, encoding="utf-8").read() for f in group]
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        for s in srcs:
            ast.unparse(ast.parse(s))
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    out.append(best)
print(json.dumps(out))
'''


def stdlib_files():
    root = subprocess.run([CPYTHON312, "-c", "import ast, os; print(os.path.dirname(ast.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "test", "idlelib"))
        files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    ok = subprocess.run([CPYTHON312, "-c",
                         "import ast,sys,json,warnings\nwarnings.filterwarnings('ignore')\nok=[]\n"
                         "for f in json.load(sys.stdin):\n"
                         "  try:\n    s=open(f,encoding='utf-8').read(); ast.parse(s); ok.append(f)\n"
                         "  except Exception: pass\nprint(json.dumps(ok))"],
                        input=json.dumps(files), capture_output=True, text=True, check=True)
    return json.loads(ok.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--style", choices=["autograph", "snek"], default="autograph")
    args = ap.parse_args()
    pb2 = harness.pb2
    style = pb2.STYLE_SNEK if args.style == "snek" else pb2.STYLE_AUTOGRAPH
    d = harness.Daemon(["--listen", "127.0.0.1:0"])
    try:
        opts = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]
        ch = grpc.insecure_channel(d.addr, options=opts)
        convert = ch.unary_unary("/stagd.v1.Stagd/Convert", request_serializer=pb2.ConvertRequest.SerializeToString,
                                 response_deserializer=pb2.ConvertReply.FromString)

        mod = module_1000_lines()
        req = pb2.ConvertRequest(source=mod, filename="bench.py", style=style)
        reply = convert(req, timeout=30)  # warm-up
        assert reply.code.startswith("# Converted by stagd"), reply.code[:200]
        lat = []
        for _ in range(args.calls):
            t = time.perf_counter()
            convert(req, timeout=30)
            lat.append(time.perf_counter() - t)
        med = statistics.median(lat) * 1e3
        tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"stagd_convert_bench_{os.getpid()}.py")
        with open(tmp, "w") as f:
            f.write(mod)
        cpy = subprocess.run([CPYTHON312, "-c", CPY_BASELINE, str(max(args.repeat, 5))], input=json.dumps([[tmp]]),
                             capture_output=True, text=True, check=True)
        os.unlink(tmp)
        cpy_ms = json.loads(cpy.stdout)[0] * 1e3
        print(f"1,000-line module through gRPC ({args.style}): median {med:.2f} ms over {args.calls} calls "
              f"(target < 20 ms); {'PASS' if med < 20 else 'MISS'}")
        print(f"  CPython 3.12 ast.parse + ast.unparse of the same module: {cpy_ms:.2f} ms "
              f"(ratio CPython / stagd end to end: {cpy_ms / med:.2f}x)")

        files = stdlib_files()
        srcs = [open(f, encoding="utf-8").read() for f in files]
        lines = sum(s.count("\n") for s in srcs)
        best = None
        for _ in range(args.repeat):
            t = time.perf_counter()
            for f, s in zip(files, srcs):
                convert(pb2.ConvertRequest(source=s, filename=f, style=style), timeout=60)
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        cpy = subprocess.run([CPYTHON312, "-c", CPY_BASELINE, str(args.repeat)], input=json.dumps([files]),
                             capture_output=True, text=True, check=True)
        cpy_s = json.loads(cpy.stdout)[0]
        ours_lps, cpy_lps = lines / best, lines / cpy_s
        print(f"stdlib corpus: {len(files)} files, {lines} lines")
        print(f"  stagd Convert through gRPC: {ours_lps:,.0f} lines/s ({best:.2f} s)")
        print(f"  CPython 3.12 ast.parse + ast.unparse: {cpy_lps:,.0f} lines/s ({cpy_s:.2f} s)")
        print(f"  ratio (stagd / CPython): {ours_lps / cpy_lps:.2f}x")
    finally:
        d.terminate()


if __name__ == "__main__":
    main()
