# SPDX-License-Identifier: Apache-2.0
"""test_frames.py — the framed transport (PATH.frames beside a unix --listen socket,
docs/api.md "The framed transport") against a real daemon: the same replies and errors
as gRPC, tokens checked, every malformed frame answered with the daemon still serving,
a closed connection cancelling its call, unread replies bounded, replies out of order,
and the Python client using it (and falling back to gRPC without it).

The frames are written here by hand from the documented layout, not with the client's
code (stagd/_frames.py), so a mistake shared by both would still show.
"""
import os
import re
import socket
import stat
import struct
import threading
import time

import grpc
import numpy as np
import pytest

import harness
from harness import pb2

LOOP = "(def spin (n)\n  (getitem (while (lambda (i) (< i n)) (lambda (i) (tuple (+ i 1))) (tuple 0)) 0))"
OK, INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED, UNIMPLEMENTED, UNAVAILABLE, UNAUTHENTICATED = 0, 3, 5, 8, 12, 14, 16


def request_frame(rid, method, body=b"", session=b"", token=b"", timeout_ms=0):
    m = method.encode()
    head = struct.pack("<IIB", rid, timeout_ms, len(m)) + m + bytes([len(session)]) + session
    head += struct.pack("<H", len(token)) + token
    return struct.pack("<I", len(head) + len(body)) + head + body


class Raw:
    """A hand-made connection to PATH.frames."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(path)

    def send(self, data):
        self.sock.sendall(data)

    def _exactly(self, n):
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError(f"closed after {len(out)} of {n} bytes")
            out += chunk
        return bytes(out)

    def reply(self):
        """(id, status, reason, details, body)."""
        n, = struct.unpack("<I", self._exactly(4))
        d = self._exactly(n)
        rid, status, rlen = struct.unpack_from("<IBB", d)
        reason = d[6:6 + rlen].decode()
        dlen, = struct.unpack_from("<I", d, 6 + rlen)
        p = 10 + rlen
        return rid, status, reason, d[p:p + dlen].decode(), d[p + dlen:]

    def call(self, rid, method, msg=None, **kw):
        self.send(request_frame(rid, method, msg.SerializeToString() if msg is not None else b"", **kw))
        return self.reply()

    def close(self):
        self.sock.close()


@pytest.fixture
def unix_daemon(start_daemon, tmp_path):
    def start(*extra):
        sock = tmp_path / "d.sock"
        d = start_daemon("--listen", f"unix:{sock}", *extra)
        d.sock = str(sock)
        d.frames = str(sock) + ".frames"
        return d
    return start


def _ok(reply, rid):
    assert reply[0] == rid and reply[1] == OK, reply
    return reply[4]


def _stage(conn, rid, src, **kw):
    return pb2.StageReply.FromString(_ok(conn.call(rid, "Stage", pb2.StageRequest(sexpr=src), **kw), rid)).graph_id


def test_replies_and_errors_equal_grpcs(unix_daemon):
    d = unix_daemon()
    assert stat.S_IMODE(os.stat(d.frames).st_mode) == 0o600
    raw = Raw(d.frames)
    ch = grpc.insecure_channel(f"unix:{d.sock}")
    cases = [
        ("Version", pb2.VersionRequest(), pb2.VersionReply),
        ("Parse", pb2.ParseRequest(source="def f(x):\n    return x + 1\n"), pb2.ParseReply),
        ("Convert", pb2.ConvertRequest(source="def f(x):\n    if x > 0:\n        x = -x\n    return x\n"),
         pb2.ConvertReply),
        ("Stage", pb2.StageRequest(sexpr="(def add1 (x) (+ x 1))"), pb2.StageReply),
        ("Ping", pb2.PingRequest(payload="é and \u2603"), pb2.PingReply),
    ]
    for i, (method, msg, reply_cls) in enumerate(cases, 1):
        via_grpc = harness.rpc(ch, method, msg, reply_cls)
        via_frames = reply_cls.FromString(_ok(raw.call(i, method, msg), i))
        assert via_frames == via_grpc, method
    gid = _stage(raw, 20, "(def add1 (x) (+ x 1))")
    reply = pb2.ExecuteReply.FromString(_ok(raw.call(21, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[41]")), 21))
    assert reply.result_json == "42"
    # errors: the same status, reason and located details as gRPC's
    bad = [
        ("Execute", pb2.ExecuteRequest(graph_id="no-such-graph", args_json="[1]")),
        ("Stage", pb2.StageRequest(sexpr="(def f (x) (+ x")),
        ("Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[1, 2]")),
    ]
    sh = _stage(raw, 30, "(def f (a b) (+ a b))")
    bad.append(("Execute", pb2.ExecuteRequest(graph_id=sh, args_json='[{"dtype": "float32", "shape": [2], "data": [1, 2]}, '
                                                               '{"dtype": "float32", "shape": [3], "data": [1, 2, 3]}]')))
    for i, (method, msg) in enumerate(bad, 40):
        with pytest.raises(grpc.RpcError) as e:
            harness.rpc(ch, method, msg, pb2.ExecuteReply if method == "Execute" else pb2.StageReply)
        rid, status, reason, details, body = raw.call(i, method, msg)
        assert (rid, status, details, body) == (i, e.value.code().value[0], e.value.details(), b""), method
        assert reason == dict(e.value.trailing_metadata()).get("stagd-reason", ""), method
    assert raw.call(50, "Execute", bad[-1][1])[2] == "shape_mismatch"
    raw.close()
    ch.close()


def test_a_request_message_that_does_not_decode_is_invalid_argument(unix_daemon):
    d = unix_daemon()
    raw = Raw(d.frames)
    raw.send(request_frame(1, "Execute", b"\x0a\xff\xff\xff\xff\x0f"))
    rid, status, _, details, _ = raw.reply()
    assert (rid, status) == (1, INVALID_ARGUMENT), details
    assert "Execute" in details
    assert _ok(raw.call(2, "Health.Check"), 2) == b"\x08\x01"  # SERVING, same connection
    raw.close()


def test_malformed_frames_are_answered_and_the_daemon_keeps_serving(unix_daemon):
    d = unix_daemon("--max-message-bytes", str(1 << 20))
    raw = Raw(d.frames)
    rid, status, _, details, _ = raw.call(7, "NoSuchMethod")
    assert (rid, status) == (7, UNIMPLEMENTED) and "NoSuchMethod" in details
    # a header whose method runs past the frame
    raw.send(struct.pack("<IIIB", 9, 8, 0, 200))
    rid, status, _, details, _ = raw.reply()
    assert (rid, status) == (8, INVALID_ARGUMENT) and "malformed frame" in details
    # shorter than a request header
    raw.send(struct.pack("<III", 8, 11, 0))
    assert raw.reply()[:2] == (11, INVALID_ARGUMENT)
    # a session name that is not printable ASCII
    raw.send(request_frame(12, "Version", session=b"s\x00x"))
    assert raw.reply()[:2] == (12, INVALID_ARGUMENT)
    # too large: answered, its bytes skipped, and the connection goes on
    big = (1 << 20) + (64 << 10) + 1
    raw.send(struct.pack("<II", big, 13))
    raw.send(b"\x00" * (big - 4))
    rid, status, _, details, _ = raw.reply()
    assert (rid, status) == (13, RESOURCE_EXHAUSTED) and "larger than this daemon's limit" in details
    assert raw.call(14, "Health.Check")[:2] == (14, OK)
    # a length that cannot hold an id: answered, then the connection is closed
    raw.send(struct.pack("<II", 2, 15))
    assert raw.reply()[:2] == (15, INVALID_ARGUMENT)
    with pytest.raises((EOFError, ConnectionResetError)):
        raw.reply()
    raw.close()
    # a client that sends half a frame and goes away
    half = Raw(d.frames)
    half.send(request_frame(1, "Version")[:7])
    half.close()
    fresh = Raw(d.frames)
    assert fresh.call(1, "Health.Check")[:2] == (1, OK)
    fresh.close()
    ch = grpc.insecure_channel(f"unix:{d.sock}")
    assert harness.rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply).version
    ch.close()


def test_tokens_are_checked_on_every_frame(unix_daemon, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice-token-0123456789abcdef\n")
    os.chmod(tokens, 0o600)
    d = unix_daemon("--auth-token-file", str(tokens))
    raw = Raw(d.frames)
    for rid, token in ((1, b""), (2, b"wrong-token-0123456789abcdef"), (3, b"alice-token-0123456789abcde")):
        rid_, status, _, details, _ = raw.call(rid, "Version", token=token)
        assert (rid_, status) == (rid, UNAUTHENTICATED), details
        assert "bearer token" in details
    assert raw.call(4, "Version", token=b"alice-token-0123456789abcdef")[:2] == (4, OK)
    raw.close()
    import stagd
    c = stagd.Client(f"unix:{d.sock}", token="alice-token-0123456789abcdef")
    assert c.call("Version").version and c._local.conn is not None
    c.close()
    anon = stagd.Client(f"unix:{d.sock}")
    with pytest.raises(stagd.Unauthenticated):
        anon.call("Version")
    anon.close()


def test_closing_the_connection_cancels_its_call(unix_daemon):
    # one worker, no deadline: only the cancellation can free the worker
    d = unix_daemon("--workers", "1", "--deadline-ms", "0")
    raw = Raw(d.frames)
    gid = _stage(raw, 1, LOOP)
    raw.send(request_frame(2, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[1000000000000]").SerializeToString()))
    time.sleep(0.5)
    raw.close()
    found = d.log.wait_for(re.compile(r"Execute.*CANCELLED|CANCELLED.*Execute"), 20)
    assert found, d.log.text()[-3000:]
    again = Raw(d.frames)
    quick = _stage(again, 1, "(def add1 (x) (+ x 1))")
    reply = pb2.ExecuteReply.FromString(_ok(again.call(2, "Execute", pb2.ExecuteRequest(graph_id=quick, args_json="[41]")), 2))
    assert reply.result_json == "42"  # the one worker is free again
    again.close()


def test_the_timeout_in_the_header_is_the_calls_deadline(unix_daemon):
    d = unix_daemon("--workers", "1")
    raw = Raw(d.frames)
    gid = _stage(raw, 1, LOOP)
    t = time.monotonic()
    rid, status, _, details, _ = raw.call(2, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[1000000000000]"),
                                          timeout_ms=300)
    assert (rid, status) == (2, 4), details  # DEADLINE_EXCEEDED
    assert time.monotonic() - t < 15
    raw.close()


def test_replies_come_as_calls_finish_and_unread_replies_are_bounded(unix_daemon):
    d = unix_daemon("--workers", "2")
    raw = Raw(d.frames)
    raw.send(request_frame(1, "Ping", pb2.PingRequest(delay_ms=800, payload="slow").SerializeToString()))
    raw.send(request_frame(2, "Ping", pb2.PingRequest(payload="quick").SerializeToString()))
    first, second = raw.reply(), raw.reply()
    assert (first[0], second[0]) == (2, 1)
    assert pb2.PingReply.FromString(second[4]).payload == "slow"
    # 24 MiB of replies the client does not read: the daemon stops reading this
    # connection's requests meanwhile (so the sender blocks), serves others, and nothing
    # is lost once the replies are read
    payload = "x" * (1 << 20)
    n = 24
    sender = threading.Thread(target=lambda: [
        raw.send(request_frame(100 + i, "Ping", pb2.PingRequest(payload=payload).SerializeToString())) for i in range(n)])
    sender.start()
    sender.join(3)
    assert sender.is_alive(), "the daemon read every request although 24 MiB of replies were unread"
    other = Raw(d.frames)
    assert other.call(1, "Health.Check")[:2] == (1, OK)
    other.close()
    got = []
    for _ in range(n):
        rid, status, _, _, body = raw.reply()
        assert status == OK and pb2.PingReply.FromString(body).payload == payload
        got.append(rid)
    sender.join(10)
    assert sorted(got) == list(range(100, 100 + n))
    raw.close()


def test_the_client_uses_frames_and_falls_back_to_grpc(unix_daemon, start_daemon, tmp_path):
    import stagd
    d = unix_daemon()
    c = stagd.Client(f"unix:{d.sock}")
    c.call("Version")
    conn = c._local.conn
    assert conn is not None and conn.path == d.frames
    # the same answers, and the same exception classes, over both
    g = stagd.Client(f"unix:{d.sock}", frames=False)
    g.call("Version")
    assert getattr(g._local, "conn", None) is None
    # eager batches go out without waiting sooner where that costs no more than waiting
    assert stagd.eager_queue.queue_of(c).bound == stagd.eager_queue.FRAMED_BOUND
    assert stagd.eager_queue.queue_of(g).bound == stagd.eager_queue.DEFAULT_BOUND
    tensor = pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[4], data=np.arange(4, dtype=np.float32).tobytes())
    for client in (c, g):
        x = client.call("Put", pb2.PutRequest(value=pb2.Value(tensor=tensor))).result.handle
        y = client.call("Fetch", pb2.FetchRequest(ids=[x.id])).values[0].tensor
        assert np.frombuffer(y.data, np.float32).tolist() == [0, 1, 2, 3]
        gid = client.call("Stage", {"sexpr": "(def f (a b) (+ a b))"}).graph_id
        assert client.call("Execute", {"graph_id": gid, "args_json": "[1, 2]"}).result_json == "3"
        with pytest.raises(stagd.ShapeMismatch):
            client.call("Execute", {"graph_id": gid, "args_json": '[{"dtype": "float32", "shape": [2], "data": [1, 2]}, '
                                                                  '{"dtype": "float32", "shape": [3], "data": [1, 2, 3]}]'})
        with pytest.raises(stagd.NotFound):
            client.call("Fetch", pb2.FetchRequest(ids=["cpu#" + "0" * 32]))
    # a session's handles are its own over frames too
    other = stagd.Client(f"unix:{d.sock}")
    with pytest.raises(stagd.NotFound):
        other.call("Fetch", pb2.FetchRequest(ids=[x.id]))
    other.close()
    # the daemon restarts at the same path: the idle connection is replaced
    c.close()
    g.close()
    d2_sock = tmp_path / "r.sock"
    d2 = start_daemon("--listen", f"unix:{d2_sock}")
    r = stagd.Client(f"unix:{d2_sock}")
    assert r.call("Version").version
    first = r._local.conn
    assert d2.terminate() == 0
    assert not os.path.exists(str(d2_sock) + ".frames")  # removed at shutdown
    d3 = start_daemon("--listen", f"unix:{d2_sock}")
    assert r.call("Version").version
    assert r._local.conn is not first and r._local.conn is not None
    r.close()
    # no framed socket (--no-frames, or an older daemon): gRPC
    nf_sock = tmp_path / "nf.sock"
    start_daemon("--listen", f"unix:{nf_sock}", "--no-frames")
    assert not os.path.exists(str(nf_sock) + ".frames")
    nf = stagd.Client(f"unix:{nf_sock}")
    assert nf.call("Version").version
    assert getattr(nf._local, "conn", None) is None and not nf.uses_frames()
    nf.close()
    del d3


def test_each_thread_and_a_forked_child_get_their_own_connection(unix_daemon):
    import stagd
    d = unix_daemon()
    c = stagd.Client(f"unix:{d.sock}")
    c.call("Version")
    mine = c._local.conn
    seen = []

    def work():
        for i in range(50):
            assert c.call("Ping", {"payload": f"t{i}"}).payload == f"t{i}"
        seen.append(c._local.conn)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 3 and len({id(s) for s in seen + [mine]}) == 4
    # a call started on this thread's connection and waited for on another (the eager
    # queue's batch in flight) while this thread goes on calling: each gets its own reply
    # (timeouts: a reply another thread took would otherwise be waited for forever)
    c.timeout = 10
    waits = [c._call_async("Ping", {"delay_ms": 200, "payload": f"late{i}"}) for i in range(3)]
    late = []
    waiter = threading.Thread(target=lambda: late.extend(w().payload for w in waits))
    waiter.start()
    for i in range(40):
        assert c.call("Ping", {"payload": f"now{i}"}).payload == f"now{i}"
    waiter.join(20)
    assert late == ["late0", "late1", "late2"]
    assert c._local.conn is mine
    pending = c._call_async("Ping", {"delay_ms": 300, "payload": "parent's"})
    pid = os.fork()
    if pid == 0:  # the child must not share the parent's stream
        ok = c.call("Ping", {"payload": "child"}).payload == "child" and c._local.conn is not mine
        try:  # nor wait for a reply the parent's connection will carry
            pending()
            ok = False
        except stagd.Unavailable as e:
            ok = ok and "parent process" in str(e)
        os._exit(0 if ok else 1)
    assert pending().payload == "parent's"
    assert c.call("Ping", {"payload": "parent"}).payload == "parent"
    assert os.waitpid(pid, 0)[1] == 0
    assert c._local.conn is mine
    c.close()


def test_random_frames_each_get_one_reply_and_the_daemon_keeps_serving(unix_daemon):
    """Hostile input: frames of random header bytes and bodies (lengths that hold an id),
    some with real method names and garbage messages. Each is answered once, with its id;
    the sanitizer build checks the parsing touches nothing outside the frame."""
    import random
    d = unix_daemon("--workers", "2")
    rng = random.Random(20261129)
    raw = Raw(d.frames)
    methods = [b"Execute", b"Stage", b"Fetch", b"EagerBatch", b"Put", b"Parse", b"Convert", b"Release"]
    sent = []
    for i in range(400):
        rid = 1000 + i
        kind = rng.random()
        if kind < 0.4:  # random bytes after the id
            rest = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
            frame = struct.pack("<II", 4 + len(rest), rid) + rest
        else:  # a real method with a garbage message, session and token of random lengths
            m = rng.choice(methods)
            session = bytes(rng.choice(b"abcdef0123456789") for _ in range(rng.randint(0, 40)))
            body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200)))
            frame = request_frame(rid, m.decode(), body, session=session, timeout_ms=2000)
            if kind > 0.8:  # a header length that lies
                frame = frame[:12] + bytes([rng.randint(0, 255)]) + frame[13:]
        raw.send(frame)
        sent.append(rid)
    got = [raw.reply()[0] for _ in sent]
    assert sorted(got) == sent
    assert raw.call(1, "Health.Check")[:2] == (1, OK)
    raw.close()
    ch = grpc.insecure_channel(f"unix:{d.sock}")
    assert harness.rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply).version
    ch.close()


def test_shutdown_answers_the_calls_in_flight_then_closes(unix_daemon):
    import signal
    d = unix_daemon("--workers", "2")
    busy, idle = Raw(d.frames), Raw(d.frames)
    busy.send(request_frame(1, "Ping", pb2.PingRequest(delay_ms=1500, payload="finish me").SerializeToString()))
    time.sleep(0.3)
    d.proc.send_signal(signal.SIGTERM)
    d.log.wait_for(re.compile(r"shutting down"), 10)
    # a new call is refused at once (from the moment the transport has heard of it: the
    # log line comes first)
    for rid in range(2, 1000):
        busy.send(request_frame(rid, "Version"))
        got, status, _, details, _ = busy.reply()
        assert got == rid and status in (OK, UNAVAILABLE), details
        if status == UNAVAILABLE:
            assert "shutting down" in details
            break
        time.sleep(0.005)
    assert status == UNAVAILABLE
    rid, status, _, _, body = busy.reply()  # the call in flight is answered
    assert (rid, status) == (1, OK) and pb2.PingReply.FromString(body).payload == "finish me"
    for conn in (busy, idle):  # then every connection is closed
        with pytest.raises((EOFError, ConnectionResetError)):
            conn.reply()
        conn.close()
    assert d.proc.wait(20) == 0
    assert not os.path.exists(d.frames)
