# SPDX-License-Identifier: Apache-2.0
"""eager_async_bench.py — asynchronous eager ops (docs/client.md "Asynchronous eager")
against synchronous ones (one EagerOp RPC each, STAGD_EAGER_SYNC=1) and PyTorch eager
on the CPU, ratios printed (issue 23):

  1. one eager op, `x + y` on 4x4 float32: ms per op over a run of `--ops` ops and one
     sync at the end (the queue flushes every 256 ops on the way).
     Then the daemon's own share: EagerBatch's daemon-side time per op (Stats RPC).
  2. the eager MLP training step (32x64 -> 64 tanh -> 10, mean squared error, SGD):
     GradientTape over Variables, the step's ops, its gradient (a queued call) and its
     updates queued; "async" syncs at every step's end (a round trip a step, as when the
     loss is read every step), "pipelined" once after every 10 steps (consecutive steps
     travel in the same batches, as a loop that reads the loss now and then), "sync" is
     one RPC per op; against PyTorch autograd with the same sizes. Then where a
     pipelined step's time goes: wall, the syncs' wait, the client's and the daemon's CPU,
     and of the client's, the forward's recording and tape.gradient().

Run (the release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python OMP_WAIT_POLICY=PASSIVE \\
      /usr/bin/python3 bench/eager_async_bench.py [--threads N] [--ops N] [--steps N] [--rounds N]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import mlp_step  # noqa: E402
import peers  # noqa: E402
import stagd  # noqa: E402
import stagd.eager_queue  # noqa: E402


def op_contenders(torch, n):
    x = stagd.constant(np.ones((4, 4), np.float32))
    y = stagd.constant(np.full((4, 4), 2.0, np.float32))
    client = x._c

    def run():
        for _ in range(n):
            z = x + y
        client.sync()
        return z

    def sync_run():
        stagd.set_eager_async(False)
        try:
            for _ in range(n):
                x + y
        finally:
            stagd.set_eager_async(True)

    out = {"async": run, "sync": sync_run}
    if torch is not None:
        tx, ty = torch.ones(4, 4), torch.full((4, 4), 2.0)

        def torch_run():
            for _ in range(n):
                tx + ty
        out["torch"] = torch_run
    return out


def daemon_per_op(rounds, n=4000):
    """The daemon's own time per queued op (x + y on 4x4 float32): batches of n ops sent
    at one sync, the EagerBatch time from the Stats RPC over the ops; the best of
    `rounds` (parsing, the handle store, the kernel, the reply; no Python, no gRPC)."""
    x = stagd.constant(np.ones((4, 4), np.float32))
    y = stagd.constant(np.full((4, 4), 2.0, np.float32))
    client = x._c
    q = stagd.eager_queue.queue_of(client)
    bound, q.bound = q.bound, n + 1  # one batch of n (the daemon takes 4096)
    best = None
    try:
        for _ in range(rounds):
            client.sync()
            c0, ns0 = peers.daemon_ns(client, "EagerBatch")  # (a call: it would send queued ops)
            zs = [x + y for _ in range(n)]
            client.sync()
            c1, ns1 = peers.daemon_ns(client, "EagerBatch")
            del zs
            per = (ns1 - ns0) / n / 1e3
            best = per if best is None else min(best, per)
    finally:
        q.bound = bound
    return best


MLP_STEPS = 10  # steps per timed call of each MLP contender


def mlp_contenders(torch, lr=mlp_step.LR):
    x, y, params = mlp_step.stagd_setup(stagd)
    client = x._c

    def steps():
        for _ in range(MLP_STEPS):
            mlp_step.stagd_step(stagd, x, y, params, lr)
            client.sync()

    def pipelined():
        for _ in range(MLP_STEPS):
            mlp_step.stagd_step(stagd, x, y, params, lr)
        client.sync()

    def sync_steps():
        stagd.set_eager_async(False)
        try:
            steps()
        finally:
            stagd.set_eager_async(True)

    out = {"async": steps, "pipelined": pipelined, "sync": sync_steps}
    if torch is not None:
        step = mlp_step.torch_step(torch, lr)

        def torch_steps():
            for _ in range(MLP_STEPS):
                step()
        out["torch"] = torch_steps
    return out


def show(title, res, per):
    print(title)
    for k, secs in res.items():
        print(f"  {k:10s} {peers.median(secs) / per * 1e6:10.2f} us  "
              f"({min(secs) / per * 1e6:.2f}-{max(secs) / per * 1e6:.2f})")
    a = peers.median(res["async"])
    print(f"  async vs sync: {peers.median(res['sync']) / a:.1f}x faster")
    if "torch" in res:
        t = peers.median(res["torch"])
        for k in ("async", "pipelined"):
            if k in res:
                m = peers.median(res[k])
                print(f"  {k} / torch time: {m / t:.1f}x   (torch/{k} throughput: {t / m:.2f}x)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    torch = peers.import_torch(a.threads)
    with peers.daemon(a.threads) as client:
        print(f"{a.threads} threads, {peers.load()}")
        res = peers.alternate(op_contenders(torch, a.ops), a.rounds, 1)
        show(f"one eager op, x + y on 4x4 float32 (per op, {a.ops} ops a run)", res, a.ops)
        print(f"  daemon-side per queued op (EagerBatch of 4000, best of {a.rounds}): "
              f"{daemon_per_op(a.rounds):.2f} us")
        res = peers.alternate(mlp_contenders(torch), a.rounds, max(1, a.steps // MLP_STEPS))
        show("eager MLP step, 32x64 -> 64 tanh -> 10, SGD (per step)", res, MLP_STEPS)
        split_pipelined(client, max(500, a.steps))  # (/proc's CPU times count 10 ms ticks)


def split_pipelined(client, steps):
    """Where a pipelined MLP step's time goes: the client's CPU, the daemon's CPU, and
    the sync's wait, per step (one run of `steps` steps, a sync every MLP_STEPS)."""
    x, y, params = mlp_step.stagd_setup(stagd)
    steps -= steps % MLP_STEPS
    d0, c0, wait, t = peers.daemon_cpu(client), time.process_time(), 0.0, time.perf_counter()
    for i in range(steps):
        mlp_step.stagd_step(stagd, x, y, params)
        if i % MLP_STEPS == MLP_STEPS - 1:
            w = time.perf_counter()
            client.sync()
            wait += time.perf_counter() - w
    wall = time.perf_counter() - t
    ms = 1e3 / steps
    print(f"  pipelined step, where it goes ({steps} steps): wall {wall * ms:.3f} ms, of it waiting "
          f"at syncs {wait * ms:.3f} ms; client CPU {(time.process_time() - c0) * ms:.3f} ms, "
          f"daemon CPU {(peers.daemon_cpu(client) - d0) * ms:.3f} ms")
    record = grad = 0.0
    for i in range(steps):  # the same step, its recording and its gradient() timed apart
        a = time.perf_counter()
        with stagd.GradientTape() as tape:
            loss = mlp_step.stagd_loss(stagd, x, y, params)
        b = time.perf_counter()
        gs = tape.gradient(loss, params)
        record, grad = record + b - a, grad + time.perf_counter() - b
        mlp_step.stagd_update(params, gs)
        if i % MLP_STEPS == MLP_STEPS - 1:
            client.sync()
    print(f"  of the client's time: the forward's recording {record * ms * 1e3:.0f} us, "
          f"tape.gradient() {grad * ms * 1e3:.0f} us a step")


if __name__ == "__main__":
    main()
