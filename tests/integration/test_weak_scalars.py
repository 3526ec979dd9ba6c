# SPDX-License-Identifier: Apache-2.0
"""test_weak_scalars.py — NumPy 1.24 dtype promotion of the scalars a staged function
makes from staged values (`float(v)`, `int(v)`, `t[i]`) next to tensors: they are weak
like NumPy's scalars (value-based casting), so `w - float(lr) * g` on float32 stays
float32, `x * k[i]` keeps x's dtype and only a scalar of a higher kind promotes
(`int32_tensor * float(v)` is float64). Each function runs through the converter and
the daemon (stagd.function) on the CPU and on vulkan:0, and as plain Python on NumPy;
results must agree in dtype and value. The eager client (daemon-resident tensors) must
agree as well. docs/sexpr.md "Values and semantics".

Run: STAGD_BIN=... /usr/bin/python3 -m pytest tests/integration/test_weak_scalars.py
"""
import numpy as np
import pytest

import stagd
import _stagefuzz
import _stagegen

DEVICES = ["cpu", "vulkan:0"]
TENSOR_DTYPES = ["float32", "float64", "int32", "int64"]
# scalars made from staged values: Python float / int (float(), int()) and NumPy scalars
# of each dtype (t[i] of a staged tensor); lr = 1.5, n = 3, i = 1 at run time
SCALARS = ["float(lr)", "float(n)", "int(n)", "int(lr)", "k64[i]", "k32[i]", "f32[i]", "f64[i]"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "<", ">=", "==", "!="]
INPLACE = ["+=", "-=", "*=", "/=", "//=", "%="]


def program(scalar, inplace):
    """f(x, c, lr, n, i, k64, k32, f32, f64) → a tuple: x OP s and s OP x for every
    operator, maximum / minimum, where both ways, and the augmented assignments
    y OP= s and y[0] OP= s on copies of x for the operators in `inplace`."""
    lines = ["def f(x, c, lr, n, i, k64, k32, f32, f64):", f"    s = {scalar}", "    out = ()"]
    for op in BINARY:
        lines.append(f"    out = out + (x {op} s, s {op} x)")
    lines += ["    out = out + (stagd.maximum(x, s), stagd.minimum(s, x))",
              "    out = out + (stagd.where(c, x, s), stagd.where(c, s, x))"]
    for op in inplace:
        lines += ["    y = x + 0", f"    y {op} s", "    z = x + 0", f"    z[0] {op} s",
                  "    out = out + (y, z)"]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def arguments(dtype):
    x = np.array([1.25, 2.5, 3.0, 1.5, 2.0]).astype(dtype)  # >= 1: ** real, no % 0
    c = np.array([True, False, True, True, False])
    return (x, c, 1.5, 3, 1, np.array([4, 2, 5], np.int64), np.array([1, 3, 2], np.int32),
            np.array([0.5, 1.75, 2.0], np.float32), np.array([2.5, 1.25, 3.0]))


def inplace_ops(dtype, scalar):
    """NumPy refuses `int_tensor += float` and `int_tensor /= int` (same_kind casting of
    the output); stagd's augmented assignment rebinds, so those are left out."""
    if dtype.startswith("float"):
        return INPLACE
    return [op for op in INPLACE if op != "/="] if scalar in ("int(n)", "int(lr)", "k64[i]", "k32[i]") else []


def check(got, want, what):
    assert isinstance(got, tuple) and len(got) == len(want), what
    for j, (g, w) in enumerate(zip(got, want)):
        g = g.numpy() if isinstance(g, stagd.Tensor) else np.asarray(g)
        w = np.asarray(w)
        assert g.dtype == w.dtype, f"{what}: result {j}: dtype {g.dtype}, NumPy {w.dtype}"
        assert g.shape == w.shape, f"{what}: result {j}: shape {g.shape}, NumPy {w.shape}"
        tol = 1e-6 if w.dtype == np.float32 else 1e-12
        assert np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, equal_nan=True), \
            f"{what}: result {j}: {g.tolist()}, NumPy {w.tolist()}"


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", TENSOR_DTYPES)
@pytest.mark.parametrize("scalar", SCALARS)
def test_staged_scalars_promote_like_numpy(client, device, dtype, scalar):
    text = program(scalar, inplace_ops(dtype, scalar))
    args = arguments(dtype)
    with np.errstate(all="ignore"):
        want = _stagefuzz._load(text, _stagegen.NUMPY_STAGD)["f"](*args)
    f = stagd.function(_stagefuzz._load(text, stagd)["f"], client=client)
    with stagd.device(device):
        got = f(*args)
    check(got, want, f"{scalar} next to {dtype} on {device}")


def train_step(w, g, lr, k, i):
    """What the brief's user writes: a float32 model stays float32."""
    w = w - float(lr) * g
    w *= k[i]
    return w / int(lr + 1.0)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_training_step_stays_float32(client, device):
    w, g = np.linspace(-1, 1, 6, dtype=np.float32), np.full(6, 0.5, np.float32)
    k = np.array([1, 2, 3], np.int64)
    want = train_step(w, g, 0.25, k, 2)
    assert want.dtype == np.float32
    with stagd.device(device):
        got = stagd.function(train_step, client=client)(w, g, 0.25, k, 2)
    assert got.dtype == "float32"
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", TENSOR_DTYPES)
def test_eager_tensors_agree(client, device, dtype):
    """Eager ops on daemon-resident tensors: t[i] is a 0-d tensor, weak next to x."""
    x, c, _, _, i, k64, k32, f32, f64 = arguments(dtype)
    with stagd.device(device):
        tx, tc = stagd.constant(x), stagd.constant(c)
        for arr in (k64, k32, f32, f64):
            t, s = stagd.constant(arr), arr[i]
            for op in ("+", "*", "-", "<"):
                got, want = eval(f"tx {op} t[i]"), eval(f"x {op} s")
                check((got, eval(f"t[i] {op} tx")), (want, eval(f"s {op} x")),
                      f"eager {dtype} {op} {arr.dtype} on {device}")
            check((stagd.maximum(tx, t[i]), stagd.where(tc, t[i], tx)),
                  (np.maximum(x, s), np.where(c, s, x)), f"eager {dtype} {arr.dtype} on {device}")
