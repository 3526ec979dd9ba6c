# SPDX-License-Identifier: Apache-2.0
"""test_host_memory.py — issue 24 D6: a tensor the host has no memory for ends its request
with RESOURCE_EXHAUSTED naming the size, frees what the request made (LeakSanitizer checks
it when the daemon exits) and the daemon serves on.

The test daemon is an AddressSanitizer build, whose shadow reservations need far more
address space than any lowered RLIMIT_AS leaves, so the failure comes from the test
build's hook STAGD_TEST_FAIL_ALLOC_ABOVE=N (kernels/pool.c): every tensor buffer of more
than N bytes fails as malloc would. A release daemon under `prlimit --as` takes the same
path (docs/daemon.md "Host memory")."""
import json
import time
import struct

import grpc
import pytest

import harness
from harness import rpc

LIMIT = 1 << 20  # tensor buffers above 1 MiB fail
BIG = 400000     # float64 elements: 3.2 MB


def _fails(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.value.details()
    return e.value.details()


def _stage(ch, pb2, src):
    return rpc(ch, "Stage", pb2.StageRequest(sexpr=src), pb2.StageReply, timeout=30).graph_id


def _serves(ch, pb2, health_pb2):
    assert rpc(ch, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest(),
               health_pb2.HealthCheckResponse, timeout=5).status == health_pb2.HealthCheckResponse.SERVING
    gid = _stage(ch, pb2, "(def f (n) (sum (+ (ones (tuple n)) 1.0)))")
    ok = rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[1000]"), pb2.ExecuteReply)
    assert json.loads(ok.result_json) == {"dtype": "float64", "shape": [], "data": [2000.0]}


def test_host_allocation_failure_is_resource_exhausted(start_daemon, pb2, health_pb2):
    env = harness.base_env(STAGD_TEST_FAIL_ALLOC_ABOVE=LIMIT)
    d = start_daemon("--listen", "127.0.0.1:0", "--max-request-bytes", "0", env=env)
    ch = grpc.insecure_channel(d.addr)
    # a program: its first big intermediate fails, after smaller ones were made
    gid = _stage(ch, pb2, "(def f (n) (let a (ones (tuple 1000)) (let b (ones (tuple n)) (sum (+ b 1.0)))))")
    msg = _fails(lambda: rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json=f"[{BIG}]"),
                             pb2.ExecuteReply))
    assert f"out of host memory allocating {BIG * 8} bytes for a float64 tensor of shape ({BIG})" in msg
    _serves(ch, pb2, health_pb2)
    # a kernel's result (the input fits, the matmul's float64 result does not)
    gid = _stage(ch, pb2, "(def g (x) (matmul (reshape x (tuple 400 1)) (reshape x (tuple 1 400))))")
    args = json.dumps([{"dtype": "float64", "shape": [400], "data": [1.0] * 400}])
    msg = _fails(lambda: rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json=args), pb2.ExecuteReply))
    assert "out of host memory allocating 1280000 bytes" in msg
    # an argument's JSON conversion
    args = json.dumps([{"dtype": "float32", "shape": [BIG], "data": [0] * BIG}])
    msg = _fails(lambda: rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json=args), pb2.ExecuteReply))
    assert f"out of host memory allocating {BIG * 4} bytes" in msg
    # an eager op
    shape = pb2.Value(tuple=pb2.Tuple(items=[pb2.Value(int_value=BIG)]))
    msg = _fails(lambda: rpc(ch, "EagerOp", pb2.EagerOpRequest(op="zeros", args=[shape]), pb2.EagerOpReply))
    assert f"out of host memory allocating {BIG * 8} bytes" in msg
    # Put of a tensor the daemon cannot copy in
    data = struct.pack(f"<{BIG}d", *([1.5] * BIG))
    t = pb2.Tensor(dtype=pb2.DTYPE_FLOAT64, shape=[BIG], data=data)
    msg = _fails(lambda: rpc(ch, "Put", pb2.PutRequest(value=pb2.Value(tensor=t)), pb2.PutReply))
    assert f"out of host memory allocating {BIG * 8} bytes" in msg
    # and the same calls below the limit still work
    small = pb2.Tensor(dtype=pb2.DTYPE_FLOAT64, shape=[4], data=struct.pack("<4d", 1, 2, 3, 4))
    h = rpc(ch, "Put", pb2.PutRequest(value=pb2.Value(tensor=small)), pb2.PutReply).result.handle.id
    assert h
    _serves(ch, pb2, health_pb2)
    ch.close()


HOLD = ("(def hold (n k) (getitem (while (lambda (i x) (< i k)) "
        "(lambda (i x) (tuple (+ i 1) x)) (tuple 0 (ones (tuple n)))) 0))")
SUM = "(def f (n) (sum (+ (ones (tuple n)) 1.0)))"


def _call(ch, pb2, method, req, reply, session):
    stub = ch.unary_unary(f"/stagd.v1.Stagd/{method}", request_serializer=req.SerializeToString,
                          response_deserializer=reply.FromString)
    return stub.future(req, timeout=30, metadata=(("stagd-session", session),))


def test_max_session_bytes_bounds_one_session_not_another(start_daemon, pb2):
    # 8 MB per session; no per-request budget, so only the session's bound can refuse
    d = start_daemon("--listen", "127.0.0.1:0", "--workers", "3", "--deadline-ms", "0",
                     "--max-request-bytes", "0", "--max-session-bytes", "8000000")
    ch = grpc.insecure_channel(d.addr)
    hold, f = _stage(ch, pb2, HOLD), _stage(ch, pb2, SUM)

    def run_f(session):
        return _call(ch, pb2, "Execute", pb2.ExecuteRequest(graph_id=f, args_json="[400000]"),
                     pb2.ExecuteReply, session).result(timeout=30)

    # session a's running request holds 5 MB; its next one needs 6.4 MB more
    looping = _call(ch, pb2, "Execute", pb2.ExecuteRequest(graph_id=hold, args_json="[625000, 1000000000000]"),
                    pb2.ExecuteReply, "a")
    try:
        # once the loop holds its tensor, a's next request takes the session past its
        # bound: one of a's two requests stops (whichever checks first), naming the flag
        deadline = time.monotonic() + 20
        refused = None
        while refused is None:
            try:
                run_f("a")
            except grpc.RpcError as e:
                refused = e
            if looping.done() and refused is None:
                try:
                    looping.result()
                except grpc.RpcError as e:
                    refused = e
            assert refused is not None or time.monotonic() < deadline, "session a was never held to its bound"
            time.sleep(0.05)
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.details()
        assert "max-session-bytes" in refused.details() and "over its budget of 8000000 bytes" in refused.details()
        # session b is not starved by a
        assert json.loads(run_f("b").result_json)["data"] == [800000.0]
    finally:
        looping.cancel()
    # once the loop is over its bytes go back to a
    deadline = time.monotonic() + 20
    while True:
        try:
            assert json.loads(run_f("a").result_json)["data"] == [800000.0]
            break
        except grpc.RpcError as e:
            assert "max-session-bytes" in e.details() and time.monotonic() < deadline, e.details()
            time.sleep(0.1)
    # the session's handles count too: a 5 MB handle of c leaves c no room for 6.4 MB
    data = struct.pack("<625000d", *([0.0] * 625000))
    t = pb2.Tensor(dtype=pb2.DTYPE_FLOAT64, shape=[625000], data=data)
    _call(ch, pb2, "Put", pb2.PutRequest(value=pb2.Value(tensor=t)), pb2.PutReply, "c").result(timeout=30)
    assert "max-session-bytes" in _fails(lambda: run_f("c"))
    assert json.loads(run_f("b").result_json)["data"] == [800000.0]
    ch.close()


def test_a_shared_memory_put_the_host_cannot_hold_is_resource_exhausted(start_daemon, tmp_path):
    """The local data path (docs/client.md): a Put whose file is read straight into a new
    tensor gets the same error when that tensor cannot be allocated, nothing but the
    client's own staging file stays in the directory, and the daemon serves on."""
    import os

    import numpy as np

    import stagd
    from stagd import shm
    from stagd.tensor import _put_array
    env = harness.base_env(STAGD_TEST_FAIL_ALLOC_ABOVE=LIMIT)
    d = start_daemon("--listen", f"unix:{tmp_path}/s.sock", "--max-request-bytes", "0", env=env)
    c = stagd.Client(d.addr)
    directory = c.shm_dir()
    assert directory
    big = np.full(BIG, 1.5)
    with pytest.raises(stagd.ResourceExhausted, match=f"out of host memory allocating {BIG * 8} bytes"):
        _put_array(c, big, "cpu")
    assert os.listdir(directory) == [shm.staging_of(c).name]
    small = np.arange(4.0)
    np.testing.assert_array_equal(_put_array(c, small, "cpu").numpy(), small)
    c.close()
