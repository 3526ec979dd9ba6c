# SPDX-License-Identifier: Apache-2.0
"""harness.py — helpers for the integration tests: start the real stagd, talk gRPC, and
frame LSP messages over a child's pipes or a TCP socket. Every wait has a timeout so a
daemon bug fails a test instead of hanging the suite.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "clients" / "python"))

from stagd import _proto  # noqa: E402

pb2, health_pb2 = _proto.load()

START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0
IO_TIMEOUT = 5.0

_GRPC_READY = re.compile(r"serving gRPC on ([^\s\"]+)")  # text or JSON logs
_LSP_READY = re.compile(r"serving LSP on (\S+)")


def binary(env_name, default_rel):
    path = os.environ.get(env_name) or str(REPO / default_rel)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"{env_name}={path} is not an executable; build the daemon first "
            f"(cmake -S . -B build && cmake --build build) or set {env_name}")
    return path


def stagd_bin():
    return binary("STAGD_BIN", "build/server/stagd")


def stagctl_bin():
    return binary("STAGCTL_BIN", "build/clients/stagctl/stagctl")


def base_env(**extra):
    """The environment with every STAGD_* variable removed, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGD_")}
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    env.update({k: str(v) for k, v in extra.items()})
    return env


class _Reader:
    """Collects a pipe's bytes on a thread; readers wait with timeouts."""

    def __init__(self, pipe):
        self._pipe = pipe
        self._buf = bytearray()
        self._cond = threading.Condition()
        self.eof = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                chunk = os.read(self._pipe.fileno(), 65536)
            except OSError:
                chunk = b""
            with self._cond:
                if not chunk:
                    self.eof = True
                    self._cond.notify_all()
                    return
                self._buf += chunk
                self._cond.notify_all()

    def read_some(self, timeout):
        """Returns and removes the buffered bytes (b"" at EOF); raises TimeoutError."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._buf or self.eof, timeout):
                raise TimeoutError("no data within %.1f s" % timeout)
            data = bytes(self._buf)
            self._buf.clear()
            return data

    def text(self):
        with self._cond:
            return self._buf.decode("utf-8", "replace")


class _LineLog:
    """Reads a child's stderr line by line on a thread, keeping every line."""

    def __init__(self, pipe):
        self.lines = []
        self._cond = threading.Condition()
        self.eof = False
        threading.Thread(target=self._run, args=(pipe,), daemon=True).start()

    def _run(self, pipe):
        for raw in pipe:
            with self._cond:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def wait_for(self, regex, timeout, count=1):
        """Waits for `count` lines matching `regex`; returns their matches."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [m for m in (regex.search(l) for l in self.lines) if m]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return found
                self._cond.wait(left)

    def wait_eof(self, timeout):
        with self._cond:
            self._cond.wait_for(lambda: self.eof, timeout)

    def text(self):
        with self._cond:
            return "\n".join(self.lines)


class Daemon:
    """A running stagd. `addr` is its first gRPC address, `lsp_addr` its first LSP one."""

    def __init__(self, args, env=None, expect_grpc=1, expect_lsp=0, cwd=None, binary=None):
        self.cmd = [binary or stagd_bin(), *args]
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env or base_env(), cwd=cwd)
        self.log = _LineLog(self.proc.stderr)
        self.grpc_addrs = [m.group(1) for m in self.log.wait_for(_GRPC_READY, START_TIMEOUT, expect_grpc)]
        self.lsp_addrs = [m.group(1) for m in self.log.wait_for(_LSP_READY, START_TIMEOUT, expect_lsp)]
        if len(self.grpc_addrs) < expect_grpc or len(self.lsp_addrs) < expect_lsp:
            self.kill()
            raise AssertionError(f"stagd did not report serving ({' '.join(self.cmd)}); "
                                 f"exit={self.proc.poll()}; log:\n{self.log.text()}")
        self.addr = self.grpc_addrs[0] if self.grpc_addrs else None
        self.lsp_addr = self.lsp_addrs[0] if self.lsp_addrs else None

    def terminate(self, timeout=STOP_TIMEOUT):
        """SIGTERM and wait; returns the exit status (kills and fails on a hang)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"stagd did not exit within {timeout} s of SIGTERM; log:\n"
                                 f"{self.log.text()}")
        self.log.wait_eof(2)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)


SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "WARNING: ThreadSanitizer")


def sanitizer_reports(text):
    """Lines of a log that are sanitizer reports (the test build uses ASan/UBSan)."""
    return [l for l in text.splitlines() if any(m in l for m in SANITIZER_MARKS)]


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------- gRPC

def rpc(channel, method, request, reply_cls, timeout=IO_TIMEOUT):
    path = method if method.startswith("/") else f"/stagd.v1.Stagd/{method}"
    stub = channel.unary_unary(path, request_serializer=type(request).SerializeToString,
                               response_deserializer=reply_cls.FromString)
    return stub(request, timeout=timeout)


def raw_rpc(channel, path, data, timeout=IO_TIMEOUT):
    """Sends raw bytes to `path` (identity serializers); returns raw bytes."""
    return channel.unary_unary(path)(data, timeout=timeout)


# ------------------------------------------------------------------------------ LSP

def frame(msg):
    body = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class LspSession:
    """JSON-RPC over LSP framing on any byte stream: `write(bytes)` and
    `read_some(timeout) -> bytes` (b"" at end of stream)."""

    def __init__(self, write, read_some):
        self._write = write
        self._read_some = read_some
        self._buf = b""
        self._next_id = 1
        self.eof = False

    # -- sending
    def send_raw(self, data):
        self._write(data)

    def send(self, msg):
        self._write(frame(msg))

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def send_request(self, method, params=None, id=None):
        if id is None:
            id = self._next_id
            self._next_id += 1
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return id

    # -- receiving
    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"LSP: no complete message in time; buffered: {self._buf[:200]!r}")
        data = self._read_some(left)
        if not data:
            self.eof = True
            raise EOFError(f"LSP: stream closed; buffered: {self._buf[:200]!r}")
        self._buf += data

    def read_message(self, timeout=IO_TIMEOUT):
        """The next framed message, parsed (strict: the header must carry Content-Length)."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self._buf:
            self._fill(deadline)
        head, rest = self._buf.split(b"\r\n\r\n", 1)
        length = None
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        assert length is not None, f"LSP: server sent a header without Content-Length: {head!r}"
        self._buf = rest
        while len(self._buf) < length:
            self._fill(deadline)
        body, self._buf = self._buf[:length], self._buf[length:]
        return json.loads(body)

    def read_response(self, id, timeout=IO_TIMEOUT, others=None):
        """The response with `id`, skipping server notifications and requests (and
        collecting other responses into `others` when given)."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read_message(max(0.0, deadline - time.monotonic()))
            if "method" in msg:
                continue  # notification or server→client request
            if msg.get("id") == id:
                return msg
            if others is None:
                raise AssertionError(f"LSP: expected the response to id {id!r}, got {msg}")
            others.append(msg)

    def request(self, method, params=None, timeout=IO_TIMEOUT):
        return self.read_response(self.send_request(method, params), timeout)

    def initialize(self):
        resp = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "result" in resp, resp
        self.notify("initialized", {})
        return resp["result"]

    def expect_closed(self, timeout=IO_TIMEOUT):
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._fill(deadline)
        except EOFError:
            return


class StdioLsp(LspSession):
    """`stagd --lsp --stdio` as a child process."""

    def __init__(self, args=(), env=None):
        self.cmd = [stagd_bin(), "--lsp", "--stdio", *args]
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env or base_env())
        self._out = _Reader(self.proc.stdout)
        self.log = _LineLog(self.proc.stderr)
        super().__init__(self._write_pipe, self._out.read_some)

    def _write_pipe(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self, timeout=STOP_TIMEOUT):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"stagd --lsp --stdio did not exit within {timeout} s; log:\n"
                                 f"{self.log.text()}")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class TcpLsp(LspSession):
    """One LSP connection to `--lsp-listen`."""

    def __init__(self, addr):
        self.sock = socket.create_connection(host_port(addr), timeout=IO_TIMEOUT)
        super().__init__(self.sock.sendall, self._recv)

    def _recv(self, timeout):
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("LSP over TCP: no data in time") from None
        except ConnectionResetError:
            return b""

    def close(self):
        self.sock.close()
