# SPDX-License-Identifier: Apache-2.0
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
    assert "(assert " in s and "(print " in s and "(not " in s
    # `a and not b` is lazy (Python's meaning): b is evaluated in the arm taken when a holds
    assert re.search(r"\(if (t\$\d+) \(let \S+ \(> x 100\.0\) .*\) \1\)", s), s
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


# ---------------------------------------------------------------- staged calls


@stagd.rep_fun
def rep_power(x, n):
    if n == 0:
        return 1
    return x * rep_power(x, n - 1)


def test_rep_fun_recursion_on_a_staged_bound_is_a_staged_def(client):
    assert rep_power(3, 4) == 81  # plain values: plain Python
    f = stagd.function(rep_power, client=client)
    s = f.sexpr(2, 10)
    # the body is staged once as its own (top-level) def, called from the entry and
    # from itself
    m = re.fullmatch(r"\(def (rep_power\$\d+) \((x\$\d+) (n\$\d+)\) (.*)\)\n\(def rep_power \(x n\) (.*)\)", s)
    assert m, s
    name, body, entry = m.group(1), m.group(4), m.group(5)
    assert f"({name} " in body and "(if " in body, s
    assert s.count("(def ") == 2, s
    for x, n in ((2, 10), (3, 0), (-1.5, 3)):
        assert f(x, n) == rep_power(x, n)


@stagd.rep_fun
def rep_scale(v, k):
    return v * k


def twice_scaled(x):
    return rep_scale(x, 2.0) + rep_scale(x + 1.0, 2.0) + rep_scale(x, 3.0)


def test_rep_fun_defs_are_shared_per_plain_arguments(client):
    f = stagd.function(twice_scaled, client=client)
    s = f.sexpr(1.0)
    # two defs: k = 2.0 (called twice) and k = 3.0; k is baked in, v is the parameter
    defs = re.findall(r"\(def (rep_scale\$\d+) \((v\$\d+)\) \(let \S+ \(\* \2 ([\d.]+)\)", s)
    assert sorted(d[2] for d in defs) == ["2.0", "3.0"], s
    two = next(d[0] for d in defs if d[2] == "2.0")
    assert s.count(f"({two} ") == 2, s
    assert f(1.5) == twice_scaled(1.5)


def abs_helper(x):
    if x > 0:
        return x
    return -x


def uses_helper(x):
    return abs_helper(x) + 1.0


@pytest.fixture
def converter(client):
    def convert(source, filename):
        return client.call("Convert", {"source": source, "filename": filename}).code
    old = sg__.set_converter(convert)
    yield convert
    sg__.set_converter(old)


def test_converted_call_converts_an_unconverted_callee_with_staged_arguments(client, converter):
    f = stagd.function(uses_helper, client=client)
    assert "(if " in f.sexpr(1.0)  # abs_helper's if is staged: it was converted on the fly
    for x in (-3.0, 2.0, 0.0):
        assert f(x) == uses_helper(x)


def test_callees_convert_through_the_functions_own_client(client, daemon):
    """stagd.function(client=c) converts callees met while tracing through c, not through
    the default client — which may talk to another daemon or be closed (a closed default
    failed every on-the-fly conversion with 'closed channel')."""
    import stagd.runtime.calls as calls
    closed = stagd.Client(daemon.addr)
    closed.close()
    previous = stagd._default_client
    stagd.set_default_client(closed)
    calls._converted.clear()  # abs_helper converts again, now
    try:
        f = stagd.function(uses_helper, client=client)
        assert "(if " in f.sexpr(1.0)
        assert f(-3.0) == uses_helper(-3.0)
        with pytest.raises(stagd.FailedPrecondition, match="which was closed"):
            stagd.constant(1.0)  # the closed default says so
    finally:
        stagd.set_default_client(previous)


def test_converted_call_without_a_converter_runs_the_callee_as_written(client):
    old = sg__.set_converter(False)
    try:
        def uses_helper2(x):
            return abs_helper(x) * 2.0
        with pytest.raises(TypeError, match="truth value of staged"):
            stagd.function(uses_helper2, client=client).sexpr(1.0)
    finally:
        sg__.set_converter(old)


def test_converted_call_plain_arguments_call_the_function_itself():
    calls = []

    def spy(*a, **k):
        calls.append((a, k))
        return 7
    assert sg__.converted_call(spy, (1, 2), {"z": 3}) == 7
    assert calls == [((1, 2), {"z": 3})]


# ---------------------------------------------------------------- directives, staged lists


def collect_multiples(x, n):
    out = []
    stagd.set_element_type(out, "float64")
    for i in range(n):
        out.append(x * i)
    return out


def pair_of_rows(x):
    rows = [x]
    stagd.set_element_type(rows, "float64", (2,))
    rows.append(x * 2.0)
    return rows


def capped_countdown(x):
    i = 0
    while x > 0:
        stagd.set_loop_options(maximum_iterations=3)
        x = x - 1
        i += 1
    return i


def test_staged_list_grows_in_a_staged_loop_and_stacks(client):
    f = stagd.function(collect_multiples, client=client)
    s = f.sexpr(2.0, 4)
    assert "(while " in s and "(concat " in s and "(zeros (tuple 0) float64)" in s, s
    for x, n in ((2.0, 4), (1.5, 0), (-1.0, 3)):
        got = f(x, n)  # a stagd.Tensor held in the daemon
        assert isinstance(got, stagd.Tensor)
        got = got.numpy()
        assert got.dtype == np.float64 and got.shape == (n,)
        assert got.tolist() == collect_multiples(x, n)  # plain: the Python list


def test_staged_list_of_rows_stacks_without_a_loop(client):
    f = stagd.function(pair_of_rows, client=client)
    assert "(stack " in f.sexpr(np.zeros(2))
    got = f(np.array([1.0, -2.0]))
    assert got.shape == (2, 2) and got.tolist() == [[1.0, -2.0], [2.0, -4.0]]
    plain = pair_of_rows(np.array([1.0, -2.0]))
    assert isinstance(plain, list) and len(plain) == 2  # unconverted: the list itself


def test_set_loop_options_maximum_iterations_caps_a_staged_loop(client):
    f = stagd.function(capped_countdown, client=client)
    s = f.sexpr(10)
    assert re.search(r"\(< k\$\d+ 3\)", s), s
    assert f(10) == 3 and f(2) == 2
    assert capped_countdown(10) == 10  # plain Python loops are not capped (as AutoGraph)


def test_directives_check_their_arguments():
    with pytest.raises(TypeError, match="unknown option 'unroll'"):
        stagd.set_loop_options(unroll=4)
    with pytest.raises(TypeError, match="maximum_iterations must be a non-negative int"):
        stagd.set_loop_options(maximum_iterations=-1)
    with pytest.raises(TypeError, match="dtype must be one of"):
        stagd.set_element_type([], "complex64")
    lst = [1, 2]
    assert stagd.set_element_type(lst, "int64") is lst  # not staging: the list itself
    with pytest.raises(TypeError, match="unknown option 'unroll'"):
        sg__.while_stmt(lambda: False, lambda: None, lambda: (), lambda v: None, (), {"unroll": 2})


# ---------------------------------------------------------------- Snek style on staged values


def snek_stage(client, fn, static=None):
    """fn converted in the Snek style, staged with runtime/stage.py: (sexpr, run)."""
    import inspect
    import json
    import textwrap
    from stagd.runtime.stage import stage_def
    src = textwrap.dedent(inspect.getsource(fn))
    code = client.call("Convert", {"source": src, "filename": "snek_case.py", "style": 2}).code
    assert "sg__.if__(" in code or "sg__.while__(" in code or "sg__.for__(" in code, code
    ns = dict(fn.__globals__)
    exec(compile(code, "snek_case.py", "exec"), ns)
    sexpr, _ = stage_def(ns[fn.__name__], fn.__name__, static)
    gid = client.call("Stage", {"sexpr": sexpr, "filename": "snek_case.sexp"}).graph_id

    def run(*args):
        reply = client.call("Execute", {"graph_id": gid, "args_json": json.dumps(list(args))})
        return json.loads(reply.result_json)
    return sexpr, run


def snek_abs_or_square(x):
    if x > 0:
        return x * x
    else:
        return -x


def snek_lifted_if(x):
    y = 1.0
    if x > 2.0:
        y = x * 3.0
        x = x - 1.0
    return x + y


def test_snek_if_with_staged_condition(client):
    s, run = snek_stage(client, square_if_positive)
    assert "(if " in s, s
    assert run(9.0) == 81.0 and run(-9.0) == 0.0
    s, run = snek_stage(client, snek_abs_or_square)  # returns in both branches
    assert "(if " in s
    for x in (3.0, -2.0, 0.0):
        assert run(x) == snek_abs_or_square(x)
    s, run = snek_stage(client, snek_lifted_if)  # a var__ cell and a nonlocal
    for x in (5.0, 1.0):
        assert run(x) == snek_lifted_if(x)


def test_snek_while_and_for_over_staged_values(client):
    s, run = snek_stage(client, aggregate)
    assert "(while " in s, s
    for x in (0, 1, 10, 100):
        assert run(x) == aggregate(x)
    s, run = snek_stage(client, weighted_range)
    assert "(while " in s
    for n, a in ((0, 2.0), (5, 2.0), (7, -1.5)):
        assert run(n, a) == weighted_range(n, a)


def snek_return_one_branch(x):
    if x > 0:
        return x
    return -x


def test_snek_staging_limits_are_clear_errors(client):
    with pytest.raises(TypeError, match="returns in one branch only"):
        snek_stage(client, snek_return_one_branch)
    with pytest.raises(TypeError, match="break under a staged condition cannot be staged in the Snek style"):
        snek_stage(client, range_with_break)


def test_snek_hyperparameter_branch_disappears(client):
    s, run = snek_stage(client, power, static={"n": 3})
    assert "(if" not in s and s.count("(* x") == 3, s
    assert run(2) == 8


# --- item assignment on staged tensors, pop() of staged lists (AutoGraph §7.2 lists/slices)

def replace_row(x, k, v):
    x[k] = v
    return x


def pop_last_multiple(x, n):
    out = []
    stagd.set_element_type(out, "float64")
    for i in range(n):
        out.append(x * i)
    last = out.pop()
    first = out.pop(0)
    out[0] = last + first
    return out, last


def pop_plain_items(x):
    rows = [x, x * 2.0, x * 3.0]
    stagd.set_element_type(rows, "float64")
    middle = rows.pop(1)
    return rows, middle


def test_item_assignment_on_a_staged_tensor(client):
    f = stagd.function(replace_row, static_argnames=("k",), client=client)
    assert "(slice_update " in f.sexpr(np.zeros((3, 2)), 1, np.zeros(2))
    for k in (0, 2, -1):
        x = np.arange(6.0).reshape(3, 2)
        want = replace_row(x.copy(), k, np.array([9.0, 8.0]))
        got = np.asarray(f(x, k, np.array([9.0, 8.0])))
        assert got.tolist() == want.tolist(), (k, got)
    # a staged index and a scalar broadcast over the row, inf kept where untouched
    g = stagd.function(replace_row, client=client)
    x = np.array([[np.inf, 1.0], [2.0, 3.0]])
    assert np.asarray(g(x, 1, 7.0)).tolist() == [[np.inf, 1.0], [7.0, 7.0]]
    assert np.asarray(g(x, 0, -1.0)).tolist() == [[-1.0, -1.0], [2.0, 3.0]]


def test_item_assignment_with_slice_and_tuple_keys_stages_slice_updates():
    # (the table of keys against NumPy: tests/integration/test_indexing.py)
    from stagd.runtime.staged import Staged
    b = sx.push()
    try:
        for key in (slice(0, 2), (0, 1), (Ellipsis, slice(None, None, -1))):
            out = sg__.set_item(Staged("x"), key, 1.0)
            assert isinstance(out, Staged)
            name, expr = b.bindings[-1]
            assert out.sexpr == name and expr.startswith("(slice_update ")
        with pytest.raises(TypeError, match=r"gather.*where"):
            sg__.set_item(Staged("x"), 1.5, 1.0)
    finally:
        sx.pop(b)


def test_pop_of_a_staged_list_grown_in_a_staged_loop(client):
    f = stagd.function(pop_last_multiple, client=client)
    s = f.sexpr(2.0, 4)
    assert "(slice " in s and "(concat " in s, s
    for x, n in ((2.0, 4), (1.5, 3), (-1.0, 5)):
        got, last = f(x, n)
        want, want_last = pop_last_multiple(x, n)
        assert np.asarray(got).tolist() == want and float(last) == want_last, (x, n)


def test_pop_of_a_staged_list_of_items(client):
    f = stagd.function(pop_plain_items, client=client)
    rows, middle = f(np.array([1.0, 2.0]))
    assert np.asarray(rows).tolist() == [[1.0, 2.0], [3.0, 6.0]]
    assert np.asarray(middle).tolist() == [2.0, 4.0]
    with pytest.raises(IndexError):  # Python's own error for an empty list
        stagd.function(lambda_free_pop_empty, client=client)(1.0)


def lambda_free_pop_empty(x):
    rows = []
    stagd.set_element_type(rows, "float64")
    return rows.pop()


# ------------------------------------- found by random differential testing (_stagefuzz.py)


def tuple_return_in_one_branch(x, a):
    if a > 1.0:
        return x * 2.0, a
    return x, 0.5


def tuple_return_in_nested_loops(x, n):
    for i in range(n):
        for row in x:
            if sum(row) > 3.0:
                return row * 2.0, i
    return x[0], -1


def test_tuple_returned_in_one_branch_of_a_staged_if_and_inside_staged_loops(client):
    """A returned tuple in one path: the other path's placeholder is a tuple of 0s (was a
    TypeError: 'retval__' is not a number or staged value in both branches)."""
    f = stagd.function(tuple_return_in_one_branch, client=client)
    for a in (2.0, 0.0):
        got, want = f(np.array([1.0, -2.0]), a), tuple_return_in_one_branch(np.array([1.0, -2.0]), a)
        assert np.asarray(got[0]).tolist() == want[0].tolist() and float(got[1]) == want[1]
    g = stagd.function(tuple_return_in_nested_loops, client=client)
    m = np.array([[1.0, 1.0], [2.0, 2.5], [0.0, 0.0]])
    for n in (0, 2):
        got, want = g(m, n), tuple_return_in_nested_loops(m, n)
        assert np.asarray(got[0]).tolist() == want[0].tolist() and int(got[1]) == want[1], n


def bound_after_a_staged_return(x, n):
    if n % 2 == 0:
        return x
    v = x * 2.0
    if sum(x) > 0.0:
        return x * 3.0
    return v + 1.0


def test_variable_bound_after_a_staged_return(client):
    """Code after a staged return runs under `if not do_return__`: a name bound there is
    unbound on the returning path; it carries a placeholder there (was a TypeError)."""
    f = stagd.function(bound_after_a_staged_return, client=client)
    for x in (np.array([1.0, 2.0]), np.array([-1.0, -2.0])):
        for n in (1, 2):
            assert np.asarray(f(x, n)).tolist() == bound_after_a_staged_return(x, n).tolist()


def modified_in_body_read_in_orelse(x, a):
    j = x * 0.0
    if a > 0.0:
        if a > 1.0:
            j += 1
    elif j > -1:
        x = x + 1.0
    return x


def test_name_modified_in_a_branch_and_read_in_the_orelse_is_restored(client):
    """The body's `j += 1` (dead after the if) leaked into the staged orelse, which read
    a name bound inside the other branch (daemon: unknown name 't$N')."""
    f = stagd.function(modified_in_body_read_in_orelse, client=client)
    for a in (2.0, 0.5, -1.0):
        assert float(f(1.5, a)) == modified_in_body_read_in_orelse(1.5, a)


def return_in_plain_loop_under_staged_condition(x):
    for i in range(3):
        if len(x) > i + 1:
            return x * float(i)
    return x


def test_return_in_an_unrolled_loop_under_a_staged_condition(client):
    """The plain loop's break/return flag became staged (TypeError: the truth value of
    staged … is unknown); the remaining items now run under a staged if on it."""
    f = stagd.function(return_in_plain_loop_under_staged_condition, client=client)
    for x in (np.ones(1), np.ones(2), np.ones(4)):
        assert np.asarray(f(x)).tolist() == return_in_plain_loop_under_staged_condition(x).tolist()
