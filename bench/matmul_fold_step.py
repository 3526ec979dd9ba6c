# SPDX-License-Identifier: Apache-2.0
"""matmul_fold_step.py — the time of a staged MLP training step (forward, graph AD,
SGD updates of Variables in the daemon, one Execute RPC a step) with transposes folded
into the matmuls (matmul_tn / _nt / _tt, matmul_grad's products: graph/opt/opt_matmul.c,
graph/exec/ops_adjoint.c) against the baseline that materializes every transpose
(STAGD_MATMUL_TRANSPOSE_FOLD=0), side by side on each backend, same data, same losses.

    relu(x @ W1 + b1) @ W2.T → mean squared error; x [1024, 64], W1 [64, 256],
    W2 [64, 256] (used transposed, as a PyTorch-style Linear weight)

Each (backend, fold) pair runs in its own daemon (the switch is read by the daemon),
alternating so load on the shared machine hits both alike. Run (a release build is
the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      python3 bench/matmul_fold_step.py [--steps N] [--rounds R] [--devices cpu,vulkan:0]
Prints ms per step (the best round) of each and the ratio baseline / folded; the
losses of the two must agree.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 64)).astype(np.float32)
    y = np.tanh(x[:, :8].sum(1, keepdims=True)).astype(np.float32)
    w1 = rng.standard_normal((64, 256)).astype(np.float32) * 0.1
    w2 = rng.standard_normal((1, 256)).astype(np.float32) * 0.1
    return x, y, w1, np.zeros(256, np.float32), w2


def child(steps, device):
    """One daemon, this process's STAGD_MATMUL_TRANSPOSE_FOLD: ms per step and the loss."""
    import stagd
    x0, y0, w1, b1, w2 = data()
    with stagd.device(device):
        W1, B1, W2 = stagd.Variable(w1), stagd.Variable(b1), stagd.Variable(w2)
        x, y = stagd.constant(x0), stagd.constant(y0)

        @stagd.function
        def step(x, y):
            with stagd.GradientTape() as t:
                h = stagd.relu(stagd.matmul(x, W1) + B1)
                p = stagd.matmul(h, stagd.transpose(W2))
                loss = stagd.reduce_mean(stagd.square(p - y))
            for v, g in zip([W1, B1, W2], t.gradient(loss, [W1, B1, W2])):
                v.assign_sub(0.1 * g)
            return loss

        float(step(x, y))  # trace, stage, warm up
        t0 = time.perf_counter()
        for _ in range(steps):
            loss = step(x, y)
        loss = float(loss)
        return (time.perf_counter() - t0) / steps * 1e3, loss


def run(steps, device, fold):
    env = dict(os.environ, STAGD_MATMUL_TRANSPOSE_FOLD="1" if fold else "0")
    p = subprocess.run([sys.executable, __file__, "--child", device, "--steps", str(steps)],
                       env=env, capture_output=True, text=True, timeout=1200)
    if p.returncode:
        sys.exit(f"{device} fold={fold}: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--devices", default="cpu,vulkan:0")
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        ms, loss = child(a.steps, a.child)
        print(json.dumps({"ms": ms, "loss": loss}))
        return
    print(f"{'backend':10} {'baseline ms':>12} {'folded ms':>10} {'ratio':>6}  losses")
    for device in a.devices.split(","):
        best = {False: None, True: None}
        for _ in range(a.rounds):
            for fold in (False, True):
                r = run(a.steps, device, fold)
                if best[fold] is None or r["ms"] < best[fold]["ms"]:
                    best[fold] = r
        b, f = best[False], best[True]
        agree = abs(b["loss"] - f["loss"]) <= 1e-4 * max(1.0, abs(b["loss"]))
        print(f"{device:10} {b['ms']:12.2f} {f['ms']:10.2f} {b['ms'] / f['ms']:6.2f}  "
              f"{b['loss']:.6f} {f['loss']:.6f}{'' if agree else '  DISAGREE'}")
        if not agree:
            sys.exit(1)


if __name__ == "__main__":
    main()
