# SPDX-License-Identifier: Apache-2.0
"""test_cancel_admission.py — issue 24 D4-D6 against a real daemon: work stops when the
client cancels, disconnects, runs out of time or the daemon shuts down; health checks
answer while every worker is busy; one session cannot take more than its share of
requests; a program whose tensors outgrow --max-request-bytes gets RESOURCE_EXHAUSTED
and the daemon keeps serving. Every bound below is a generous "it stopped", never a
speed target."""
import json
import re
import threading
import time

import grpc
import pytest

import harness
from harness import rpc

LOOP = "(def spin (n)\n  (getitem (while (lambda (i) (< i n)) (lambda (i) (tuple (+ i 1))) (tuple 0)) 0))"
QUICK = "(def add1 (x) (+ x 1))"


def _stage(ch, pb2, src, session=None):
    md = (("stagd-session", session),) if session else None
    stub = ch.unary_unary("/stagd.v1.Stagd/Stage", request_serializer=pb2.StageRequest.SerializeToString,
                          response_deserializer=pb2.StageReply.FromString)
    return stub(pb2.StageRequest(sexpr=src), timeout=30, metadata=md).graph_id


def _execute_future(ch, pb2, gid, args_json, session=None, timeout=None, token=None):
    md = ((("stagd-session", session),) if session else ()) + ((("authorization", f"Bearer {token}"),) if token else ())
    stub = ch.unary_unary("/stagd.v1.Stagd/Execute", request_serializer=pb2.ExecuteRequest.SerializeToString,
                          response_deserializer=pb2.ExecuteReply.FromString)
    return stub.future(pb2.ExecuteRequest(graph_id=gid, args_json=args_json), timeout=timeout, metadata=md)


def _quick_ok(ch, pb2, timeout=10):
    gid = _stage(ch, pb2, QUICK)
    reply = rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[41]"), pb2.ExecuteReply, timeout=timeout)
    assert reply.result_json == "42"


def _wait_log(d, regex, timeout=10, count=1):
    found = d.log.wait_for(re.compile(regex), timeout, count)
    assert len(found) >= count, f"no {count} log lines matching {regex!r}; log:\n{d.log.text()[-3000:]}"


def test_client_cancel_and_disconnect_stop_a_looping_execute(start_daemon, pb2):
    # one worker, no deadline: only the cancellation can free the worker
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "1", "--deadline-ms", "0")
    ch = grpc.insecure_channel(d.addr)
    gid = _stage(ch, pb2, LOOP)
    fut = _execute_future(ch, pb2, gid, "[1000000000000]")
    time.sleep(0.5)
    assert not fut.done()
    fut.cancel()
    _wait_log(d, r"Execute.*CANCELLED|CANCELLED.*Execute")
    _quick_ok(ch, pb2)  # the one worker is free again
    # a client that goes away (its channel closed) mid-call
    ch2 = grpc.insecure_channel(d.addr)
    _execute_future(ch2, pb2, gid, "[1000000000000]")
    time.sleep(0.5)
    ch2.close()
    _wait_log(d, r"Execute.*CANCELLED|CANCELLED.*Execute", count=2)
    _quick_ok(ch, pb2)
    ch.close()


def test_deadline_stops_a_looping_execute(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "1")
    ch = grpc.insecure_channel(d.addr)
    gid = _stage(ch, pb2, LOOP)
    with pytest.raises(grpc.RpcError) as e:
        _execute_future(ch, pb2, gid, "[1000000000000]", timeout=0.5).result(timeout=10)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    _quick_ok(ch, pb2)
    ch.close()


def test_sigterm_with_looping_requests_exits_within_the_shutdown_timeout(stagd_bin, pb2):
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--workers", "2", "--deadline-ms", "0",
                        "--shutdown-timeout-ms", "300"])
    try:
        ch = grpc.insecure_channel(d.addr)
        gid = _stage(ch, pb2, LOOP)
        futs = [_execute_future(ch, pb2, gid, "[1000000000000]") for _ in range(3)]
        time.sleep(0.5)
        t = time.monotonic()
        rc = d.terminate(10)  # SIGTERM, then wait
        assert rc == 0, f"exit {rc}; log:\n{d.log.text()}"
        assert time.monotonic() - t < 5, "looping requests held the shutdown"
        for f in futs:
            with pytest.raises(grpc.RpcError):
                f.result(timeout=5)
        ch.close()
    finally:
        d.kill()


def test_health_version_stats_and_ping_answer_while_every_worker_loops(start_daemon, pb2, health_pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "2", "--deadline-ms", "0")
    ch = grpc.insecure_channel(d.addr)
    gid = _stage(ch, pb2, LOOP)
    futs = [_execute_future(ch, pb2, gid, "[1000000000000]", session=f"loop{k}") for k in range(3)]
    time.sleep(0.5)
    try:
        assert rpc(ch, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest(),
                   health_pb2.HealthCheckResponse, timeout=5).status == health_pb2.HealthCheckResponse.SERVING
        assert rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply, timeout=5).api == "stagd.v1"
        assert rpc(ch, "Stats", pb2.StatsRequest(), pb2.StatsReply, timeout=5).requests_total >= 1
        assert rpc(ch, "Ping", pb2.PingRequest(payload="p"), pb2.PingReply, timeout=5).payload == "p"
    finally:
        for f in futs:
            f.cancel()
    _quick_ok(ch, pb2)
    ch.close()


def test_one_session_is_held_to_max_session_requests(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "3", "--deadline-ms", "0",
                     "--max-session-requests", "2")
    ch = grpc.insecure_channel(d.addr)
    gid = _stage(ch, pb2, LOOP)
    futs = [_execute_future(ch, pb2, gid, "[1000000000000]", session="greedy") for _ in range(2)]
    time.sleep(0.5)
    try:
        with pytest.raises(grpc.RpcError) as e:
            _execute_future(ch, pb2, gid, "[1]", session="greedy").result(timeout=10)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max-session-requests" in e.value.details() and "greedy" in e.value.details()
        # another session still gets the third worker
        assert _execute_future(ch, pb2, gid, "[7]", session="other").result(timeout=10).result_json == "7"
    finally:
        for f in futs:
            f.cancel()
    _wait_log(d, r"CANCELLED", count=2)
    time.sleep(0.3)
    # the greedy session's slots came back
    assert _execute_future(ch, pb2, gid, "[3]", session="greedy").result(timeout=10).result_json == "3"
    ch.close()


def test_calls_without_a_session_count_under_their_address(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "3", "--deadline-ms", "0",
                     "--max-session-requests", "1", "--max-unnamed-requests", "2")
    ch = grpc.insecure_channel(d.addr)
    gid = _stage(ch, pb2, LOOP)
    futs = [_execute_future(ch, pb2, gid, "[1000000000000]") for _ in range(2)]
    time.sleep(0.5)
    try:
        # a new connection from the same address is the same caller
        ch2 = grpc.insecure_channel(d.addr, options=[("grpc.use_local_subchannel_pool", 1)])
        with pytest.raises(grpc.RpcError) as e:
            _execute_future(ch2, pb2, gid, "[1]").result(timeout=10)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "without a stagd-session from this address" in e.value.details()
        assert "max-unnamed-requests" in e.value.details()
        ch2.close()
        # a named session is another caller
        assert _execute_future(ch, pb2, gid, "[7]", session="named").result(timeout=10).result_json == "7"
    finally:
        for f in futs:
            f.cancel()
    _wait_log(d, r"CANCELLED", count=2)
    time.sleep(0.3)
    assert _execute_future(ch, pb2, gid, "[3]").result(timeout=10).result_json == "3"
    ch.close()


def test_session_limit_is_keyed_by_token_and_name(start_daemon, pb2, tmp_path):
    tokens = ["a" * 32, "b" * 32]
    (tmp_path / "tokens").write_text("\n".join(tokens) + "\n")
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "4", "--deadline-ms", "0",
                     "--max-session-requests", "2", "--auth-token-file", str(tmp_path / "tokens"))
    ch = grpc.insecure_channel(d.addr)
    md = (("authorization", f"Bearer {tokens[0]}"),)
    stub = ch.unary_unary("/stagd.v1.Stagd/Stage", request_serializer=pb2.StageRequest.SerializeToString,
                          response_deserializer=pb2.StageReply.FromString)
    gid = stub(pb2.StageRequest(sexpr=LOOP), timeout=30, metadata=md).graph_id
    futs = [_execute_future(ch, pb2, gid, "[1000000000000]", session="shared", token=tokens[0]) for _ in range(2)]
    time.sleep(0.5)
    try:
        with pytest.raises(grpc.RpcError) as e:
            _execute_future(ch, pb2, gid, "[1]", session="shared", token=tokens[0]).result(timeout=10)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "'shared'" in e.value.details()
        # the same name under another token is another session: its own count
        assert _execute_future(ch, pb2, gid, "[5]", session="shared",
                               token=tokens[1]).result(timeout=10).result_json == "5"
        # and calls without a name under the first token have a count of their own too
        assert _execute_future(ch, pb2, gid, "[6]", token=tokens[0]).result(timeout=10).result_json == "6"
    finally:
        for f in futs:
            f.cancel()
    _wait_log(d, r"CANCELLED", count=2)
    ch.close()


def test_a_program_over_max_request_bytes_is_refused_and_the_daemon_serves_on(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--max-request-bytes", "4000000")
    ch = grpc.insecure_channel(d.addr)
    # four live 1.6 MB intermediates: 6.4 MB held at once
    big = ("(def f (n) (let a (ones (tuple n)) (let b (+ a 1.0) (let c (* b 2.0) "
           "(let e (- c 1.0) (sum (+ (+ a b) (+ c e))))))))")
    gid = _stage(ch, pb2, big)
    with pytest.raises(grpc.RpcError) as e:
        rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[400000]"), pb2.ExecuteReply, timeout=30)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max-request-bytes" in e.value.details()
    # the same program within the budget runs, with the right value
    ok = rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[1000]"), pb2.ExecuteReply, timeout=30)
    assert json.loads(ok.result_json)["data"] == [1000 * (1 + 2 + 4 + 3)]
    _quick_ok(ch, pb2)
    ch.close()


def test_a_long_stage_stops_at_its_deadline(start_daemon, pb2):
    # 1,500 defs, each calling the one before: seconds of inference and inlining
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "1")
    chain = "\n".join(["(def f0 (x) (+ x 1))"] + [f"(def f{i} (x) (+ (f{i - 1} x) {i}))" for i in range(1, 1500)])
    ch = grpc.insecure_channel(d.addr)
    stub = ch.unary_unary("/stagd.v1.Stagd/Stage", request_serializer=pb2.StageRequest.SerializeToString,
                          response_deserializer=pb2.StageReply.FromString)
    with pytest.raises(grpc.RpcError) as e:
        stub(pb2.StageRequest(sexpr=chain), timeout=0.2)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # the daemon itself stopped the work (it logs the status it sent; the client's
    # deadline reaches it as the deadline or as the call's cancellation, whichever first)
    _wait_log(d, r"Stage (DEADLINE_EXCEEDED|CANCELLED)")
    _quick_ok(ch, pb2)
    ch.close()
