# SPDX-License-Identifier: Apache-2.0
"""chain_bench.py — a 10-op elementwise chain on float32 vectors as one stagd.function
call, side by side with the same chain in NumPy and in PyTorch eager (CPU), same data,
same thread count; prints medians of alternating rounds, the ratios NumPy/stagd and
PyTorch/stagd (> 1: stagd is faster), the daemon-side time of Execute (Stats RPC), and
whether stagd's result equals NumPy's bit for bit.

    y = tanh(sqrt(abs(abs(x*1.5 + 0.5) * x - 0.25) + 1) * 2) + x      (10 ops)

Run (a release build is the fair one; --env STAGD_FUSE=0 runs the chain op by op):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      /usr/bin/python3 bench/chain_bench.py [--n 1048576] [--rounds 7] [--threads T] \\
      [--also unfused=:STAGD_FUSE=0] [--also before=OLD/server/stagd] [--device vulkan:0]

--device runs stagd's chain there (its input resident on the device, the result read
back each call; on a Vulkan device the chain is one generated kernel, and with
--also unfused=:STAGD_FUSE=0 one dispatch per op).
"""
import argparse
import contextlib

import numpy as np

import peers
import stagd


def chain(m, x):
    """The chain with module m's sqrt and tanh (numpy, stagd, torch): Python
    scalars are weak, so every step stays float32 in all three."""
    y = x * 1.5
    y = y + 0.5
    y = abs(y)
    y = y * x
    y = y - 0.25
    y = abs(y)
    y = y + 1.0
    y = m.sqrt(y)
    y = m.tanh(y * 2.0)
    return y + x


def staged(x):
    return chain(stagd, x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the daemon")
    ap.add_argument("--device", help="stagd's device (default: the daemon's)")
    peers.add_also_arg(ap)
    a = ap.parse_args()
    torch = peers.import_torch(a.threads)
    x0 = np.random.default_rng(0).standard_normal(a.n).astype(np.float32)
    with contextlib.ExitStack() as stack:
        if a.device:
            stack.enter_context(stagd.device(a.device))
        client = stack.enter_context(peers.daemon(a.threads, dict(kv.split("=", 1) for kv in a.env)))
        contenders = {"stagd": staged_call(client, x0, check=True),
                      "numpy": lambda: chain(np, x0)}
        for name, other in peers.also_daemons(stack, a.threads, a.also):
            contenders[name] = staged_call(other, x0)
        stagd.set_default_client(client)
        if torch is not None:
            xt = torch.from_numpy(x0)
            contenders["torch"] = lambda: chain(torch, xt)
        res, daemon_ms = peers.measure(client, contenders, a.rounds, a.calls)
        peers.report(f"10-op chain on {a.n} float32" + (f" (stagd on {a.device})" if a.device else ""),
                     a.threads, res, daemon_ms,
                     "stagd.function (waited for)", peers=["numpy", "torch"] + [
                         s.split("=", 1)[0] for s in a.also])


def staged_call(client, x0, check=False):
    """A call of the staged chain on daemon `client` (its own constant and function)."""
    stagd.set_default_client(client)
    x = stagd.constant(x0)
    fn = stagd.function(staged, client=client)
    got = fn(x).numpy()
    if check:
        want = chain(np, x0)
        same = np.array_equal(got.view(np.uint32), want.view(np.uint32))
        print(f"  stagd's result {'equals' if same else 'differs from'} NumPy's bit for bit"
              + ("" if same else f" in {int(np.sum(got != want))} elements (max abs diff "
                 f"{float(np.max(np.abs(got - want))):.3g}; tanh is within 1 ulp)"))
    return peers.waited(client, lambda: fn(x))


if __name__ == "__main__":
    main()
