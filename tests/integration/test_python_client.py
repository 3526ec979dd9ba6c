# SPDX-License-Identifier: Apache-2.0
"""test_python_client.py — the `stagd` Python package against the real daemon:
connect(), admin calls, error mapping, auto-starting a local daemon, generated modules.

Auto-start is exercised with STAGD_ADDR=unix:<tmp>/auto.sock and STAGD_AUTOSTART=1
(documented in clients/python/stagd/__init__.py): nothing serves that private socket,
so connect() starts a daemon listening on it, and stops it at interpreter exit.
"""
import subprocess
import sys
import textwrap
import time

import grpc
import pytest

import harness
import stagd
from stagd import _proto


@pytest.fixture
def client(daemon):
    c = stagd.connect(daemon.addr)
    yield c
    c.close()


def test_connect_health_version(client):
    assert client.health() == "SERVING"
    v = client.version()
    assert v.api == "stagd.v1" and v.version
    assert client.daemon is None  # it found the fixture's daemon; started none


def test_admin_calls(client):
    assert "cpu" in [d.name for d in client.list_devices()]
    assert client.ping("hello", delay_ms=5) == "hello"
    client.version()
    stats = client.stats()
    assert {m.method: m.calls for m in stats.methods}.get("Version", 0) >= 1


def test_generic_call(client):
    assert client.call("Version").api == "stagd.v1"
    assert client.call("Ping", {"payload": "d"}).payload == "d"
    assert client.call("Ping", client.pb2.PingRequest(payload="m")).payload == "m"
    with pytest.raises(ValueError):
        client.call("NoSuchMethod")


def test_errors_carry_status(client):
    with pytest.raises(stagd.NotFound) as e:
        client.call("Grad", {"graph_id": "gnope"})
    assert isinstance(e.value, stagd.StagdError)
    assert e.value.code == grpc.StatusCode.NOT_FOUND
    assert e.value.details
    with pytest.raises(stagd.DeadlineExceeded):
        client.ping("slow", delay_ms=2000, timeout=0.2)
    with pytest.raises(stagd.InvalidArgument):
        client.ping(delay_ms=10_000_000)
    with pytest.raises(stagd.NotFound):
        client.health("nope")
    assert client.health() == "SERVING"


def test_import_does_not_load_grpc_or_protobuf():
    """`import stagd` (e.g. the converter runtime an editor's staging process loads) does
    not import gRPC or protobuf; the first call does, and error codes still resolve."""
    code = textwrap.dedent("""
        import sys
        import stagd, stagd.runtime.lsp_stage
        assert stagd.NotFound("x").code.name == "NOT_FOUND"  # resolves a code: imports grpc
        print(sorted(m for m in ("grpc", "google.protobuf", "numpy") if m in sys.modules))
    """)
    env = harness.base_env(PYTHONPATH=str(harness.REPO / "clients" / "python"))
    before = textwrap.dedent("""
        import sys
        import stagd, stagd.runtime.lsp_stage
        print(sorted(m for m in ("grpc", "google.protobuf", "numpy") if m in sys.modules))
    """)
    r = subprocess.run([sys.executable, "-c", before], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['grpc']"


def test_connect_unreachable_non_default_is_clear_error(monkeypatch):
    addr = f"127.0.0.1:{harness.free_port()}"
    assert addr != stagd.DEFAULT_ADDR
    monkeypatch.setenv("STAGD_ADDR", addr)
    monkeypatch.delenv("STAGD_AUTOSTART", raising=False)
    t = time.monotonic()
    with pytest.raises(stagd.DaemonUnavailable) as e:
        stagd.connect()
    assert addr in str(e.value)
    assert time.monotonic() - t < 10


def test_connect_autostart_off(tmp_path):
    with pytest.raises(stagd.DaemonUnavailable):
        stagd.connect(f"unix:{tmp_path / 'none.sock'}", autostart=False)


def test_autostart_private_daemon_stops_at_exit(stagd_bin, tmp_path):
    sock = tmp_path / "auto.sock"
    code = textwrap.dedent("""
        import stagd
        c = stagd.connect()
        print(c.addr, c.daemon.pid, stagd.health(), stagd.version().api, flush=True)
    """)
    env = harness.base_env(STAGD_ADDR=f"unix:{sock}", STAGD_AUTOSTART="1", STAGD_BIN=stagd_bin,
                           PYTHONPATH=str(harness.REPO / "clients" / "python"))
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=40)
    elapsed = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert elapsed < 4.0, f"start + stop of a private daemon took {elapsed:.1f} s"
    addr, pid, status, api = r.stdout.split()
    assert addr == f"unix:{sock}"
    assert status == "SERVING" and api == "stagd.v1"
    # The daemon was stopped when the interpreter exited.
    pid = int(pid)
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        assert state in ("Z", "X"), f"daemon {pid} still running (state {state})"
    except FileNotFoundError:
        pass
    assert not sock.exists(), "the daemon left its socket behind"


def test_local_daemon_start_stop(stagd_bin, monkeypatch):
    monkeypatch.setenv("STAGD_BIN", stagd_bin)
    d = stagd.daemon.start()
    try:
        assert d.addr.startswith("unix:")
        with stagd.Client(d.addr) as c:
            assert c.health() == "SERVING"
    finally:
        assert d.stop() == 0


def test_proto_generation_into_cache(tmp_path):
    target = _proto.generate(cache_root=tmp_path)
    assert target.parent == tmp_path and target.name == f"proto-{_proto.proto_hash()}"
    assert (target / "stagd_pb2.py").is_file() and (target / "health_pb2.py").is_file()
    assert _proto.generate(cache_root=tmp_path) == target  # cached
    # The generated modules import and describe the service.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import stagd_pb2, health_pb2; "
            "print(stagd_pb2.DESCRIPTOR.services_by_name['Stagd'].full_name)")
    r = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "stagd.v1.Stagd", r.stderr
    # Nothing was written into the source tree.
    assert not list((harness.REPO / "proto").glob("*_pb2.py"))
    assert not list((harness.REPO / "clients" / "python").rglob("*_pb2.py"))


def test_default_address_autostarts_one_private_daemon(stagd_bin):
    import socket
    try:
        socket.create_connection(("127.0.0.1", 7420), timeout=0.5).close()
        pytest.skip("something listens on the default address 127.0.0.1:7420")
    except OSError:
        pass
    code = textwrap.dedent("""
        import stagd
        c = stagd.connect()
        assert stagd.health() == "SERVING"
        print(c.addr, c.daemon.pid, stagd._client().daemon.pid, flush=True)
    """)
    env = harness.base_env(STAGD_BIN=stagd_bin, PYTHONPATH=str(harness.REPO / "clients" / "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=40)
    assert r.returncode == 0, r.stderr
    addr, pid1, pid2 = r.stdout.split()
    assert addr.startswith("unix:"), "the default port must not be taken by a private daemon"
    assert pid1 == pid2, "module-level calls started a second daemon"
