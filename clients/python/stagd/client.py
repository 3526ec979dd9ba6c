# SPDX-License-Identifier: Apache-2.0
"""client.py — the client of a stagd daemon: `Client` and the `StagdError` family.

A `Client` wraps one gRPC channel to `host:port` or `unix:PATH`; over `unix:PATH` its
calls go through the daemon's framed transport (`PATH.frames`, _frames.py) when it
answers, each thread on a connection of its own, and over gRPC otherwise. Every method of the
`stagd.v1.Stagd` service is reachable through `call(name, request)`; the common admin
calls have their own methods. gRPC failures are raised as `StagdError` subclasses that
carry the status code, the daemon's message and its reason: the `stagd-reason` trailing
metadata picks the class (`IndexOutOfBounds`, `ShapeMismatch`, `AssertionFailed`), never
the message's wording (docs/api.md "Error reasons").

grpc is imported on first use (a connection or a status code), so importing stagd —
e.g. the converter runtime in an editor's staging process — does not pay ~0.9 s for it.
"""
import atexit
import os
import threading
import time
import weakref

from . import _frames, _proto, _wire

DEFAULT_ADDR = "127.0.0.1:7420"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
CONNECT_TIMEOUT = 2.0  # seconds a daemon gets to answer the first health check


class _StatusCode:
    """A class attribute naming a grpc.StatusCode, looked up (importing grpc) on first
    read; an instance's own `code` overrides it."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, cls):
        import grpc
        return getattr(grpc.StatusCode, self.name)


class StagdError(Exception):
    """A call to the daemon failed. `code` is a grpc.StatusCode (or None), `details` the
    daemon's message, `reason` the daemon's name for the kind of error
    (`"index_out_of_bounds"`, ...; None when it sent none)."""

    code = None

    def __init__(self, details, code=None, reason=None):
        super().__init__(details)
        if code is not None:
            self.code = code
        self.details = details
        self.reason = reason

    def __str__(self):
        name = self.code.name if self.code is not None else "ERROR"
        return f"{name}: {self.details}"


class InvalidArgument(StagdError):
    code = _StatusCode("INVALID_ARGUMENT")


class NotFound(StagdError):
    code = _StatusCode("NOT_FOUND")


class DeadlineExceeded(StagdError):
    code = _StatusCode("DEADLINE_EXCEEDED")


class Cancelled(StagdError):
    code = _StatusCode("CANCELLED")


class FailedPrecondition(StagdError):
    code = _StatusCode("FAILED_PRECONDITION")


class ResourceExhausted(StagdError):
    code = _StatusCode("RESOURCE_EXHAUSTED")


class Unimplemented(StagdError):
    code = _StatusCode("UNIMPLEMENTED")


class Unavailable(StagdError):
    code = _StatusCode("UNAVAILABLE")


class Internal(StagdError):
    code = _StatusCode("INTERNAL")


class Unauthenticated(StagdError):
    """The daemon checks bearer tokens (--auth-token-file) and the call's was missing or
    wrong: pass token= to connect() (or set $STAGD_TOKEN)."""

    code = _StatusCode("UNAUTHENTICATED")


class DaemonUnavailable(StagdError):
    """No daemon answers at the address and none may be started for it."""

    code = _StatusCode("UNAVAILABLE")


_CODED = (InvalidArgument, NotFound, DeadlineExceeded, Cancelled, FailedPrecondition,
          ResourceExhausted, Unimplemented, Unavailable, Internal, Unauthenticated)


def error_from_rpc(err):
    """Converts a grpc.RpcError into the matching StagdError subclass: the status code's
    class, or the subclass of the `stagd-reason` trailing metadata when the daemon sent
    one that this client knows for that code (an unknown reason keeps the code's class)."""
    code = err.code() if hasattr(err, "code") else None
    details = err.details() if hasattr(err, "details") else str(err)
    trailing = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    reason = dict(trailing or ()).get(REASON_KEY)
    return error_class(code.value[0] if code is not None else None, reason)(details or "", code, reason)


class IndexOutOfBounds(InvalidArgument, IndexError):
    """An index or axis out of bounds (getitem, gather, slice axes, a tuple index): also
    an IndexError, as NumPy raises for the same indexing. Reason `index_out_of_bounds`."""


class ShapeMismatch(InvalidArgument, ValueError):
    """Shapes that do not broadcast: also a ValueError, as NumPy raises. Reason
    `shape_mismatch`."""


class Unsupported(InvalidArgument):
    """Python outside the subset the daemon stages from source (stagd.stage_source,
    docs/pyfront.md). Reason `unsupported`."""


class AssertionFailed(FailedPrecondition, AssertionError):
    """A staged program's own `assert` failed: also an AssertionError, as the same
    assert raises in Python. Reason `assertion`."""


class SpeculationFailed(FailedPrecondition):
    """An assumption of a speculative graph (stagd.function(fn, speculative=True)) did
    not hold: the graph stopped with no Variable changed, and the Function ran the call
    imperatively instead (docs/client.md "Speculative mode"). Reason `speculation`."""


REASON_KEY = "stagd-reason"
_REASONS = {"index_out_of_bounds": IndexOutOfBounds, "shape_mismatch": ShapeMismatch,
            "assertion": AssertionFailed, "unsupported": Unsupported,
            "speculation": SpeculationFailed}


_live = weakref.WeakSet()


def live_clients():
    """Every Client of this process not yet garbage-collected."""
    return list(_live)


# Which Client eager tensors, stagd.function, tapes, converted_call and the notebook
# magics use when they are given none is the package's to decide (stagd/__init__.py:
# connect(), set_default_client(), $STAGD_ADDR, autostart). The package installs its
# lookup here when it is imported, so the modules below it reach the default client
# without importing the package (docs/client.md "How the package is layered").
_default_lookup = None


def set_default_lookup(lookup):
    """Installs `lookup() -> Client`, how default_client() finds the default client."""
    global _default_lookup
    _default_lookup = lookup


_status_codes = {}  # number -> grpc.StatusCode (filled on first use)


def _status_code(number):
    if not _status_codes:
        import grpc
        _status_codes.update((c.value[0], c) for c in grpc.StatusCode)
    return _status_codes.get(number)


def error_from_frame(status, reason, details):
    """The StagdError of a failed call answered over the framed transport: the class
    error_from_rpc picks for the same status and reason."""
    return error_class(status, reason)(details, _status_code(status), reason or None)


def error_class(code, reason=None):
    """The StagdError subclass for a status code number (google.rpc.Code) and an optional
    `stagd-reason`, as error_from_rpc picks it for a failed call."""
    cls = next((c for c in _CODED if c.code.value[0] == code), StagdError)
    by_reason = _REASONS.get(reason or None)
    if by_reason is not None and issubclass(by_reason, cls):
        cls = by_reason
    return cls


def default_client():
    """The default Client (the first use connects, or starts a private daemon)."""
    return _default_lookup()


def _read_pem(path):
    """The bytes of a PEM file, or None for None."""
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def _methods(pb2):
    """{name: (grpc path, request class, reply class)} for the Stagd service."""
    out = {}
    service = pb2.DESCRIPTOR.services_by_name["Stagd"]
    for m in service.methods:
        out[m.name] = (f"/{service.full_name}/{m.name}", getattr(pb2, m.input_type.name),
                       getattr(pb2, m.output_type.name))
    return out


_HANDLE_METHODS = frozenset(("Put", "EagerOp", "EagerBatch", "Execute", "RunModel"))
# The calls that carry queued eager ops (their request's eager_first): a sync point after
# eager ops is then one round trip (docs/client.md "Asynchronous eager").
_CARRIES = frozenset(("Execute", "Fetch"))
# calls that need no queued eager op to have run (eager_queue.py): every other call
# sends the queue first
# (Session: the renewing thread must not take a failure the user's next sync raises;
# end_session syncs itself)
_NO_FLUSH = frozenset(("EagerBatch", "Put", "Version", "Health.Check", "Ping", "ListDevices", "Parse",
                       "Convert", "Stage", "Grad", "DumpGraph", "ListModels", "Session"))
# Variables another session shares (granted by this process, or Variable.shared): an
# eager update to one is sent at once (tensor.py), so the other session sees it as it
# would synchronously
shared_ids = set()
_ending = [False]  # the atexit hook that ends sessions is registered


def _end_all_sessions():
    for c in list(_live):
        c.end_session()


class Client:
    """A connection to one daemon. `addr` is `host:port` or `unix:PATH`.

    Session: every call carries the `stagd-session` metadata (a random id per Client),
    so the handles it makes belong to it. Once it holds handles, a background thread
    renews the session (the `Session` RPC) three times per lease; `close()` and the
    interpreter's exit end it (its handles are released at once), and a killed process
    stops renewing, so the daemon releases its handles after the lease
    (docs/client.md "Sessions"). session=False sends no metadata: handles live until
    released, as stagctl's do. The session id is 128 random bits: with no tokens, knowing
    it is what makes a caller the session's owner (docs/security.md).

    Security: tls_ca (a PEM file) makes the channel TLS, verifying the daemon's
    certificate; tls_cert/tls_key present this client's (mutual TLS); token (default
    $STAGD_TOKEN) goes as `authorization: Bearer TOKEN` on every call.

    shm: the local data path (docs/client.md): over a unix socket, tensors of at least
    256 KiB go through files in the daemon's shared-memory directory instead of inside
    messages. None (default): on unless $STAGD_SHM is 0; False: always in messages.

    frames: over a unix socket, calls go through the daemon's framed transport
    (`PATH.frames`: a write and a read a call, about half of gRPC's cost) when it answers,
    else over gRPC. None (default): on unless $STAGD_FRAMES is 0; False: gRPC only."""

    def __init__(self, addr=DEFAULT_ADDR, timeout=None, session=True, tls_ca=None, token=None,
                 tls_cert=None, tls_key=None, shm=None, frames=None):
        self.addr = addr
        if frames is None:
            frames = os.environ.get("STAGD_FRAMES", "1") not in ("0", "false", "no", "off")
        self._frames_path = addr[5:] + ".frames" if frames and addr.startswith("unix:") else None
        self._frames_retry = 0.0  # after a failed connection, the next is tried from then on
        self._local = threading.local()  # each thread's framed connection (.conn)
        self._frame_conns = weakref.WeakSet()  # all of them, closed by close()
        if shm is None:
            shm = os.environ.get("STAGD_SHM", "1") not in ("0", "false", "no", "off")
        self._shm_wanted = bool(shm) and addr.startswith("unix:")
        self._shm = None  # the daemon's shm directory (asked once, with Version), or ""
        self._staging = None  # its staging file there: shm.staging_of (tensors layer) makes it
        self._shm_staging = False  # whether the daemon takes staging files (asked with Version)
        self._eager_first = False  # whether Execute and Fetch carry queued eager ops (Version)
        self._eager_calls = False  # whether EagerBatch takes queued calls of staged graphs (Version)
        self.timeout = timeout  # default per-call timeout in seconds (None: none)
        self.session = os.urandom(16).hex() if session else None
        token = token if token is not None else os.environ.get("STAGD_TOKEN") or None
        md = []
        if session:
            md.append(("stagd-session", self.session))
        self._token = token.strip() if token else None
        if token:
            md.append(("authorization", f"Bearer {self._token}"))
        self._metadata = tuple(md) or None
        self._keeper = None  # the stop event of the renewing thread (started with a handle)
        self.pb2, self.health_pb2 = _proto.load()
        self._methods = _methods(self.pb2)
        self._methods["Health.Check"] = (HEALTH_CHECK, self.health_pb2.HealthCheckRequest,
                                         self.health_pb2.HealthCheckResponse)
        import grpc
        self._rpc_error = grpc.RpcError  # bound once: call() is the eager ops' hot path
        # replies as large as the daemon sends (a Fetch of a big tensor); requests are
        # capped by the daemon's --max-message-bytes, which max_message_bytes() reports
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        if tls_ca or tls_cert:
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read_pem(tls_ca), private_key=_read_pem(tls_key),
                certificate_chain=_read_pem(tls_cert))
            self._channel = grpc.secure_channel(addr, creds, options=options)
        else:
            self._channel = grpc.insecure_channel(addr, options=options)
        self._max_message = None
        self._primitives = frozenset()
        self._stubs = {}
        self._raw_stubs = {}  # the same methods taking encoded requests (bytes)
        self.daemon = None  # the LocalDaemon serving this client, when connect() started one
        self._closed = False
        self._eq = None  # the queue of asynchronous eager ops (eager_queue.queue_of makes it)
        _live.add(self)

    def sync(self):
        """Runs the queued eager ops now; raises the first failure among them."""
        if self._eq is not None:
            self._eq.sync()

    # -- generic ----------------------------------------------------------------
    def call(self, method_name, request=None, timeout=None):
        """Calls `method_name` ("Version", or "Health.Check"); `request` is a message of
        the method's request type, a dict of its fields, None (empty), or its encoded
        bytes (_wire.py). Queued eager ops are sent first (unless the method needs none
        of them)."""
        eq = self._eq
        if eq is not None and (eq.ops or eq.releases or eq.deferred or eq.inflight) and method_name not in _NO_FLUSH:
            if method_name in _CARRIES and type(request) is not bytes and self._carries_eager():
                return eq.call_carrying(method_name, request, timeout)  # one round trip for both
            eq.sync()
        return self._call_now(method_name, request, timeout)

    def _carries_eager(self):
        """Whether the daemon takes queued eager ops with Execute and Fetch (Version)."""
        self._version_facts()
        return self._eager_first

    def _queues_calls(self):
        """Whether the daemon runs queued calls of staged graphs (EagerBatchOp.call;
        Version)."""
        self._version_facts()
        return self._eager_calls

    def _encode_carrying(self, method_name, request, batch):
        """`request` of `method_name` (Execute or Fetch) encoded, with the encoded
        EagerBatchRequest `batch` as its eager_first."""
        req = self._request_message(method_name, request)
        number = req.DESCRIPTOR.fields_by_name["eager_first"].number
        return req.SerializeToString() + _wire.message_field(number, batch)

    def _call_now(self, method_name, request=None, timeout=None):
        if self._frames_path is not None:
            wait = self._frames_start(method_name, request, timeout)
            if wait is not None:
                return wait()
        stub, request, timeout = self._prepare(method_name, request, timeout)
        try:
            reply = stub(request, timeout=timeout, metadata=self._metadata)
        except self._rpc_error as e:
            raise error_from_rpc(e) from None
        self._keep_if_handles(method_name)
        return reply

    def _call_async(self, method_name, request):
        """Starts `method_name` without waiting (queued eager ops are not flushed: the
        queue itself calls this); returns a function that waits for the reply and
        returns it, raising as call() does."""
        if self._frames_path is not None:
            wait = self._frames_start(method_name, request, None)
            if wait is not None:
                return wait
        stub, request, timeout = self._prepare(method_name, request, None)
        future = stub.future(request, timeout=timeout, metadata=self._metadata)
        self._keep_if_handles(method_name)

        def wait():
            try:
                return future.result()
            except self._rpc_error as e:
                raise error_from_rpc(e) from None
        return wait

    def _keep_if_handles(self, method_name):
        """Starts renewing the session once a call may have made handles."""
        if self._keeper is None and self.session and method_name in _HANDLE_METHODS:
            self._start_keeper()

    def uses_frames(self):
        """Whether this client's calls go over the framed transport (a unix socket
        whose PATH.frames answered, or has not been tried yet)."""
        return self._frames_path is not None and self._frames_retry == 0.0

    def _frames_conn(self):
        """This thread's framed connection, connecting when it has none; None when the
        daemon's PATH.frames does not answer (tried again a second later)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed and conn.pid == os.getpid():
            return conn
        if time.monotonic() < self._frames_retry:
            return None
        try:
            conn = _frames.Connection(self._frames_path, self.session, self._token)
        except OSError:
            self._frames_retry = time.monotonic() + 1.0
            return None
        self._frames_retry = 0.0
        self._local.conn = conn
        self._frame_conns.add(conn)
        return conn

    def _frames_start(self, method_name, request, timeout):
        """Sends a call over the framed transport; returns a function that waits for
        its reply and returns it (raising as call() does), or None when no framed
        connection could take it — nothing was sent, and the call goes over gRPC."""
        if self._closed:
            self._prepare(method_name, request, timeout)  # raises
        conn = self._frames_conn()
        if conn is None or method_name not in self._methods:  # (_prepare names the known methods)
            return None
        reply_cls = self._methods[method_name][2]
        body = request if type(request) is bytes else self._request_message(method_name, request).SerializeToString()
        if len(body) > _frames.MAX_BODY:
            return None  # more than a frame's length says: gRPC refuses it with its own message
        if timeout is None:
            timeout = self.timeout
        for attempt in range(2):
            try:
                rid = conn.send(method_name, body, timeout)
                break
            except _frames.Broken as e:
                if e.sent:
                    raise Unavailable(str(e), None, None) from None
            # the daemon had closed an idle connection (a restart, its shutdown): once more
            conn = self._frames_conn() if attempt == 0 else None
            if conn is None:
                return None
        self._keep_if_handles(method_name)

        def wait():
            try:
                status, reason, details, data = conn.wait(rid, timeout)
            except _frames.Broken as e:
                raise Unavailable(str(e), None, None) from None
            except TimeoutError:
                raise DeadlineExceeded(f"stagd: no reply to {method_name} within {timeout} s "
                                       "(and the daemon's own deadline did not answer)", None, None) from None
            if status:
                raise error_from_frame(status, reason, details)
            return reply_cls.FromString(data)
        return wait

    def _prepare(self, method_name, request, timeout):
        """(stub, request message, timeout) of a call."""
        if self._closed:
            raise FailedPrecondition(f"stagd: {method_name} on {self!r}, which was closed "
                                     "(connect again, or set_default_client another)", None)
        try:
            path, req_cls, reply_cls = self._methods[method_name]
        except KeyError:
            raise ValueError(f"stagd: unknown method {method_name!r}; known: "
                             f"{', '.join(sorted(self._methods))}") from None
        if type(request) is bytes:  # already encoded (_wire.py): sent as it is
            stub = self._raw_stubs.get(path)
            if stub is None:
                stub = self._raw_stubs[path] = self._channel.unary_unary(
                    path, request_serializer=None, response_deserializer=reply_cls.FromString)
            return stub, request, timeout if timeout is not None else self.timeout
        request = self._request_message(method_name, request)
        stub = self._stubs.get(path)
        if stub is None:
            stub = self._channel.unary_unary(path, request_serializer=req_cls.SerializeToString,
                                             response_deserializer=reply_cls.FromString)
            self._stubs[path] = stub
        return stub, request, timeout if timeout is not None else self.timeout

    def _request_message(self, method_name, request):
        """request (a message, a dict of its fields, or None) as the method's message."""
        req_cls = self._methods[method_name][1]
        if request is None:
            return req_cls()
        if isinstance(request, dict):
            return req_cls(**request)
        if not isinstance(request, req_cls):
            raise TypeError(f"stagd: {method_name} takes a {req_cls.__name__}, "
                            f"not {type(request).__name__}")
        return request

    def _version_facts(self):
        if self._max_message is None:
            v = self.call("Version")
            self._primitives = frozenset(v.primitives)
            self._max_message = v.max_message_bytes or (4 << 20)
            # (a client that cannot write there, e.g. in another container, keeps to messages)
            usable = self._shm_wanted and v.shm_dir and os.access(v.shm_dir, os.W_OK | os.X_OK)
            self._shm = v.shm_dir if usable else ""
            self._shm_staging = bool(self._shm) and v.shm_staging  # (an older daemon: files of their own)
            self._eager_first = v.eager_first  # (an older daemon would drop the ops it ignores)
            self._eager_calls = v.eager_calls

    def max_message_bytes(self):
        """The largest request the daemon accepts (asked once, with Version)."""
        self._version_facts()
        return self._max_message

    def shm_dir(self):
        """The daemon's shared-memory directory when this client uses the local data path
        (a unix socket, the daemon's path on, shm not turned off here), else "" (asked
        once, with Version)."""
        self._version_facts()
        return self._shm

    def primitives(self):
        """The names the daemon's S-expression reader takes as primitives (asked once, with
        Version): staged functions' defs avoid them."""
        self._version_facts()
        return self._primitives

    # -- session --------------------------------------------------------------------
    def _start_keeper(self):
        # each thread has its own stop event: one being stopped never sees its successor's
        stop = self._keeper = threading.Event()
        thread = threading.Thread(target=self._keep_session, args=(stop,), daemon=True,
                                  name=f"stagd-session-{self.session[:6]}")
        if not _ending[0]:  # registered now, after a private daemon's own hook: runs first
            _ending[0] = True
            atexit.register(_end_all_sessions)
        thread.start()

    def _keep_session(self, stop):
        wait = 0.0
        while not stop.wait(wait):
            try:
                lease_ms = self.call("Session", None, timeout=10).lease_ms
            except StagdError:
                lease_ms = 3000  # the daemon is busy or gone: try again soon
            if lease_ms == 0:
                return  # this daemon never expires handles
            wait = lease_ms / 3000.0

    def grant(self, variables, session):
        """Shares Variables this client's session owns with the session named `session`
        (another Client's `.session`): its calls may then read, assign and pass them until
        this session releases them. `variables`: a Variable, a handle id, or a list of them.
        Anyone else still gets NotFound (docs/security.md "Grants")."""
        if isinstance(variables, (str,)) or not isinstance(variables, (list, tuple)):
            variables = [variables]
        ids = [v if isinstance(v, str) else v._id for v in variables]
        shared_ids.update(ids)  # their eager updates are sent at once from now on
        return self.call("Session", {"grant_ids": ids, "grant_to": session}).granted

    def end_session(self):
        """Releases every handle this client made (its tensors become invalid) and stops
        renewing; a later handle opens the session again."""
        try:
            self.sync()  # the session's last ops (a Variable's last update) still run
        except StagdError:
            pass  # a failure nobody can read any more
        stop, self._keeper = self._keeper, None
        if stop is None:
            return 0
        stop.set()
        try:
            return self.call("Session", {"end": True}, timeout=2).released
        except StagdError:
            return 0  # the daemon is gone: nothing left to release

    # -- admin --------------------------------------------------------------------
    def health(self, service="", timeout=None):
        """The serving status name, e.g. "SERVING"."""
        reply = self.call("Health.Check", {"service": service}, timeout)
        return self.health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)

    def is_serving(self, timeout=1.0):
        """True when the daemon answers a health check with SERVING within `timeout`."""
        try:
            return self.health(timeout=timeout) == "SERVING"
        except StagdError:
            return False

    def version(self, timeout=None):
        """The VersionReply (`.version`, `.api`, `.features`, ...)."""
        return self.call("Version", None, timeout)

    def list_devices(self, timeout=None):
        """The daemon's devices, a list of Device messages (`.name`, `.backend`, ...)."""
        return list(self.call("ListDevices", None, timeout).devices)

    def stats(self, timeout=None):
        """The StatsReply: uptime, request counters, per-method stats."""
        return self.call("Stats", None, timeout)

    def call_retrying(self, method_name, request=None, timeout=None, attempts=6):
        """call() for a request that may safely run twice (reads, Stage, and Execute or
        RunModel on arguments given by value): UNAVAILABLE — the replica behind a load
        balancer died with the call in flight, or the daemon is restarting — is retried
        with backoff, as is a stream reset under the call (docs/deploy.md "Replicas")."""
        for attempt in range(attempts):
            try:
                return self.call(method_name, request, timeout)
            except StagdError as e:
                # UNAVAILABLE, or UNKNOWN "Stream removed": the HTTP/2 stream was reset
                # under the call (grpc's status for a peer that vanished mid-reply)
                lost = isinstance(e, Unavailable) or (
                    e.code is not None and e.code.name == "UNKNOWN" and e.details == "Stream removed")
                if not lost or attempt == attempts - 1:
                    raise
                time.sleep(min(0.05 * 2 ** attempt, 1.0))

    def list_models(self, name="", timeout=None):
        """ListModelsReply: the models the daemon serves and their versions."""
        return self.call("ListModels", {"name": name}, timeout=timeout)

    def ping(self, payload="", delay_ms=0, timeout=None):
        """Echoes `payload` after `delay_ms` milliseconds; returns the echoed payload."""
        return self.call("Ping", {"payload": payload, "delay_ms": delay_ms}, timeout).payload

    # -- lifetime -----------------------------------------------------------------
    def close(self):
        if self._closed:
            return
        self.end_session()
        self._closed = True
        if self._staging is not None:  # shm.Staging, attached by the tensors layer
            self._staging.close()
        for conn in list(self._frame_conns):
            conn.close()
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"stagd.Client({self.addr!r})"
