# SPDX-License-Identifier: Apache-2.0
# Plain-value semantics of stagd.runtime (docs/runtime.md): every function behaves as Python.
import io
import contextlib

import pytest

import stagd.runtime as sg__


def test_require_api():
    sg__.require_api(2)
    sg__.require_api(1)  # code converted before elif_stmt still runs
    for bad in (0, 3):
        with pytest.raises(ImportError):
            sg__.require_api(bad)


def test_elif_stmt_order_and_long_chains():
    # each test runs only after the ones before it were false; no recursion per level
    seen = []

    def chain(x, n):
        def test(i):
            return lambda: (seen.append(i), x == i)[1]

        def then(i):
            return lambda: seen.append(("then", i))
        elifs = tuple((test(i), then(i)) for i in range(1, n))
        sg__.elif_stmt(x == 0, then(0), elifs, lambda: seen.append("else"),
                       lambda: (), lambda v: None, (), 0)

    chain(3, 5)
    assert seen == [1, 2, 3, ("then", 3)]
    seen.clear()
    chain(-1, 5000)
    assert seen[-1] == "else" and len(seen) == 5000
    seen.clear()
    sg__.elif__(False, None, ((lambda: seen.append(1), None),), lambda: seen.append("e"))
    assert seen == [1, "e"]


def test_and_or_lazy_and_deciding_operand():
    calls = []

    def op(v):
        def f():
            calls.append(v)
            return v
        return f

    assert sg__.and_(op(1), op(0), op(2)) == 0
    assert calls == [1, 0]
    calls.clear()
    assert sg__.or_(op(0), op(""), op("x"), op(3)) == "x"
    assert calls == [0, "", "x"]
    assert sg__.and_(op([1]), op("y")) == "y"
    assert sg__.not_([]) is True and sg__.not_(5) is False


def test_if_exp_and_if_stmt():
    assert sg__.if_exp(0, lambda: 1 / 0, lambda: "no", "a if c else b") == "no"
    out = []
    sg__.if_stmt(1, lambda: out.append("t"), lambda: out.append("f"), None, None, (), 0)
    sg__.if_stmt([], lambda: out.append("t"), lambda: out.append("f"), None, None, (), 0)
    assert out == ["t", "f"]


def test_while_and_for():
    state = {"i": 0, "s": 0}

    def test():
        return state["i"] < 5

    def body():
        state["s"] += state["i"]
        state["i"] += 1

    sg__.while_stmt(test, body, None, None, ("i", "s"), {})
    assert state == {"i": 5, "s": 10}
    seen = []
    sg__.for_stmt(sg__.range_(10), lambda: len(seen) < 3, seen.append, None, None, (), {})
    assert seen == [0, 1, 2]


def test_undefined_and_ld():
    assert sg__.ld(3) == 3
    with pytest.raises(UnboundLocalError):
        sg__.ld(sg__.Undefined("x"))
    with pytest.raises(NameError):
        sg__.ld(sg__.Undefined("x"), free=True)
    assert sg__.ret(5, True) == 5
    assert sg__.ret(sg__.Undefined("retval__"), False) is None


def test_assert_stmt():
    sg__.assert_stmt(1, lambda: 1 / 0)
    with pytest.raises(AssertionError) as e:
        sg__.assert_stmt(0, lambda: "msg")
    assert e.value.args == ("msg",)
    with pytest.raises(AssertionError) as e:
        sg__.assert_stmt(0, lambda: None)
    assert e.value.args == ()


def test_lists_items_mutate_in_place():
    lst = sg__.new_list([1])
    same = sg__.list_append(lst, 2)
    assert same is lst and lst == [1, 2]
    lst2, v = sg__.list_pop(lst, None)
    assert lst2 is lst and v == 2 and lst == [1]
    d = {}
    assert sg__.set_item(d, "k", 1) is d and d == {"k": 1}
    assert sg__.get_item([5, 6], -1) == 6
    with pytest.raises(IndexError):
        sg__.get_item([], 0)


def test_builtins_match_python():
    buf1, buf2 = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf1):
        sg__.print_(1, "a", [2], sep="-", end="!\n")
    with contextlib.redirect_stdout(buf2):
        print(1, "a", [2], sep="-", end="!\n")
    assert buf1.getvalue() == buf2.getvalue()
    assert list(sg__.range_(1, 7, 2)) == [1, 3, 5]
    assert sg__.len_("abc") == 3 and sg__.abs_(-2) == 2
    assert sg__.min_([3, 1]) == 1 and sg__.max_(3, 4) == 4 and sg__.sum_([1, 2]) == 3
    assert sg__.int_("12") == 12 and sg__.float_("1.5") == 1.5 and sg__.bool_(0) is False
    assert list(sg__.enumerate_("ab")) == [(0, "a"), (1, "b")]
    assert list(sg__.zip_([1], [2])) == [(1, 2)]
    assert sg__.isinstance_(1, int)
    with pytest.raises(ValueError):
        sg__.int_("x")
    assert sg__.converted_call(max, (1, 5), {"key": lambda v: -v}) == 1


def test_snek_forms():
    x = sg__.var__()
    with pytest.raises(UnboundLocalError):
        sg__.read__(x, "x")
    sg__.assign__(x, 0)
    seen = []

    def body(i):
        if i == 1:
            sg__.continue__()
        if i == 3:
            sg__.break__()
        seen.append(i)
        sg__.assign__(x, sg__.read__(x) + i)

    sg__.for__(range(10), body)
    assert seen == [0, 2] and sg__.read__(x) == 2
    with pytest.raises(sg__.NonLocalReturnValue) as r:
        sg__.return__(7)
    assert r.value.value == 7
    assert sg__.if__(0, lambda: "t", lambda: "e") == "e"


def test_staged_value_outside_staging_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="outside of staging"):
        sg__.if_exp(sg__.Staged("x"), lambda: 1, lambda: 2)


def test_converted_keeps_the_function_and_maps_errors_back():
    src = (
        "import stagd.runtime as sg__\n"                       # 1
        "m__ = sg__.SourceMap('orig.py', {5: (12, 4), 6: (13, 8)})\n"  # 2
        "@sg__.converted(m__)\n"                               # 3
        "def f(a, b=2, *, k='k'):\n"                           # 4
        "    def inner__1():\n"                                # 5
        "        return a / b\n"                               # 6
        "    return inner__1()\n"                              # 7
    )
    ns = {}
    exec(compile(src, "<converted>", "exec"), ns)
    f = ns["f"]
    assert f.__defaults__ == (2,) and f.__kwdefaults__ == {"k": "k"} and f.__name__ == "f"
    assert f(6, 3) == 2
    with pytest.raises(ZeroDivisionError) as e:
        f(1, 0)
    assert sg__.original_locations(e.value) == [("orig.py", 13, 8)]
    sg__.add_location_notes(e.value)
    sg__.add_location_notes(e.value)  # idempotent
    assert e.value.__notes__ == ["  converted from orig.py:13:8"]


def test_equal_converted_code_in_two_files_keeps_each_map():
    """Code objects compare by value: two converted functions with the same body on the
    same lines from different files are equal. Each keeps its own source map, and the
    death of one does not take the other's away (errors of the survivor stayed
    unlocated: a weak dictionary keyed by equality dropped the shared entry)."""
    import gc
    src = (
        "import stagd.runtime as sg__\n"
        "m__ = sg__.SourceMap(ORIG, {5: (20, 4)})\n"
        "@sg__.converted(m__)\n"
        "def f(a):\n"
        "    return 1 / a\n"
    )

    def make(orig, filename):
        ns = {"ORIG": orig}
        exec(compile(src, filename, "exec"), ns)
        return ns["f"]

    first, second = make("first.py", "<a>"), make("second.py", "<b>")
    assert first.__code__ == second.__code__ and first.__code__ is not second.__code__
    for fn, orig in ((first, "first.py"), (second, "second.py")):
        with pytest.raises(ZeroDivisionError) as e:
            fn(0)
        assert sg__.original_locations(e.value) == [(orig, 20, 4)]
    del first, e
    gc.collect()
    with pytest.raises(ZeroDivisionError) as e:
        second(0)
    assert sg__.original_locations(e.value) == [("second.py", 20, 4)]
