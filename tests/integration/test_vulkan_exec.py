# SPDX-License-Identifier: Apache-2.0
"""test_vulkan_exec.py — Execute on a Vulkan device through the running daemon.

Runs on vulkan:0, which is Mesa's lavapipe on machines without a GPU (a CPU-type
Vulkan device: `auto` never picks it, a request must name it). Every result is
compared with the same request on device "cpu"; the daemon log must show the device
was opened, that CPU fallbacks are logged once per op and dtype, and that bad device
names and deadlines fail only their own request.
"""
import json
import os
import re
import sys

import grpc
import numpy as np
import pytest

import harness
from harness import rpc
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from json_values import dec, enc  # noqa: E402

MLP = """
(def mlp (x w1 b1 w2 b2)
  (softmax (+ (matmul (relu (+ (matmul x w1) b1)) w2) b2)))
"""

# data-dependent control flow: the `while` condition is read back every iteration
LOOP = """
(def halve (x)
  (getitem (while (lambda (v) (> (sum v) 1.0))
                  (lambda (v) (tuple (* (tanh v) 0.5)))
                  (tuple (exp x)))
           0))
"""

BRANCH = """
(def pick (x y)
  (if (> (max x) 0.0) (sum (* x y) 0) (mean (- x y) 1)))
"""

SPIN = ("(def spin (x) (getitem (while (lambda (v) (> (sum v) -1.0))"
        " (lambda (v) (tuple (+ v 1.0))) (tuple x)) 0))")


@pytest.fixture
def vk_daemon(start_daemon, tmp_path):
    env = harness.base_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    return start_daemon("--listen", "127.0.0.1:0", "--workers", "2", env=env)


@pytest.fixture
def vk_channel(vk_daemon):
    ch = grpc.insecure_channel(vk_daemon.addr)
    yield ch
    ch.close()


# lavapipe compiles each pipeline with LLVM on its first use in a process: a cold request
# can take seconds on a loaded machine. These limits catch hangs; they time nothing.
VK_TIMEOUT = 60.0


def execute(ch, pb2, gid, args, device, timeout=VK_TIMEOUT):
    r = rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json=json.dumps([enc(a) for a in args]),
                                              device=device), pb2.ExecuteReply, timeout=timeout)
    return dec(json.loads(r.result_json))


def stage(ch, pb2, src):
    return rpc(ch, "Stage", pb2.StageRequest(sexpr=src, filename="vk.sexp"), pb2.StageReply).graph_id


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.allclose(a, b, rtol=2e-5, atol=2e-5)


def test_mlp_on_vulkan_equals_cpu(vk_daemon, vk_channel, pb2):
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(s).astype("float32") for s in [(16, 64), (64, 128), (128,), (128, 10), (10,)]]
    gid = stage(vk_channel, pb2, MLP)
    want = execute(vk_channel, pb2, gid, args, "cpu")
    for _ in range(2):  # the second run uses the cached context and pipelines
        got = execute(vk_channel, pb2, gid, args, "vulkan:0")
        assert same(got, want), (got, want)
    assert np.allclose(want.sum(axis=1), 1, atol=1e-5)
    vk_daemon.log.wait_for(re.compile(r"graph executor: vulkan:0 is "), VK_TIMEOUT)


@pytest.mark.parametrize("src,shapes", [(LOOP, [(3, 5)]), (BRANCH, [(4, 6), (4, 6)])])
def test_control_flow_on_vulkan_equals_cpu(vk_channel, pb2, src, shapes):
    rng = np.random.default_rng(3)
    gid = stage(vk_channel, pb2, src)
    for sign in (1, -1):
        args = [(sign * np.abs(rng.standard_normal(s))).astype("float32") for s in shapes]
        want = execute(vk_channel, pb2, gid, args, "cpu")
        got = execute(vk_channel, pb2, gid, args, "vulkan:0")
        assert same(got, want), (sign, got, want)


# (x * 1.5 + y) through tanh, squares, a clamp, exp, sigmoid, sqrt: one chain; the
# `(- t t)` step is NaN where t is, never 0
CHAIN = """
(def chain (x y)
  (let t (tanh (+ (* x 1.5) y))
  (let u (maximum (- 1.0 (* t t)) 0.25)
  (sqrt (sigmoid (/ (exp (+ u (- y y))) 3))))))
"""


def same_bits(a, b):
    """Equal bits, a NaN matching any NaN (an op on two NaNs returns either one: IEEE 754
    leaves the choice open, and two compilations of one op may choose differently)."""
    nan = np.isnan(a)
    return (a.shape == b.shape and np.array_equal(nan, np.isnan(b))
            and np.array_equal(a[~nan].view(np.uint32), b[~nan].view(np.uint32)))


def f32_value(pb2, a):
    return pb2.Value(tensor=pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=list(a.shape), data=a.tobytes()))


def chain_with_resident_y(ch, pb2, x, y):
    """CHAIN on vulkan:0 with x sent in the request and y a resident handle there."""
    h = rpc(ch, "Put", pb2.PutRequest(value=f32_value(pb2, y), device="vulkan:0"), pb2.PutReply).result
    r = rpc(ch, "Execute", pb2.ExecuteRequest(graph_id=stage(ch, pb2, CHAIN), args=[f32_value(pb2, x), h],
                                              device="vulkan:0"), pb2.ExecuteReply, timeout=VK_TIMEOUT)
    return dec(json.loads(r.result_json))


def test_fused_chain_on_vulkan_has_the_bits_of_op_by_op(start_daemon, tmp_path, vk_channel, pb2):
    """One generated kernel (the daemon's default) against one dispatch per op
    (STAGD_FUSE=0): the same bits for every element, NaN and infinities included, with
    the operands in the request or resident on the device."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(70001) * 4).astype(np.float32)
    y = (rng.standard_normal(70001) * 4).astype(np.float32)
    y[:4] = [np.nan, np.inf, -np.inf, -0.0]
    env = harness.base_env(XDG_CACHE_HOME=str(tmp_path / "cache0"), STAGD_FUSE="0")
    plain_d = start_daemon("--listen", "127.0.0.1:0", env=env)
    with grpc.insecure_channel(plain_d.addr) as plain_ch:
        want = execute(plain_ch, pb2, stage(plain_ch, pb2, CHAIN), [x, y], "vulkan:0")
        want_resident = chain_with_resident_y(plain_ch, pb2, x, y)
    got = execute(vk_channel, pb2, stage(vk_channel, pb2, CHAIN), [x, y], "vulkan:0")
    assert got.dtype == np.float32 and got.shape == x.shape
    assert same_bits(got, want)
    assert np.isnan(got[:3]).all()  # y - y is NaN for NaN and infinities
    resident = chain_with_resident_y(vk_channel, pb2, x, y)
    assert same_bits(resident, want_resident) and same_bits(resident, want)
    cpu = execute(vk_channel, pb2, stage(vk_channel, pb2, CHAIN), [x, y], "cpu")
    assert cpu.dtype == got.dtype and np.allclose(got, cpu, rtol=2e-5, atol=2e-5, equal_nan=True)


def test_cpu_fallback_is_logged_once(vk_daemon, vk_channel, pb2):
    # concat of mixed dtypes has no GPU kernel, so it runs on the CPU between device ops
    x = np.linspace(-2, 2, 12, dtype="float64").reshape(4, 3)
    gid = stage(vk_channel, pb2, "(def f (x) (exp (concat (tuple (sin x) (cast x float32)) 0)))")
    want = execute(vk_channel, pb2, gid, [x], "cpu")
    for _ in range(3):
        assert same(execute(vk_channel, pb2, gid, [x], "vulkan:0"), want)
    line = "no GPU kernel for 'concat' on float64; it runs on the CPU"
    vk_daemon.log.wait_for(re.compile(re.escape(line)), VK_TIMEOUT)
    assert vk_daemon.log.text().count(line) == 1


def test_empty_and_broadcast_on_vulkan(vk_channel, pb2):
    gid = stage(vk_channel, pb2, "(def f (a b) (sum (* (+ a b) 2.0) 0))")
    for sa, sb in [((0, 3), (1, 3)), ((4, 1), (1, 5)), ((2, 3), ())]:
        a = np.arange(np.prod(sa), dtype="float32").reshape(sa)
        b = np.full(sb, 1.5, dtype="float32")
        want = execute(vk_channel, pb2, gid, [a, b], "cpu")
        got = execute(vk_channel, pb2, gid, [a, b], "vulkan:0")
        assert same(got, want) and same(got, ((a + b) * 2).sum(axis=0).astype("float32"))


def test_bad_device_and_deadline_fail_only_that_request(vk_channel, pb2):
    gid = stage(vk_channel, pb2, SPIN)
    x = np.zeros((4,), dtype="float32")
    with pytest.raises(grpc.RpcError) as e:
        execute(vk_channel, pb2, gid, [x], "vulkan:9")
    assert e.value.code() == grpc.StatusCode.NOT_FOUND and "vulkan:9" in e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        execute(vk_channel, pb2, gid, [x], "vulkan:0", timeout=1.0)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    gid2 = stage(vk_channel, pb2, "(def f (a) (exp a))")
    got = execute(vk_channel, pb2, gid2, [np.zeros((3,), "float32")], "vulkan:0")
    assert same(got, np.ones((3,), "float32"))


def test_daemon_default_device_vulkan(start_daemon, tmp_path, pb2):
    env = harness.base_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    d = start_daemon("--listen", "127.0.0.1:0", "--device", "vulkan:0", env=env)
    ch = grpc.insecure_channel(d.addr)
    try:
        gid = stage(ch, pb2, "(def f (a b) (matmul a b))")
        a = np.arange(6, dtype="float32").reshape(2, 3)
        b = np.arange(12, dtype="float32").reshape(3, 4)
        got = execute(ch, pb2, gid, [a, b], "")
        assert same(got, a @ b)
        d.log.wait_for(re.compile(r"graph executor: vulkan:0 is "), VK_TIMEOUT)
    finally:
        ch.close()


def test_out_of_device_memory_fails_only_that_request(vk_channel, pb2):
    # 6000x6000 float32 = 144 MB: more than lavapipe's (and many GPUs') 128 MiB
    # maxStorageBufferRange, so the device cannot hold it; the CPU can.
    gid = stage(vk_channel, pb2, "(def big () (sum (exp (zeros (tuple 6000 6000) float32))))")
    r = rpc(vk_channel, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[]", device="cpu"),
            pb2.ExecuteReply, timeout=60)
    assert dec(json.loads(r.result_json)) == 36e6
    with pytest.raises(grpc.RpcError) as e:
        rpc(vk_channel, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[]", device="vulkan:0"),
            pb2.ExecuteReply, timeout=60)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "vulkan:0" in e.value.details() and "bytes" in e.value.details()
    gid2 = stage(vk_channel, pb2, "(def f (a) (exp a))")
    got = execute(vk_channel, pb2, gid2, [np.zeros((3,), "float32")], "vulkan:0")
    assert same(got, np.ones((3,), "float32"))
