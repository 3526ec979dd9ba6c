# SPDX-License-Identifier: Apache-2.0
"""treernn_bench.py — a TreeRNN (a complete binary tree of 64 leaves, hidden size 128)
forward and gradient as one staged recursive S-expression, side by side with the same
recursion in PyTorch eager (forward, loss.backward()) on the CPU, same data, same thread
count. Prints medians of alternating rounds, the ratio PyTorch/stagd (> 1: stagd is
faster), stagd's daemon-side Execute time (Stats RPC), and checks the gradients agree.

    node(leaf)  = tanh(x_leaf @ U)
    node(inner) = tanh((node(left) + node(right)) @ W)
    loss        = sum(node(root));   stagd: ((grad loss 0 1) W U tree)

The tree is a nested record argument built once: each call is one Execute of the same
prepared request. What building it costs the client is printed on its own line (a
model that gets a new tree every step pays it each time).

Run (a release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      /usr/bin/python3 bench/treernn_bench.py [--leaves 64] [--hidden 128] [--rounds 7] \\
      [--also before=OLD/server/stagd]
"""
import argparse
import contextlib
import json

import numpy as np

import peers

SRC = """
(def node (W U tree)
  (if (getattr tree leaf)
      (tanh (matmul (getattr tree x) U))
      (tanh (matmul (+ (node W U (getattr tree left)) (node W U (getattr tree right))) W))))
(def loss (W U tree) (sum (node W U tree)))
(def main (W U tree) ((grad loss 0 1) W U tree))
"""


def make_tree(rng, leaves, hidden):
    if leaves == 1:
        return {"leaf": True, "x": rng.standard_normal(hidden).astype(np.float32)}
    half = leaves // 2
    return {"leaf": False, "left": make_tree(rng, half, hidden),
            "right": make_tree(rng, leaves - half, hidden)}


def torch_step(torch, W, U, tree):
    def node(t):
        if t["leaf"]:
            return torch.tanh(t["xt"] @ U)
        return torch.tanh((node(t["left"]) + node(t["right"])) @ W)

    W.grad = U.grad = None
    node(tree).sum().backward()
    return W.grad, U.grad


def with_torch_leaves(torch, t):
    if t["leaf"]:
        t["xt"] = torch.from_numpy(t["x"])
    else:
        with_torch_leaves(torch, t["left"])
        with_torch_leaves(torch, t["right"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--leaves", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    peers.add_also_arg(ap)
    a = ap.parse_args()
    torch = peers.import_torch(a.threads)
    rng = np.random.default_rng(0)
    H = a.hidden
    W0 = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    U0 = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    tree = make_tree(rng, a.leaves, H)
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(peers.daemon(a.threads))
        call, gW = staged_call(client, W0, U0, tree)
        from stagd.tensor import _arg_value  # (before the torch leaves replace the arrays)
        build = peers.alternate({"tree": lambda: _arg_value(client, tree, "cpu", [])}, a.rounds, a.calls)
        print(peers.row("client: building the tree argument", build["tree"]))
        contenders = {"stagd": call}
        for name, other in peers.also_daemons(stack, a.threads, a.also):
            contenders[name] = staged_call(other, W0, U0, tree)[0]
        if torch is not None:
            W = torch.tensor(W0, requires_grad=True)
            U = torch.tensor(U0, requires_grad=True)
            with_torch_leaves(torch, tree)
            tW, _ = torch_step(torch, W, U, tree)
            err = float(np.max(np.abs(tW.numpy() - gW)) / (np.max(np.abs(gW)) + 1e-30))
            print(f"  dLoss/dW: stagd vs torch, max relative difference {err:.2e}")
            contenders["torch"] = lambda: torch_step(torch, W, U, tree)
        res, daemon_ms = peers.measure(client, contenders, a.rounds, a.calls)
        peers.report(f"TreeRNN forward+grad, {a.leaves} leaves, H={H}", a.threads, res,
                     daemon_ms, "stagd (one Execute)",
                     peers=["torch"] + [s.split("=", 1)[0] for s in a.also])


def staged_call(client, W0, U0, tree):
    """(a call: one Execute of the prepared request on `client`, stagd's dLoss/dW)."""
    from stagd.tensor import _arg_value
    keep = []
    args = [_arg_value(client, v, "cpu", keep) for v in (W0, U0, tree)]
    gid = client.call("Stage", {"sexpr": SRC}).graph_id
    check = client.pb2.ExecuteRequest(graph_id=gid, args=args, entry="main", device="cpu")
    got = json.loads(client.call("Execute", check).result_json)["tuple"]
    # timed: the result as a binary Value (printing 2x128x128 numbers as JSON text would
    # cost more than the computation)
    req = client.pb2.ExecuteRequest(graph_id=gid, args=args, entry="main", device="cpu",
                                    no_result_json=True)
    H = W0.shape[0]
    return (lambda: client.call("Execute", req)), np.array(got[0]["data"], np.float32).reshape(H, H)


if __name__ == "__main__":
    main()
