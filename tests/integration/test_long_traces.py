# SPDX-License-Identifier: Apache-2.0
# Long traces and where their errors point (docs/sexpr.md "let", docs/runtime.md): a
# trace of more bindings than runtime/sexpr.py's FLAT_LET_MIN is written as one flat
# `let` (one binding a line) instead of one nested `let` per binding, so an unrolled
# loop of thousands of operations stages (the daemon refuses nesting deeper than 1,000
# levels); its results equal NumPy's, tapes over long chains differentiate, and a
# staged error still names the user's line — also inside a function the traced one
# calls (converted on the fly), whose lines once came out relative to the function.
import numpy as np
import pytest

import stagd
from stagd.runtime import sexpr as sx


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


def unrolled(x, n):
    for _ in range(n):
        x = x * 1.0001 + 0.5
    return x


def test_a_loop_unrolled_into_thousands_of_ops_stages_and_equals_numpy():
    f = stagd.function(unrolled, static_argnames=("n",))
    x0 = np.linspace(-1, 1, 8).astype(np.float32)
    text = f.sexpr(x0, 2000)
    assert text.count("\n") > 3000 and "(let\n" in text  # the flat form, 4000 bindings
    want = x0.copy()
    for _ in range(2000):
        want = want * np.float32(1.0001) + np.float32(0.5)
    np.testing.assert_array_equal(np.asarray(f(x0, 2000)), want)


def test_a_short_trace_keeps_nested_lets():
    text = stagd.function(unrolled, static_argnames=("n",)).sexpr(np.ones(2, np.float32), 3)
    assert "(let\n" not in text and text.count("(let ") == 6


def test_a_tape_over_a_long_chain_differentiates():
    x0 = np.array([0.5, -0.25], np.float32)

    def chain(x):
        with stagd.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(300):
                y = y * 1.001
            loss = stagd.reduce_sum(y * y)
        return tape.gradient(loss, x)

    want = 2 * x0.astype(np.float64) * 1.001 ** 600
    for run in (chain, stagd.function(chain)):  # eager tape, staged tape
        got = np.asarray(run(stagd.constant(x0)))
        np.testing.assert_allclose(got, want, rtol=2e-4)


def helper(a, b):
    c = a + 1.0
    return stagd.matmul(c, b)  # (3,4) @ (3,4): HELPER_LINE


def calls_helper(x):
    return helper(x, x)


def long_then_bad(x):
    y = unrolled(x, 100)
    return stagd.matmul(y, x)  # LONG_LINE


def _line_of(marker):
    with open(__file__) as f:
        return next(i for i, s in enumerate(f, 1) if s.rstrip().endswith(marker))


@pytest.mark.parametrize("fn,marker", [(calls_helper, "HELPER_LINE"), (long_then_bad, "LONG_LINE")])
def test_staged_errors_name_the_users_line(fn, marker):
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError) as e:
        stagd.function(fn)(x)
    assert type(e.value) is stagd.ShapeMismatch and "do not align" in str(e.value)
    assert e.value.filename == __file__ and e.value.lineno == _line_of(marker), str(e.value)
    assert f"{__file__}:{_line_of(marker)}:" in str(e.value)


def test_flat_let_threshold_is_where_the_builder_says():
    b = sx.push()
    try:
        names = [b.emit(f"(+ x {i})") for i in range(sx.FLAT_LET_MIN)]
        body = b.close(names[-1])
    finally:
        sx.pop(b)
    lines = body.split("\n")
    assert lines[0] == "(let" and len(lines) == sx.FLAT_LET_MIN + 2
    # every binding line maps back to its name
    for k, name in enumerate(names):
        assert sx.binding_at(body, k + 2, len(lines[k + 1])) == name
