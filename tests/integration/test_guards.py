# SPDX-License-Identifier: Apache-2.0
# JANUS guards and shape relaxation in stagd.function (docs/client.md "Guards" and
# "Shape relaxation"): a trace is never run after a Python fact it read has changed —
# a config attribute, a global list that grows, a rebound global or closure tensor, an
# attribute whose type changes — and batch sizes that vary share one relaxed trace.
# Every value is compared with the same function run by NumPy.
import types

import numpy as np
import pytest

import stagd


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


X = np.array([-1.0, 2.0, -3.0], np.float32)
cfg = types.SimpleNamespace(use_relu=True, scale=2)


@stagd.function
def act(x):
    if cfg.use_relu:
        return stagd.relu(x) * cfg.scale
    return x * cfg.scale


def act_np(x):
    return (np.maximum(x, 0) if cfg.use_relu else x) * cfg.scale


def test_a_config_attribute_flip_retraces_and_flipping_back_reuses():
    cfg.use_relu, cfg.scale = True, 2
    np.testing.assert_array_equal(act(X).numpy(), act_np(X))
    cfg.use_relu = False  # served the ReLU result before guards
    np.testing.assert_array_equal(act(X).numpy(), act_np(X))
    cfg.scale = 2.5  # int → float: a different fact
    np.testing.assert_allclose(act(X).numpy(), act_np(X))
    traces = act.trace_count
    cfg.use_relu, cfg.scale = True, 2
    np.testing.assert_array_equal(act(X).numpy(), act_np(X))
    assert act.trace_count == traces  # the first trace's guards hold again
    assert act.stats["guard_failures"] == 2  # the two calls no trace's guards fitted
    shown = act.guards(X)
    assert "global cfg.use_relu == True" in shown and "global cfg.scale == 2" in shown


SIZES = [1, 2]


@stagd.function
def weighted(x):
    s = x * 0.0
    for k in SIZES:
        s = s + x * k
    return s


def test_a_global_list_that_grows_or_changes_in_place_retraces():
    np.testing.assert_array_equal(weighted(X).numpy(), X * 3)
    SIZES.append(3)
    np.testing.assert_array_equal(weighted(X).numpy(), X * 6)
    SIZES[0] = 10
    np.testing.assert_array_equal(weighted(X).numpy(), X * 15)
    del SIZES[:]
    SIZES.extend([1, 2])


bias = None


@stagd.function
def add_bias(x):
    return x + bias


def test_a_rebound_global_tensor_retraces():
    global bias
    bias = stagd.constant(np.float32(1.0))
    np.testing.assert_array_equal(add_bias(X).numpy(), X + 1)
    bias = stagd.constant(np.float32(10.0))
    np.testing.assert_array_equal(add_bias(X).numpy(), X + 10)


def test_a_rebound_closure_variable_retraces():
    k = stagd.constant(np.float32(2.0))

    @stagd.function
    def times(x):
        return x * k

    np.testing.assert_array_equal(times(X).numpy(), X * 2)
    k = stagd.constant(np.float32(-4.0))
    np.testing.assert_array_equal(times(X).numpy(), X * -4)
    k = 0.5  # a Python number now
    np.testing.assert_array_equal(times(X).numpy(), X * 0.5)
    assert times.trace_count == 3


def test_shape_relaxation_one_trace_for_every_later_batch_size():
    w = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)

    def body(x):
        return stagd.tanh(stagd.matmul(x, w)) * x.shape[0] + stagd.reduce_sum(x) / len(x)

    f = stagd.function(body)
    for n in (4, 5, 6, 7, 8, 4, 5):
        x = np.arange(n * 8, dtype=np.float32).reshape(n, 8) / 50
        np.testing.assert_allclose(f(x).numpy(), np.tanh(x @ w) * n + x.sum() / n, rtol=1e-5)
    assert f.trace_count == 2  # (4, 8), then (?, 8) for all the others
    assert "(shape x)" in f.sexpr(np.zeros((9, 8), np.float32))  # the batch is staged
    g = stagd.function(body, relax_shapes=False)
    for n in (4, 5, 6):
        g(np.zeros((n, 8), np.float32))
    assert g.trace_count == 3
    h = stagd.function(body, input_signature=[stagd.TensorSpec((4, 8))])
    h(np.zeros((4, 8), np.float32))
    with pytest.raises(TypeError, match="does not match"):
        h(np.zeros((5, 8), np.float32))
    assert h.trace_count == 1
