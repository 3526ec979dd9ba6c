# SPDX-License-Identifier: Apache-2.0
"""test_replicas.py — scale-out (docs/deploy.md "Replicas"): three stagd replicas serving
the same --models DIR behind HAProxy (gRPC over HTTP/2, sessions pinned by hashing
their stagd-session metadata: deploy/haproxy/stagd.cfg). Many clients run through the
proxy; one replica is killed mid-run. Staged calls (stagd.run_staged, stagd.run_model) carry
on without an error — the client retries UNAVAILABLE and a replica that lacks the
content-addressed program stages it again — while the eager sessions that lived on the
dead replica get a clear NOT_FOUND naming the lost handle, and the other sessions never
notice. HAProxy is Debian's `haproxy` (scripts/install-deps.sh).
"""
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

import harness
import stagd

PROGRAM = "(def scale (x) (+ (* x 2.0) 1.0))"
W = np.array([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]], np.float32)
RUN_AFTER_KILL = 2.5  # seconds the clients go on after the kill


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def models_dir(daemon, tmp_path_factory):
    root = tmp_path_factory.mktemp("replica-models")
    c = stagd.Client(daemon.addr)
    previous = stagd._default_client
    stagd.set_default_client(c)
    try:
        w = stagd.Variable(W)
        stagd.export(stagd.function(_affine(w)), root / "affine/1",
                     stagd.TensorSpec((None, 3), "float32"))
    finally:
        stagd.set_default_client(previous)
        c.close()
    return root


def _affine(w):
    def affine(x):
        return stagd.matmul(x, w)
    return affine


def _start_proxy(tmp_path, replicas):
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if not haproxy:
        print("SKIPPED: haproxy is not installed (Debian package haproxy; scripts/install-deps.sh)")
        pytest.skip("haproxy is not installed (apt-get install haproxy)")
    port = _free_port()
    servers = "\n".join(f"    server r{i} {d.addr} proto h2 check inter 250ms fall 1 rise 2"
                        for i, d in enumerate(replicas))
    cfg = (harness.REPO / "deploy/haproxy/stagd.cfg").read_text()
    cfg = cfg.replace("@LISTEN@", f"127.0.0.1:{port}").replace("@SERVERS@", servers)
    (tmp_path / "haproxy.cfg").write_text(cfg)
    check = subprocess.run([haproxy, "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    proc = subprocess.Popen([haproxy, "-db", "-f", str(tmp_path / "haproxy.cfg")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"127.0.0.1:{port}"
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("haproxy did not listen")


class Worker(threading.Thread):
    """A client looping over calls until stopped; counts calls and keeps the errors (an
    UNAVAILABLE call is noted and the loop goes on, as an application would retry)."""

    def __init__(self, addr, body):
        super().__init__(daemon=True)
        self.client = stagd.Client(addr)
        self.body = body
        self.stop = threading.Event()
        self.calls, self.after_kill, self.errors, self.unavailable = 0, 0, [], []
        self.killed_at = None

    def run(self):
        state = {}
        while not self.stop.is_set():
            try:
                self.body(self.client, state, self.calls)
            except stagd.StagdError as e:
                if not (isinstance(e, stagd.Unavailable) or e.details == "Stream removed"):
                    self.errors.append(e)
                    return
                self.unavailable.append(e)  # a call in flight on the killed replica: the
                continue  # client goes on with its next call
            except Exception as e:  # noqa: BLE001 - the test reads them
                self.errors.append(e)
                return
            self.calls += 1
            if self.killed_at is not None:
                self.after_kill += 1


def staged_body(client, state, i):
    x = np.full((4,), float(i % 7), np.float32)
    np.testing.assert_array_equal(stagd.run_staged(PROGRAM, x, client=client), x * 2 + 1)
    xm = np.full((2, 3), float(i % 5), np.float32)
    np.testing.assert_allclose(stagd.run_model("affine", xm, client=client), xm @ W, rtol=1e-6)


def eager_body(client, state, i):
    pb2 = client.pb2
    if "h" not in state:  # a tensor this session keeps in its replica
        t = pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[3], data=np.arange(3, dtype=np.float32).tobytes())
        state["h"] = client.call("Put", pb2.PutRequest(value=pb2.Value(tensor=t))).result.handle.id
    out = client.call("EagerOp", pb2.EagerOpRequest(op="*", args=[
        pb2.Value(handle=pb2.TensorHandle(id=state["h"])), pb2.Value(float_value=2.0)]))
    got = client.call("Fetch", pb2.FetchRequest(ids=[out.result.handle.id])).values[0].tensor
    np.testing.assert_array_equal(np.frombuffer(got.data, np.float32), np.arange(3) * 2)
    client.call("Release", pb2.ReleaseRequest(ids=[out.result.handle.id]))


def _owner(replicas, session):
    """The replica holding this session's handles."""
    for d in replicas:
        c = stagd.Client(d.addr)
        c.session, c._metadata = session, (("stagd-session", session),)
        held = c.call("Session", {}).handles
        c.close()
        if held:
            return d
    return None


def test_replicas_behind_a_proxy_survive_a_killed_replica(start_daemon, models_dir, tmp_path):
    replicas = [start_daemon("--listen", "127.0.0.1:0", "--models", str(models_dir), "--workers", "2")
                for _ in range(3)]
    proxy, addr = _start_proxy(tmp_path, replicas)
    try:
        staged = [Worker(addr, staged_body) for _ in range(4)]
        eager = [Worker(addr, eager_body) for _ in range(6)]
        for w in staged + eager:
            w.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and min(w.calls for w in staged + eager) < 3:
            time.sleep(0.05)
        assert min(w.calls for w in staged + eager) >= 3, [w.errors for w in staged + eager]
        owners = [_owner(replicas, w.client.session) for w in eager]
        assert all(owners), "every eager session has its handles in one replica"
        victim = owners[0]
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        for w in staged + eager:
            w.killed_at = time.monotonic()
        time.sleep(RUN_AFTER_KILL)
        for w in staged + eager:
            w.stop.set()
        for w in staged + eager:
            w.join(60)
            assert not w.is_alive()
        for w in staged:  # staged calls: retried and restaged transparently
            assert not w.errors and not w.unavailable, (w.errors, w.unavailable)
            assert w.after_kill >= 3, w.after_kill
        for w, owner in zip(eager, owners):
            if owner is victim:  # its tensors died with the replica: a clear error
                assert len(w.errors) == 1 and isinstance(w.errors[0], stagd.NotFound), w.errors
                assert re.search(r"tensor handle '\S+' was released .* moved the session to another "
                                 r"replica", str(w.errors[0])), str(w.errors[0])
                assert len(w.unavailable) <= 1, w.unavailable  # at most the call in flight
            else:  # pinned to a live replica: unaffected
                assert not w.errors and not w.unavailable, (w.errors, w.unavailable)
                assert w.after_kill >= 3
        served = sum(1 for d in replicas if d is not victim)
        assert served == 2
    finally:
        proxy.terminate()
        proxy.wait(10)
        for w in locals().get("staged", []) + locals().get("eager", []):
            w.stop.set()
            w.client.close()
