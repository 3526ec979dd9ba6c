# SPDX-License-Identifier: Apache-2.0
"""record_args_bench.py — Execute with a record of tensors as a binary Value argument:
daemon-side time (the Stats RPC's Execute total_ns) per call, for one or more stagd
binaries side by side (the first is the baseline the others are a ratio of), rounds
alternating between them.

A daemon built before records had a value path printed such an argument as JSON text
and parsed it back (docs/performance.md "Records and strings in Execute arguments").

Run (release builds are the fair ones):
    PYTHONPATH=clients/python python3 bench/record_args_bench.py OLD_STAGD NEW_STAGD \\
      [--size N] [--calls K] [--rounds R]
With no binaries it measures the one stagd.daemon.find_binary() finds.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
import stagd  # noqa: E402
import stagd.daemon  # noqa: E402

SRC = "(def f (p) (+ (* (getattr p w) (getattr p scale)) (getattr p b)))"


def execute_ns(client):
    m = {m.method: m for m in client.stats().methods}.get("Execute")
    return (m.calls, m.total_ns) if m else (0, 0)


def measure(client, gid, arg, calls, no_result_json):
    req = client.pb2.ExecuteRequest(graph_id=gid, args=[arg], no_result_json=no_result_json)
    client.call("Execute", req)  # warm: the signature check, allocations
    c0, t0 = execute_ns(client)
    for _ in range(calls):
        reply = client.call("Execute", req)
    c1, t1 = execute_ns(client)
    assert reply.result_json or reply.result.WhichOneof("kind") == "tensor"
    return (t1 - t0) / max(c1 - c0, 1) / 1e6  # ms a call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="*")
    ap.add_argument("--size", type=int, default=100_000, help="elements of each float32 field")
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    binaries = args.binaries or [stagd.daemon.find_binary()]
    rng = np.random.default_rng(0)
    w, b = (rng.normal(size=args.size).astype(np.float32) for _ in range(2))
    daemons = [stagd.daemon.LocalDaemon(binary=path).start() for path in binaries]
    clients = [stagd.Client(d.addr, session=False) for d in daemons]
    best = {}
    try:
        for _ in range(args.rounds):
            for i, client in enumerate(clients):
                from stagd.tensor import _arg_value
                arg = _arg_value(client, {"w": w, "scale": 2.0, "b": b}, "cpu", [])
                gid = client.call("Stage", {"sexpr": SRC}).graph_id
                for no_json in (False, True):
                    ms = measure(client, gid, arg, args.calls, no_json)
                    best[i, no_json] = min(best.get((i, no_json), ms), ms)
    finally:
        for c in clients:
            c.close()
        for d in daemons:
            d.stop()
    print(f"record {{w: float32[{args.size}], scale: 2.0, b: float32[{args.size}]}} as a Value; "
          f"daemon-side ms per Execute, best of {args.rounds} rounds of {args.calls} calls")
    for no_json in (False, True):
        label = "no_result_json" if no_json else "with result_json"
        for i, path in enumerate(binaries):
            ms = best[i, no_json]
            print(f"  {label:17s} {path:50s} {ms:9.2f} ms  ({best[0, no_json] / ms:6.1f}x the first)")


if __name__ == "__main__":
    main()
