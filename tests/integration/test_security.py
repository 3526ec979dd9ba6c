# SPDX-License-Identifier: Apache-2.0
# Security (docs/security.md, issue 24 D9/D10): sessions own their handles (128-bit ids,
# NOT_FOUND for everyone else, Release by the owner with the whole id, per-session
# budgets, explicit Variable grants); TLS, mutual TLS and bearer tokens on gRPC (token
# reload on SIGHUP) and on LSP TCP; non-loopback addresses need TLS+tokens or --insecure;
# unix sockets 0600; an LSP TCP client cannot choose what the daemon executes.
# Certificates are made at test time with the openssl CLI; no key is committed.
import json
import os
import re
import signal
import stat
import subprocess
import time

import grpc
import numpy as np
import pytest

import harness
import stagd
from stagd import tensor as stagd_tensor

TOKEN1 = "t1-" + "a" * 29
TOKEN2 = "t2-" + "b" * 29


def put(c, arr):
    return stagd_tensor._put_array(c, np.asarray(arr), "cpu")._id


def fetch(c, hid):
    return c.call("Fetch", {"ids": [hid]})


def make_variable(c, arr):
    tid = put(c, arr)
    reply = c.call("EagerOp", c.pb2.EagerOpRequest(
        op="variable", args=[c.pb2.Value(handle=c.pb2.TensorHandle(id=tid))], device="cpu"))
    return reply.result.handle.id


def read_variable(c, vid):
    return c.call("EagerOp", c.pb2.EagerOpRequest(
        op="read", args=[c.pb2.Value(handle=c.pb2.TensorHandle(id=vid))], device="cpu"))


# ------------------------------------------------------------------------ ownership

def test_handles_belong_to_their_session(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--max-session-handle-bytes", "4096")
    with stagd.Client(d.addr) as a, stagd.Client(d.addr) as b:
        assert len(a.session) == 32  # 128 random bits
        ta = put(a, np.ones(4, np.float32))
        tb = put(a, np.ones(4, np.float32))
        assert re.fullmatch(r"cpu#[0-9a-f]{32}", ta) and ta != tb
        # another session: NOT_FOUND, the same answer as for an id that never existed
        with pytest.raises(stagd.NotFound, match="not this session's"):
            fetch(b, ta)
        with pytest.raises(stagd.NotFound):
            fetch(b, "cpu#" + "0" * 31 + "1")
        assert b.call("Release", {"ids": [ta]}).released == 0
        # Release honours the device part: vulkan:7#X never releases cpu#X
        assert a.call("Release", {"ids": ["vulkan:7#" + ta.split("#")[1]]}).released == 0
        assert fetch(a, ta).values[0].tensor.shape == [4]
        # b ending its session leaves a's handles alone
        assert b.call("Session", {"end": True}).released == 0
        assert fetch(a, ta).values[0].tensor.shape == [4]
        assert a.call("Release", {"ids": [ta]}).released == 1
        # per-session budget: 4096 bytes each; a third of a's budget is left, b's is whole
        put(a, np.ones(700, np.float32))
        with pytest.raises(stagd.ResourceExhausted, match="--max-session-handle-bytes"):
            put(a, np.ones(700, np.float32))
        put(b, np.ones(700, np.float32))


def test_a_variable_is_shared_only_by_a_grant(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0")
    with stagd.Client(d.addr) as a, stagd.Client(d.addr) as b, stagd.Client(d.addr) as c:
        vid = make_variable(a, np.arange(3, dtype=np.float32))
        with pytest.raises(stagd.NotFound):
            read_variable(b, vid)
        with pytest.raises(stagd.NotFound):  # only the owner grants
            b.call("Session", {"grant_ids": [vid], "grant_to": b.session})
        tid = put(a, np.ones(2, np.float32))
        with pytest.raises(stagd.InvalidArgument, match="not a Variable"):
            a.grant(tid, b.session)
        with pytest.raises(stagd.InvalidArgument, match="grant_to"):
            a.call("Session", {"grant_ids": [vid]})
        assert a.grant(vid, b.session) == 1
        r = read_variable(b, vid)
        assert r.result.handle.id  # b reads it (a new handle of b's)
        got = fetch(b, r.result.handle.id).values[0].tensor
        assert np.frombuffer(got.data, np.float32).tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(stagd.NotFound):
            read_variable(c, vid)  # granted to b, not to everyone
        assert b.call("Release", {"ids": [vid]}).released == 0  # a grantee never releases
        shared = stagd.Variable.shared(vid, client=b)  # the Python object over the grant
        assert shared.shape == (3,) and shared.dtype == "float32"
        shared.assign_add(np.ones(3, np.float32))
        got = fetch(a, vid).values[0].tensor  # the owner sees the grantee's update
        assert np.frombuffer(got.data, np.float32).tolist() == [1.0, 2.0, 3.0]
        del shared
        a.end_session() if a._keeper else a.call("Session", {"end": True})
        with pytest.raises(stagd.NotFound):
            read_variable(b, vid)


# -------------------------------------------------------------- TLS and tokens

def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1/localhost, a client certificate, a
    second (untrusted) CA's client certificate, and token files."""
    d = tmp_path_factory.mktemp("pki")
    for ca in ("ca", "other"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out",
                f"{ca}.pem", "-days", "2", "-subj", f"/CN=stagd test {ca}", cwd=d)
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ca in (("server", "ca"), ("client", "ca"), ("rogue", "other")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", "san.ext", cwd=d)
    (d / "tokens").write_text(f"# stagd tokens\n{TOKEN1}\n\n{TOKEN2}\n")
    return d


def tls_daemon(start_daemon, pki, *extra):
    return start_daemon("--listen", "127.0.0.1:0", "--tls-cert", str(pki / "server.pem"),
                        "--tls-key", str(pki / "server.key"), "--auth-token-file",
                        str(pki / "tokens"), *extra)


def client(d, pki, token=None, cert=None, **kw):
    return stagd.Client(d.addr, tls_ca=str(pki / "ca.pem"), token=token,
                        tls_cert=str(pki / f"{cert}.pem") if cert else None,
                        tls_key=str(pki / f"{cert}.key") if cert else None, **kw)


def test_tls_and_tokens_on_grpc(start_daemon, pki, monkeypatch):
    monkeypatch.delenv("STAGD_TOKEN", raising=False)
    d = tls_daemon(start_daemon, pki)
    with client(d, pki, TOKEN1) as c:
        assert c.health(timeout=10) == "SERVING"
        assert fetch(c, put(c, [1.0, 2.0])).values[0].tensor.shape == [2]
    # a plain-text client does not get through the TLS port
    with stagd.Client(d.addr, token=TOKEN1) as plain:
        with pytest.raises(stagd.Unavailable):
            plain.health(timeout=5)
    for bad in (None, "x" * 32, TOKEN1[:-1]):
        with client(d, pki, bad) as c:
            with pytest.raises(stagd.Unauthenticated, match="bearer token"):
                c.version(timeout=10)
    # the same session name under another token is another session
    with client(d, pki, TOKEN1) as a, client(d, pki, TOKEN2) as m:
        m.session, m._metadata = a.session, (("stagd-session", a.session), ("authorization", f"Bearer {TOKEN2}"))
        ta = put(a, [3.0])
        with pytest.raises(stagd.NotFound):
            fetch(m, ta)
        assert m.call("Session", {"end": True}).released == 0
        assert fetch(a, ta).values[0].tensor.shape == [1]
    # stagctl: --tls-ca and --token-file, or $STAGD_TOKEN
    tok = pki / "one-token"
    tok.write_text(TOKEN2 + "\n")
    base = [harness.stagctl_bin(), "--addr", d.addr, "--tls-ca", str(pki / "ca.pem")]
    r = subprocess.run(base + ["--token-file", str(tok), "health"], capture_output=True, text=True,
                       env=harness.base_env(), timeout=30)
    assert r.returncode == 0 and "SERVING" in r.stdout, r.stderr
    r = subprocess.run(base + ["health"], capture_output=True, text=True,
                       env=harness.base_env(STAGD_TOKEN=TOKEN1), timeout=30)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(base + ["health"], capture_output=True, text=True, env=harness.base_env(),
                       timeout=30)
    assert r.returncode != 0 and "UNAUTHENTICATED" in r.stderr, r.stderr


def test_tokens_are_reread_on_sighup(start_daemon, pki, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN1 + "\n")
    d = start_daemon("--listen", "127.0.0.1:0", "--auth-token-file", str(tokens))
    with stagd.Client(d.addr, token=TOKEN1) as c1, stagd.Client(d.addr, token=TOKEN2) as c2:
        assert c1.health(timeout=10) == "SERVING"
        with pytest.raises(stagd.Unauthenticated):
            c2.health(timeout=10)
        tokens.write_text(TOKEN2 + "\n")
        d.proc.send_signal(signal.SIGHUP)
        d.log.wait_for(re.compile("reread .*1 token"), 10)
        assert c2.health(timeout=10) == "SERVING"
        with pytest.raises(stagd.Unauthenticated):
            c1.health(timeout=10)
        # a file that no longer parses keeps the tokens in force
        tokens.write_text("short\n")
        d.proc.send_signal(signal.SIGHUP)
        d.log.wait_for(re.compile("keeping the tokens in force"), 10)
        assert c2.health(timeout=10) == "SERVING"


def test_mutual_tls_needs_a_client_certificate(start_daemon, pki):
    d = tls_daemon(start_daemon, pki, "--tls-client-ca", str(pki / "ca.pem"))
    with client(d, pki, TOKEN1, cert="client") as c:
        assert c.health(timeout=10) == "SERVING"
    for cert in (None, "rogue"):
        with client(d, pki, TOKEN1, cert=cert) as c:
            with pytest.raises(stagd.Unavailable):
                c.health(timeout=5)


# --------------------------------------------------------------- listening

def test_non_loopback_needs_tls_and_tokens_or_insecure(pki):
    for args in (["--listen", "0.0.0.0:0"], ["--listen", "127.0.0.1:0", "--lsp", "--lsp-listen", "0.0.0.0:0"],
                 ["--listen", "0.0.0.0:0", "--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key")]):
        r = subprocess.run([harness.stagd_bin(), *args], capture_output=True, text=True,
                           env=harness.base_env(), timeout=30)
        assert r.returncode == 2, r.stderr
        assert "reachable from other machines" in r.stderr and "--insecure" in r.stderr


def test_insecure_serves_and_warns(start_daemon):
    d = start_daemon("--listen", "0.0.0.0:0", "--insecure")
    d.log.wait_for(re.compile("--insecure: 0.0.0.0:0 is served to the network without TLS and tokens"), 5)
    with stagd.Client("127.0.0.1:" + d.addr.rsplit(":", 1)[1]) as c:
        assert c.health(timeout=10) == "SERVING"


def test_unix_socket_is_private(start_daemon, tmp_path):
    path = tmp_path / "stagd.sock"
    old = os.umask(0)
    try:
        d = start_daemon("--listen", f"unix:{path}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with stagd.Client(d.addr) as c:
        assert c.health(timeout=10) == "SERVING"


# ----------------------------------------------------------------------- LSP

DOC = "class C:\n    def f(self, x):\n        return x + 1\n\n\ndef g(x):\n    return x * 2\n"


def lsp_open(s, uri="file:///tmp/sec.py"):
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": DOC}})
    return uri


def test_lsp_tcp_client_cannot_choose_the_interpreter(start_daemon, tmp_path):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp", "--lsp-listen", "127.0.0.1:0", expect_lsp=1,
                     cwd=str(tmp_path))
    s = harness.TcpLsp(d.lsp_addr)
    try:
        r = s.request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                     "initializationOptions": {"python": "/usr/bin/touch",
                                                               "pythonEnv": {"LD_PRELOAD": "/x.so"}}})
        assert "result" in r, r
        s.notify("initialized", {})
        uri = lsp_open(s)
        # inside the subset: staged by the daemon itself, no process
        ok = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "g"}, timeout=30)
        assert ok.get("result", {}).get("stagedBy") == "daemon", ok
        # a method needs the Python helper: refused for a TCP client, naming the flag
        r = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "C.f"}, timeout=30)
        assert "error" in r and "--lsp-allow-python" in r["error"]["message"], r
    finally:
        s.sock.close()
    assert not list(tmp_path.iterdir()), "a client-chosen program ran in the daemon's directory"


def test_lsp_allow_python_uses_the_operators_interpreter(start_daemon, tmp_path):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp", "--lsp-listen", "127.0.0.1:0", "--lsp-allow-python",
                     "--lsp-python", "/nonexistent/operators-python", expect_lsp=1, cwd=str(tmp_path))
    s = harness.TcpLsp(d.lsp_addr)
    try:
        r = s.request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                     "initializationOptions": {"python": "/usr/bin/touch"}})
        assert "result" in r, r
        s.notify("initialized", {})
        uri = lsp_open(s)
        r = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "C.f"}, timeout=30)
        assert "error" in r and "operators-python" in r["error"]["message"], r
    finally:
        s.sock.close()
    assert not list(tmp_path.iterdir())


def test_lsp_tcp_needs_the_token(start_daemon, pki):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp", "--lsp-listen", "127.0.0.1:0", "--auth-token-file",
                     str(pki / "tokens"), expect_lsp=1)
    for opts in ({}, {"token": "y" * 32}):
        s = harness.TcpLsp(d.lsp_addr)
        try:
            r = s.request("initialize", {"processId": None, "capabilities": {}, "initializationOptions": opts})
            assert r["error"]["data"]["status"] == "UNAUTHENTICATED", r
            r = s.request("stagd/version", {})
            assert r["error"]["code"] == -32002, r  # still not initialized
        finally:
            s.sock.close()
    s = harness.TcpLsp(d.lsp_addr)
    try:
        r = s.request("initialize", {"processId": None, "capabilities": {}, "initializationOptions": {"token": TOKEN2}})
        assert "result" in r, r
        assert s.request("stagd/version", {})["result"]["version"]
    finally:
        s.sock.close()


class TlsLsp(harness.LspSession):
    """One LSP connection to `--lsp-listen` over TLS."""

    def __init__(self, addr, pki, cert=None):
        import socket
        import ssl
        ctx = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        if cert:
            ctx.load_cert_chain(str(pki / f"{cert}.pem"), str(pki / f"{cert}.key"))
        raw = socket.create_connection(harness.host_port(addr), timeout=harness.IO_TIMEOUT)
        self.sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        super().__init__(self.sock.sendall, self._recv)

    def _recv(self, timeout):
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(65536)
        except TimeoutError:
            raise TimeoutError("LSP over TLS: no data in time") from None
        except (ConnectionResetError, OSError):
            return b""


def test_lsp_tls_and_mutual_tls(start_daemon, pki):
    import ssl
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp", "--lsp-listen", "127.0.0.1:0",
                     "--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key"),
                     "--tls-client-ca", str(pki / "ca.pem"), "--auth-token-file", str(pki / "tokens"),
                     expect_lsp=1)
    s = TlsLsp(d.lsp_addr, pki, cert="client")
    try:
        r = s.request("initialize", {"processId": None, "capabilities": {}, "initializationOptions": {"token": TOKEN1}})
        assert "result" in r, r
        s.notify("initialized", {})
        assert s.request("stagd/version", {})["result"]["version"]
        uri = lsp_open(s)
        ok = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "g"}, timeout=30)
        assert ok.get("result", {}).get("stagedBy") == "daemon", ok
    finally:
        s.sock.close()
    # without a client certificate, or in plain text, nothing gets through
    with pytest.raises((ssl.SSLError, ConnectionError, EOFError, TimeoutError, OSError)):
        s = TlsLsp(d.lsp_addr, pki)
        s.request("initialize", {"processId": None, "capabilities": {}, "initializationOptions": {"token": TOKEN1}})
    plain = harness.TcpLsp(d.lsp_addr)
    try:
        plain.send_request("initialize", {"processId": None, "capabilities": {}})
        plain.expect_closed()
    finally:
        plain.sock.close()


def test_a_bad_certificate_or_key_stops_the_start(pki):
    for cert, key, why in (("ca.key", "server.key", "--tls-cert"), ("server.pem", "client.key", "--tls-key")):
        r = subprocess.run([harness.stagd_bin(), "--listen", "127.0.0.1:0", "--tls-cert", str(pki / cert),
                            "--tls-key", str(pki / key)], capture_output=True, text=True,
                           env=harness.base_env(), timeout=30)
        assert r.returncode == 2 and why in r.stderr, r.stderr
