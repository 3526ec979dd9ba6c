# SPDX-License-Identifier: Apache-2.0
"""transfer_bench.py — Put and Fetch throughput of float32 arrays, against a named
baseline: a NumPy copy of the same array (np.copy: memcpy-class, fresh pages each
time, as a Put or Fetch makes).

Paths (docs/client.md "Large tensors", "The local data path"):
  unix-shm  a unix socket, tensor payloads through files in the daemon's shm directory
  unix-msg  the same socket, payloads inside the protobuf messages (Client(shm=False))
  tcp       127.0.0.1, payloads inside the messages

For each size (MiB of float32) it prints Put, Fetch and Put+Fetch in MB/s (size / time;
Put+Fetch is size / (put time + fetch time), the issue's figure) and each as a ratio of
the NumPy copy's MB/s. Every round trip is checked bit-identical; each round releases the
previous round's tensor first (untimed), as a steady loop would.

Run (a release build is the fair one; the ASan build is several times slower):
    STAGD_BIN=build-release/server/stagd PYTHONPATH=clients/python \\
      /usr/bin/python3 bench/transfer_bench.py [--sizes 1,16,64] [--reps 5]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
import stagd  # noqa: E402
from stagd import daemon as sd  # noqa: E402
from stagd.tensor import _fetch_array, _put_array, _release_now  # noqa: E402


def best(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(client, arr, reps):
    """Best Put and best Fetch time of `reps` rounds. Each round first releases the
    previous round's handle (untimed), so the daemon's buffer pool can recycle its memory
    as a steady put/fetch/release loop would; fresh pages cost more than the copy here."""
    t_put = t_fetch = float("inf")
    prev = None
    for _ in range(reps + 1):
        if prev is not None:
            _release_now(client, [prev])
        t0 = time.perf_counter()
        t = _put_array(client, arr, "cpu")
        t1 = time.perf_counter()
        out = _fetch_array(client, t._id, t.dtype, t.shape, "cpu")
        t2 = time.perf_counter()
        if out.tobytes() != arr.tobytes():
            raise SystemExit("transfer_bench: a round trip changed the bytes")
        if prev is not None:  # the first round warms up
            t_put, t_fetch = min(t_put, t1 - t0), min(t_fetch, t2 - t1)
        prev = t
        del out
    _release_now(client, [prev])
    return t_put, t_fetch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,16,64", help="MiB of float32, comma-separated")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--paths", default="unix-shm,unix-msg,tcp")
    a = ap.parse_args()
    unix = sd.start()
    tcp = sd.start(listen="127.0.0.1:0")
    clients = {
        "unix-shm": stagd.Client(unix.addr, shm=True),
        "unix-msg": stagd.Client(unix.addr, shm=False),
        "tcp": stagd.Client(tcp.addr),
    }
    print(f"transfer_bench: stagd {clients['tcp'].version().build}; MB = 10^6 bytes; best of {a.reps}")
    for mib in (int(s) for s in a.sizes.split(",")):
        arr = np.random.default_rng(mib).standard_normal(mib << 18).astype(np.float32)
        mb = arr.nbytes / 1e6
        t_copy = best(lambda: np.copy(arr), a.reps)
        base = mb / t_copy
        print(f"{mib:3d} MiB  baseline numpy copy: {base:8.0f} MB/s")
        for name in a.paths.split(","):
            t_put, t_fetch = measure(clients[name], arr, a.reps)
            put, fetch, both = mb / t_put, mb / t_fetch, mb / (t_put + t_fetch)
            print(f"{mib:3d} MiB  {name:8s}  put {put:7.0f} MB/s ({put / base:5.3f}x)  "
                  f"fetch {fetch:7.0f} MB/s ({fetch / base:5.3f}x)  "
                  f"put+fetch {both:7.0f} MB/s ({both / base:5.3f}x)")
    for c in clients.values():
        c.close()


if __name__ == "__main__":
    main()
