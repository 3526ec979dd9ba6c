# SPDX-License-Identifier: Apache-2.0
"""mlp_step_vs_numpy.py — one training step of a small MLP as a stagd.function (graph
AD, SGD updates of Variables in the daemon, one Execute RPC a step) against the same
step written by hand in NumPy (forward, backward, update), side by side, same data,
same losses.

    relu(x @ W1 + b1) @ W2 → sigmoid → mean squared error; x [256, 64], W1 [64, 128]

Run (a release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      python3 bench/mlp_step_vs_numpy.py [--steps N] [--device cpu|vulkan:0]
Prints the ms per step of each, the ratio, and both final losses (they must agree).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
import stagd  # noqa: E402


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 64)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    w1 = rng.standard_normal((64, 128)).astype(np.float32) * 0.1
    w2 = rng.standard_normal((128, 1)).astype(np.float32) * 0.1
    return x, y, w1, np.zeros(128, np.float32), w2


def staged(steps, device):
    x0, y0, w1, b1, w2 = data()
    with stagd.device(device):
        W1, B1, W2 = stagd.Variable(w1), stagd.Variable(b1), stagd.Variable(w2)
        x, y = stagd.constant(x0), stagd.constant(y0)

        @stagd.function
        def step(x, y):
            with stagd.GradientTape() as t:
                h = stagd.relu(stagd.matmul(x, W1) + B1)
                p = stagd.sigmoid(stagd.matmul(h, W2))
                loss = stagd.reduce_mean(stagd.square(p - y))
            for v, g in zip([W1, B1, W2], t.gradient(loss, [W1, B1, W2])):
                v.assign_sub(0.5 * g)
            return loss

        float(step(x, y))  # trace, stage, warm up
        t0 = time.perf_counter()
        for _ in range(steps):
            loss = step(x, y)
        loss = float(loss)
        return (time.perf_counter() - t0) / steps, loss


def numpy_step(steps):
    x, y, w1, b1, w2 = data()

    def step():
        nonlocal w1, b1, w2
        a = x @ w1 + b1
        h = np.maximum(a, 0)
        p = 1 / (1 + np.exp(-(h @ w2)))
        loss = np.mean((p - y) ** 2)
        dz = 2 * (p - y) / p.size * p * (1 - p)
        dw2 = h.T @ dz
        da = (dz @ w2.T) * (a > 0)
        w1 = w1 - 0.5 * (x.T @ da)
        b1 = b1 - 0.5 * da.sum(0)
        w2 = w2 - 0.5 * dw2
        return loss

    step()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    return (time.perf_counter() - t0) / steps, float(loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    ts, ls = staged(a.steps, a.device)
    tn, ln = numpy_step(a.steps)
    print(f"staged step on {a.device}: {ts * 1e3:.3f} ms   loss {ls:.6g}")
    print(f"numpy step:             {tn * 1e3:.3f} ms   loss {ln:.6g}")
    print(f"numpy/staged: {tn / ts:.2f}x")


if __name__ == "__main__":
    main()
