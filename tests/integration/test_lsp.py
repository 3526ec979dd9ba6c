# SPDX-License-Identifier: Apache-2.0
"""test_lsp.py — LSP / JSON-RPC 2.0 over stdio and TCP with real Content-Length framing:
lifecycle, service methods, and bad input after which the same stream keeps working."""
import json
import time

import grpc
import pytest

import harness
from harness import frame


def assert_version_works(s):
    resp = s.request("stagd/version")
    assert "error" not in resp, resp
    assert resp["result"]["api"] == "stagd.v1"
    assert resp["result"]["version"]


def read_until_response(s, id, timeout=harness.IO_TIMEOUT):
    """Messages up to and including the response to `id` (notifications skipped)."""
    others = []
    resp = s.read_response(id, timeout, others=others)
    return others, resp


def only_error(msgs, code):
    errs = [m for m in msgs if "error" in m]
    assert len(errs) == 1 and errs[0]["error"]["code"] == code, msgs
    return errs[0]


# ------------------------------------------------------------------ lifecycle (stdio)

def test_stdio_lifecycle(stagd_bin):
    s = harness.StdioLsp()
    try:
        result = s.initialize()
        assert isinstance(result["capabilities"], dict)
        assert result["serverInfo"]["name"] == "stagd"
        assert result["serverInfo"]["version"]
        v = s.request("stagd/version")["result"]
        assert v["api"] == "stagd.v1" and v["version"] == result["serverInfo"]["version"]
        h = s.request("stagd/health")
        assert h["result"] == {"status": "SERVING"}, h
        h = s.request("stagd/health", {"service": ""})
        assert h["result"] == {"status": "SERVING"}, h
        resp = s.request("shutdown")
        assert "result" in resp and resp["result"] is None, resp
        s.notify("exit")
        assert s.wait() == 0
        assert "serving gRPC" not in s.log.text(), "--lsp --stdio without --listen must not serve gRPC"
    finally:
        s.close()


def test_stdio_with_grpc_listener(stagd_bin, pb2):
    s = harness.StdioLsp(["--listen", "127.0.0.1:0"])
    try:
        s.initialize()
        m = s.log.wait_for(harness._GRPC_READY, harness.START_TIMEOUT)
        assert m, s.log.text()
        with grpc.insecure_channel(m[0].group(1)) as ch:
            assert harness.rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"
        assert_version_works(s)
        assert s.request("shutdown")["result"] is None
        s.notify("exit")
        assert s.wait() == 0
    finally:
        s.close()


def test_stdio_exit_without_shutdown(stagd_bin):
    s = harness.StdioLsp()
    try:
        s.initialize()
        s.notify("exit")
        assert s.wait() == 1
    finally:
        s.close()


def test_stdio_service_methods(lsp):
    devs = lsp.request("stagd/listDevices")["result"]
    assert "cpu" in [d["name"] for d in devs["devices"]], devs
    p = lsp.request("stagd/ping", {"delayMs": 10, "payload": "x"})
    assert p["result"] == {"payload": "x"}, p
    # proto3 JSON omits default values: an empty payload is an empty object.
    assert lsp.request("stagd/ping", {})["result"] == {}
    assert lsp.request("stagd/ping")["result"] == {}
    lsp.request("stagd/version")
    stats = lsp.request("stagd/stats")["result"]
    calls = {m["method"]: m["calls"] for m in stats["methods"]}
    # proto3 JSON: uint64 as strings
    assert isinstance(calls["Version"], str) and int(calls["Version"]) >= 1, stats


def test_stdio_service_error_carries_status(lsp):
    resp = lsp.request("stagd/grad", {"graphId": "gnope", "entry": "f"})
    assert resp["error"]["code"] == -32000, resp
    assert resp["error"]["data"]["status"] == "NOT_FOUND", resp
    assert_version_works(lsp)


def test_stdio_health_unknown_service(lsp):
    resp = lsp.request("stagd/health", {"service": "nope"})
    assert resp["error"]["code"] == -32000, resp
    assert resp["error"]["data"]["status"] == "NOT_FOUND", resp
    assert_version_works(lsp)


# --------------------------------------------------------------------- bad input

def test_garbage_bytes_then_resync(lsp):
    lsp.send_raw(b"\x00\xff\xfe garbage that is no header ")
    id = lsp.send_request("stagd/version")
    others, resp = read_until_response(lsp, id)
    err = only_error(others, -32700)
    assert err["id"] is None
    assert resp["result"]["api"] == "stagd.v1"
    assert_version_works(lsp)


def test_long_garbage_then_resync(lsp):
    lsp.send_raw(b"x" * 50_000)
    time.sleep(0.1)
    id = lsp.send_request("stagd/version")
    others, resp = read_until_response(lsp, id)
    assert others and all(m["error"]["code"] == -32700 and m["id"] is None for m in others), others
    assert resp["result"]["api"] == "stagd.v1"
    assert_version_works(lsp)


def test_garbage_line_then_resync(lsp):
    lsp.send_raw(b"this is not a header\r\n\r\n")
    id = lsp.send_request("stagd/version")
    others, resp = read_until_response(lsp, id)
    err = only_error(others, -32700)
    assert err["id"] is None
    assert resp["result"]["api"] == "stagd.v1"


@pytest.mark.parametrize("same_write", [False, True], ids=["separate-writes", "same-write"])
def test_header_without_content_length(lsp, same_write):
    bad = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
    if same_write:  # the server sees the bad header and the next message in one read
        id = 77
        lsp.send_raw(bad + frame({"jsonrpc": "2.0", "id": id, "method": "stagd/version"}))
    else:
        lsp.send_raw(bad)
        time.sleep(0.2)
        id = lsp.send_request("stagd/version")
    others, resp = read_until_response(lsp, id)
    err = only_error(others, -32700)
    assert err["id"] is None
    assert resp["result"]["api"] == "stagd.v1"
    assert_version_works(lsp)


@pytest.mark.parametrize("chunked", [False, True], ids=["one-write", "body-in-pieces"])
def test_content_length_above_limit(stagd_bin, chunked):
    s = harness.StdioLsp(["--max-message-bytes", "1024"])
    try:
        s.initialize()
        big = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "stagd/ping",
                          "params": {"payload": "x" * 5000}}).encode()
        data = frame(big)
        if chunked:  # the body (with what looks like a header inside) trickles in
            big = big.replace(b"xxxxxxxxxx", b"Content-Length: 3\r\n\r\n{}\n", 1)[:len(big)]
            data = frame(big)
            for i in range(0, len(data), 1000):
                s.send_raw(data[i:i + 1000])
                time.sleep(0.02)
        else:
            s.send_raw(data)
        id = s.send_request("stagd/version")
        others, resp = read_until_response(s, id)
        err = only_error(others, -32600)
        assert err["id"] is None
        assert "1024" in err["error"]["message"], err
        assert resp["result"]["api"] == "stagd.v1"
        assert_version_works(s)
    finally:
        s.close()


def test_invalid_json(lsp):
    lsp.send_raw(frame(b'{"jsonrpc": "2.0", "id": 5, "method": '))
    id = lsp.send_request("stagd/version")
    others, resp = read_until_response(lsp, id)
    err = only_error(others, -32700)
    assert err["id"] is None
    assert resp["result"]["api"] == "stagd.v1"


@pytest.mark.parametrize("body", [b"42", b'"hello"', b'{"jsonrpc": "2.0", "id": 8}',
                                  b'{"jsonrpc": "2.0", "id": 8, "method": 17}'])
def test_invalid_request(lsp, body):
    lsp.send_raw(frame(body))
    id = lsp.send_request("stagd/version")
    others, resp = read_until_response(lsp, id)
    only_error(others, -32600)
    assert resp["result"]["api"] == "stagd.v1"


def test_unknown_method(lsp):
    resp = lsp.request("stagd/nope")
    assert resp["error"]["code"] == -32601, resp
    assert_version_works(lsp)


def test_unknown_notification_is_ignored(lsp):
    lsp.notify("$/somethingUnknown", {})
    lsp.notify("stagd/nope")
    assert_version_works(lsp)


def test_request_before_initialize(stagd_bin):
    s = harness.StdioLsp()
    try:
        resp = s.request("stagd/version")
        assert resp["error"]["code"] == -32002, resp
        s.initialize()
        assert_version_works(s)
    finally:
        s.close()


@pytest.mark.parametrize("params", [{"delayMs": "soon"}, {"bogus": 1}, {"payload": 5}, [1, 2]])
def test_bad_params(lsp, params):
    resp = lsp.request("stagd/ping", params)
    assert resp["error"]["code"] == -32602, resp
    assert_version_works(lsp)


def test_message_split_into_tiny_writes(lsp):
    data = frame({"jsonrpc": "2.0", "id": 500, "method": "stagd/ping",
                  "params": {"payload": "split", "delayMs": 1}})
    for i in range(0, len(data), 3):
        lsp.send_raw(data[i:i + 3])
        time.sleep(0.002)
    resp = lsp.read_response(500)
    assert resp["result"] == {"payload": "split"}, resp
    assert_version_works(lsp)


def test_two_messages_in_one_write(lsp):
    data = (frame({"jsonrpc": "2.0", "id": 601, "method": "stagd/ping", "params": {"payload": "a"}})
            + frame({"jsonrpc": "2.0", "id": 602, "method": "stagd/version"}))
    lsp.send_raw(data)
    got = {}
    for _ in range(2):
        m = lsp.read_message()
        if "id" in m and "method" not in m:
            got[m["id"]] = m
    assert got[601]["result"] == {"payload": "a"}, got
    assert got[602]["result"]["api"] == "stagd.v1", got
    assert_version_works(lsp)


# --------------------------------------------------------------------------- TCP

def test_tcp_two_sessions_and_exit_closes_one(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp-listen", "127.0.0.1:0", expect_lsp=1)
    a, b = harness.TcpLsp(d.lsp_addr), harness.TcpLsp(d.lsp_addr)
    try:
        # Interleave the two sessions.
        ida = a.send_request("initialize", {"capabilities": {}})
        idb = b.send_request("initialize", {"capabilities": {}})
        assert b.read_response(idb)["result"]["serverInfo"]["name"] == "stagd"
        assert a.read_response(ida)["result"]["serverInfo"]["name"] == "stagd"
        a.notify("initialized", {})
        b.notify("initialized", {})
        assert_version_works(a)
        assert_version_works(b)
        # Each connection is its own session: b was initialized, a fresh c is not.
        c = harness.TcpLsp(d.lsp_addr)
        try:
            assert c.request("stagd/version")["error"]["code"] == -32002
        finally:
            c.close()
        assert a.request("shutdown")["result"] is None
        a.notify("exit")
        a.expect_closed()
        assert_version_works(b)
        assert d.proc.poll() is None, "exit on one TCP connection stopped the daemon"
        b.send_raw(frame(b"{not json"))
        assert b.read_message()["error"]["code"] == -32700
        assert_version_works(b)
    finally:
        a.close()
        b.close()


def test_tcp_client_disconnect_leaves_daemon_serving(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp-listen", "127.0.0.1:0", expect_lsp=1)
    a = harness.TcpLsp(d.lsp_addr)
    a.initialize()
    a.send_request("stagd/ping", {"delayMs": 200, "payload": "gone"})
    a.close()  # vanishes with a request in flight
    time.sleep(0.4)
    b = harness.TcpLsp(d.lsp_addr)
    try:
        b.initialize()
        assert_version_works(b)
    finally:
        b.close()


# ------------------------------------------------------ deadlines and concurrency

def test_slow_request_does_not_block_the_stream(lsp):
    slow = lsp.send_request("stagd/ping", {"delayMs": 1500, "payload": "slow"})
    t = time.monotonic()
    fast = lsp.send_request("stagd/version")
    others = []
    resp = lsp.read_response(fast, others=others)
    assert resp["result"]["api"] == "stagd.v1"
    assert time.monotonic() - t < 1.2, "stagd/version waited for an earlier slow request"
    assert not others, others
    assert lsp.read_response(slow)["result"] == {"payload": "slow"}


def test_deadline_ms_applies_to_lsp(stagd_bin):
    s = harness.StdioLsp(["--deadline-ms", "200"])
    try:
        s.initialize()
        resp = s.request("stagd/ping", {"delayMs": 3000, "payload": "late"})
        assert resp["error"]["code"] == -32000, resp
        assert resp["error"]["data"]["status"] == "DEADLINE_EXCEEDED", resp
        assert_version_works(s)
    finally:
        s.close()
