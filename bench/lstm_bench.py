"""lstm_bench.py — one LSTM training step (T=50 steps, batch 16, input and hidden 128:
forward over the sequence, backward, SGD update of the 12 parameters) as one
stagd.function call, side by side with the same step in PyTorch eager on the CPU, same
data and thread count. Prints medians of alternating rounds, the ratio PyTorch/stagd
(> 1: stagd is faster), the daemon-side Execute time, and both losses (they must agree).

    i, f, o = sigmoid(x W_* + h V_* + b_*);  g = tanh(x W_g + h V_g + b_g)
    c = f*c + i*g;  h = o*tanh(c);  loss = mean(h_T ** 2)

Run (a release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      /usr/bin/python3 bench/lstm_bench.py [--steps 50] [--batch 16] [--hidden 128]
"""
import argparse

import numpy as np

import peers
import stagd

LR = 0.01
GATES = "ifog"


def params(rng, n_in, hidden):
    p = []
    for _ in GATES:
        p.append((rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)).astype(np.float32))
        p.append((rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32))
        p.append(np.zeros(hidden, np.float32))
    return p


def lstm_loss(mm, sig, tanh, mean, xs, p, batch, hidden, zeros):
    h = zeros
    c = zeros
    for x in xs:
        pre = [mm(x, p[3 * k]) + mm(h, p[3 * k + 1]) + p[3 * k + 2] for k in range(4)]
        i, f, o, g = sig(pre[0]), sig(pre[1]), sig(pre[2]), tanh(pre[3])
        c = f * c + i * g
        h = o * tanh(c)
    return mean(h * h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    a = ap.parse_args()
    torch = peers.import_torch(a.threads)
    rng = np.random.default_rng(0)
    B, H = a.batch, a.hidden
    xs0 = [rng.standard_normal((B, H)).astype(np.float32) for _ in range(a.steps)]
    p0 = params(rng, H, H)
    with peers.daemon(a.threads) as client:
        P = [stagd.Variable(v) for v in p0]
        xs = [stagd.constant(x) for x in xs0]
        zeros = stagd.constant(np.zeros((B, H), np.float32))

        @stagd.function
        def step(*xs):
            with stagd.GradientTape() as t:
                loss = lstm_loss(stagd.matmul, stagd.sigmoid, stagd.tanh, stagd.reduce_mean,
                                 xs, P, B, H, zeros)
            for v, g in zip(P, t.gradient(loss, P)):
                v.assign_sub(LR * g)
            return loss

        first = float(step(*xs))
        contenders = {"stagd": lambda: step(*xs)}
        if torch is not None:
            TP = [torch.tensor(v, requires_grad=True) for v in p0]
            txs = [torch.from_numpy(x) for x in xs0]
            tz = torch.zeros(B, H)

            def torch_step():
                loss = lstm_loss(torch.matmul, torch.sigmoid, torch.tanh, torch.mean, txs, TP,
                                 B, H, tz)
                for v in TP:
                    v.grad = None
                loss.backward()
                with torch.no_grad():
                    for v in TP:
                        v -= LR * v.grad
                return loss

            tfirst = float(torch_step())
            print(f"  first-step loss: stagd {first:.6g}, torch {tfirst:.6g}")
            contenders["torch"] = torch_step
        res, daemon_ms = peers.measure(client, contenders, a.rounds, a.calls)
        peers.report(f"LSTM step T={a.steps} batch={B} hidden={H}", a.threads, res, daemon_ms,
                     "stagd.function (one Execute)", peers=("torch",))


if __name__ == "__main__":
    main()
