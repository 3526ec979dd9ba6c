# SPDX-License-Identifier: Apache-2.0
"""test_wire.py — the eager batch encoder (clients/python/stagd/_wire.py) writes exactly
the bytes protobuf writes for the same EagerBatchRequest, and the daemon runs what it
writes: every kind of argument it encodes itself (handles, bools, ints at the int64
bounds, floats incl. -0, inf and NaN), ids, devices, dtypes and shapes with dims that
need several varint bytes, release ids; and every argument it leaves to protobuf still
reaches the daemon intact (or is refused by protobuf as before)."""
import math
import random
import struct

import numpy as np
import pytest

import stagd
from harness import pb2
from stagd import _wire, eager_queue

SCALARS = [True, False, 0, 1, -1, 127, 128, 300, -300, (1 << 63) - 1, -(1 << 63),
           0.0, -0.0, 1.5, -2.25e300, 5e-324, math.inf, -math.inf, math.nan]


def _value(x):
    if isinstance(x, bool):
        return pb2.Value(bool_value=x)
    if isinstance(x, int):
        return pb2.Value(int_value=x)
    return pb2.Value(float_value=x)


@pytest.fixture(scope="module")
def client(default_client):
    return default_client


def _same(a, b):
    """Equal messages, a NaN float_value equal to a NaN."""
    return a == b or a.SerializeToString() == b.SerializeToString()


def test_scalar_arguments_are_protobufs_bytes():
    for x in SCALARS:
        want = pb2.EagerBatchOp(args=[_value(x)]).SerializeToString()
        assert _wire.arg_of_scalar(x) == want, x


def test_what_the_encoder_leaves_to_protobuf():
    for x in (1 << 63, -(1 << 63) - 1, "s", None, np.float32(1), (1, 2), [1.0], b"x"):
        assert _wire.arg_of_scalar(x) is None, x
    v = pb2.Value(tuple=pb2.Tuple(items=[pb2.Value(int_value=3), pb2.Value(string_value="é")]))
    assert _wire.arg_of_message(v) == pb2.EagerBatchOp(args=[v]).SerializeToString()


def test_handles_and_long_ids():
    for hid in ("cpu#" + "ab" * 16, "vulkan:0#" + "0" * 200, "x"):
        want = pb2.EagerBatchOp(args=[pb2.Value(handle=pb2.TensorHandle(id=hid))])
        assert _wire.arg_of_handle(hid) == want.SerializeToString()


def test_random_batches_equal_protobufs_encoding():
    rng = random.Random(7)
    ops = ["+", "matmul", "reshape", "o" * 200]
    for _ in range(300):
        msgs, enc = [], []
        for _ in range(rng.randrange(0, 6)):
            args, wire = [], []
            for _ in range(rng.randrange(0, 5)):
                if rng.random() < 0.4:
                    hid = f"cpu#{rng.getrandbits(128):032x}"
                    args.append(pb2.Value(handle=pb2.TensorHandle(id=hid)))
                    wire.append(_wire.arg_of_handle(hid))
                else:
                    x = rng.choice(SCALARS)
                    args.append(_value(x))
                    wire.append(_wire.arg_of_scalar(x))
            op = rng.choice(ops)
            device = rng.choice(["", "cpu", "vulkan:0"])
            rid = rng.choice(["", f"{device or 'cpu'}#{rng.getrandbits(128):032x}"])
            dtype = rng.randrange(0, 7)
            shape = tuple(rng.choice([0, 1, 3, 127, 128, 70000, 1 << 40])
                          for _ in range(rng.randrange(0, 4)))
            msgs.append(pb2.EagerBatchOp(op=op, args=args, device=device, result_id=rid,
                                         dtype=dtype, shape=shape))
            enc.append(_wire.batch_op(op, wire, device, rid, dtype, shape))
        releases = [f"cpu#{rng.getrandbits(64):x}" for _ in range(rng.randrange(0, 4))]
        want = pb2.EagerBatchRequest(ops=msgs, release_ids=releases)
        got = _wire.batch_request(enc, releases)
        assert _same(pb2.EagerBatchRequest.FromString(got), want)
        assert got == want.SerializeToString()


def test_the_daemon_runs_encoded_ops_with_every_scalar(client):
    """Each queued op's arguments reach the daemon as written: results equal NumPy's."""
    x = stagd.constant(np.array([1.0, -2.0, 3.5], np.float64))
    i = stagd.constant(np.array([5, -7, 0], np.int64))
    xs, is_ = x.numpy(), i.numpy()
    outs = [(x + s, xs + np.float64(s)) for s in (1.5, -0.0, math.inf, 7, -(1 << 40), 5e-324)]
    outs += [(i + s, is_ + np.int64(s)) for s in (3, -(1 << 62), 1 << 62)]
    outs += [(stagd.maximum(i, (1 << 63) - 1), np.full(3, (1 << 63) - 1)),
             (stagd.minimum(i, -(1 << 63)), np.full(3, -(1 << 63))),
             (x * math.nan, np.full(3, math.nan)), (i > 0, is_ > 0)]
    q = eager_queue.queue_of(client)
    assert len(q.ops) == len(outs)  # queued, then sent as encoded
    for got, want in outs:
        assert got.dtype == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)


def test_an_int_outside_int64_is_refused_as_before(client):
    x = stagd.constant(np.array([1, 2], np.int64))
    with pytest.raises(ValueError):
        x + (1 << 63)
    np.testing.assert_array_equal((x + 1).numpy(), [2, 3])  # the queue still works


def test_floats_keep_their_bits():
    for bits in (0x7FF8000000000001, 0xFFF0000000000000, 0x8000000000000000, 1):
        f = struct.unpack("<d", struct.pack("<Q", bits))[0]
        data = _wire.arg_of_scalar(f)
        back = pb2.EagerBatchOp.FromString(data).args[0].float_value
        assert struct.pack("<d", back) == struct.pack("<Q", bits)


def test_tensor_and_variable_arguments_are_their_values_bytes(client):
    """_arg_wire (a queued op's argument) against _arg_value's message (a synchronous
    op's): a Tensor's handle, a Variable's by reference, the same bytes."""
    from stagd.tensor import _arg_value, _arg_wire
    t, v = stagd.constant([1.0, 2.0]), stagd.Variable(np.zeros(2, np.float32))
    for a in (t, v, t):  # (the Tensor's bytes are kept: twice)
        assert _arg_wire(client, a, "cpu", []) == _wire.arg_of_message(_arg_value(client, a, "cpu", []))
    v.assign_sub(t)  # queued with its Variable argument encoded so
    np.testing.assert_array_equal(v.numpy(), [-1.0, -2.0])
