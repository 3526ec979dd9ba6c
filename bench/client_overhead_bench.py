# SPDX-License-Identifier: Apache-2.0
"""client_overhead_bench.py — what the Python client's own code costs per call, with no
daemon and no gRPC: a stub answers `Client.call`, so only the package's Python runs
(argument conversion, the tracing and tape checks, wrapping the reply). eager_bench.py
measures whole round trips, where these microseconds drown in gRPC's noise on a busy
machine; this one sees a change of the per-call path (docs/client.md "How the package
is layered": eager ops consult context.py instead of importing tape.py).

Each line is the best and the median of ROUNDS rounds, and the ratio against the named
baseline: the stub's own `call` with a prebuilt request (the floor every op pays).

Run:
    STAGD_GENERATED_DIR=build-release/python/stagd_gen \\
      /usr/bin/python3 bench/client_overhead_bench.py [--package DIR] [--rounds N]
--package DIR imports `stagd` from DIR (default: this checkout's clients/python), e.g.
an older checkout's clients/python to compare two versions on the same machine.
"""
import argparse
import os
import statistics
import sys
import time


def measure(fn, n, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t) / n)
    return min(times), statistics.median(times)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default=os.path.join(here, "..", "clients", "python"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--n", type=int, default=20000, help="calls per round")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.package))
    import stagd
    from stagd import _proto
    pb2, _ = _proto.load()

    class Stub:
        """Answers EagerOp and Execute with a fresh 4x4 float32 handle."""

        def __init__(self):
            self.pb2, self.n, self._eq = pb2, 0, None  # _eq: no queued eager ops

        def handle(self, variable=False):
            self.n += 1
            return pb2.Value(handle=pb2.TensorHandle(id=f"cpu#{self.n}", device="cpu",
                                                     dtype=5, shape=[4, 4], variable=variable))

        def call(self, name, request=None, timeout=None):
            if name in ("EagerOp", "Execute"):
                return (pb2.EagerOpReply if name == "EagerOp" else pb2.ExecuteReply)(
                    result=self.handle())
            if name == "Release":
                return None
            raise AssertionError(f"the stub does not answer {name}")

        def max_message_bytes(self):
            return 64 << 20

    stub = Stub()
    stagd.set_default_client(stub)
    # the eager lines measure the synchronous path (one EagerOp per op): the queued
    # path's per-op cost is bench/eager_async_bench.py's
    stagd.set_eager_async(False)
    x = stagd.Tensor._from_handle(stub.handle().handle, stub)
    y = stagd.Tensor._from_handle(stub.handle().handle, stub)
    v = stagd.Variable._from_handle(stub.handle(True).handle, stub)

    def add_one(a):
        return a + 1.0

    # a staged function whose trace and graph id are already cached (no Convert / Stage)
    f = stagd.function(add_one)
    conc = sys.modules["stagd.function"].ConcreteFunction("add_one", ["a"], [], "(def add_one (a) (+ a 1.0))",
                                 {}, None)
    conc.graph_id = "g"
    conc.guards = sys.modules["stagd.guards"].Guards()  # none: the trace always holds
    values = f._bind((x,), {})
    f._concrete[f._key(f._parts(values))] = [conc]
    request = pb2.EagerOpRequest(op="+", device="cpu")

    def with_tape(fn):
        def run():
            with stagd.GradientTape() as tape:
                tape.watch(x)
                for _ in range(100):
                    fn()
        return run

    print(f"stagd from {os.path.abspath(args.package)} (no daemon: a stub answers; "
          f"best / median of {args.rounds} rounds)")
    floor, _ = measure(lambda: stub.call("EagerOp", request), args.n, args.rounds)
    print(f"  {'baseline: the stub call':34s} {floor * 1e6:7.2f} us")
    cases = [("eager op x + y", lambda: x + y, 1),
             ("eager op x + y, a tape recording", with_tape(lambda: x + y), 100),
             ("Variable.read_value()", v.read_value, 1),
             ("staged call f(x) (cached graph)", lambda: f(x), 1)]
    for name, fn, per in cases:
        best, med = measure(fn, max(1, args.n // per), args.rounds)
        best, med = best / per, med / per
        print(f"  {name:34s} {best * 1e6:7.2f} us  median {med * 1e6:7.2f} us  "
              f"{best / floor:5.1f}x the baseline")


if __name__ == "__main__":
    main()
