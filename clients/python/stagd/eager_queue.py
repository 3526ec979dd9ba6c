# SPDX-License-Identifier: Apache-2.0
"""eager_queue.py — asynchronous eager ops (docs/client.md "Asynchronous eager").

An eager op whose result dtype and shape the client can infer (eager_infer.py) is not
sent at once: it is appended to its Client's queue with a result id the client drew
(128 random bits, "DEVICE#HEX", owned by the client's session once the daemon stores
it), and its Tensor is returned at once. The queue goes to the daemon as one
EagerBatch call, in order, when a value is needed (every other call of the Client
flushes first: Fetch for `.numpy()`/`float(t)`/printing, Execute for a staged call,
Session, ...) or when it holds `bound` ops. Handles of dropped Tensors are released by
the next batch, after its ops. A batch sent because the queue filled is not waited for:
the program queues the next ops while the daemon runs it, and the next batch (or any
other call) first waits for it — one batch in flight, so batches run in order.

A failed op (and every later op that used its result) poisons its result ids: reading
one raises the op's error, and the first failure of a batch is raised at the next sync
point, as the exception class the synchronous call would have raised, its message
starting with the user's file:line of the op. STAGD_EAGER_SYNC=1 (or
stagd.set_eager_async(False)) turns queueing off.
"""
import os
import sys
import threading
import weakref

from . import _wire
from .client import StagdError, error_class

DEFAULT_BOUND = 256  # ops per batch (the daemon takes at most 4096)
# over the framed transport a batch started without waiting costs what a waited one
# does (~80 µs of client CPU, gRPC's future ~340), so smaller batches go out sooner and
# the daemon runs them while Python queues the next (docs/performance.md "The framed
# transport")
FRAMED_BOUND = 128
RELEASE_BOUND = 1024  # dropped handles that send a batch
# the package's folder as its modules' code names it (the path it was imported by, which
# may hold "..") and normalised
_PKG_DIRS = tuple({os.path.dirname(__file__) + os.sep, os.path.dirname(os.path.abspath(__file__)) + os.sep})

_enabled = [os.environ.get("STAGD_EAGER_SYNC", "") in ("", "0")]


def set_enabled(flag):
    """Turns asynchronous eager on or off for every client (pending ops are flushed by
    the next sync point either way)."""
    _enabled[0] = bool(flag)


def enabled():
    return _enabled[0]


def user_site():
    """(file, line) of the innermost caller outside the stagd package."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIRS):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)


# A drawn id: 128 bits from the OS's random generator, drawn 4 KiB at a time (one system
# call per 256 ids) and kept as hex text, taken 32 digits at a time under a lock; a forked
# child draws afresh (it would otherwise take the parent's next ids). Its first half, the
# daemon's key across sessions, is never zero.
_random = ["", 0]  # (hex digits, next position)
_random_lock = threading.Lock()
os.register_at_fork(after_in_child=lambda: _random.__setitem__(slice(None), ["", 0]))
_ZERO_HALF = "0" * 16


def new_id(device):
    with _random_lock:
        digits, at = _random
        if at + 32 > len(digits):
            digits, at = _random[0], _random[1] = os.urandom(4096).hex(), 0
        _random[1] = at + 32
    h = digits[at:at + 32]
    if h.startswith(_ZERO_HALF):
        h = "01" + h[2:]
    return f"{device}#{h}"


class _Failure:
    """What makes the exception of a failed op: a new one at each raise. `rewrite` (a
    queued staged function call's): given the daemon's error, raises the exception the
    synchronous call raises for it (a Python exception a staged `raise` stands for, or
    the error located at the function's source line), or returns when it has none."""

    __slots__ = ("cls", "message", "code", "reason", "raw", "rewrite")

    def __init__(self, cls, message, code, reason, raw=None, rewrite=None):
        self.cls, self.message, self.code, self.reason = cls, message, code, reason
        self.raw, self.rewrite = raw, rewrite

    def exception(self):
        if self.rewrite is not None:
            try:
                self.rewrite(self.cls(self.raw, self.code, self.reason))
            except Exception as e:  # noqa: BLE001 — the exception the call stands for
                e.queued_op = True
                return e
        e = self.cls(self.message, self.code, self.reason)
        e.queued_op = True  # a queued op's failure, not the call's that raised it (no retry)
        return e


def queue_of(client):
    """`client`'s queue (made on first use)."""
    q = client._eq
    if q is None:
        with _make_lock:
            q = client._eq = client._eq or EagerQueue(client)
    return q


_make_lock = threading.Lock()


class EagerQueue:
    """One Client's queue of eager ops not yet sent."""

    def __init__(self, client, bound=None):
        self.client = client
        self.bound = bound or (FRAMED_BOUND if client.uses_frames() else DEFAULT_BOUND)
        self.lock = threading.RLock()
        self.ops = []      # the ops' encoded EagerBatchOps (_wire.batch_op)
        self.info = []     # (file, line, result id(s), argument handle ids, rewrite) of each op
        self.keep = []     # objects the queued ops need alive until they run
        self.releases = []  # handle ids to release after the queued ops
        self.failed = {}   # poisoned result id → _Failure
        self.deferred = None  # the first failure not raised yet
        self.batches = 0   # batches sent: EagerBatch calls, or carried by a call (tests, benchmarks)
        self.sending = False  # in _send (a release from a GC there must not send again)
        self.inflight = None  # (wait, info, keep) of the batch the daemon is running
        self.lazy = {}  # result id → weakref of a queued call's Tensor whose dtype and shape the daemon tells

    def push(self, msg, result_ids, handles=(), keep=None, rewrite=None):
        """Queues one op already encoded (_wire.batch_op or batch_call); result_ids: its
        result id ("" for none) or, for a call, the tuple of them; rewrite: as _Failure's."""
        file, line = user_site()
        with self.lock:
            self.ops.append(msg)
            self.info.append((file, line, result_ids, handles, rewrite))
            if keep:
                self.keep.append(keep)
            if len(self.ops) >= self.bound:
                self._send()

    def release(self, hid):
        """Releases `hid` after the queued ops (with the next batch)."""
        with self.lock:
            self.releases.append(hid)
            if self.failed:
                self.failed.pop(hid, None)
                if self.lazy:  # (a failed call's result: never told)
                    self.lazy.pop(hid, None)
            if len(self.releases) >= RELEASE_BOUND and not self.sending:  # (not from a GC inside _send)
                self._send()

    def poisoned(self, hid):
        """The failure of the op that made `hid`, or None."""
        return self.failed.get(hid) if self.failed else None

    def check(self, hid):
        """Raises the failure of the op that made `hid`, if it failed."""
        f = self.poisoned(hid)
        if f is not None:
            raise f.exception()

    def expect(self, t):
        """Registers `t`, a queued call's result of unknown dtype and shape (tensor.py's
        _LazyTensor): made a plain Tensor when its batch's reply tells them."""
        with self.lock:
            self.lazy[t._id] = weakref.ref(t)

    def resolve(self, t):
        """Waits until the daemon told `t`'s dtype and shape (a sync point): raises its
        call's failure, or the first failure not raised yet, as sync() does."""
        with self.lock:
            if t._id in self.lazy:
                self.check(t._id)
                self.sync()
        self.check(t._id)

    def sync(self):
        """Sends the queued ops and waits for them; raises the first failure not raised
        yet."""
        with self.lock:
            if self.ops or self.releases:
                self._send(block=True)
            self._wait()
            f, self.deferred = self.deferred, None
        if f is not None:
            raise f.exception()

    def call_carrying(self, method, request, timeout=None):
        """Calls `method` (Execute or Fetch, a sync point) with the queued ops as its
        eager_first: the daemon runs them, then the call — one round trip. A failed op
        is raised as at sync() (the daemon did not run the call); the call's own failure
        comes back in the reply's `failed` and is raised as the plain call raises it."""
        client = self.client
        with self.lock:
            self._wait()
            if self.deferred is not None:
                self.sync()  # sends the ops and raises that failure, as a plain sync point
            got = []
            self.sending = True
            try:
                ops, info, keep, releases = self._take()
                if not ops and not releases:
                    return client._call_now(method, request, timeout)
                data = client._encode_carrying(method, request, _wire.batch_request(ops, releases))

                def call():
                    try:
                        got.append(client._call_now(method, data, timeout))
                    except StagdError as e:
                        got.append(e)  # (recorded on the ops by _wait; kept for a batch of releases only)
                        raise
                    return got[0].eager_first
                self._run(call, info, keep)
            finally:
                self.sending = False
            f, self.deferred = self.deferred, None
        if f is not None:
            raise f.exception()
        reply = got[0]
        if isinstance(reply, StagdError):
            raise reply
        if reply.HasField("failed"):
            e = reply.failed
            cls = error_class(e.code, e.reason)
            raise cls(e.message, cls.code, e.reason or None)
        return reply

    def _send(self, block=False):
        """Starts one EagerBatch of the queued ops once the batch in flight is done (lock
        held); its failures are recorded when it is waited for — at once with `block`
        (a sync point: a plain call, cheaper than a future when the reply is awaited)."""
        self.sending = True
        try:
            ops, info, keep, releases = self._take()
            if not ops and not releases:
                return
            req = _wire.batch_request(ops, releases)
            if block:
                self._run(lambda: self.client._call_now("EagerBatch", req), info, keep)
                return
            try:
                wait = self.client._call_async("EagerBatch", req)
            except StagdError as e:
                self._fail_all(info, e)
            else:
                self.inflight = (wait, info, keep)
        finally:
            self.sending = False

    def _take(self):
        """Once the batch in flight is done (lock held): the queued ops, their info, what
        they keep alive and the releases, taken from the queue and counted as a batch
        when there are any; ops that use a failed op's result are left out (failed)."""
        self._wait()
        ops, info, self.ops, self.info = self.ops, self.info, [], []
        keep, self.keep = self.keep, []
        releases, self.releases = self.releases, []
        if self.failed:  # an op of the batch just done failed: its users fail here
            ops, info = self._prune(ops, info)
        if ops or releases:
            self.batches += 1
        return ops, info, keep, releases

    def _run(self, call, info, keep):
        """Makes a batch's call now and records its failures (`call` returns the
        EagerBatchReply; lock held)."""
        self.inflight = (call, info, keep)
        self._wait()

    def _fail_all(self, info, e):
        """A batch that did not run: every op of it failed with e."""
        f0 = None
        for site in info:
            f = _Failure(type(e), _located(site, e.details), e.code, e.reason)
            f0 = f0 or f
            for rid in _ids(site[2]):
                self.failed[rid] = f
        self.deferred = self.deferred or f0

    def _prune(self, ops, info):
        """The ops whose arguments no failed op made; the others' results are poisoned
        with the failure of the op that made their argument."""
        kept_ops, kept_info = [], []
        for o, site in zip(ops, info):
            f = next((self.failed[h] for h in site[3] if h in self.failed), None)
            if f is None:
                kept_ops.append(o)
                kept_info.append(site)
            else:
                for rid in _ids(site[2]):
                    self.failed[rid] = f
        return kept_ops, kept_info

    def _wait(self):
        """Waits for the batch in flight (lock held) and records its failures."""
        if self.inflight is None:
            return
        wait, info, keep = self.inflight
        try:
            reply = wait()
        except StagdError as e:
            self._fail_all(info, e)
            return
        finally:
            self.inflight = None
            del keep
        failures = {}
        for m in reply.results:  # queued calls' results: their dtypes and shapes
            ref = self.lazy.pop(m.id, None)
            t = ref() if ref is not None else None
            if t is not None:
                t._told(m.dtype, m.shape)
        for err in reply.errors:
            cause = err.cause
            f = failures.get(cause)
            if f is None:
                cls = error_class(err.code, err.reason)
                f = failures[cause] = _Failure(cls, _located(info[cause], err.message), cls.code,
                                               err.reason or None, err.message, info[cause][4])
                self.deferred = self.deferred or f
            for rid in _ids(info[err.index][2]):
                self.failed[rid] = f



def _ids(result_ids):
    """An op's result ids as info keeps them ("" or an id; a call's tuple) → the ids."""
    if type(result_ids) is str:
        return (result_ids,) if result_ids else ()
    return result_ids


def _located(site, message):
    """message after the op's file:line (site: its info entry)."""
    return f"{site[0]}:{site[1]}: {message}"
