# SPDX-License-Identifier: Apache-2.0
"""The framed transport's client side (docs/api.md "The framed transport").

A daemon listening on `unix:PATH` also serves `PATH.frames`: each request is one
length-prefixed frame (id, timeout, method name, session, bearer token, the request
message's bytes) and each reply one frame (id, status code, reason, details, the reply
message's bytes). A call costs a write and a read instead of gRPC's HTTP/2 machinery.

client.py keeps a Connection per thread; send() returns the request's id and wait(id)
its reply, so a request may be started now and its reply read later — possibly by
another thread (the eager queue's batch in flight), so sending and reading hold the
connection's lock, and replies to other ids read meanwhile are kept for their waiters.
A forked child never uses its parent's connection (it would read the parent's replies).
Errors of the socket raise Broken (and close the connection: its stream can no longer
be trusted); an interrupt (KeyboardInterrupt) while sending or waiting closes it too,
which tells the daemon to cancel what it was running for it.
"""

import os
import socket
import struct
import threading

_HEAD = struct.Struct("<III")  # length, id, timeout in ms
_REPLY = struct.Struct("<IBB")  # id, status, reason length (after the length)
_U32 = struct.Struct("<I")
_LARGE = 1 << 20  # a reply this large is read into a buffer of its own
MAX_BODY = 0xFFFFFFFF - (1 << 16)  # the largest request message a frame carries


class Broken(Exception):
    """The connection failed; `sent` says whether the request may have reached the
    daemon (False: it certainly did not, so it may be sent again elsewhere)."""

    def __init__(self, message, sent):
        super().__init__(message)
        self.sent = sent


class Connection:
    """One connection to a daemon's PATH.frames socket."""

    def __init__(self, path, session=None, token=None):
        try:
            session = (session or "").encode("ascii")
            token = (token or "").encode("ascii")
        except UnicodeEncodeError:
            raise ValueError("stagd: a session name and a bearer token are ASCII text, as gRPC metadata is") from None
        if len(session) > 255 or len(token) > 65535:
            raise ValueError("stagd: a session name of at most 255 bytes and a token of at most 65535")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except BaseException:
            sock.close()
            raise
        self.path = path
        self.pid = os.getpid()
        self._sock = sock
        self._timeout = None  # the socket's current timeout
        self._next = 0
        self._buf = bytearray()  # bytes read and not yet taken as a reply
        self._scratch = memoryview(bytearray(65536))  # what recv_into fills (no allocation a read)
        self._done = {}  # id -> reply read while waiting for another
        self._tail = bytes((len(session),)) + session + struct.pack("<H", len(token)) + token
        self._methods = {}  # method name -> its bytes in a header
        self._lock = threading.Lock()

    @property
    def closed(self):
        return self._sock is None

    def close(self):
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def _check(self, sent):
        if self._sock is None:
            raise Broken("stagd: the framed connection was closed", sent)
        if self.pid != os.getpid():
            raise Broken("stagd: this framed connection belongs to the parent process (a call started "
                         "before fork() cannot be waited for in the child)", sent)

    def send(self, method, body, timeout=None):
        """Sends one request (body: the encoded request message); returns its id."""
        with self._lock:
            return self._send(method, body, timeout)

    def _send(self, method, body, timeout):
        self._check(False)
        m = self._methods.get(method)
        if m is None:
            name = method.encode("ascii")
            m = self._methods[method] = bytes((len(name),)) + name
        self._next = rid = (self._next + 1) & 0xFFFFFFFF
        ms = 0 if timeout is None else max(1, min(0xFFFFFFFF, int(timeout * 1000)))
        head = _HEAD.pack(8 + len(m) + len(self._tail) + len(body), rid, ms) + m + self._tail
        try:
            self._settimeout(None if timeout is None else timeout + 5.0)
            if len(body) < 65536:
                self._sock.sendall(head + body)
            else:
                self._sock.sendall(head)
                self._sock.sendall(body)
        except BaseException as e:
            if isinstance(e, (BrokenPipeError, ConnectionResetError)):
                # a unix socket whose peer has closed takes nothing: the request was not sent
                self.close()
                raise Broken(f"stagd: the daemon closed the framed connection ({e})", False) from None
            raise self._failed(e, "sending on") from None
        return rid

    def wait(self, rid, timeout=None):
        """The reply to request `rid`: (status, reason, details, body bytes)."""
        with self._lock:
            got = self._done.pop(rid, None)
            if got is not None:
                return got
            self._check(True)
            return self._wait(rid, timeout)

    def _wait(self, rid, timeout):
        try:
            self._settimeout(None if timeout is None else timeout + 5.0)
            while True:
                reply = self._read_frame()
                if reply[0] == rid:
                    return reply[1:]
                self._done[reply[0]] = reply[1:]
        except BaseException as e:
            raise self._failed(e, "reading from") from None

    def _failed(self, e, doing):
        """What to raise for e, which interrupted a send or a read: the connection is
        closed (its stream can no longer be trusted); a socket error becomes Broken (the
        request may have arrived), a timeout, Broken or an interrupt stays itself."""
        self.close()
        if isinstance(e, OSError) and not isinstance(e, TimeoutError):
            return Broken(f"stagd: {doing} {self.path} failed: {e}", True)
        return e

    def _settimeout(self, t):
        if t != self._timeout:
            self._sock.settimeout(t)
            self._timeout = t

    def _fill(self):
        if self._sock is None:
            raise Broken("stagd: the framed connection was closed", True)
        n = self._sock.recv_into(self._scratch)
        if not n:
            raise Broken("stagd: the daemon closed the connection before it replied", True)
        self._buf += self._scratch[:n]

    def _read_frame(self):
        buf = self._buf
        while len(buf) < 4:
            self._fill()
        n = _U32.unpack_from(buf)[0] + 4
        if len(buf) >= n:
            frame = bytes(buf[:n])
            del buf[:n]
        elif n >= _LARGE:
            frame = bytearray(n)
            got = len(buf)
            frame[:got] = buf
            buf.clear()
            view = memoryview(frame)
            while got < n:
                r = self._sock.recv_into(view[got:])
                if not r:
                    raise Broken("stagd: the daemon closed the connection before it replied", True)
                got += r
        else:
            while len(buf) < n:
                self._fill()
            frame = bytes(buf[:n])
            del buf[:n]
        rid, status, rlen = _REPLY.unpack_from(frame, 4)
        p = 10 + rlen
        reason = frame[10:p].decode("ascii", "replace")
        dlen = _U32.unpack_from(frame, p)[0]
        p += 4
        details = bytes(frame[p:p + dlen]).decode("utf-8", "replace")
        p += dlen
        body = frame[p:] if type(frame) is bytes else bytes(memoryview(frame)[p:])
        return rid, status, reason, details, body
