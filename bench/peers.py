# SPDX-License-Identifier: Apache-2.0
"""peers.py — what the CPU benchmarks share: the peers they compare with (NumPy,
PyTorch on the CPU) under one thread count, private daemons started with a given
environment, the daemon-side time of a method (the Stats RPC) and CPU of a process
(/proc), and medians of rounds
that alternate between the contenders, so the shared machine's load hits all of them.

PyTorch is Debian's python3-torch; it is imported with OMP_WAIT_POLICY=PASSIVE (its
OpenMP threads sleep instead of spinning between ops, which would steal the daemon's
cores) and torch.set_num_threads(threads). Without it the torch columns read "absent".
"""
import contextlib
import os
import statistics
import sys
import time
import weakref

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
import stagd  # noqa: E402
import stagd.daemon  # noqa: E402


def default_threads():
    return len(os.sched_getaffinity(0))


def import_torch(threads):
    """torch with `threads` intra-op threads and passive OpenMP waits, or None."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def start_daemon(threads, env=None, binary=None):
    """A private daemon (its CPU kernel pool and OpenBLAS capped at `threads`) with
    extra environment `env`; returns (LocalDaemon, Client)."""
    saved = dict(os.environ)
    os.environ["STAGD_CPU_THREADS"] = str(threads)
    os.environ.update(env or {})
    try:
        d = stagd.daemon.LocalDaemon(binary=binary).start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    client = stagd.Client(d.addr, session=True)
    _daemon_pids[client] = d.pid
    return d, client


_daemon_pids = weakref.WeakKeyDictionary()  # client → the pid of its private daemon


def proc_cpu(pid):
    """Seconds of CPU (user + system) process pid has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def daemon_cpu(client):
    """Seconds of CPU the private daemon of `client` (start_daemon's) has used so far."""
    return proc_cpu(_daemon_pids[client])


@contextlib.contextmanager
def daemon(threads, env=None, binary=None):
    """A private daemon (start_daemon) whose client is stagd's default for the block;
    stopped after it."""
    d, client = start_daemon(threads, env, binary)
    stagd.set_default_client(client)
    try:
        yield client
    finally:
        stagd.set_default_client(None)
        client.close()
        d.stop()


def add_also_arg(ap):
    ap.add_argument("--also", action="append", default=[], metavar="NAME=[BINARY][:KEY=VALUE]",
                    help="another daemon in the same rounds: an older build (before=OLD/stagd) "
                         "or this one with a setting (unfused=:STAGD_FUSE=0)")


def also_daemons(stack, threads, specs):
    """[(name, client)] for each --also spec, entered on contextlib.ExitStack stack."""
    out = []
    for spec in specs:
        name, rest = spec.split("=", 1)
        binary, _, kv = rest.partition(":")
        env = dict([kv.split("=", 1)]) if kv else {}
        out.append((name, stack.enter_context(daemon(threads, env, binary=binary or None))))
    return out


def daemon_ns(client, method="Execute"):
    """(calls, total ns) the daemon spent in `method` so far."""
    m = {m.method: m for m in client.stats().methods}.get(method)
    return (m.calls, m.total_ns) if m else (0, 0)


def waited(client, fn):
    """A contender that calls fn and waits until the daemon has run it: a stagd.function
    call returns at once when it goes in the eager queue (its results told later), so
    timing fn alone times the queueing, not the call."""
    def call():
        fn()
        client.sync()
    return call


def calls_ns(client):
    """(calls, total ns) of the daemon's Execute and EagerBatch (where a queued
    stagd.function call runs) so far."""
    (c1, n1), (c2, n2) = daemon_ns(client), daemon_ns(client, "EagerBatch")
    return c1 + c2, n1 + n2


def per_call(fn, n):
    """Seconds per call of fn over n calls (after one warm-up call)."""
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def alternate(contenders, rounds, n):
    """{name: [seconds per call, one per round]}: each round runs every contender's n
    calls in turn. contenders: {name: fn}."""
    out = {k: [] for k in contenders}
    for _ in range(rounds):
        for k, fn in contenders.items():
            out[k].append(per_call(fn, n))
    return out


def median(xs):
    return statistics.median(xs)


def load():
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def row(name, secs):
    """One printed line: median and range in ms."""
    m = median(secs)
    return f"  {name:34s} {m * 1e3:9.3f} ms  ({min(secs) * 1e3:.3f}-{max(secs) * 1e3:.3f})"


def measure(client, contenders, rounds, calls):
    """alternate(), plus the daemon-side ms per Execute or EagerBatch (a waited-for call
    is one of them) over the rounds (None if none)."""
    c0, ns0 = calls_ns(client)
    res = alternate(contenders, rounds, calls)
    c1, ns1 = calls_ns(client)
    return res, ((ns1 - ns0) / (c1 - c0) / 1e6 if c1 > c0 else None)


def report(title, threads, res, daemon_ms, label, peers=("numpy", "torch")):
    """Prints the stagd row (res["stagd"]), its daemon-side time, and each peer's row
    with the ratio peer/stagd (> 1: stagd is faster); a peer missing from res is
    "absent" (torch without python3-torch)."""
    print(f"{title}, {threads} threads, {load()}")
    print(row(label, res["stagd"]))
    if daemon_ms is not None:
        print(f"  daemon-side Execute/EagerBatch: {daemon_ms:.3f} ms per call")
    for p in peers:
        if p in res:
            print(row(p, res[p]))
            print(f"  stagd vs {p}: {median(res[p]) / median(res['stagd']):.2f}x")
        else:
            print(f"  {p}: absent")
