# SPDX-License-Identifier: Apache-2.0
"""pyfront_bench.py — Python staged straight to the graph in the daemon (docs/pyfront.md).

    STAGD_BIN=build-release/server/stagd STAGD_GENERATED_DIR=build-release/python/stagd_gen \\
    PYTHONPATH=clients/python python3 bench/pyfront_bench.py [--calls N]

Starts a stagd, then prints:
  * stage time (with and without the optimizer) of a 1,000-line module of functions in the subset (loops, branches,
    early returns, tuples, calls: the entry reaches every function) through the Stage
    RPC with language PYTHON — median ms per 1,000 lines (goal < 20 ms) — next to the
    Convert RPC on the same text (the Convert path's figure), with the ratio;
  * run time of a few staged Python functions against the same programs staged from
    their S-expression dumps (median Execute latency; ratio, goal 1.0).
Each Stage request differs by a comment line, so no cache answers it.
Use a release build of stagd (sanitizers off) for meaningful figures.
"""
import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import grpc  # noqa: E402
import numpy as np  # noqa: E402

import harness  # noqa: E402

FUNC = '''
def func_{i}(x, n):
    """Function {i}."""
    total = 0.0
    best = x
    for k in range(n):
        if k % 3 == 0:
            continue
        if total > 1000.0:
            break
        total = total + x * k
        if total > best:
            best = total
    a, b = divmod(n, 2)
    while a > 0:
        a -= 1
        total = total * 0.5 + b
    if total < 0.0:
        return -total
    y = total if total > 1.0 else best
    return func_{prev}(y * 0.001, n) + np.tanh(y)
'''

BASE = '''import numpy as np


def func_0(x, n):
    return x * n
'''


def module_1000_lines():
    parts, i = [BASE], 1
    while sum(p.count("\n") for p in parts) < 1000:
        parts.append(FUNC.format(i=i, prev=i - 1))
        i += 1
    return "".join(parts), i - 1


RUN_PROGRAM = '''import numpy as np


def newton_sqrt(a):
    x = a
    for _ in range(20):
        x = 0.5 * (x + a / x)
    return x


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def rnn(xs, w, u):
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u * xs[t])
    return np.sum(h)
'''

RUN_CASES = [("newton_sqrt", [2.0]), ("collatz", [27]),
             ("rnn", [{"dtype": "float64", "shape": [8], "data": list(np.linspace(-1, 1, 8))},
                      {"dtype": "float64", "shape": [4, 4], "data": list(np.linspace(-0.5, 0.5, 16))},
                      {"dtype": "float64", "shape": [4], "data": [0.1, -0.2, 0.3, 0.4]}])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    pb2 = harness.pb2
    d = harness.Daemon(["--listen", "127.0.0.1:0"])
    try:
        opts = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]
        ch = grpc.insecure_channel(d.addr, options=opts)

        def rpc(name, req, reply):
            return ch.unary_unary(f"/stagd.v1.Stagd/{name}", request_serializer=type(req).SerializeToString,
                                  response_deserializer=reply.FromString)(req, timeout=60)

        mod, last = module_1000_lines()
        lines = mod.count("\n")
        entry = f"func_{last}"

        def stage(k, no_optimize=False):
            req = pb2.StageRequest(source=f"# run {k} {no_optimize}\n" + mod, filename="bench.py", entry=entry,
                                   language=pb2.SOURCE_LANGUAGE_PYTHON, no_optimize=no_optimize)
            t = time.perf_counter()
            rpc("Stage", req, pb2.StageReply)
            return time.perf_counter() - t

        stage(-1)  # warm-up
        st = statistics.median(stage(k) for k in range(args.calls)) * 1e3 * 1000 / lines
        lo = statistics.median(stage(k, True) for k in range(args.calls)) * 1e3 * 1000 / lines

        def convert(k):
            req = pb2.ConvertRequest(source=f"# run {k}\n" + mod, filename="bench.py", style=pb2.STYLE_AUTOGRAPH)
            t = time.perf_counter()
            rpc("Convert", req, pb2.ConvertReply)
            return time.perf_counter() - t

        convert(-1)
        cv = statistics.median(convert(k) for k in range(args.calls)) * 1e3 * 1000 / lines
        print(f"stage {lines} lines of Python ({last + 1} functions, all reached from {entry}) through Stage: "
              f"median {st:.2f} ms per 1,000 lines (goal < 20 ms; {'PASS' if st < 20 else 'MISS'})")
        print(f"  the same with no_optimize (parse, analyses, lowering, inference): {lo:.2f} ms per 1,000 lines")
        print(f"  Convert RPC on the same text: {cv:.2f} ms per 1,000 lines (ratio Stage / Convert: {st / cv:.2f}x, "
              f"without the optimizer {lo / cv:.2f}x)")

        for name, a in RUN_CASES:
            py = rpc("Stage", pb2.StageRequest(source=RUN_PROGRAM, filename="run.py", entry=name,
                                               language=pb2.SOURCE_LANGUAGE_PYTHON,
                                               dumps=[pb2.DUMP_FORMAT_SEXPR]), pb2.StageReply)
            sx = rpc("Stage", pb2.StageRequest(sexpr=py.dumps[0].text, filename="run.sexp", entry=name),
                     pb2.StageReply)
            aj = json.dumps(a)

            def run(gid):
                req = pb2.ExecuteRequest(graph_id=gid, args_json=aj)
                rpc("Execute", req, pb2.ExecuteReply)  # warm-up: inference per signature
                ts = []
                for _ in range(args.calls):
                    t = time.perf_counter()
                    r = rpc("Execute", req, pb2.ExecuteReply)
                    ts.append(time.perf_counter() - t)
                return statistics.median(ts) * 1e3, r.result_json

            tp, rp = run(py.graph_id)
            ts_, rs = run(sx.graph_id)
            assert rp == rs, (name, rp, rs)
            print(f"run {name}: staged from Python {tp:.3f} ms, from its S-expressions {ts_:.3f} ms "
                  f"(ratio {tp / ts_:.2f}x; same graph id: {py.graph_id == sx.graph_id})")
        ch.close()
    finally:
        d.terminate()


if __name__ == "__main__":
    main()
