# SPDX-License-Identifier: Apache-2.0
"""_wire.py — protobuf wire bytes of the messages on the eager hot path, written directly
(docs/performance.md "Eager ops encoded without message objects").

A queued eager op (eager_queue.py) used to be an `EagerBatchOp` message built from
`Value` messages, copied again into the `EagerBatchRequest` and serialised when the batch
was sent: a third of the client's time per op. The functions here give the same bytes
protobuf's encoder gives for those messages (fields in number order, defaults left out),
so a batch is the concatenation of its ops' bytes. Only the shapes an op argument
usually has are encoded here — a tensor handle, a Python bool, int or float; anything
else is a `Value` message the caller serialises (`arg_of_message`), so every case
protobuf refuses (an int outside int64) is still refused by protobuf, with its error.
tests/integration/test_wire.py parses what this module writes with the generated classes
and compares it with the messages it stands for.
"""
import struct

_pack_double = struct.Struct("<d").pack
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def varint(n):
    """The base-128 varint of n ≥ 0 (a negative int64 as its two's complement)."""
    if n < 0:
        n += 1 << 64
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag, data):
    """A length-delimited field: its tag (field number << 3 | 2), the length, the bytes."""
    n = len(data)
    if tag < 0x80:
        if n < 0x80:
            return bytes((tag, n)) + data
        if n < 0x4000:  # a two-byte length (a queued op of a few arguments)
            return bytes((tag, (n & 0x7F) | 0x80, n >> 7)) + data
    return varint(tag) + varint(n) + data


def message_field(number, data):
    """Field `number` holding an encoded message."""
    return _field(number << 3 | 2, data)


def string_field(tag, s):
    return _field(tag, s.encode("utf-8")) if s else b""


# Value (stagd.proto): none = 1, bool_value = 2, int_value = 3, float_value = 4,
# string_value = 5, tensor = 6, handle = 7 (TensorHandle: id = 1). An op's argument is
# the field `args` = 2 of EagerBatchOp holding one Value: the arg_of_* functions give
# that whole field.
_TRUE, _FALSE = b"\x12\x02\x10\x01", b"\x12\x02\x10\x00"


def arg_of_handle(hid):
    """args: Value{handle: TensorHandle{id: hid}}."""
    b = hid.encode("utf-8")
    n = len(b)
    if 0 < n < 0x7C:  # every length fits one byte (a drawn id: 36)
        return bytes((0x12, n + 4, 0x3A, n + 2, 0x0A, n)) + b
    return _field(0x12, _field(0x3A, string_field(0x0A, hid)))


def arg_of_scalar(x):
    """args: the Value of a Python bool, int (in int64) or float; None for anything else."""
    t = type(x)
    if t is float:
        return b"\x12\x09\x21" + _pack_double(x)
    if t is int:
        return _field(0x12, b"\x18" + varint(x)) if _INT64_MIN <= x <= _INT64_MAX else None
    if t is bool:
        return _TRUE if x else _FALSE
    return None


def arg_of_message(v):
    """args: a Value message (what this module leaves to protobuf)."""
    return _field(0x12, v.SerializeToString())


# EagerBatchOp: op = 1, args = 2, device = 3, result_id = 4, dtype = 5, shape = 6 (packed
# int64). EagerBatchRequest: ops = 1, release_ids = 2. An op's fields but its arguments
# and result id repeat from op to op: they are encoded once.
_heads, _devices, _types = {}, {}, {}


def _device_field(device):
    dev = _devices.get(device)
    if dev is None:
        dev = string_field(0x1A, device)
        if len(_devices) < 64:
            _devices[device] = dev
    return dev


def _type_fields(dtype_tag, shape_tag, dtype, shape):
    """A dtype (varint field) and a shape (packed int64 field) under the given tags, as an
    op's result (EagerBatchOp 5, 6) or a call's declared result (TensorHandle 3, 4) has
    them; cached (shapes are many only in unusual programs)."""
    key = (dtype_tag, shape_tag, dtype, shape)
    out = _types.get(key)
    if out is None:
        out = (bytes((dtype_tag,)) + varint(dtype) if dtype else b"") + \
            (_field(shape_tag, b"".join(varint(d) for d in shape)) if shape else b"")
        if len(_types) < 4096:
            _types[key] = out
    return out


def batch_op(op, args, device, result_id, dtype, shape):
    """The field `ops` of an EagerBatchRequest holding one EagerBatchOp (args: arg_of_*'s
    fields)."""
    head = _heads.get(op)
    if head is None:
        head = _heads[op] = string_field(0x0A, op)
    dev = _device_field(device)
    return _field(0x0A, b"".join((head, *args, dev, string_field(0x22, result_id),
                                  _type_fields(0x28, 0x32, dtype, shape))))


# EagerBatchOp.call = 7: EagerCall (graph_id = 1, sexpr = 2, entry = 3, results = 4), each
# result a TensorHandle (id = 1, dtype = 3, shape = 4 packed int64).
def call_head(graph_id, sexpr, entry):
    """An EagerCall's fields but its results (the same for every call of a program)."""
    return string_field(0x0A, graph_id) + string_field(0x12, sexpr) + string_field(0x1A, entry)


def batch_call(args, device, head, results):
    """The field `ops` holding one EagerBatchOp that calls a staged graph: args (arg_of_*'s
    fields), head (call_head's), results: (id, dtype number, shape) per result."""
    res = b"".join(_field(0x22, string_field(0x0A, rid) + _type_fields(0x18, 0x22, dt, shape))
                   for rid, dt, shape in results)
    return _field(0x0A, b"".join((*args, _device_field(device), message_field(7, head + res))))


def batch_request(ops, release_ids):
    """An EagerBatchRequest of ops (batch_op's bytes) and release_ids."""
    return b"".join(ops) + b"".join([_field(0x12, r.encode("utf-8")) for r in release_ids])
