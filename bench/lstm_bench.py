# SPDX-License-Identifier: Apache-2.0
"""lstm_bench.py — an LSTM language-model training step (forward, backward and SGD:
janus_bench.py's model at the issue-23 size, T=50 tokens unrolled, batch 16, hidden 128)
as one stagd.function call, side by side with the same step in PyTorch eager (CPU),
same data and thread count. Prints medians of alternating rounds, the ratio
PyTorch/stagd (> 1: stagd is faster), the daemon-side time of Execute, and both first
losses (they must agree).

Run (a release build is the fair one):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python OMP_WAIT_POLICY=PASSIVE \\
      /usr/bin/python3 bench/lstm_bench.py [--T 50] [--hidden 128] [--rounds 5] [--calls 5] \\
      [--also before=OLD/server/stagd]
"""
import argparse
import contextlib

import janus_bench
import peers
import stagd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=50)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--threads", type=int, default=peers.default_threads())
    peers.add_also_arg(ap)
    a = ap.parse_args()
    janus_bench.T, janus_bench.H, janus_bench.B = a.T, a.hidden, 16  # the model reads these
    torch = peers.import_torch(a.threads)

    def staged(client):
        stagd.set_default_client(client)
        fn, d = janus_bench.stagd_step("lstm", "staged")
        return fn, d, float(fn(d))

    with contextlib.ExitStack() as stack:
        client = stack.enter_context(peers.daemon(a.threads))
        fn, d, first = staged(client)
        contenders = {"stagd": peers.waited(client, lambda: fn(d))}
        for name, other in peers.also_daemons(stack, a.threads, a.also):
            ofn, od, _ = staged(other)
            contenders[name] = peers.waited(other, lambda ofn=ofn, od=od: ofn(od))
        stagd.set_default_client(client)
        line = f"  first loss: stagd {first:.6f}"
        if torch is not None:
            tstep, td = janus_bench.torch_step("lstm")
            line += f", torch {float(tstep(td)):.6f}"
            contenders["torch"] = lambda: tstep(td)
        print(line)
        res, daemon_ms = peers.measure(client, contenders, a.rounds, a.calls)
        peers.report(f"LSTM LM training step, T={a.T}, batch 16, hidden {a.hidden}", a.threads, res,
                     daemon_ms, "stagd.function (waited for)",
                     peers=["torch"] + [s.split("=", 1)[0] for s in a.also])


if __name__ == "__main__":
    main()
