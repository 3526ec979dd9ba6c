# Staging half of stagd.runtime (docs/runtime.md "Staging"): stagd.function converts a
# Python function through the daemon, stages it with Staged parameters into an
# S-expression (Snek §5 / AutoGraph §6 examples) and runs it in the daemon.
import re

import numpy as np
import pytest

import stagd
import stagd.runtime as sg__
from stagd.runtime import sexpr as sx


def power(x, n):
    if n == 0:
        return 1
    else:
        return x * power(x, n - 1)


def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0.0
    return x


def aggregate(x):
    ret = 0
    while x > 0:
        ret += x
        x -= 1
    return ret


def weighted_range(n, a):
    t = 0.0
    for i in range(n):
        t = t + a * i
    return t


def range_with_break(n):
    t = 0
    for i in range(n):
        if t > 20:
            break
        t = t + i
    return t


def return_in_branch(x):
    if x > 0:
        return x * x
    return -x


def return_in_loop(x):
    while x > 0:
        if x > 5:
            return x
        x = x + 2
    return 0


def clipped(x):
    y = x if x < 3.0 else 3.0
    ok = x > -100.0 and not (x > 100.0)
    assert x > -1000.0, "x too small"
    print(y)
    return y + (1.0 if ok else 0.0)


@pytest.fixture
def client(daemon):
    c = stagd.Client(daemon.addr)
    yield c
    c.close()


def test_operators_emit_let_bindings():
    b = sx.push()
    try:
        x = sg__.Staged("x")
        y = -(2 * x + 1) ** 2 @ x  # Python: (-(… ** 2)) @ x
        body = b.close(sx.literal(y))
    finally:
        sx.pop(b)
    assert re.fullmatch(r"\(let (t\$\d+) \(\* 2 x\) \(let (t\$\d+) \(\+ \1 1\) "
                        r"\(let (t\$\d+) \(\*\* \2 2\) \(let (t\$\d+) \(neg \3\) "
                        r"\(let (t\$\d+) \(matmul \4 x\) \5\)\)\)\)\)", body), body
    with pytest.raises(TypeError, match="truth value of staged"):
        bool(x)


def test_snek_power_hyperparameter_branch_disappears(client):
    f = stagd.function(power, static_argnames=("n",), client=client)
    s = f.sexpr(10, 2)
    # Snek Figure 6: (def runX (in1) (let x0 (* in1 1) (let x1 (* in1 x0) x1)))
    assert re.fullmatch(r"\(def power \(x\) \(let (\S+) \(\* x 1\) \(let (\S+) \(\* x \1\) \2\)\)\)",
                        s), s
    assert "(if" not in s
    assert f(10, 2) == 100 == power(10, 2)
    assert f(3, 4) == power(3, 4)


def test_autograph_square_if_positive(client):
    f = stagd.function(square_if_positive, client=client)
    assert "(if " in f.sexpr(9.0)
    assert f(9.0) == 81.0 == square_if_positive(9.0)
    assert f(-9.0) == 0.0 == square_if_positive(-9.0)


def test_snek_aggregate_while(client):
    f = stagd.function(aggregate, client=client)
    assert "(while (lambda" in f.sexpr(10)
    for x in (0, 1, 10, 100):
        assert f(x) == aggregate(x)


def test_for_over_staged_range(client):
    f = stagd.function(weighted_range, client=client)
    assert "(while" in f.sexpr(5, 2.0)
    for n, a in ((0, 2.0), (5, 2.0), (7, -1.5)):
        assert f(n, a) == pytest.approx(weighted_range(n, a), rel=0, abs=0)


def test_for_over_staged_range_with_break(client):
    f = stagd.function(range_with_break, client=client)
    for n in (0, 3, 10, 30):
        assert f(n) == range_with_break(n)


def test_if_exp_and_or_not_assert_print(client, capsys):
    f = stagd.function(clipped, client=client)
    s = f.sexpr(1.0)
    assert "(assert " in s and "(print " in s and "(and " in s and "(not " in s
    capsys.readouterr()
    assert f(1.0) == clipped(1.0)
    assert f(5.0) == clipped(5.0)
    out = capsys.readouterr().out
    assert out.splitlines() == ["1.0", "1.0", "3.0", "3.0"], out
    with pytest.raises(stagd.StagdError, match="x too small"):
        f(-5000.0)


def test_numpy_argument_and_result(client):
    def double(v):
        return v * 2.0
    f = stagd.function(double, client=client)
    out = f(np.array([1.0, 2.5], dtype=np.float32))
    # tensor results stay in the daemon: a stagd.Tensor handle (docs/client.md)
    assert isinstance(out, stagd.Tensor) and out.dtype == "float32"
    assert out.numpy().dtype == np.float32 and out.numpy().tolist() == [2.0, 5.0]


def test_returns_inside_staged_if_and_while(client):
    f = stagd.function(return_in_branch, client=client)
    for x in (3, -2, 0):
        assert f(x) == return_in_branch(x)
    g = stagd.function(return_in_loop, client=client)
    for x in (1, -1, 7, 4):
        assert g(x) == return_in_loop(x)


def row_sums(m):
    total = 0.0
    for row in m:
        total = total + sum(row) * 2.0
    return total


def test_for_over_staged_tensor_rows(client):
    f = stagd.function(row_sums, client=client)
    m = np.arange(6, dtype=np.float64).reshape(3, 2)
    assert f(m) == row_sums(m)
