# SPDX-License-Identifier: Apache-2.0
"""test_convert_semantics_harness.py — self-test of the semantic-preservation harness
(tests/convert/semantics/_semcheck.py), independent of the converter.

1. Every corpus module, "converted" by the identity, passes all of its cases: the
   corpus is deterministic and the harness runs it (no daemon needed).
2. Deliberately wrong "conversions" — a different return value or type, a different
   exception type or message, a missing exception, different printed output, different
   mutation of an argument or a global, a function that loops forever, a module that
   does not compile, does not execute or lacks a function — are each reported as a
   failure of exactly the affected cases, with the aspect named.
"""
import os
import sys

import pytest

import harness

SEM_DIR = os.path.join(str(harness.REPO), "tests", "convert", "semantics")
if SEM_DIR not in sys.path:
    sys.path.insert(0, SEM_DIR)

import _semcheck  # noqa: E402


@pytest.mark.parametrize("module", _semcheck.corpus_modules())
def test_identity_conversion_passes(module):
    text = _semcheck.read_source(module)
    rep = _semcheck.compare_module(module, text, text, "identity")
    assert rep.total > 0
    assert rep.passed == rep.total, rep.details()


ORIGINAL = '''\
"""A tiny module for the harness self-test."""
G = [0]
NAME = 'n'


def ret(x):
    if x > 0:
        return x * 2
    return -x


def boom(x):
    if x:
        raise ValueError('bad %d' % x)
    return 'fine'


def talk(x):
    for i in range(x):
        print('line', i)


def grow(xs):
    xs.append(len(xs))


def bump():
    G[0] += 1
    return G[0]


def rename(v):
    global NAME
    NAME = v


def loop(n):
    i = 0
    while i < n:
        i += 1
    return i


CASES = {
    'ret': [(3,), (-4,)],
    'boom': [(0,), (5,)],
    'talk': [(0,), (2,)],
    'grow': [([],), ([1],)],
    'bump': [()],
    'rename': [('m',)],
    'loop': [(3,)],
}
'''


def mutate(old, new, count=1):
    assert ORIGINAL.count(old) == count, f"self-test pattern {old!r} occurs {ORIGINAL.count(old)} times"
    return ORIGINAL.replace(old, new)


def run(converted, timeout=None, monkeypatch=None):
    if timeout is not None:
        monkeypatch.setattr(_semcheck, "CASE_TIMEOUT_S", timeout)
    return _semcheck.compare_module("selftest", ORIGINAL, converted, "selftest",
                                    path="<selftest original>", converted_path="<selftest converted>")


def failed(rep):
    """{function name: [difference lines]} of the failing cases."""
    out = {}
    for label, lines in rep.failures:
        fname = label.split(" ")[0].split(".", 1)[1]
        out.setdefault(fname, []).extend(lines)
    return out


def test_identity_passes():
    rep = run(ORIGINAL)
    assert (rep.passed, rep.total) == (11, 11), rep.details()


# (what changes, the replacement, the functions that must fail, text in the report)
DIFFERENCES = [
    ("different return value", ("return x * 2", "return x * 3"), {"ret"}, "return value"),
    ("return type int→float", ("return x * 2", "return float(x * 2)"), {"ret"}, "return value"),
    ("return type int→bool", ("return -x", "return bool(-x) if x == -1 else -x"), set(), None),
    ("return value list vs tuple", ("return i\n", "return (i,)[0] if False else i\n"), set(), None),
    ("different exception type", ("raise ValueError('bad %d' % x)", "raise KeyError('bad %d' % x)"),
     {"boom"}, "exception type"),
    ("different exception message", ("raise ValueError('bad %d' % x)", "raise ValueError('bad: %d' % x)"),
     {"boom"}, "exception message"),
    ("exception swallowed", ("raise ValueError('bad %d' % x)", "return None"), {"boom"},
     "converted returned"),
    ("exception added", ("return 'fine'", "raise RuntimeError('x')"), {"boom"}, "converted raised"),
    ("different printed output", ("print('line', i)", "print('line', i, end='')"), {"talk"},
     "printed output"),
    ("extra printed output", ("return 'fine'", "print('dbg'); return 'fine'"), {"boom"}, "printed output"),
    ("different argument mutation", ("xs.append(len(xs))", "xs.append(len(xs) + 1)"), {"grow"},
     "arguments after the call"),
    ("missing argument mutation", ("xs.append(len(xs))", "xs = xs + [len(xs)]"), {"grow"},
     "arguments after the call"),
    ("different global mutation", ("G[0] += 1\n    return G[0]", "G[0] += 2\n    return G[0] - 1"), {"bump"},
     "global 'G'"),
    ("global rebinding lost", ("    global NAME\n", ""), {"rename"}, "global 'NAME'"),
    ("extra global created", ("    return i\n", "    global EXTRA\n    EXTRA = 1\n    return i\n"), {"loop"},
     "global 'EXTRA'"),
]


@pytest.mark.parametrize("what,change,expect,aspect", DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_difference_is_reported(what, change, expect, aspect):
    converted = mutate(*change)
    rep = run(converted)
    got = failed(rep)
    assert set(got) == expect, f"{what}: expected failures in {expect}, got:\n{rep.details()}"
    if aspect:
        assert all(any(aspect in l for l in lines) for lines in got.values()), rep.details()
    # exactly the affected cases fail; the others still pass
    assert rep.passed == rep.total - len(rep.failures)


def test_int_float_bool_types_are_distinguished():
    d = _semcheck.describe
    assert d(1) != d(1.0) and d(1) != d(True) and d(0) != d(False)
    assert d([1]) != d((1,)) and d({1}) != d(frozenset({1}))
    assert d(float("nan")) == d(float("nan")) and d(0.0) != d(-0.0)
    assert d({"a": 1, "b": 2}) != d({"b": 2, "a": 1})  # dict order is observable


def test_infinite_loop_is_a_failure_not_a_hang(monkeypatch):
    rep = run(mutate("i += 1\n", "i += 0\n"), timeout=0.5, monkeypatch=monkeypatch)
    got = failed(rep)
    assert set(got) == {"loop"} and "TIMEOUT" in got["loop"][0], rep.details()


def test_module_that_does_not_compile_fails_every_case():
    rep = run(ORIGINAL + "\ndef broken(:\n")
    assert rep.passed == 0 and len(rep.failures) == rep.total == 11
    assert "SyntaxError" in rep.module_error


def test_module_that_raises_on_import_fails_every_case():
    rep = run("import stagd.no_such_runtime_module\n" + ORIGINAL)
    assert rep.passed == 0 and "ModuleNotFoundError" in rep.module_error


def test_missing_function_fails_its_cases():
    rep = run(mutate("def talk(x):", "def talk_renamed(x):"))
    got = failed(rep)
    assert "defines no 'talk'" in got["talk"][0], rep.details()
    # the other functions' cases see a different set of module globals
    assert rep.passed == 0 and all("global 'talk'" in got[f][0] for f in got if f != "talk")


def test_module_level_output_difference_is_reported():
    rep = run("print('import side effect')\n" + ORIGINAL)
    assert rep.passed == 0 and "module-level printed output" in rep.module_error


def test_each_case_runs_in_a_fresh_namespace():
    # bump() returns 1 in each case only if globals are not shared between cases or sides
    src = ORIGINAL.replace("'bump': [()]", "'bump': [(), (), ()]")
    rep = _semcheck.compare_module("selftest", src, src, "identity", path="<o>", converted_path="<c>")
    assert rep.passed == rep.total == 13


def test_exception_notes_and_addresses_do_not_matter():
    # the runtime adds PEP 678 notes naming original locations; object addresses differ
    conv = mutate("raise ValueError('bad %d' % x)",
                  "e = ValueError('bad %d' % x); e.add_note('at <selftest>:12:9'); raise e")
    assert run(conv).passed == 11
    a = _semcheck._norm_text("<object at 0x7f00aa>")
    assert a == _semcheck._norm_text("<object at 0x55bb01>")


def test_arguments_are_deep_copied_per_side():
    # a converted side that mutates a nested argument must not affect the original's copy
    src = ORIGINAL.replace("'grow': [([],), ([1],)]", "'grow': [([[]],)]")
    conv = src.replace("xs.append(len(xs))", "xs.append(len(xs)); xs[0].append('x')")
    rep = _semcheck.compare_module("selftest", src, conv, "selftest", path="<o>", converted_path="<c>")
    assert set(failed(rep)) == {"grow"}, rep.details()
