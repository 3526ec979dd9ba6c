# SPDX-License-Identifier: Apache-2.0
"""test_lsp_admission.py — issue 24: an LSP connection that floods or sends slow requests
gets "server busy" (-32803) past --lsp-max-requests unanswered requests, and never
holds more than half of the LSP pool (its own, beside gRPC's workers), so another
connection and gRPC are answered meanwhile (docs/lsp.md "Admission")."""
import time

import grpc

import harness
from harness import rpc


def test_a_flooding_lsp_connection_is_busy_and_blocks_no_other(start_daemon, pb2, health_pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp-listen", "127.0.0.1:0", "--workers", "2",
                     "--lsp-max-requests", "3", expect_lsp=1)
    a, b = harness.TcpLsp(d.lsp_addr), harness.TcpLsp(d.lsp_addr)
    try:
        a.initialize()
        b.initialize()
        # two slow requests: a's share of the LSP pool (4 threads: 2); on one pool shared
        # with gRPC's two workers, as before, they took every thread
        slow = [a.send_request("stagd/ping", {"delayMs": 8000, "payload": f"s{i}"}) for i in range(2)]
        queued = a.send_request("stagd/version")
        busy = a.send_request("stagd/version")
        others = []
        r = a.read_response(busy, timeout=5, others=others)
        assert r["error"]["code"] == -32803, r
        assert "server busy" in r["error"]["message"] and "lsp-max-requests" in r["error"]["message"]
        assert not others, f"answered while the slow pings run: {others}"
        # the other connection and gRPC health are answered while a's pings run
        t = time.monotonic()
        assert b.request("stagd/version", timeout=5)["result"]["api"] == "stagd.v1"
        with grpc.insecure_channel(d.addr) as ch:
            assert rpc(ch, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest(),
                       health_pb2.HealthCheckResponse, timeout=5).status == health_pb2.HealthCheckResponse.SERVING
            # a worker-lane call too: LSP jobs never take gRPC's workers
            assert rpc(ch, "Ping", pb2.PingRequest(payload="w", delay_ms=1), pb2.PingReply, timeout=5).payload == "w"
        assert time.monotonic() - t < 5
        # cancelling a's pings answers everything a queued, in its turn
        for i in slow:
            a.notify("$/cancelRequest", {"id": i})
        got = {}
        while len(got) < 3:
            m = a.read_message(timeout=10)
            if "id" in m and "method" not in m:
                got[m["id"]] = m
        assert all(got[i]["error"]["code"] == -32800 for i in slow), got
        assert got[queued]["result"]["api"] == "stagd.v1", got
        # and a has room again
        assert a.request("stagd/version", timeout=5)["result"]["api"] == "stagd.v1"
    finally:
        a.close()
        b.close()
