#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Soak test of a real daemon (issue 24; not run in CI): CLIENTS gRPC clients for
MINUTES minutes of mixed requests — Health, Version, Stats, Ping, Stage + Execute of
small programs, Execute of an endless loop cancelled at a random moment, Execute
with a short deadline, eager Put/Fetch/Release — while whole client processes are
SIGKILLed at random (their calls become disconnects) and restarted. The daemon's RSS
and open fds are sampled every SAMPLE seconds.

Passes when: 0 unexpected errors (CANCELLED after our own cancel and
DEADLINE_EXCEEDED of the short-deadline calls are expected), the daemon answers Health
at the end and exits 0 on SIGTERM with no sanitizer report, fds end where they were after warm-up (+-8), and
RSS in the last quarter is within 25% (+32 MiB) of the second quarter.

Usage: bench/soak.py [--minutes M] [--clients N] [--stagd PATH] [--sample S]
(PATH: a release build, build-release/server/stagd, is best; default $STAGD_BIN,
else build-release/, else build/)"""
import argparse
import multiprocessing as mp
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "clients" / "python"))

LOOP = "(def spin (n)\n  (getitem (while (lambda (i) (< i n)) (lambda (i) (tuple (+ i 1))) (tuple 0)) 0))"
SMALL = ["(def f (x) (+ (* x 2) 1))", "(def g (x) (sum (* (ones (tuple 64)) x)))",
         "(def h (a b) (if (> a b) (- a b) (- b a)))"]
PER_PROCESS = 8


def client_main(addr, first, n, counts_q, seed):
    """One client process: n threads, each its own session, reporting counts each second."""
    import grpc
    import harness
    pb2 = harness.pb2
    hpb2 = harness.health_pb2
    random.seed(seed)
    counts = {}
    lock = threading.Lock()

    def bump(key):
        with lock:
            counts[key] = counts.get(key, 0) + 1

    def stub(ch, path, req_cls, reply_cls):
        return ch.unary_unary(path, request_serializer=req_cls.SerializeToString,
                              response_deserializer=reply_cls.FromString)

    def run(k):
        ch = grpc.insecure_channel(addr)
        md = (("stagd-session", f"soak-{first + k}-{os.getpid()}"),)
        S = "/stagd.v1.Stagd/"
        stage = stub(ch, S + "Stage", pb2.StageRequest, pb2.StageReply)
        execute = stub(ch, S + "Execute", pb2.ExecuteRequest, pb2.ExecuteReply)
        ping = stub(ch, S + "Ping", pb2.PingRequest, pb2.PingReply)
        version = stub(ch, S + "Version", pb2.VersionRequest, pb2.VersionReply)
        stats = stub(ch, S + "Stats", pb2.StatsRequest, pb2.StatsReply)
        health = stub(ch, "/grpc.health.v1.Health/Check", hpb2.HealthCheckRequest, hpb2.HealthCheckResponse)
        put = stub(ch, S + "Put", pb2.PutRequest, pb2.PutReply)
        fetch = stub(ch, S + "Fetch", pb2.FetchRequest, pb2.FetchReply)
        release = stub(ch, S + "Release", pb2.ReleaseRequest, pb2.ReleaseReply)
        loop_id = stage(pb2.StageRequest(sexpr=LOOP), timeout=60, metadata=md).graph_id
        small_ids = [stage(pb2.StageRequest(sexpr=s), timeout=60, metadata=md).graph_id for s in SMALL]
        while True:
            op = random.choice(["health", "version", "stats", "ping", "stage", "exec", "exec", "cancel",
                                "deadline", "eager"])
            try:
                if op == "health":
                    health(hpb2.HealthCheckRequest(), timeout=30, metadata=md)
                elif op == "version":
                    version(pb2.VersionRequest(), timeout=30, metadata=md)
                elif op == "stats":
                    stats(pb2.StatsRequest(), timeout=30, metadata=md)
                elif op == "ping":
                    ping(pb2.PingRequest(payload="x", delay_ms=random.choice([0, 0, 5])), timeout=30, metadata=md)
                elif op == "stage":
                    stage(pb2.StageRequest(sexpr=random.choice(SMALL) + f" ; {random.random()}"), timeout=60,
                          metadata=md)
                elif op == "exec":
                    i = random.randrange(len(small_ids))
                    args = "[3]" if i < 2 else "[3, 5]"
                    execute(pb2.ExecuteRequest(graph_id=small_ids[i], args_json=args), timeout=60, metadata=md)
                elif op == "cancel":
                    fut = execute.future(pb2.ExecuteRequest(graph_id=loop_id, args_json="[1000000000000]"),
                                         timeout=60, metadata=md)
                    time.sleep(random.uniform(0.0, 0.3))
                    fut.cancel()
                    try:
                        fut.result()
                    except grpc.FutureCancelledError:
                        pass
                elif op == "deadline":
                    try:
                        execute(pb2.ExecuteRequest(graph_id=loop_id, args_json="[1000000000000]"),
                                timeout=random.uniform(0.05, 0.3), metadata=md)
                        bump("error:loop finished")
                    except grpc.RpcError as e:
                        if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                            raise
                elif op == "eager":
                    t = pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[3], data=bytes(12))
                    h = put(pb2.PutRequest(value=pb2.Value(tensor=t)), timeout=30, metadata=md).result.handle
                    fetch(pb2.FetchRequest(ids=[h.id]), timeout=30, metadata=md)
                    release(pb2.ReleaseRequest(ids=[h.id]), timeout=30, metadata=md)
                bump("ok:" + op)
            except grpc.RpcError as e:
                bump(f"error:{op}:{e.code().name}:{(e.details() or '')[:80]}")
            except Exception as e:  # noqa: BLE001 — counted and reported
                bump(f"error:{op}:{type(e).__name__}:{str(e)[:80]}")

    for k in range(n):
        threading.Thread(target=run, args=(k,), daemon=True).start()
    while True:
        time.sleep(1)
        with lock:
            snap = dict(counts)
            counts.clear()
        counts_q.put(snap)


def sample(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--sample", type=float, default=5)
    ap.add_argument("--stagd")
    a = ap.parse_args()
    exe = a.stagd or os.environ.get("STAGD_BIN") or next(
        (str(p) for p in (REPO / "build-release/server/stagd", REPO / "build/server/stagd") if p.exists()), None)
    os.environ["STAGD_BIN"] = exe
    import harness
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--device", "cpu", "--deadline-ms", "0"])
    print(f"stagd {exe} on {d.addr}, pid {d.proc.pid}; {a.clients} clients for {a.minutes} min", flush=True)
    q = mp.Queue()
    nproc = (a.clients + PER_PROCESS - 1) // PER_PROCESS
    procs = []
    for p in range(nproc):
        n = min(PER_PROCESS, a.clients - p * PER_PROCESS)
        pr = mp.Process(target=client_main, args=(d.addr, p * PER_PROCESS, n, q, p), daemon=True)
        pr.start()
        procs.append((pr, p * PER_PROCESS, n))
    totals, samples, kills = {}, [], 0
    start = time.monotonic()
    end = start + a.minutes * 60
    next_sample, next_kill = start, start + random.uniform(2, 8)
    while time.monotonic() < end:
        try:
            snap = q.get(timeout=0.5)
            for k, v in snap.items():
                totals[k] = totals.get(k, 0) + v
        except Exception:  # noqa: BLE001 — queue.Empty
            pass
        now = time.monotonic()
        if now >= next_sample:
            samples.append((now - start, *sample(d.proc.pid)))
            next_sample += a.sample
        if now >= next_kill:  # a client process dies: its calls become disconnects
            i = random.randrange(len(procs))
            pr, first, n = procs[i]
            os.kill(pr.pid, signal.SIGKILL)
            pr.join()
            pr = mp.Process(target=client_main, args=(d.addr, first, n, q, random.randrange(1 << 30)), daemon=True)
            pr.start()
            procs[i] = (pr, first, n)
            kills += 1
            next_kill = now + random.uniform(2, 8)
    for pr, _, _ in procs:
        os.kill(pr.pid, signal.SIGKILL)
        pr.join()
    time.sleep(2)  # the daemon sees the disconnects
    final_rss, final_fds = sample(d.proc.pid)
    import grpc
    with grpc.insecure_channel(d.addr) as ch:
        alive = harness.rpc(ch, "/grpc.health.v1.Health/Check", harness.health_pb2.HealthCheckRequest(),
                            harness.health_pb2.HealthCheckResponse, timeout=10).status == 1
    rc = d.terminate()
    reports = harness.sanitizer_reports(d.log.text())
    oks = sum(v for k, v in totals.items() if k.startswith("ok:"))
    errors = {k: v for k, v in totals.items() if k.startswith("error:")}
    secs = time.monotonic() - start
    print(f"calls: {oks} ok in {secs:.0f} s ({oks / secs:.0f}/s); client processes killed: {kills}")
    for k in sorted(totals):
        if k.startswith("ok:"):
            print(f"  {k[3:]:9s} {totals[k]}")
    print(f"unexpected errors: {sum(errors.values())}")
    for k, v in sorted(errors.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {v:6d}  {k}")
    print("daemon samples (s, RSS MiB, fds):")
    for t, rss, fds in samples[:: max(1, len(samples) // 12)]:
        print(f"  {t:7.0f}  {rss / 2**20:8.1f}  {fds}")
    quarter = max(1, len(samples) // 4)
    q2 = statistics.mean(r for _, r, _ in samples[quarter:2 * quarter] or samples)
    q4 = statistics.mean(r for _, r, _ in samples[-quarter:])
    fds_warm = samples[min(len(samples) - 1, quarter)][2]
    print(f"RSS second quarter {q2 / 2**20:.1f} MiB, last quarter {q4 / 2**20:.1f} MiB "
          f"(ratio {q4 / q2:.2f}); fds after warm-up {fds_warm}, at the end {final_fds}; "
          f"health at the end: {'SERVING' if alive else 'NOT'}; exit status {rc}")
    if reports:
        print("sanitizer reports:\n" + "\n".join(reports[:20]))
    ok = (not errors and not reports and alive and rc == 0 and q4 <= q2 * 1.25 + (32 << 20) and final_fds <= fds_warm + 8)
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
