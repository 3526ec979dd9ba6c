# SPDX-License-Identifier: Apache-2.0
"""eager_bench.py — the eager client's costs, as ratios against named baselines.

  1. eager per-op round trip: `x + y` on two small device-resident tensors (one
     EagerOp RPC), against the transport's floor, an empty Ping RPC.
  2. staged call overhead: a stagd.function of one op (one Execute RPC with handles),
     against the eager op of (1).
  3. a small-op MLP training loop (TF Eager §6 / JANUS: many tiny ops per step):
     eager — GradientTape over Variables, ~15 RPCs a step — against the same step
     as one stagd.function whose graph computes the gradient (graph AD) and updates
     the Variables in the daemon. Target: staged ≥ 3x faster.
  4. vulkan:0 (--vulkan; lavapipe on machines without a GPU): an eager op's round
     trip and a 10-op eager chain ending in .numpy(), device-resident handles (the
     default) against host-resident ones (a second daemon with --host-handles: every
     op uploads its inputs and downloads its result), with the Stats transfer
     counters of one chain on each.

Run (a release build is the fair one; the ASan build is several times slower):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      python3 bench/eager_bench.py [--steps N] [--ops N] [--vulkan [--size N]]
It starts a private daemon (stagd.daemon) and prints one line per measurement.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
import stagd  # noqa: E402


def per_call(fn, n):
    fn()  # warm: staging, first-call costs
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def add_one(x):
    return x + 1.0


def mlp_loss(W1, b1, W2, b2, x, y):
    h = stagd.tanh(stagd.matmul(x, W1) + b1)  # biases broadcast over the batch
    d = stagd.matmul(h, W2) + b2 - y
    return stagd.reduce_mean(d * d)


def make_problem(seed=0, batch=16, n_in=8, hidden=16):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(batch, n_in)).astype(np.float32)
    Y = np.sin(X.sum(axis=1, keepdims=True)).astype(np.float32)
    W1 = (rng.normal(size=(n_in, hidden)) * 0.3).astype(np.float32)
    W2 = (rng.normal(size=(hidden, 1)) * 0.3).astype(np.float32)
    return X, Y, [W1, np.zeros(hidden, np.float32), W2, np.zeros(1, np.float32)]


LR = 0.1


def train_eager(steps):
    X, Y, init = make_problem()
    X, Y = stagd.constant(X), stagd.constant(Y)
    params = [stagd.Variable(p) for p in init]

    def step():
        with stagd.GradientTape() as tape:
            loss = mlp_loss(*params, X, Y)
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(g * LR)
        return loss

    return run_steps(step, steps), params


def train_staged(steps):
    X, Y, init = make_problem()
    X, Y = stagd.constant(X), stagd.constant(Y)
    W1, b1, W2, b2 = params = [stagd.Variable(p) for p in init]
    grads = stagd.grad(mlp_loss, argnums=(0, 1, 2, 3))

    @stagd.function
    def step():
        w1, c1, w2, c2 = W1.read_value(), b1.read_value(), W2.read_value(), b2.read_value()
        g1, h1, g2, h2 = grads(w1, c1, w2, c2, X, Y)
        W1.assign_sub(g1 * LR)
        b1.assign_sub(h1 * LR)
        W2.assign_sub(g2 * LR)
        b2.assign_sub(h2 * LR)
        return mlp_loss(w1, c1, w2, c2, X, Y)

    return run_steps(step, steps), params


def run_steps(step, steps):
    first = float(step())
    t = time.perf_counter()
    for _ in range(steps):
        last = step()
    dt = (time.perf_counter() - t) / steps
    return dt, first, float(last)


def chain10(a, b):
    """Ten eager ops on two tensors (no Python numbers: those would be uploads)."""
    x = stagd.tanh(a * b + a) - b
    x = stagd.relu(x)
    x = x * x + b
    return stagd.exp(x) / b * a


def eager_op_ns(client):
    """(calls, total daemon-side ns) of the EagerOp method so far (the Stats RPC)."""
    m = {m.method: m for m in client.stats().methods}.get("EagerOp")
    return (m.calls, m.total_ns) if m else (0, 0)


def vulkan_section(ops, size, rounds=5):
    """Device-resident vs host-resident eager tensors on vulkan:0, one daemon each,
    measured in alternating rounds (the best round of each: the machine is shared)."""
    rng = np.random.default_rng(0)
    a_np = rng.normal(size=(size, size)).astype(np.float32)
    b_np = (rng.random(size=(size, size)) + 0.5).astype(np.float32)
    modes = {"host-resident": ["--host-handles"], "device-resident": []}
    daemons = {label: stagd.daemon.start(args=extra) for label, extra in modes.items()}
    clients = {label: stagd.Client(d.addr) for label, d in daemons.items()}
    best = {label: [float("inf"), float("inf"), None, float("inf")] for label in modes}
    previous = stagd._default_client
    try:
        for _ in range(rounds):
            for label, c in clients.items():
                stagd.set_default_client(c)
                with stagd.device("vulkan:0"):
                    a, b = stagd.constant(a_np), stagd.constant(b_np)
                    s0 = eager_op_ns(c)
                    op = per_call(lambda: a + b, max(ops // rounds, 5))
                    s1 = eager_op_ns(c)
                    daemon_op = (s1[1] - s0[1]) / max(s1[0] - s0[0], 1) / 1e9
                    before = c.stats()
                    chain10(a, b).numpy()
                    after = c.stats()
                    chain = per_call(lambda: chain10(a, b).numpy(), max(ops // rounds // 10, 3))
                    del a, b
                row = best[label]
                row[0], row[1], row[3] = min(row[0], op), min(row[1], chain), min(row[3], daemon_op)
                row[2] = (after.device_uploads - before.device_uploads,
                          after.device_downloads - before.device_downloads,
                          after.device_upload_bytes - before.device_upload_bytes
                          + after.device_download_bytes - before.device_download_bytes)
    finally:
        stagd.set_default_client(previous)
        for label in modes:
            clients[label].close()
            daemons[label].stop()
    base_op, base_chain, _, _ = best["host-resident"]
    print(f"vulkan:0, {size}x{size} float32 tensors (best of {rounds} alternating rounds)")
    for label, (op, chain, (up, down, nbytes), daemon_op) in best.items():
        print(f"  {label:15s} eager op {op * 1e6:8.1f} us ({base_op / op:5.2f}x; daemon-side "
              f"{daemon_op * 1e6:6.1f} us)   10-op chain + numpy "
              f"{chain * 1e3:7.2f} ms ({base_chain / chain:5.2f}x)   per chain: {up} uploads, "
              f"{down} downloads, {nbytes / 1e6:.2f} MB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--vulkan", action="store_true", help="only the vulkan:0 section (4)")
    ap.add_argument("--size", type=int, default=256,
                    help="--vulkan: tensors are SIZE x SIZE")
    args = ap.parse_args()
    if args.vulkan:
        vulkan_section(args.ops // 2, args.size)
        return
    client = stagd.connect(os.environ.get("STAGD_ADDR") or None, autostart=True)
    print(f"daemon {client.addr}  binary {stagd.daemon.find_binary()}")

    x = stagd.constant(np.ones((4, 4), np.float32))
    y = stagd.constant(np.ones((4, 4), np.float32))
    ping = per_call(lambda: client.ping(""), args.ops)
    op = per_call(lambda: x + y, args.ops)
    print(f"ping round trip                 {ping * 1e6:8.1f} us")
    print(f"eager op (x + y, 4x4) round trip {op * 1e6:8.1f} us   ratio vs ping {op / ping:5.2f}x")

    f = stagd.function(add_one)
    staged = per_call(lambda: f(x), args.ops)
    print(f"staged call of one op            {staged * 1e6:8.1f} us   ratio vs eager op "
          f"{staged / op:5.2f}x")

    stats = {m.method: m for m in client.stats().methods}
    for name in ("Ping", "EagerOp", "Execute"):
        m = stats.get(name)
        if m and m.calls:
            print(f"  daemon-side time per {name:8s}     {m.total_ns / m.calls / 1e3:8.1f} us "
                  f"({m.calls} calls; the rest of a round trip is gRPC and Python)")

    (te, e0, e1), _ = train_eager(args.steps)
    (ts, s0, s1), _ = train_staged(args.steps)
    print(f"MLP step, eager (GradientTape)   {te * 1e3:8.3f} ms   loss {e0:.4f} -> {e1:.4f}")
    print(f"MLP step, stagd.function         {ts * 1e3:8.3f} ms   loss {s0:.4f} -> {s1:.4f}")
    print(f"staged speed-up over eager       {te / ts:8.2f}x  (target >= 3x)")
    if not np.isclose(e1, s1, rtol=1e-3, atol=1e-5):
        print(f"WARNING: eager and staged training disagree ({e1} vs {s1})")


if __name__ == "__main__":
    main()
