# SPDX-License-Identifier: Apache-2.0
"""test_shutdown.py — SIGTERM/SIGINT: in-flight calls finish, new connections are
refused, the process exits 0."""
import signal
import socket
import threading
import time

import grpc
import pytest

import harness
from harness import rpc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_lets_inflight_call_finish(stagd_bin, pb2, sig):
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--shutdown-timeout-ms", "5000"])
    try:
        result = {}
        ch = grpc.insecure_channel(d.addr)
        # Connect first so the in-flight call is really in flight when the signal lands.
        assert rpc(ch, "Ping", pb2.PingRequest(payload="warm"), pb2.PingReply).payload == "warm"

        def call():
            try:
                result["reply"] = rpc(ch, "Ping", pb2.PingRequest(payload="inflight", delay_ms=1500),
                                      pb2.PingReply, timeout=10)
            except grpc.RpcError as e:
                result["error"] = e

        t = threading.Thread(target=call)
        start = time.monotonic()
        t.start()
        time.sleep(0.3)
        d.proc.send_signal(sig)
        time.sleep(0.3)
        # While the call is still running, the listener is gone.
        assert d.proc.poll() is None, "stagd exited before its in-flight call finished"
        host, port = harness.host_port(d.addr)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((host, port), timeout=2).close()
        with grpc.insecure_channel(d.addr) as ch2:
            with pytest.raises(grpc.RpcError) as e:
                rpc(ch2, "Version", pb2.VersionRequest(), pb2.VersionReply, timeout=1.0)
            assert e.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
        t.join(10)
        assert not t.is_alive()
        assert "error" not in result, f"in-flight call failed: {result.get('error')}"
        assert result["reply"].payload == "inflight"
        assert time.monotonic() - start >= 1.4
        rc = d.proc.wait(10)
        assert rc == 0, f"exit {rc}; log:\n{d.log.text()}"
        ch.close()
    finally:
        d.kill()


def test_shutdown_timeout_cancels_long_call(stagd_bin, pb2):
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--shutdown-timeout-ms", "300"])
    try:
        ch = grpc.insecure_channel(d.addr)
        fut = ch.unary_unary("/stagd.v1.Stagd/Ping", request_serializer=pb2.PingRequest.SerializeToString,
                             response_deserializer=pb2.PingReply.FromString).future(
            pb2.PingRequest(payload="long", delay_ms=8000), timeout=15)
        time.sleep(0.3)
        t = time.monotonic()
        rc = d.terminate(5)  # SIGTERM, then wait
        assert rc == 0, f"exit {rc}; log:\n{d.log.text()}"
        assert time.monotonic() - t < 4, "shutdown did not honour --shutdown-timeout-ms"
        with pytest.raises(grpc.RpcError):
            fut.result(timeout=5)
        ch.close()
    finally:
        d.kill()


def test_sigterm_with_idle_client_exits_promptly(stagd_bin, pb2):
    # Nothing is in flight, so nothing should hold the shutdown up: a connected but
    # idle client must not delay the exit (deployments and editors restart daemons).
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--shutdown-timeout-ms", "20000"])
    ch = grpc.insecure_channel(d.addr)
    try:
        assert rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"
        t = time.monotonic()
        rc = d.terminate()
        elapsed = time.monotonic() - t
        assert rc == 0, f"exit {rc}; log:\n{d.log.text()}"
        assert elapsed < 2.0, (f"stagd took {elapsed:.1f} s to exit on SIGTERM with no request in "
                               f"flight and one idle client connection; log:\n{d.log.text()}")
    finally:
        ch.close()
        d.kill()
