# SPDX-License-Identifier: Apache-2.0
"""epilogue_bench.py — a dense layer, tanh(x @ W + b) (--act relu, none), as one stagd.function call, side
by side with the same layer in NumPy and in PyTorch eager (CPU), same data, same thread
count; prints medians of alternating rounds, the ratios NumPy/stagd and PyTorch/stagd
(> 1: stagd is faster), the daemon-side time of Execute (Stats RPC), and whether stagd's
result equals NumPy's bit for bit.

On the CPU the bias and the tanh run as the product's epilogue: one pass written over
the product's own tensor (docs/graph.md "Epilogues in place"); --also
unfused=:STAGD_FUSE=0 runs them op by op, each into a new tensor, for the A/B.

Run (a release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      /usr/bin/python3 bench/epilogue_bench.py [--m 4096] [--k 64] [--n 512] \\
      [--act tanh|relu|none] [--rounds 7] [--threads T] \\
      [--also unfused=:STAGD_FUSE=0]
"""
import argparse
import contextlib

import numpy as np

import peers
import stagd


ACT = "tanh"


def layer(m, x, w, b):
    """The layer with module m's activation (numpy, stagd, torch): tanh, relu (as
    maximum(y, 0): NumPy has no relu) or none."""
    y = x @ w + b
    if ACT == "tanh":
        return m.tanh(y)
    if ACT == "relu":
        return m.maximum(y, m.zeros_like(y)) if m is not stagd else stagd.relu(y)
    return y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=4096, help="rows of x (the batch)")
    ap.add_argument("--k", type=int, default=64, help="inputs")
    ap.add_argument("--n", type=int, default=512, help="outputs")
    ap.add_argument("--act", choices=["tanh", "relu", "none"], default="tanh")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the daemon")
    peers.add_also_arg(ap)
    a = ap.parse_args()
    global ACT
    ACT = a.act
    torch = peers.import_torch(a.threads)
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((a.m, a.k)).astype(np.float32)
    w0 = (rng.standard_normal((a.k, a.n)) / np.sqrt(a.k)).astype(np.float32)
    b0 = rng.standard_normal(a.n).astype(np.float32)
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(peers.daemon(a.threads, dict(kv.split("=", 1) for kv in a.env)))
        contenders = {"stagd": staged_call(client, x0, w0, b0, check=True),
                      "numpy": lambda: layer(np, x0, w0, b0)}
        for name, other in peers.also_daemons(stack, a.threads, a.also):
            contenders[name] = staged_call(other, x0, w0, b0)
        stagd.set_default_client(client)
        if torch is not None:
            xt, wt, bt = (torch.from_numpy(v) for v in (x0, w0, b0))
            contenders["torch"] = lambda: layer(torch, xt, wt, bt)
        res, daemon_ms = peers.measure(client, contenders, a.rounds, a.calls)
        peers.report(f"{a.act}(x @ W + b), x {a.m}x{a.k}, W {a.k}x{a.n}, float32", a.threads, res,
                     daemon_ms, "stagd.function (waited for)",
                     peers=["numpy", "torch"] + [s.split("=", 1)[0] for s in a.also])


def staged_call(client, x0, w0, b0, check=False):
    """A call of the staged layer on daemon `client` (its own constants and function)."""
    stagd.set_default_client(client)
    x, w, b = (stagd.constant(v) for v in (x0, w0, b0))
    fn = stagd.function(lambda x, w, b: layer(stagd, x, w, b), client=client)
    got = fn(x, w, b).numpy()
    if check:
        # the same product as stagd's (one OpenBLAS sgemm), then NumPy's bias and tanh
        want = layer(np, x0, w0, b0)
        same = np.array_equal(got.view(np.uint32), want.view(np.uint32))
        print(f"  stagd's result {'equals' if same else 'differs from'} NumPy's bit for bit"
              + ("" if same else f" in {int(np.sum(got != want))} elements (max abs diff "
                 f"{float(np.max(np.abs(got - want))):.3g}; tanh is within 1 ulp)"))
    return peers.waited(client, lambda: fn(x, w, b))


if __name__ == "__main__":
    main()
