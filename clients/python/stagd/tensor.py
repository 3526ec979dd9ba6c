# SPDX-License-Identifier: Apache-2.0
"""tensor.py — eager tensors: `stagd.Tensor` (a handle to a tensor that lives on a device
in the daemon), `stagd.constant`, `stagd.Variable`, `stagd.device`, and the op functions
(`stagd.matmul`, `stagd.relu`, ...). See docs/client.md.

Every op on a Tensor is one eager op in the daemon — queued and sent in batches when the
client can infer its result's dtype and shape (eager_queue.py, eager_infer.py), else one
EagerOp RPC: the daemon runs the op-table primitive on the
handles and answers with the result's handle, dtype and shape; data moves only on
`.numpy()` (Fetch, cached: tensors are immutable). Handles are released when their
Tensor is garbage-collected, in batches. Inside a staged trace (stagd.function) the
same ops emit S-expressions instead, and a Tensor or Variable met there is captured as
an extra input of the graph. While a GradientTape is active, ops on watched tensors are
also recorded on it (tape.py). Whether a trace is being built, and which tapes record,
this module learns from context.py: function.py and tape.py sit above it.
"""
import atexit
import threading

import numpy as np

from . import _wire, context, eager_queue, shm
from .client import Internal, ResourceExhausted, default_client, shared_ids
from . import eager_infer
from .eager_infer import infer
from .runtime import indexing
from .runtime.errors import StagingError
from .runtime.staged import Staged, apply, item_of

# stagd.v1.DType numbers ↔ NumPy dtypes
_DTYPE_NAMES = {1: "bool", 2: "int32", 3: "int64", 4: "float16", 5: "float32", 6: "float64"}
_DTYPE_NUMS = {v: k for k, v in _DTYPE_NAMES.items()}
RELEASE_BATCH = 64  # handles released per Release RPC

_ctx = threading.local()
_pending_release = {}  # client → handle ids to release
_release_lock = threading.Lock()


def current_device():
    stack = getattr(_ctx, "devices", None)
    return stack[-1] if stack else "cpu"


def _canonical_device(name):
    """'cpu', '/cpu:0', 'CPU:0' → 'cpu'; 'gpu', '/gpu:1', 'GPU:1' → 'vulkan:0'/'vulkan:1';
    anything else is kept (the daemon names the devices it has)."""
    n = name.strip().lower().lstrip("/")
    if n.startswith("device:"):
        n = n[len("device:"):]
    if n in ("cpu", "cpu:0"):
        return "cpu"
    if n == "gpu":
        return "vulkan:0"
    if n.startswith("gpu:"):
        return "vulkan:" + n[4:]
    return n


class device:
    """`with stagd.device("vulkan:0"):` — eager ops, constants and staged calls inside
    run on that device and their results live there. Names as in list_devices();
    'gpu'/'/gpu:N' mean vulkan:N. An unknown device fails at the first op with
    InvalidArgument (or NotFound for a vulkan index the daemon lacks)."""

    def __init__(self, name):
        self.name = _canonical_device(name)

    def __enter__(self):
        if not hasattr(_ctx, "devices"):
            _ctx.devices = []
        _ctx.devices.append(self.name)
        return self

    def __exit__(self, *exc):
        _ctx.devices.pop()


def _release(client, hid):
    eq = client._eq
    if eq is not None and eager_queue.enabled():  # after the queued ops, with the next batch
        eq.release(hid)
        return
    with _release_lock:
        pending = _pending_release.setdefault(client, [])
        pending.append(hid)
        if len(pending) < RELEASE_BATCH:
            return
        ids = list(pending)
        pending.clear()
    try:
        client.call("Release", {"ids": ids})
    except Exception:  # the daemon is gone (interpreter shutdown): nothing to free
        pass


@atexit.register
def _release_all_at_exit():
    """A long-running daemon should not keep a finished notebook's last handles."""
    with _release_lock:
        pending = list(_pending_release.items())
        _pending_release.clear()
    for client, ids in pending:
        if ids:
            try:
                client.call("Release", {"ids": ids}, timeout=1.0)
            except Exception:
                pass


def flush_releases(client=None):
    """Sends the pending releases now; returns the ReleaseReply (live handle counts)."""
    client = client or default_client()
    with _release_lock:
        ids = list(_pending_release.pop(client, []))
    return client.call("Release", {"ids": ids})


# ----------------------------------------------------------------- values

def _dtype_name(arr):
    name = str(arr.dtype)
    if name not in _DTYPE_NUMS:
        raise TypeError(f"stagd: NumPy dtype {arr.dtype} is not a stagd dtype "
                        f"({', '.join(_DTYPE_NUMS)})")
    return name


def _np_value(pb2, arr):
    arr = np.asarray(arr, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    return pb2.Value(tensor=pb2.Tensor(dtype=_DTYPE_NUMS[_dtype_name(arr)], shape=list(arr.shape),
                                       data=arr.tobytes()))


def _to_array(value, dtype=None):
    """A Python value → the NumPy array a constant of it holds (floats → float32,
    ints → int32 where every one fits, else int64, as in TF; NumPy arrays keep their
    dtype unless dtype is given). An integer that the dtype cannot hold is an
    OverflowError, never a wrapped value."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
    else:
        try:
            arr = np.asarray(value)
        except OverflowError:
            raise OverflowError(f"{value!r} does not fit int64") from None
        if arr.dtype == object and _holds_ints(arr):
            raise OverflowError(f"{value!r} does not fit int64 (the widest integer dtype)")
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and _fits(arr, np.int32):
            arr = arr.astype(np.int32)
    if dtype is not None:
        want = np.dtype(dtype if isinstance(dtype, str) else str(np.dtype(dtype)))
        if arr.dtype.kind in "iub" and want.kind in "iu" and not _fits(arr, want):
            raise OverflowError(f"{value!r} does not fit {want.name}")
        arr = arr.astype(want)
    return arr


def _fits(arr, dtype):
    """Every integer of arr is in dtype's range."""
    if arr.size == 0:
        return True
    info = np.iinfo(dtype)
    return int(arr.min()) >= info.min and int(arr.max()) <= info.max


def _holds_ints(arr):
    return any(isinstance(x, int) and not isinstance(x, bool) for x in arr.flat)


def _arg_value(client, a, device, keep):
    """An op argument → stagd.v1.Value. An array too large for one request is put on
    `device` in pieces first and passed as a handle (kept alive in `keep`)."""
    pb2 = client.pb2
    if isinstance(a, (Tensor, Variable)):
        _check_made(a)
        if type(a) is Tensor:  # its Value made once (requests copy it), for the id it is for
            c = a._pbv
            if c is None or c[0] is not a._id:
                c = a._pbv = (a._id, pb2.Value(handle=pb2.TensorHandle(id=a._id)))
            return c[1]
        return pb2.Value(handle=pb2.TensorHandle(id=a._id))
    if isinstance(a, pb2.Value):
        return a
    if isinstance(a, bool):
        return pb2.Value(bool_value=a)
    if isinstance(a, int):
        return pb2.Value(int_value=a)
    if isinstance(a, float):
        return pb2.Value(float_value=a)
    if isinstance(a, str):
        return pb2.Value(string_value=a)
    if a is None:
        return pb2.Value(none=True)
    if isinstance(a, (tuple, dict)):
        v = pb2.Value()
        _fill_nested(client, v, a, device, keep)
        return v
    if isinstance(a, np.generic):
        return _arg_value(client, a.item(), device, keep)
    if isinstance(a, (np.ndarray, list)):
        arr = _to_array(a)
        if _put_first(client, arr.nbytes):
            t = _put_array(client, arr, device)
            keep.append(t)
            return _arg_value(client, t, device, keep)
        return _np_value(pb2, arr)
    raise TypeError(f"stagd: cannot pass a {type(a).__name__} to an op: {a!r}")


def _check_made(a):
    """Raises the failure of the queued op that made handle `a`, if it failed: such a
    handle is never read as a value."""
    eq = a._c._eq
    if eq is not None and eq.failed:
        eq.check(a._id)


def _fill_nested(client, v, a, device, keep):
    """Fills Value v with tuple or record (dict, fields in its order) a, in place: a
    message passed to a protobuf constructor is copied, so building a tree bottom-up
    copied every subtree once per level above it (a 64-leaf tree record: 7 ms)."""
    if isinstance(a, tuple):
        v.tuple.SetInParent()
        items = v.tuple.items
        for x in a:
            _fill_item(client, items.add(), x, device, keep)
        return
    if not all(isinstance(k, str) for k in a):
        raise TypeError(f"stagd: record field names must be strings: {list(a)!r}")
    v.record.SetInParent()
    fields = v.record.fields
    for k, x in a.items():
        f = fields.add()
        f.name = k
        _fill_item(client, f.value, x, device, keep)


def _fill_item(client, v, x, device, keep):
    if isinstance(x, (tuple, dict)):
        _fill_nested(client, v, x, device, keep)
    else:
        v.CopyFrom(_arg_value(client, x, device, keep))


def _arg_values(client, args, device):
    """[Value] for args, and the temporary tensors the call must keep alive."""
    keep = []
    return [_arg_value(client, a, device, keep) for a in args], keep


# ------------------------------------------------ tensors larger than one message
# A request may not exceed the daemon's --max-message-bytes (64 MiB by default), and a
# whole tensor in one message costs its size again in protobuf and gRPC buffers on both
# sides. Larger arrays travel as flat pieces: put one by one, joined in the daemon by
# `concat` and shaped by `reshape` (on the target device); fetched as `slice`s of a flat
# view, one Fetch each (docs/client.md "Large tensors").

_PIECE_BYTES = 32 << 20
_JOIN = 32  # pieces per concat (EagerOp takes at most 64 arguments)
_PIECE_OVERHEAD = 1024  # a Put's bytes besides the piece's data (dtype, shape, device)


_MIN_PIECE = 1 << 16


def _piece_bytes(client):
    return max(_MIN_PIECE, min(_PIECE_BYTES, client.max_message_bytes() // 2))


def _in_pieces(client, nbytes):
    """Whether nbytes of tensor data travel in pieces (small ones never ask the daemon)."""
    return nbytes > _MIN_PIECE and not _by_shm(client, nbytes) and nbytes > _piece_bytes(client)


def _put_first(client, nbytes):
    """Whether an array argument of nbytes is put first and passed as a handle (too large
    for one message, or taking the local data path) rather than inside the request."""
    return nbytes > _MIN_PIECE and (_by_shm(client, nbytes) or _in_pieces(client, nbytes))


def _by_shm(client, nbytes):
    """Whether nbytes of tensor data take the local data path (shm.py)."""
    return nbytes >= shm.MIN_BYTES and bool(client.shm_dir())


def _raw_op(client, device, op, *args):
    """One EagerOp on handles and literals, outside tapes and traces (plumbing)."""
    values, _ = _arg_values(client, args, device)  # handles and literals: nothing to keep
    reply = client.call("EagerOp", client.pb2.EagerOpRequest(op=op, args=values, device=device))
    return _wrap(reply.result, client)


def _put_array(client, arr, device):
    """A handle holding `arr` on `device` (one Put, or pieces joined in the daemon)."""
    if _by_shm(client, arr.nbytes):
        arr = np.asarray(arr, order="C")
        pb2 = client.pb2

        def put(name, keep):
            t = pb2.Tensor(dtype=_DTYPE_NUMS[_dtype_name(arr)], shape=list(arr.shape), shm=name,
                           shm_keep=keep)
            return client.call("Put", pb2.PutRequest(value=pb2.Value(tensor=t), device=device))
        staging = shm.staging_of(client)
        if staging is not None and staging.claim(arr.nbytes):  # its own file, its pages already there
            try:
                reply = put(staging.write(arr), True)
            finally:
                staging.done()
        else:
            with shm.put_file(client.shm_dir(), arr) as name:
                reply = put(name, False)
        return _wrap(reply.result, client)
    if not _in_pieces(client, arr.nbytes):
        reply = client.call("Put", client.pb2.PutRequest(value=_np_value(client.pb2, arr),
                                                         device=device))
        return _wrap(reply.result, client)
    piece, limit = _piece_bytes(client), client.max_message_bytes()
    if piece + _PIECE_OVERHEAD > limit:
        raise ResourceExhausted(
            f"a {arr.nbytes}-byte tensor is sent in pieces of {piece} bytes, but this daemon "
            f"accepts requests of at most {limit} bytes (--max-message-bytes)")
    flat = np.ascontiguousarray(arr).reshape(-1)
    step = max(1, piece // max(arr.itemsize, 1))
    parts = [_put_array(client, flat[i:i + step], device) for i in range(0, flat.size, step)]
    while len(parts) > 1:
        joined = []
        for i in range(0, len(parts), _JOIN):
            group = parts[i:i + _JOIN]
            joined.append(_raw_op(client, device, "concat", *group) if len(group) > 1 else group[0])
            if len(group) > 1:
                _release_now(client, group)
        parts = joined
    shaped = _raw_op(client, device, "reshape", parts[0], tuple(int(d) for d in arr.shape))
    _release_now(client, parts)
    return shaped


def _release_now(client, tensors):
    """Frees the daemon's memory for temporaries at once rather than with the next
    release batch (their objects' later release is a no-op: ids are never reused)."""
    client.call("Release", {"ids": [t._id for t in tensors]})


def _fetch_array(client, hid, dtype, shape, device):
    """The value of handle `hid` as a new NumPy array (one Fetch, or slices of it)."""
    itemsize = np.dtype(dtype).itemsize
    size = int(np.prod(shape)) if shape else 1
    if _by_shm(client, size * itemsize):
        staging = shm.staging_of(client)
        claimed = staging is not None and staging.claim(size * itemsize)
        try:
            req = {"ids": [hid], "shm_min_bytes": shm.MIN_BYTES}
            if claimed:
                req["shm_into"] = staging.name
            t = client.call("Fetch", req).values[0].tensor
            if t.shm and t.shm_keep:
                if not claimed or t.shm != staging.name:
                    raise ValueError(f"stagd: the daemon wrote a result into {t.shm!r}, not this "
                                     "client's staging file")
                return staging.read(_DTYPE_NAMES[t.dtype], t.shape)
        finally:
            if claimed:
                staging.done()
        if t.shm:
            return shm.take_file(client.shm_dir(), t.shm, _DTYPE_NAMES[t.dtype], t.shape)
        return _tensor_array(t)
    if not _in_pieces(client, size * itemsize):
        reply = client.call("Fetch", {"ids": [hid]})
        return _tensor_array(reply.values[0].tensor)
    handle = client.pb2.Value(handle=client.pb2.TensorHandle(id=hid))  # the caller's
    flat = _raw_op(client, device, "reshape", handle, (size,))
    out = np.empty(size, dtype=dtype)
    step = max(1, _piece_bytes(client) // itemsize)
    for i in range(0, size, step):
        part = _raw_op(client, device, "slice", flat, i, min(i + step, size))
        reply = client.call("Fetch", {"ids": [part._id]})
        _release_now(client, [part])
        out[i:i + step] = np.frombuffer(reply.values[0].tensor.data, dtype=dtype)
    _release_now(client, [flat])
    return out.reshape(tuple(shape))


def _wrap(value, client):
    """A reply Value → Tensor / Variable handle / Python scalar / str / tuple / dict
    (a record)."""
    kind = value.WhichOneof("kind")
    if kind == "handle":
        return Tensor._from_handle(value.handle, client)
    if kind == "tuple":
        return tuple(_wrap(v, client) for v in value.tuple.items)
    if kind == "record":
        return {f.name: _wrap(f.value, client) for f in value.record.fields}
    if kind == "tensor":
        return _tensor_array(value.tensor)
    if kind == "none" or kind is None:
        return None
    return getattr(value, kind)


def _tensor_array(t):
    name = _DTYPE_NAMES[t.dtype]
    return np.frombuffer(t.data, dtype=name).reshape(tuple(t.shape)).copy()


def eager(op, *args):
    """Runs op-table primitive `op` on args in the daemon (or stages it when an
    argument is Staged); records it on the active gradient tapes."""
    client, plain = None, True  # the daemon that holds the arguments; no Staged or Variable
    for a in args:
        if type(a) is Tensor:
            if client is None:
                client = a._c
        elif type(a) is _LazyTensor:
            a._resolve()  # its dtype and shape are needed: now a plain Tensor
            if client is None:
                client = a._c
        elif isinstance(a, (Staged, Variable)):
            plain = False
    if not plain or context.traces:
        if any(isinstance(a, Staged) for a in args) or context.tracing():
            return apply(op, *[a.read_value() if isinstance(a, Variable) else a
                               for a in args])
        if not plain:  # ops read variables (and tapes watch)
            args = tuple(a.read_value() if isinstance(a, Variable) else a for a in args)
            client = next((a._c for a in args if isinstance(a, Tensor)), None)
    if client is None:
        client = default_client()
    if eager_queue._enabled[0] and current_device() == "cpu":
        meta = infer(op, args)
        if meta is not None:
            out = _queue_op(client, op, args, "cpu", meta)
            if context.tapes:
                context.record_op(op, args, out)
            return out
    pb2 = client.pb2
    values, keep = _arg_values(client, args, current_device())
    req = pb2.EagerOpRequest(op=op, args=values, device=current_device())
    reply = client.call("EagerOp", req)
    del keep
    out = _wrap(reply.result, client)
    if context.tapes:
        context.record_op(op, args, out)
    return out


def _queue_op(client, op, args, device, meta):
    """Queues `op` (eager_queue.py); its Tensor, of the inferred dtype and shape, at once.
    meta None: the result is dropped (a Variable update) and None returned."""
    q = client._eq or eager_queue.queue_of(client)
    failure = _failed_argument(q, args)
    if failure is not None:  # an argument made by a failed op fails this op too, without sending
        if meta is None:
            raise failure.exception()
        t = _pending(client, device, meta)
        q.failed[t._id] = failure
        return t
    values, handles, keep = _wire_arguments(client, args, device)
    if meta is None:
        q.push(_wire.batch_op(op, values, device, "", 0, ()), "", handles, keep)
        return None
    t = _pending(client, device, meta)
    q.push(_wire.batch_op(op, values, device, t._id, _DTYPE_NUMS[meta[0]], t.shape), t._id, handles, keep)
    return t


def _queue_call(client, head, args, metas, device, rewrite=None):
    """Queues a call of a staged graph (head: _wire.call_head's, for its graph id and
    program) on args (eager_queue.py); the Tensors of its results, of the dtypes and
    shapes `metas` declares ((dtype, shape) each), at once. The daemon checks each result
    against its declaration before storing any. A meta None: a tensor whose dtype and
    shape the daemon tells once the call ran (_LazyTensor). rewrite: as eager_queue's
    _Failure's."""
    q = eager_queue.queue_of(client)
    outs = [_pending(client, device, m) if m is not None else _LazyTensor._make(client, device, q)
            for m in metas]
    failure = _failed_argument(q, args)
    if failure is not None:  # an argument made by a failed op fails the call too, without sending
        for t in outs:
            q.failed[t._id] = failure
        return outs
    values, handles, keep = _wire_arguments(client, args, device)
    msg = _wire.batch_call(values, device, head, [
        (t._id, 0, ()) if m is None else (t._id, _DTYPE_NUMS[m[0]], t.shape) for t, m in zip(outs, metas)])
    q.push(msg, tuple(t._id for t in outs), handles, keep, rewrite)
    return outs


def _failed_argument(q, args):
    """The failure of the queued op that made one of args, or None."""
    if q.failed:
        for a in args:
            if isinstance(a, _Handle) and a._id in q.failed:
                return q.failed[a._id]
    return None


def _wire_arguments(client, args, device):
    """A queued op's arguments: their encoded `args` fields, the ids of the handles
    among them, and what they need kept alive until they run."""
    keep, values, handles = [], [], []
    for a in args:
        values.append(_arg_wire(client, a, device, keep))
        if isinstance(a, _Handle):
            handles.append(a._id)
    return values, tuple(handles), keep


def queues_calls(client, args, device):
    """Whether a call of a staged graph on args goes in the eager queue (tape gradients,
    stagd.function calls): asynchronous eager on, everything on the CPU (as queued ops),
    and a daemon that runs queued calls (Version)."""
    return eager_queue.enabled() and device == "cpu" and \
        all(a.device == "cpu" for a in args if isinstance(a, _Handle)) and client._queues_calls()


def _arg_wire(client, a, device, keep):
    """_arg_value's Value as an encoded `args` field (_wire.py), for a queued op."""
    if type(a) is Tensor:
        _check_made(a)
        c = a._pbw
        if c is None or c[0] is not a._id:
            c = a._pbw = (a._id, _wire.arg_of_handle(a._id))
        return c[1]
    b = _wire.arg_of_scalar(a)
    if b is not None:
        return b
    if type(a) is Variable:  # by reference, as _arg_value's Value
        _check_made(a)
        return _wire.arg_of_handle(a._id)
    return _wire.arg_of_message(_arg_value(client, a, device, keep))


def _pending(client, device, meta):
    """A Tensor for a queued op's result, under an id the client drew."""
    t = object.__new__(Tensor)
    t._c = client
    t._id = eager_queue.new_id(device)
    t.dtype, t.shape = meta[0], tuple(meta[1])
    t.device = device
    t._np = t._pbv = t._pbw = None
    return t


def set_eager_async(flag):
    """Asynchronous eager ops on (the default) or off (every op one EagerOp call, as with
    STAGD_EAGER_SYNC=1); docs/client.md "Asynchronous eager"."""
    eager_queue.set_enabled(flag)


def constant(value, dtype=None):
    """A Tensor holding `value` (a number, nested list, NumPy array or Tensor) on the
    current device. Python floats become float32, ints int32."""
    if isinstance(value, Tensor):
        return value if dtype is None or str(np.dtype(dtype)) == value.dtype else cast(value, dtype)
    arr = _to_array(value, dtype)
    client = default_client()
    return _put_array(client, arr, current_device())


def convert_to_tensor(value, dtype=None):
    if isinstance(value, Tensor) and dtype is None:
        return value
    if isinstance(value, Variable):
        return value.read_value()
    return constant(value, dtype)


# ----------------------------------------------------------------- Tensor

class _Handle:
    """What Tensor and Variable share: a daemon handle (id, dtype, shape, device) and
    the client that made it; the handle is released when the object dies."""

    __slots__ = ("_id", "dtype", "shape", "device", "_c", "__weakref__")

    def _bind(self, h, client):
        self._c = client
        self._id = h.id
        self.dtype = _DTYPE_NAMES.get(h.dtype, "?")
        self.shape = tuple(h.shape)
        self.device = h.device

    def __del__(self):
        try:
            _release(self._c, self._id)
        except Exception:
            pass

    # Python numbers of the current value (numpy(): a Variable refuses while tracing)
    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        return int(self.numpy())

    def __bool__(self):
        return bool(self.numpy())


class Tensor(_Handle):
    """A tensor on a device in the daemon; this object holds its handle."""

    # the fetched array; (id, its op-argument Value), (id, that Value's bytes): made once
    __slots__ = ("_np", "_pbv", "_pbw")
    __array_priority__ = 100  # ndarray op Tensor → Tensor's reflected operator

    def __init__(self, *a, **k):
        raise TypeError("stagd.Tensor is made by stagd.constant(...) or by ops, not directly")

    @classmethod
    def _from_handle(cls, h, client):
        if h.variable:
            return Variable._from_handle(h, client)
        t = object.__new__(cls)
        t._bind(h, client)
        t._np = t._pbv = t._pbw = None
        return t

    # -- data
    def numpy(self):
        """The value as a NumPy array (one Fetch; cached)."""
        if self._np is None:
            eq = self._c._eq
            if eq is not None:  # a failed op's result is an error (queued ops go with the Fetch)
                eq.check(self._id)
            arr = _fetch_array(self._c, self._id, self.dtype, self.shape, self.device)
            arr.flags.writeable = False
            self._np = arr
        return self._np

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a.copy()

    def _stagd_literal(self):
        """Inside a staged trace: this tensor becomes a captured input."""
        return context.capture(self)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d stagd.Tensor")
        return self.shape[0]

    def item(self):
        return self.numpy().item()

    def tolist(self):
        return self.numpy().tolist()

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d stagd.Tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=" ", prefix="stagd.Tensor(")
        dev = "" if self.device == "cpu" else f", device={self.device}"
        return f"stagd.Tensor({body}, shape={self.shape}, dtype={self.dtype}{dev})"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    # -- ops
    def __add__(self, o): return eager("+", self, o)
    def __radd__(self, o): return eager("+", o, self)
    def __sub__(self, o): return eager("-", self, o)
    def __rsub__(self, o): return eager("-", o, self)
    def __mul__(self, o): return eager("*", self, o)
    def __rmul__(self, o): return eager("*", o, self)
    def __truediv__(self, o): return eager("/", self, o)
    def __rtruediv__(self, o): return eager("/", o, self)
    def __floordiv__(self, o): return eager("//", self, o)
    def __rfloordiv__(self, o): return eager("//", o, self)
    def __mod__(self, o): return eager("%", self, o)
    def __rmod__(self, o): return eager("%", o, self)
    def __pow__(self, o): return eager("**", self, o)
    def __rpow__(self, o): return eager("**", o, self)
    def __matmul__(self, o): return eager("matmul", self, o)
    def __rmatmul__(self, o): return eager("matmul", o, self)
    def __neg__(self): return eager("neg", self)
    def __pos__(self): return self
    def __abs__(self): return eager("abs", self)
    def __eq__(self, o): return eager("==", self, o)
    def __ne__(self, o): return eager("!=", self, o)
    def __lt__(self, o): return eager("<", self, o)
    def __le__(self, o): return eager("<=", self, o)
    def __gt__(self, o): return eager(">", self, o)
    def __ge__(self, o): return eager(">=", self, o)
    def __getitem__(self, key):
        """NumPy basic indexing (runtime/indexing.py): slice / getitem / gather / stack."""
        return indexing.read(eager, self, key, self.shape)

    def __setitem__(self, key, value):
        """`t[key] = value`: t's handle now names a new daemon tensor equal to t except
        t[key] (value broadcast to it, cast to t's dtype), as NumPy's in-place write
        looks from Python. Not while a GradientTape records (the tape holds t's old
        value): write into a Variable or in a staged function there."""
        if context.tapes:
            raise TypeError("stagd: item assignment on a Tensor while a GradientTape is "
                            "recording; use a stagd.Variable or a staged function")
        new = indexing.write(eager, self, key, value, self.shape, _value_shape(value))
        if isinstance(new, Staged):
            raise TypeError("stagd: item assignment on a captured Tensor inside a staged "
                            "function; assign the result to a local name instead")
        for f in ("_c", "_id", "dtype", "shape", "device"):  # swap: `new` releases the old handle
            a, b = getattr(self, f), getattr(new, f)
            setattr(self, f, b)
            setattr(new, f, a)
        self._np = self._pbv = new._pbv = self._pbw = new._pbw = None

    @property
    def T(self):
        return eager("transpose", self)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return eager("reshape", self, tuple(shape))

    def sum(self, axis=None): return reduce_sum(self, axis)
    def mean(self, axis=None): return reduce_mean(self, axis)

    def cpu(self):
        """A copy of this tensor on the CPU."""
        with device("cpu"):
            return constant(self.numpy())


eager_infer.TENSOR_TYPES = (Tensor,)


# ---------------------------------------------------------------- Variable

_DTYPE_SLOT, _SHAPE_SLOT = _Handle.__dict__["dtype"], _Handle.__dict__["shape"]


class _LazyTensor(Tensor):
    """A queued staged function call's result (function.py): its dtype and shape come
    with the reply of the batch that ran the call (EagerBatchReply.results), and it then
    becomes a plain Tensor. Reading them before — `.shape`, `.dtype`, an op on it — is a
    sync point (eager_queue.EagerQueue.resolve)."""

    __slots__ = ()

    @classmethod
    def _make(cls, client, device, q):
        t = object.__new__(cls)
        t._c = client
        t._id = eager_queue.new_id(device)
        t.device = device
        t._np = t._pbv = t._pbw = None
        q.expect(t)
        return t

    @property
    def dtype(self):
        self._resolve()
        return _DTYPE_SLOT.__get__(self)

    @property
    def shape(self):
        self._resolve()
        return _SHAPE_SLOT.__get__(self)

    def _resolve(self):
        eager_queue.queue_of(self._c).resolve(self)
        if type(self) is _LazyTensor:  # (a daemon that runs queued calls tells them)
            raise Internal(f"stagd: the daemon did not tell the dtype and shape of {self._id}")

    def _told(self, dtype_num, shape):
        _DTYPE_SLOT.__set__(self, _DTYPE_NAMES.get(dtype_num, "?"))
        _SHAPE_SLOT.__set__(self, tuple(shape))
        self.__class__ = Tensor


class Variable(_Handle):
    """Mutable state held in the daemon (a `variable` cell). Reading it inside a
    GradientTape watches it; staged functions capture it by reference, so graphs may
    assign to it."""

    __slots__ = ("name", "trainable")

    def __init__(self, initial_value, dtype=None, name=None, trainable=True):
        with context.init_scope():  # creating state never becomes part of a trace
            if callable(initial_value):
                initial_value = initial_value()
            init = convert_to_tensor(initial_value, dtype)
            client = init._c
            reply = client.call("EagerOp", client.pb2.EagerOpRequest(
                op="variable", args=[client.pb2.Value(handle=client.pb2.TensorHandle(id=init._id))],
                device=current_device()))
            h = reply.result.handle
        self._c = client
        self._id = h.id
        self.dtype = init.dtype
        self.shape = init.shape
        self.device = h.device
        self.name = name
        self.trainable = trainable

    @classmethod
    def shared(cls, handle_id, client=None):
        """The Variable `handle_id` another session granted to this client's session (its
        owner called `Client.grant(v, session)`): reads, assigns and staged uses work as
        on one's own; only the owner releases it (docs/security.md "Grants")."""
        client = client or default_client()
        device = handle_id.rsplit("#", 1)[0]
        ref = client.pb2.Value(handle=client.pb2.TensorHandle(id=handle_id))
        cur = client.call("EagerOp", client.pb2.EagerOpRequest(op="read", args=[ref], device=device))
        h = cur.result.handle
        _release(client, h.id)  # the read's copy: only its dtype and shape were wanted
        shared_ids.add(handle_id)
        meta = client.pb2.TensorHandle(id=handle_id, device=device, dtype=h.dtype, shape=h.shape, variable=True)
        return cls._from_handle(meta, client)

    @classmethod
    def _from_handle(cls, h, client):
        v = object.__new__(cls)
        v._bind(h, client)
        v.name = None
        v.trainable = True
        return v

    def _stagd_literal(self):
        return context.capture(self)

    def _stagd_operand(self):
        """As an operand of a staged operator: the staged value read now."""
        return self.read_value()

    def read_value(self):
        """The current value (a Tensor; staged: a `read` of the captured variable)."""
        if context.tracing():
            out = apply("read", self)
            if context.tapes:
                context.record_staged_read(self, out)
            return out
        client = self._c
        if eager_queue._enabled[0] and self.device == "cpu":
            out = _queue_op(client, "read", (self,), "cpu", (self.dtype, self.shape))
        else:
            reply = client.call("EagerOp", client.pb2.EagerOpRequest(
                op="read", args=[client.pb2.Value(handle=client.pb2.TensorHandle(id=self._id))],
                device=self.device))
            out = _wrap(reply.result, client)
        if context.tapes and self.trainable:
            context.record_read(self, out)
        return out

    value = read_value

    def item(self):
        """The current value's Python number (staged: of a `read`, see Tensor.item)."""
        v = self.read_value()
        if isinstance(v, Staged):  # the dtype and shape staging may not know: ours
            return item_of(v, ("tensor", self.dtype, tuple(self.shape)))
        return v.item()

    def _update(self, op, value):
        staging = context.tracing()
        if isinstance(value, Variable):
            value = value.read_value()
        if isinstance(value, (bool, int, float, list, np.ndarray, np.generic)):
            # the cell keeps its dtype and shape: numbers become tensors of both
            arr = np.asarray(value, dtype=self.dtype)
            if op == "assign":
                arr = np.broadcast_to(arr, self.shape)
            # through the variable's own client: a tensor of another client's session
            # would be NOT_FOUND to this one (docs/security.md)
            value = arr if staging else _put_array(self._c, arr, self.device)
        shape = getattr(value, "shape", None)
        if op == "assign" and not isinstance(value, Staged) and tuple(shape) != tuple(self.shape):
            raise ValueError(f"stagd.Variable.assign: a value of shape {tuple(shape)} does not "
                             f"fit a variable of shape {tuple(self.shape)}")
        if staging:
            apply(op, self, value)
            return self
        client = self._c
        if eager_queue._enabled[0] and self.device == "cpu":  # in order with the queued ops
            _queue_op(client, op, (self, value), "cpu", None)
            if self._id in shared_ids:  # another session reads it: send now
                client.sync()
            return self
        values, keep = _arg_values(client, (self, value), self.device)
        client.call("EagerOp", client.pb2.EagerOpRequest(op=op, args=values, device=self.device))
        del keep
        return self

    def assign(self, value):
        return self._update("assign", value)

    def assign_add(self, delta):
        return self._update("assign_add", delta)

    def assign_sub(self, delta):
        if "assign_sub" in self._c.primitives():  # one op (a daemon without it: add the negation)
            return self._update("assign_sub", delta)
        return self._update("assign_add", -delta)

    def numpy(self):
        if context.tracing():  # its value now would be baked into the graph: stale later
            raise StagingError(f"stagd: a Variable's value ({self.name or 'variable'}.numpy(), "
                               "float(), int(), bool(), np.asarray()) cannot be read while "
                               "tracing: it would be a constant of the graph and stale after "
                               "the next assign; use the Variable in tensor operations, or "
                               "float(v) / v.item() / `if v` in converted code (staged reads)")
        nbytes = int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize
        if _put_first(self._c, nbytes):
            return self.read_value().numpy().copy()  # a snapshot, fetched by shm or in pieces
        reply = self._c.call("Fetch", {"ids": [self._id]})
        return _tensor_array(reply.values[0].tensor)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __repr__(self):
        return f"stagd.Variable({np.array2string(self.numpy())}, shape={self.shape}, dtype={self.dtype})"

    def __hash__(self):
        return id(self)

    # operators read the value first
    def __add__(self, o): return self.read_value() + o
    def __radd__(self, o): return o + self.read_value()
    def __sub__(self, o): return self.read_value() - o
    def __rsub__(self, o): return o - self.read_value()
    def __mul__(self, o): return self.read_value() * o
    def __rmul__(self, o): return o * self.read_value()
    def __truediv__(self, o): return self.read_value() / o
    def __rtruediv__(self, o): return o / self.read_value()
    def __pow__(self, o): return self.read_value() ** o
    def __matmul__(self, o): return eager("matmul", self.read_value(), o)
    def __rmatmul__(self, o): return eager("matmul", o, self.read_value())
    def __neg__(self): return -self.read_value()
    def __getitem__(self, i): return self.read_value()[i]

    def __setitem__(self, key, value):
        """`v[key] = value`: assigns the variable its value with v[key] replaced."""
        self.assign(indexing.write(eager, self.read_value(), key, value, self.shape,
                                   _value_shape(value)))
    def __eq__(self, o): return self.read_value() == o
    def __ne__(self, o): return self.read_value() != o
    def __lt__(self, o): return self.read_value() < o
    def __le__(self, o): return self.read_value() <= o
    def __gt__(self, o): return self.read_value() > o
    def __ge__(self, o): return self.read_value() >= o


# --------------------------------------------------------------- op functions

def _value_shape(v):
    """The shape of a value written into a tensor: NumPy's for numbers and arrays."""
    if isinstance(v, _Handle):
        return v.shape
    try:
        return np.shape(v)
    except Exception:
        return None


def _v(x):
    return x.read_value() if isinstance(x, Variable) else x


def _tensorish(x):
    """Lists and NumPy arrays given to op functions become constants (eagerly) — or
    tensor literals while staging."""
    x = _v(x)
    if isinstance(x, (list, np.ndarray)):
        if context.tracing():
            return _to_array(x)
        return constant(x)
    return x


def matmul(a, b): return eager("matmul", _tensorish(a), _tensorish(b))
def add(a, b): return eager("+", _tensorish(a), _tensorish(b))
def subtract(a, b): return eager("-", _tensorish(a), _tensorish(b))
def multiply(a, b): return eager("*", _tensorish(a), _tensorish(b))
def divide(a, b): return eager("/", _tensorish(a), _tensorish(b))
def maximum(a, b): return eager("maximum", _tensorish(a), _tensorish(b))
def minimum(a, b): return eager("minimum", _tensorish(a), _tensorish(b))
def where(c, a, b): return eager("where", _tensorish(c), _tensorish(a), _tensorish(b))
def exp(x): return eager("exp", _tensorish(x))
def log(x): return eager("log", _tensorish(x))
def sqrt(x): return eager("sqrt", _tensorish(x))
def tanh(x): return eager("tanh", _tensorish(x))
def sigmoid(x): return eager("sigmoid", _tensorish(x))
def relu(x): return eager("relu", _tensorish(x))
def sin(x): return eager("sin", _tensorish(x))
def cos(x): return eager("cos", _tensorish(x))
def square(x): x = _tensorish(x); return eager("*", x, x)
def transpose(x): return eager("transpose", _tensorish(x))
def reshape(x, shape): return eager("reshape", _tensorish(x), tuple(shape))
def cast(x, dtype): return eager("cast", _tensorish(x), str(np.dtype(dtype)))


def reduce_sum(x, axis=None):
    x = _tensorish(x)
    return eager("sum", x) if axis is None else eager("sum", x, axis)


def reduce_mean(x, axis=None):
    x = _tensorish(x)
    return eager("mean", x) if axis is None else eager("mean", x, axis)


def _joined(op, values, axis):
    """stack / concat of a list of tensors — or of a staged tensor list (a StagedList,
    a staged tensor): its items, along axis 0, are the tensor itself."""
    if isinstance(values, Staged):
        if getattr(values, "item_dtype", None) is not None:  # a StagedList: NumPy's error
            _assert_not_empty(values, op)                     # for no items, when it runs
            if op == "stack" and axis == 0:
                return values  # the stack of its items
        return eager(op, values, axis)
    items = [_tensorish(v) for v in values]
    if not items:
        raise ValueError(_EMPTY_JOIN[op])
    return eager(op, *items, axis)


_EMPTY_JOIN = {"stack": "need at least one array to stack",
               "concat": "need at least one array to concatenate"}


def _assert_not_empty(lst, op):
    from .runtime import sexpr as _sx
    exc = ValueError(_EMPTY_JOIN[op])
    msg = f"ValueError: {exc}" + _sx.raise_tag(exc)
    n = apply("len", lst)
    _sx.current().emit(f"(assert {apply('>', n, 0).sexpr} {_sx.literal(msg)})")


def stack(values, axis=0): return _joined("stack", values, axis)
def concat(values, axis=0): return _joined("concat", values, axis)


def softmax(x, axis=-1): return eager("softmax", _tensorish(x), axis)
def zeros(shape, dtype="float32"): return eager("zeros", tuple(shape), dtype)
def ones(shape, dtype="float32"): return eager("ones", tuple(shape), dtype)


def random_normal(shape, seed=0, dtype="float32"):
    return eager("random_normal", tuple(shape), seed, str(np.dtype(dtype)))


def random_uniform(shape, seed=0, dtype="float32"):
    return eager("random_uniform", shape if isinstance(shape, Staged) else tuple(shape), seed,
                 str(np.dtype(dtype)))


def dropout(x, rate, seed=0):
    """Zeroes each element with probability `rate` (a fixed-seed mask) and scales the
    rest by 1/(1-rate)."""
    x = _tensorish(x)
    shape = eager("shape", x) if isinstance(x, Staged) else x.shape
    keep = eager(">=", random_uniform(shape, seed), rate)
    return eager("where", keep, x * (1.0 / (1.0 - rate)), 0.0)


def eye(n, dtype="float32"):
    return constant(np.eye(n, dtype=dtype))
