# SPDX-License-Identifier: Apache-2.0
"""test_grpc.py — the gRPC API of the real daemon: admin methods, errors, deadlines,
unix sockets and concurrency."""
import concurrent.futures
import time

import grpc
import pytest

from harness import rpc, raw_rpc


def test_version(channel, pb2):
    r = rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply)
    assert r.version.strip()
    assert r.api == "stagd.v1"
    # the op table's rows and aliases, each once
    assert {"+", "add", "exp", "matmul", "softmax", "grad"} <= set(r.primitives)
    assert len(r.primitives) == len(set(r.primitives)) > 50


@pytest.mark.parametrize("service", ["", "stagd.v1.Stagd"])
def test_health_serving(channel, health_pb2, service):
    r = rpc(channel, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest(service=service),
            health_pb2.HealthCheckResponse)
    assert r.status == health_pb2.HealthCheckResponse.SERVING


def test_health_unknown_service(channel, health_pb2):
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest(service="nope"),
            health_pb2.HealthCheckResponse)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_list_devices_has_cpu(channel, pb2):
    r = rpc(channel, "ListDevices", pb2.ListDevicesRequest(), pb2.ListDevicesReply)
    names = [d.name for d in r.devices]
    assert "cpu" in names, names
    cpu = r.devices[names.index("cpu")]
    assert cpu.backend == "cpu"


def test_stats_counts_calls(fresh_daemon, pb2):
    with grpc.insecure_channel(fresh_daemon.addr) as ch:
        for _ in range(2):
            rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply)
        s = rpc(ch, "Stats", pb2.StatsRequest(), pb2.StatsReply)
    by_name = {m.method: m for m in s.methods}
    assert "Version" in by_name, s
    assert by_name["Version"].calls >= 2
    assert s.requests_total >= 2
    assert s.uptime_ms >= 0
    errors_before = s.errors_total
    with grpc.insecure_channel(fresh_daemon.addr) as ch:
        with pytest.raises(grpc.RpcError):
            rpc(ch, "Grad", pb2.GradRequest(), pb2.GradReply)
        s = rpc(ch, "Stats", pb2.StatsRequest(), pb2.StatsReply)
    assert s.errors_total == errors_before + 1, s
    grad = {m.method: m for m in s.methods}["Grad"]
    assert grad.calls == 1 and grad.errors == 1, s


def test_ping_echo(channel, pb2):
    r = rpc(channel, "Ping", pb2.PingRequest(payload="héllo wörld ✓"), pb2.PingReply)
    assert r.payload == "héllo wörld ✓"


def test_ping_echo_embedded_nul(channel, pb2):
    # U+0000 is valid UTF-8 and a valid proto3 string: it must survive the round trip,
    # or be rejected clearly — never silently truncated.
    try:
        r = rpc(channel, "Ping", pb2.PingRequest(payload="a\x00b"), pb2.PingReply)
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    else:
        assert r.payload == "a\x00b", "the payload was silently truncated at the NUL"


def test_ping_delay(channel, pb2):
    t = time.monotonic()
    r = rpc(channel, "Ping", pb2.PingRequest(payload="late", delay_ms=200), pb2.PingReply)
    assert r.payload == "late"
    assert time.monotonic() - t >= 0.19


def test_ping_delay_above_limit(channel, pb2):
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Ping", pb2.PingRequest(delay_ms=10_000_000), pb2.PingReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rpc(channel, "Ping", pb2.PingRequest(payload="ok"), pb2.PingReply).payload == "ok"


def test_ping_deadline_exceeded_then_serving(channel, pb2):
    t = time.monotonic()
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Ping", pb2.PingRequest(payload="x", delay_ms=3000), pb2.PingReply, timeout=0.3)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - t < 2.5
    assert rpc(channel, "Ping", pb2.PingRequest(payload="after"), pb2.PingReply).payload == "after"
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def test_grad_of_unknown_graph_is_not_found(channel, pb2):
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Grad", pb2.GradRequest(graph_id="gnope", entry="f"), pb2.GradReply)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    details = e.value.details() or ""
    assert "gnope" in details, details


def test_unknown_method_unimplemented(channel):
    with pytest.raises(grpc.RpcError) as e:
        raw_rpc(channel, "/stagd.v1.Stagd/Nope", b"")
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_invalid_protobuf_then_serving(channel, pb2):
    with pytest.raises(grpc.RpcError) as e:
        raw_rpc(channel, "/stagd.v1.Stagd/Version", b"\xff\xff\xff\xff")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "VersionRequest" in (e.value.details() or ""), e.value.details()
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def test_unix_socket_listener(start_daemon, pb2, health_pb2, tmp_path):
    sock = tmp_path / "stagd.sock"
    d = start_daemon("--listen", f"unix:{sock}", "--listen", "127.0.0.1:0", expect_grpc=2)
    assert f"unix:{sock}" in d.grpc_addrs, d.grpc_addrs
    for addr in d.grpc_addrs:
        with grpc.insecure_channel(addr) as ch:
            assert rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"
            r = rpc(ch, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest(),
                    health_pb2.HealthCheckResponse)
            assert r.status == health_pb2.HealthCheckResponse.SERVING


def test_concurrent_calls(fresh_daemon, pb2):
    n = 20
    with grpc.insecure_channel(fresh_daemon.addr) as ch:
        def one(i):  # no session: one address's bucket, under --max-unnamed-requests (256)
            return rpc(ch, "Ping", pb2.PingRequest(payload=f"p{i}", delay_ms=100), pb2.PingReply).payload

        t = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(n) as ex:
            results = list(ex.map(one, range(n)))
        elapsed = time.monotonic() - t
        assert results == [f"p{i}" for i in range(n)]
        # 20 × 100 ms one after another would take 2 s; with 4 workers about 0.5 s.
        assert elapsed < 1.8, f"20 concurrent 100 ms pings took {elapsed:.2f} s: not concurrent"
        s = rpc(ch, "Stats", pb2.StatsRequest(), pb2.StatsReply)
        assert {m.method: m.calls for m in s.methods}.get("Ping", 0) >= n
