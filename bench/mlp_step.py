# SPDX-License-Identifier: Apache-2.0
"""mlp_step.py — the small MLP training step the eager and one-call benchmarks share
(step_bench.py, eager_async_bench.py): its data (32×64 inputs, 64 tanh units, 10
outputs, fixed seed), the step on stagd tensors (eager, or traced by stagd.function),
and the same step in PyTorch eager, the named baseline."""
import numpy as np

LR = 0.01


def mlp_data(seed=0):
    """(X, Y, W1, W2) as float32 arrays."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((32, 64)).astype(np.float32)
    Y = rng.standard_normal((32, 10)).astype(np.float32)
    W1 = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    W2 = (rng.standard_normal((64, 10)) * 0.1).astype(np.float32)
    return X, Y, W1, W2


def stagd_setup(stagd):
    """(x, y, params): the data as stagd constants and the four Variables, on the
    default client."""
    X, Y, W1, W2 = mlp_data()
    params = [stagd.Variable(W1), stagd.Variable(np.zeros(64, np.float32)),
              stagd.Variable(W2), stagd.Variable(np.zeros(10, np.float32))]
    return stagd.constant(X), stagd.constant(Y), params


def stagd_loss(stagd, x, y, params):
    """The MLP's mean squared error on stagd values."""
    w1, b1, w2, b2 = params
    h = stagd.tanh(x @ w1 + b1)
    d = h @ w2 + b2 - y
    return stagd.reduce_mean(d * d)


def stagd_update(params, grads, lr=LR):
    """The SGD update of the Variables."""
    for p, g in zip(params, grads):
        p.assign_sub(g * lr)


def stagd_step(stagd, x, y, params, lr=LR):
    """One SGD step on stagd values (a GradientTape, Variable updates); the loss."""
    with stagd.GradientTape() as tape:
        loss = stagd_loss(stagd, x, y, params)
    stagd_update(params, tape.gradient(loss, params), lr)
    return loss


def torch_step(torch, lr=LR):
    """A function running one SGD step of the MLP in PyTorch eager; returns the loss."""
    X, Y, W1, W2 = mlp_data()
    tp = [torch.tensor(a, requires_grad=True) for a in (W1, np.zeros(64, np.float32), W2,
                                                        np.zeros(10, np.float32))]
    tx, ty = torch.tensor(X), torch.tensor(Y)

    def step():
        h = torch.tanh(tx @ tp[0] + tp[1])
        d = h @ tp[2] + tp[3] - ty
        loss = (d * d).mean()
        grads = torch.autograd.grad(loss, tp)
        with torch.no_grad():
            for p, g in zip(tp, grads):
                p -= g * lr
        return loss
    return step
