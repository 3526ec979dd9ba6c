# SPDX-License-Identifier: Apache-2.0
"""rpc_cost_bench.py — what one unary call to the daemon costs on the local unix socket:
wall time, the client's CPU and the daemon's CPU per call (from /proc), and the
daemon's context switches (perf, when it is installed), for a call answered on the
completion-queue thread (Version, the admin lane) and one run on a worker (an empty
EagerBatch, waited for, and started as a future then waited for: how the eager queue
sends a batch it does not wait for) — each over gRPC and over the framed transport
(PATH.frames, docs/api.md), which local clients use by default. The named baseline is a plain request/reply of the same bytes between two
processes over a unix socket (a Python echo server: length-prefixed frames), the floor a
leaner local transport could approach.

Every sync point of the eager queue and every waited-for `stagd.function` call pays one
such call (docs/performance.md "What a round trip costs").

Run:
    STAGD_BIN=build-release/server/stagd STAGD_GENERATED_DIR=build-release/python/stagd_gen \\
      /usr/bin/python3 bench/rpc_cost_bench.py [--calls N] [--rounds R]
"""
import argparse
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import peers
import stagd
from stagd import _wire

_ECHO = r"""
import socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
print("ready", flush=True)
c, _ = s.accept()
while True:
    h = c.recv(4, socket.MSG_WAITALL)
    if len(h) < 4:
        break
    n, = struct.unpack("<I", h)
    body = c.recv(n, socket.MSG_WAITALL)
    c.sendall(h + body)
"""


def measure(call, pid, n):
    """(wall µs, client CPU µs, server CPU µs) per call over n calls."""
    s0, c0, t = peers.proc_cpu(pid), time.process_time(), time.perf_counter()
    for _ in range(n):
        call()
    wall = time.perf_counter() - t
    return wall / n * 1e6, (time.process_time() - c0) / n * 1e6, (peers.proc_cpu(pid) - s0) / n * 1e6


def switches(call, pid, n):
    """The server's context switches per call (perf stat), or None without perf."""
    if not shutil.which("perf"):
        return None
    p = subprocess.Popen(["perf", "stat", "-x", ",", "-e", "context-switches", "-p", str(pid)],
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    for _ in range(n):
        call()
    p.send_signal(2)
    out = p.communicate()[1]
    for line in out.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and parts[2] == "context-switches" and parts[0].isdigit():
            return int(parts[0]) / n
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    req = _wire.batch_request([], ["cpu#" + "1" * 32])
    tmp = tempfile.mkdtemp(prefix="rpc-cost-")
    path = os.path.join(tmp, "echo.sock")
    echo = subprocess.Popen([sys.executable, "-c", _ECHO, path], stdout=subprocess.PIPE, text=True)
    try:
        echo.stdout.readline()
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)
        frame = struct.pack("<I", len(req)) + req

        def echo_call():
            sock.sendall(frame)
            n, = struct.unpack("<I", sock.recv(4, socket.MSG_WAITALL))
            sock.recv(n, socket.MSG_WAITALL)

        d, client = peers.start_daemon(1)
        try:
            pid = d.pid
            grpc_only = stagd.Client(d.addr, session=True, frames=False)
            contenders = {}
            for name, c in (("gRPC", grpc_only), ("frames", client)):
                contenders.update({
                    f"{name}: Version (admin lane)": (lambda c=c: c._call_now("Version", {}), pid),
                    f"{name}: EagerBatch, empty": (lambda c=c: c._call_now("EagerBatch", req), pid),
                    f"{name}: the same, as a future": (lambda c=c: c._call_async("EagerBatch", req)(), pid),
                })
            contenders["baseline: unix-socket echo"] = (echo_call, echo.pid)
            res = {k: [] for k in contenders}
            for _ in range(a.rounds):  # alternating, so the machine's load hits all
                for k, (fn, p) in contenders.items():
                    fn()
                    res[k].append(measure(fn, p, a.calls))
            sw = {k: switches(fn, p, a.calls) for k, (fn, p) in contenders.items()}
        finally:
            grpc_only.close()
            client.close()
            d.stop()
        base = statistics.median(r[0] for r in res["baseline: unix-socket echo"])
        print(f"one call, median of {a.rounds} rounds of {a.calls} (µs per call)")
        print(f"  {'':36s} {'wall':>8s} {'client CPU':>11s} {'server CPU':>11s} {'switches':>9s} {'vs echo':>8s}")
        for k, rows in res.items():
            w, c, s = (statistics.median(r[i] for r in rows) for i in range(3))
            n = "-" if sw[k] is None else f"{sw[k]:.1f}"
            print(f"  {k:36s} {w:8.1f} {c:11.1f} {s:11.1f} {n:>9s} {w / base:7.1f}x")
    finally:
        echo.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
