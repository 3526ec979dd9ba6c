# SPDX-License-Identifier: Apache-2.0
"""step_bench.py — one training step as one stagd.function call, side by side with
PyTorch eager (CPU) on the same data and thread count: the issue-23 "one-call step"
figure. The step is a small MLP (32×64 → 64 tanh → 10, mean squared error, SGD on four
Variables): the gradient is graph AD inside the staged function and the updates are
Variable assigns in the daemon. A call after the first goes in the eager queue (docs/
client.md "Asynchronous eager"): "stagd.function" waits for every step (a round trip
each: the call and a sync), "pipelined" for every tenth (steps travel ten to a batch and
the daemon runs them while Python queues the next; seconds per step are printed). Prints
medians of alternating rounds, the ratio PyTorch/stagd (> 1: stagd is faster), the
daemon-side time of Execute (Stats RPC; the first calls only, queued calls are
EagerBatch ops) and the floors under any one-call step: a round trip of 200
bytes between two processes over a unix socket (no gRPC: what the machine's context
switches cost), an empty Ping RPC, and a staged function of one op on a 4×4 tensor;
checks that stagd's and PyTorch's first losses agree.

Run (a release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python OMP_WAIT_POLICY=PASSIVE \\
      /usr/bin/python3 bench/step_bench.py [--rounds 7] [--calls 200] [--threads T] \\
      [--also before=OLD/server/stagd]
"""
import argparse
import contextlib
import os
import socket
import time

import numpy as np

import mlp_step
import peers
import stagd

PIPELINED = 10  # steps per sync of the "pipelined" contender


def staged_step(client):
    """(step, ten steps, loss of the first call): a stagd.function of the whole training
    step on daemon `client`, its own Variables; each waited for, or ten then one wait."""
    stagd.set_default_client(client)
    x, y, params = mlp_step.stagd_setup(stagd)
    fn = stagd.function(lambda x, y: mlp_step.stagd_step(stagd, x, y, params), client=client)
    first = float(fn(x, y).numpy())

    def step():
        fn(x, y)
        client.sync()

    def steps():
        for _ in range(PIPELINED):
            fn(x, y)
        client.sync()
    return step, steps, first


def ipc_round_trip(n):
    """Seconds per round trip of 200 bytes to a forked echo process over a unix socket
    pair (best of 3 runs of n)."""
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        a.close()
        while True:
            d = b.recv(65536)
            if not d:
                os._exit(0)
            b.sendall(d)
    b.close()
    msg, best = b"x" * 200, float("inf")
    try:
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(n):
                a.sendall(msg)
                a.recv(65536)
            best = min(best, (time.perf_counter() - t) / n)
    finally:
        a.close()
        os.waitpid(pid, 0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    peers.add_also_arg(ap)
    a = ap.parse_args()
    torch = peers.import_torch(a.threads)
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(peers.daemon(a.threads))
        step, steps, first = staged_step(client)
        contenders = {"stagd": step, "pipelined": steps}
        for name, other in peers.also_daemons(stack, a.threads, a.also):
            contenders[name] = staged_step(other)[0]
        stagd.set_default_client(client)
        if torch is not None:
            ts = mlp_step.torch_step(torch)
            tfirst = float(ts())
            print(f"  first loss: stagd {first:.6f}, torch {tfirst:.6f}"
                  + ("" if abs(first - tfirst) <= 1e-5 * max(1.0, abs(tfirst)) else "  DIFFER"))
            contenders["torch"] = ts
        res, daemon_ms = peers.measure(client, contenders, a.rounds, a.calls)
        res["pipelined"] = [s / PIPELINED for s in res["pipelined"]]  # per step
        peers.report("MLP training step (32x64 -> 64 tanh -> 10, SGD), one call per step",
                     a.threads, res, daemon_ms, "stagd.function (waited for)",
                     peers=["torch"] + [s.split("=", 1)[0] for s in a.also])
        print(peers.row(f"pipelined (a sync every {PIPELINED} steps)", res["pipelined"]))
        if "torch" in res:
            print(f"  pipelined vs torch: {peers.median(res['torch']) / peers.median(res['pipelined']):.2f}x")
        m = peers.median(res["stagd"])
        print(f"  stagd steps/s: {1 / m:.0f}" + (f", torch steps/s: {1 / peers.median(res['torch']):.0f}"
                                                 if "torch" in res else ""))
        e = stagd.constant(np.ones((4, 4), np.float32))
        one_op = stagd.function(lambda t: t + 1.0, client=client)
        one_op(e)
        floor = peers.alternate({"ping": client.ping, "one op": lambda: (one_op(e), client.sync())},
                                a.rounds, a.calls)
        print(f"  {'floor: unix socket round trip':34s} {ipc_round_trip(a.calls * 10) * 1e3:9.3f} ms")
        print(peers.row("floor: Ping RPC", floor["ping"]))
        print(peers.row("floor: stagd.function(t + 1) on 4x4", floor["one op"]))


if __name__ == "__main__":
    main()
