# SPDX-License-Identifier: Apache-2.0
"""conftest.py — pytest fixtures that run the REAL stagd for the integration tests.

The daemon is $STAGD_BIN, else build/server/stagd; stagctl is $STAGCTL_BIN, else
build/clients/stagctl/stagctl. A missing binary fails every test that needs it with a
message saying how to build it. Daemons listen on free ports (`--listen 127.0.0.1:0`;
the port comes from the `serving gRPC on` log line) and must exit 0 on SIGTERM.

Run: /usr/bin/python3 -m pytest tests/integration
"""
import grpc
import pytest

import harness


def _required(find):
    try:
        return find(), None
    except FileNotFoundError as e:
        return None, str(e)


@pytest.fixture(scope="session")
def stagd_bin():
    path, problem = _required(harness.stagd_bin)
    if problem:
        pytest.fail(problem, pytrace=False)
    return path


@pytest.fixture(scope="session")
def stagctl_bin():
    path, problem = _required(harness.stagctl_bin)
    if problem:
        pytest.fail(problem, pytrace=False)
    return path


class _Factory:
    def __init__(self):
        self.daemons = []

    def __call__(self, *args, env=None, expect_grpc=1, expect_lsp=0, binary=None, cwd=None):
        d = harness.Daemon(list(args), env=env, expect_grpc=expect_grpc, expect_lsp=expect_lsp,
                           binary=binary, cwd=cwd)
        self.daemons.append(d)
        return d

    def stop_all(self):
        failures = []
        for d in self.daemons:
            already = d.proc.poll() is not None
            rc = d.terminate()
            if not already and rc != 0:
                failures.append(f"{' '.join(d.cmd)} exited {rc} on SIGTERM; log tail:\n"
                                + "\n".join(d.log.lines[-30:]))
            reports = harness.sanitizer_reports(d.log.text())
            if reports:
                failures.append(f"{' '.join(d.cmd)}: sanitizer reports:\n" + "\n".join(reports[:20]))
        assert not failures, "\n\n".join(failures)


@pytest.fixture
def start_daemon(stagd_bin):
    """Factory: start_daemon('--listen', '127.0.0.1:0', env=...) → harness.Daemon. Each is
    SIGTERMed at teardown and must exit 0."""
    f = _Factory()
    yield f
    f.stop_all()


@pytest.fixture(scope="module")
def daemon(stagd_bin, tmp_path_factory):
    """One daemon shared by a test module (for tests that do not depend on its state):
    `addr` is its TCP address (gRPC), `unix_addr` its unix socket (where local clients
    use the framed transport, PATH.frames)."""
    f = _Factory()
    sock = tmp_path_factory.mktemp("daemon") / "d.sock"
    d = f("--listen", "127.0.0.1:0", "--listen", f"unix:{sock}", "--workers", "4", expect_grpc=2)
    d.unix_addr = f"unix:{sock}"
    yield d
    f.stop_all()


@pytest.fixture
def daemon_addr(daemon):
    """The gRPC address (127.0.0.1:PORT) of the module's daemon."""
    return daemon.addr


@pytest.fixture
def fresh_daemon(start_daemon):
    """A daemon of the test's own."""
    return start_daemon("--listen", "127.0.0.1:0", "--workers", "4")


@pytest.fixture
def channel(daemon):
    ch = grpc.insecure_channel(daemon.addr)
    yield ch
    ch.close()


@pytest.fixture
def lsp(stagd_bin):
    """An initialized `stagd --lsp --stdio` session; closed (and checked) at teardown."""
    s = harness.StdioLsp()
    s.initialize()
    yield s
    s.close()
    s.log.wait_eof(2)
    reports = harness.sanitizer_reports(s.log.text())
    assert not reports, "stagd --lsp --stdio: sanitizer reports:\n" + "\n".join(reports[:20])


@pytest.fixture
def pb2():
    return harness.pb2


@pytest.fixture
def health_pb2():
    return harness.health_pb2


@pytest.fixture(scope="module")
def default_client(daemon):
    """A Client of the module's daemon on its unix socket (so over the framed transport,
    as a local client's calls go), made the default (stagd.constant, stagd.function,
    tapes) for the module's tests; the previous default comes back after them."""
    import stagd
    c = stagd.Client(daemon.unix_addr)
    previous = stagd._default_client
    stagd.set_default_client(c)
    yield c
    stagd.set_default_client(previous)
