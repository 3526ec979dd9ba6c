# SPDX-License-Identifier: Apache-2.0
# NumPy basic indexing through the daemon (runtime/indexing.py; docs/runtime.md
# "Indexing", docs/client.md "Indexing"): reading and writing staged values
# (stagd.function) and eager tensors against NumPy over a table of keys, on the CPU and
# vulkan:0; augmented item assignment; staged ints as indices and bounds; computed keys
# (`x[i + 1] = v`, `x[idx[j]] += d`, computed slice bounds) and gradients through them; the errors
# NumPy raises (same exception types, located at the user's line) with the daemon
# serving on; gradients through a staged function that writes slices.
import numpy as np
import pytest

import stagd

DEVICES = ["cpu", "vulkan:0"]

X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6) - 50.0

READ_KEYS = [
    0, -1, 3, np.s_[1:3], np.s_[::2], np.s_[::-1], np.s_[-3:], np.s_[5:1:-2], np.s_[10:],
    np.s_[:, 0], np.s_[:, -2], np.s_[1, 2], np.s_[1, 2, 3], np.s_[-1, -1, -1],
    np.s_[..., -1], np.s_[..., 1:4], np.s_[0, ...], np.s_[1, ..., ::-2], np.s_[...],
    np.s_[None], np.s_[None, :], np.s_[:, None], np.s_[..., None], np.s_[1, None, 2],
    np.s_[None, ..., None, 0], np.s_[:, None, 1:, ::-3], np.s_[::3, 1:4:2, -2],
    np.s_[2:2], np.s_[-100:100, :0], np.s_[0, None, ..., None, 1], np.s_[:, :, 5],
]

# (key, value shape or a Python number)
WRITE_CASES = [
    (1, 7.0), (-1, (5, 6)), (np.s_[1:3], (6,)), (np.s_[::2], (2, 5, 6)), (np.s_[::-1], 0.5),
    (np.s_[:, 0], (4, 6)), (np.s_[:, 0], (1, 6)), (np.s_[1, 2], (6,)), (np.s_[1, 2, 3], -3.0),
    (np.s_[..., -1], (4, 5)), (np.s_[..., 1:4], (3,)), (np.s_[1, ..., ::-2], (5, 1)),
    (np.s_[None, 2], (5, 6)), (np.s_[:, None, 1:, ::-3], (1, 4, 2)), (np.s_[::3, 1:4:2, -2], (2, 2)),
    (np.s_[2:2], 1.0), (np.s_[...], (6,)), (np.s_[-100:100, :0], 4.0), (np.s_[0, None, ..., None, 1], (5, 1)),
]


def value_of(spec, seed):
    if not isinstance(spec, tuple):
        return spec
    return np.random.default_rng(seed).standard_normal(spec).astype(np.float32)


def read_key(x, key):
    return x[key]


def write_key(x, key, v):
    x[key] = v
    return x


def add_key(x, key, v):
    x[key] += v
    return x


def dynamic_key(x, i, j, v):
    y = x[i, 1:j]
    x[i, j:, -1] = v
    k = i - 1
    x[k, :j] *= 2.0
    return y, x


def nested_key(x, i):
    x[0][i] = 0.0  # the target is an item, not a local name
    return x


def computed_keys(x, idx, i, v):
    # computed keys (the converter binds the key, and the value first where it must):
    # arithmetic on a staged int, an item of an index tensor, computed slice bounds
    x[i + 1] = v * 2.0
    x[idx[1], 1:i + 3] += 2.0
    x[:, i - 1, ::2] *= v[0, ::2]
    x[idx[0] - 1, ..., i * 2] = x[0, 0, i]
    for k in range(i):
        x[k + 1, k] -= 1.0
    return x


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


@pytest.mark.parametrize("device", DEVICES)
def test_staged_and_eager_reads_match_numpy(device):
    f = stagd.function(read_key, static_argnames=("key",))
    with stagd.device(device):
        t = stagd.constant(X)
        for key in READ_KEYS:
            want = X[key]
            for how, got in (("staged", f(X, key)), ("eager", t[key])):
                got = np.asarray(got)
                assert got.shape == want.shape and got.dtype == want.dtype, (how, key)
                np.testing.assert_array_equal(got, want, err_msg=f"{how} {key!r}")


@pytest.mark.parametrize("device", DEVICES)
def test_staged_and_eager_writes_match_numpy(device):
    f = stagd.function(write_key, static_argnames=("key",))
    g = stagd.function(add_key, static_argnames=("key",))
    xi = X.astype(np.int64)
    with stagd.device(device):
        for n, (key, spec) in enumerate(WRITE_CASES):
            v = value_of(spec, n)
            for base in (X, xi):  # an int64 tensor takes the value cast (truncated)
                want = base.copy()
                want[key] = v
                np.testing.assert_array_equal(np.asarray(f(base, key, v)), want, err_msg=f"{key!r}")
                t = stagd.constant(base)
                before = t + 0  # an op on t before the write: t's argument message made
                t[key] = v
                assert t.dtype == str(base.dtype) and t.shape == base.shape
                np.testing.assert_array_equal(t.numpy(), want, err_msg=f"eager {key!r}")
                # ops after the write read the new value (never the handle t had before)
                np.testing.assert_array_equal((t + 0).numpy(), want, err_msg=f"op after {key!r}")
                np.testing.assert_array_equal(before.numpy(), base, err_msg=f"op before {key!r}")
            want = X.copy()
            want[key] += v
            np.testing.assert_allclose(np.asarray(g(X, key, v)), want, rtol=1e-6, err_msg=f"+= {key!r}")


def test_variable_item_assignment_assigns_the_variable():
    w = stagd.Variable(np.zeros((3, 4), np.float32))
    w[1, 1:3] = np.array([5.0, 6.0], np.float32)
    w[:, -1] = 2.0
    want = np.zeros((3, 4), np.float32)
    want[1, 1:3] = [5.0, 6.0]
    want[:, -1] = 2.0
    np.testing.assert_array_equal(w.numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_staged_ints_as_indices_and_bounds(device):
    f = stagd.function(dynamic_key)
    with stagd.device(device):
        for i, j in ((1, 2), (3, 4), (-1, 1)):
            y, x = f(X, stagd.constant(np.int64(i)), stagd.constant(np.int64(j)), 9.0)
            want = X.copy()
            np.testing.assert_array_equal(np.asarray(y), X[i, 1:j])
            want[i, j:, -1] = 9.0
            want[i - 1, :j] *= 2.0
            np.testing.assert_array_equal(np.asarray(x), want)
    assert f.trace_count == 1  # one graph for every index value


@pytest.mark.parametrize("device", DEVICES)
def test_computed_keys_match_numpy(device):
    f = stagd.function(computed_keys)
    g = stagd.function(computed_keys)
    idx = np.array([2, 0, 3], np.int64)
    v = value_of((5, 6), 7)
    with stagd.device(device):
        for i in (1, 2):
            want = computed_keys(X.copy(), idx, i, v)  # plain Python on NumPy arrays
            for h, ii in ((f, i), (g, stagd.constant(np.int64(i)))):
                got = h(X, stagd.constant(idx), ii, v)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=f"i={ii!r}")
    assert g.trace_count == 1  # one graph for every staged i


def test_index_errors_are_numpys_types_at_the_users_line():
    f = stagd.function(read_key, static_argnames=("key",))
    w = stagd.function(write_key, static_argnames=("key",))
    t = stagd.constant(X)
    line = read_key.__code__.co_firstlineno + 1
    for key, exc in ((7, IndexError), (np.s_[:, 5], IndexError), (np.s_[0, 0, 0, 0], IndexError),
                     (np.s_[-5], IndexError)):
        with pytest.raises(exc) as e:
            f(X, key)
        assert isinstance(e.value, stagd.IndexOutOfBounds)
        assert f"{__file__}:{line}:" in str(e.value) and "out of bounds" in str(e.value)
        with pytest.raises(exc, match="out of bounds|too many indices"):
            t[key]
    for key in ([0, 1], np.array([1, 2]), True, (0, [1]), 1.5, np.s_[..., 0, ...]):
        for call in (lambda: f(X, key), lambda: t[key]):
            with pytest.raises((TypeError, IndexError)) as e:
                call()
            if e.type is TypeError:
                assert "gather" in str(e.value) and "where" in str(e.value)
    with pytest.raises(TypeError, match="item assignment on a staged tensor needs a local variable"):
        stagd.function(nested_key)(X, 1)
    with pytest.raises(ValueError, match="step cannot be zero"):
        t[::0]
    # a value that does not broadcast to the item
    with pytest.raises(ValueError) as e:
        w(X, np.s_[1:3], np.ones((3, 6), np.float32))
    assert isinstance(e.value, stagd.ShapeMismatch)
    assert "could not broadcast" in str(e.value) and f"{__file__}:" in str(e.value)
    with pytest.raises(ValueError, match="could not broadcast"):
        w(X, np.s_[1, 2], np.ones((5,), np.float32))
    tt = stagd.constant(X)
    with pytest.raises(ValueError, match="could not broadcast"):
        tt[1:3] = np.ones((3, 6), np.float32)
    np.testing.assert_array_equal(tt.numpy(), X)  # unchanged
    # the daemon keeps serving
    np.testing.assert_array_equal(np.asarray(f(X, np.s_[1, 2])), X[1, 2])


def staged_writes(x, v):
    y = x * 2.0
    y[1:3, 0] = v * v
    y[:, 2] += v[0]
    y[-1, ::-2] = stagd.exp(v[1])
    return stagd.reduce_sum(y * y)


def staged_writes_np(x, v):
    y = x * 2.0
    y[1:3, 0] = v * v
    y[:, 2] += v[0]
    y[-1, ::-2] = np.exp(v[1])
    return np.sum(y * y)


def computed_writes(x, v, i):
    y = x * 2.0
    y[i + 1, 0] = v[0] * v[1]
    y[i - 1:i + 1, 2] += v[0]
    y[-i, ::-2] *= v[1]
    return stagd.reduce_sum(y * y)


def computed_writes_np(x, v, i):
    y = x * 2.0
    y[i + 1, 0] = v[0] * v[1]
    y[i - 1:i + 1, 2] += v[0]
    y[-i, ::-2] *= v[1]
    return np.sum(y * y)


def tape_in_function(x, v):
    with stagd.GradientTape() as t:
        t.watch([x, v])
        z = staged_writes(x, v)
    return t.gradient(z, [x, v])


def central_differences(fn, x0, v0):
    """d fn / d x and d fn / d v by central differences in float64."""
    fd = []
    for a, shape in ((x0, x0.shape), (v0, v0.shape)):
        g = np.zeros(shape)
        for k in np.ndindex(shape):
            e = np.zeros(shape)
            e[k] = 1e-6
            args_p = (x0 + e, v0) if a is x0 else (x0, v0 + e)
            args_m = (x0 - e, v0) if a is x0 else (x0, v0 - e)
            g[k] = (fn(*args_p) - fn(*args_m)) / 2e-6
        fd.append(g)
    return fd


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_through_a_staged_function_that_writes_slices(device):
    x0 = np.linspace(-1, 1, 12).reshape(4, 3)
    v0 = np.array([0.5, -0.25])
    fd = central_differences(staged_writes_np, x0, v0)
    f = stagd.function(staged_writes)
    with stagd.device(device):
        x = stagd.constant(x0)
        v = stagd.constant(v0)
        with stagd.GradientTape() as t:
            t.watch([x, v])
            z = f(x, v)
        assert float(z) == pytest.approx(staged_writes_np(x0, v0))
        for got, want in zip(t.gradient(z, [x, v]), fd):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
        for got, want in zip(stagd.function(tape_in_function)(x, v), fd):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_through_computed_keys(device):
    x0 = np.linspace(-1, 1, 12).reshape(4, 3)
    v0 = np.array([0.5, -0.25])
    f = stagd.function(computed_writes)
    with stagd.device(device):
        x = stagd.constant(x0)
        v = stagd.constant(v0)
        for i in (1, 2):
            fd = central_differences(lambda a, b: computed_writes_np(a, b, i), x0, v0)
            with stagd.GradientTape() as t:
                t.watch([x, v])
                z = f(x, v, stagd.constant(np.int64(i)))
            assert float(z) == pytest.approx(computed_writes_np(x0, v0, i))
            for got, want in zip(t.gradient(z, [x, v]), fd):
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


def test_tensor_item_assignment_under_a_tape_is_refused():
    t = stagd.constant(X)
    with stagd.GradientTape():
        with pytest.raises(TypeError, match="GradientTape"):
            t[0] = 1.0
