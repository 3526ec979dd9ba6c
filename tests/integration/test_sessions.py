# SPDX-License-Identifier: Apache-2.0
# Client sessions (docs/client.md "Sessions"): the handles a Python client makes belong
# to its session; they go when it exits or closes, and — when its process is killed —
# once the daemon's lease (--handle-lease-ms) runs out. A live client keeps them by
# renewing in the background. Against real daemons with short leases.
import os
import signal
import subprocess
import sys
import textwrap
import time

import grpc
import numpy as np
import pytest

import harness
import stagd
from stagd import tensor as stagd_tensor

LEASE_MS = 1200


def stats(c):
    s = c.stats()
    return s.live_handles, s.live_sessions, s.handles_expired


def run_client(addr, body):
    """Runs a Python client in a child process; returns its stdout lines and exit code."""
    code = textwrap.dedent("""
        import os, signal, sys
        import numpy as np
        import stagd
        c = stagd.Client(sys.argv[1])
        stagd.set_default_client(c)
    """) + textwrap.dedent(body)
    env = harness.base_env(PYTHONPATH=str(harness.REPO / "clients" / "python"),
                           STAGD_GENERATED_DIR=os.environ.get("STAGD_GENERATED_DIR", ""))
    r = subprocess.run([sys.executable, "-c", code, addr], capture_output=True, text=True,
                       env=env, timeout=60)
    return r.stdout.split(), r.returncode, r.stderr


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_a_killed_clients_handles_go_after_the_lease(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--handle-lease-ms", str(LEASE_MS))
    with stagd.Client(d.addr, session=False) as c:
        out, rc, err = run_client(d.addr, """
            ts = [stagd.constant(np.ones(1000, np.float32) * k) for k in range(3)]
            v = stagd.Variable(np.zeros(4, np.float32))
            print(c.stats().live_handles, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """)
        assert rc == -signal.SIGKILL, err
        held = int(out[0])  # three tensors, the variable (and its initial value's handle)
        assert held >= 4
        handles, sessions, expired = stats(c)
        assert handles == held and sessions == 1 and expired == 0  # within the lease
        killed = time.monotonic()
        assert wait_for(lambda: stats(c)[0] == 0, 10 * LEASE_MS / 1000)
        gone_after = time.monotonic() - killed
        assert gone_after > 0.5 * LEASE_MS / 1000  # the lease, not an eager release
        assert stats(c) == (0, 0, held)
        assert c.health() == "SERVING"


def test_exit_and_close_end_the_session_at_once(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--handle-lease-ms", "600000")
    with stagd.Client(d.addr, session=False) as c:
        out, rc, err = run_client(d.addr, """
            keep = [stagd.constant(np.ones(10, np.float32)) for _ in range(5)]
            print(c.stats().live_handles, flush=True)
        """)  # a normal exit: the atexit hook ends the session
        assert rc == 0, err
        assert out == ["5"]
        assert stats(c) == (0, 0, 0)
        mine = stagd.Client(d.addr)
        t = mine.call("Put", mine.pb2.PutRequest(value=stagd_tensor._np_value(
            mine.pb2, np.ones(3, np.float32)))).result.handle.id
        assert stats(c)[:2] == (1, 1)
        mine.close()
        assert stats(c) == (0, 0, 0)
        with pytest.raises(stagd.NotFound, match="was released"):
            c.call("Fetch", {"ids": [t]})


def test_a_live_client_keeps_its_handles_past_the_lease(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--handle-lease-ms", str(LEASE_MS))
    c = stagd.Client(d.addr)
    previous = stagd._default_client
    stagd.set_default_client(c)
    try:
        x = stagd.constant(np.arange(6, dtype=np.float32))
        time.sleep(3 * LEASE_MS / 1000)  # idle: only the renewing thread calls
        assert (x * 2.0).numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        assert c.stats().handles_expired == 0
        renewals = {m.method: m.calls for m in c.stats().methods}.get("Session", 0)
        assert renewals >= 3
    finally:
        stagd.set_default_client(previous)
        c.close()


def test_session_errors(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0")
    with stagd.Client(d.addr, session=False) as c:
        with pytest.raises(stagd.InvalidArgument, match="no stagd-session metadata"):
            c.call("Session")
        channel = grpc.insecure_channel(d.addr)
        ping = channel.unary_unary("/stagd.v1.Stagd/Ping",
                                   request_serializer=c.pb2.PingRequest.SerializeToString,
                                   response_deserializer=c.pb2.PingReply.FromString)
        for bad in ("has space", "x" * 65, "semi;colon"):
            with pytest.raises(grpc.RpcError) as e:
                ping(c.pb2.PingRequest(payload="p"), metadata=(("stagd-session", bad),))
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "stagd-session" in e.value.details()
        ok = ping(c.pb2.PingRequest(payload="p"), metadata=(("stagd-session", "A-b_9"),))
        assert ok.payload == "p"
        channel.close()
        # the default lease, and no session opens without a handle
        with stagd.Client(d.addr) as s:
            assert s.call("Session").lease_ms == 300000
            assert s.call("Session").handles == 0
            assert c.stats().live_sessions == 0
        assert c.health() == "SERVING"


def test_ending_and_reopening_a_session_leaves_no_renewing_thread(start_daemon):
    import threading
    d = start_daemon("--listen", "127.0.0.1:0", "--handle-lease-ms", str(LEASE_MS))
    c = stagd.Client(d.addr)

    def put():
        return c.call("Put", c.pb2.PutRequest(value=stagd_tensor._np_value(
            c.pb2, np.ones(2, np.float32)))).result.handle.id

    def renewing():
        return [t for t in threading.enumerate()
                if t.name == f"stagd-session-{c.session[:6]}" and t.is_alive()]

    try:
        for _ in range(3):  # each new handle after an end reopens the session
            put()
            assert len(renewing()) == 1
            assert c.end_session() == 1
            assert wait_for(lambda: not renewing(), 5)
        assert c.stats().live_sessions == 0
    finally:
        c.close()
