# SPDX-License-Identifier: Apache-2.0
"""test_convert.py — the Convert RPC and `stagctl convert` (--addr and --local): the
module shape of docs/runtime.md in both styles, --function, the source map, located
diagnostics for unconvertible functions, syntax errors reported exactly like Parse
reports them, and the daemon serving on after each bad request. CPython 3.12 checks
that every converted module compiles."""
import json
import os
import subprocess

import grpc
import pytest

import harness
from harness import rpc

CPYTHON312 = "/root/.pyenv/versions/3.12.1/bin/python3"

SOURCE = '''# leading comment
import math  # kept


def f(x, n=3):
    """Doc."""
    s = 0
    for i in range(n):
        if i == x:
            break
        s += i
    else:
        s = -s
    return s if s > 0 else math.inf


def g(xs):
    for x in xs:
        if x < 0:
            return x
    return None


class K:
    def m(self, a):
        while a > 10:
            a //= 2
        return a and self
'''

UNCONVERTIBLE = '''def gen(n):
    for i in range(n):
        yield i

def keep(x):
    return x
'''


def compiles(code, name="converted.py"):
    if not os.path.exists(CPYTHON312):
        pytest.fail(f"the CPython 3.12 oracle {CPYTHON312} is missing (pyenv install 3.12.1)")
    r = subprocess.run([CPYTHON312, "-c", "import sys; compile(sys.stdin.read(), sys.argv[1], 'exec')", name],
                       input=code, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + "\n" + code
    return True


def convert(channel, pb2, source, style=None, function="", filename="m.py"):
    req = pb2.ConvertRequest(source=source, filename=filename, function=function)
    if style is not None:
        req.style = style
    return rpc(channel, "Convert", req, pb2.ConvertReply)


def test_convert_autograph(channel, pb2):
    r = convert(channel, pb2, SOURCE)
    lines = r.code.splitlines()
    assert lines[0].startswith("# Converted by stagd") and "style autograph" in lines[0]
    assert lines[1:3] == ["import stagd.runtime as sg__", "sg__.require_api(1)"]
    assert lines[3].startswith("sg__source_map__ = sg__.SourceMap('m.py', {")
    assert "# leading comment\nimport math  # kept\n" in r.code
    for name in ("def f(x, n=3):", "def g(xs):", "    def m(self, a):"):
        assert name in r.code
    assert r.code.count("@sg__.converted(sg__source_map__)") == 3
    for call in ("sg__.for_stmt(", "sg__.if_stmt(", "sg__.while_stmt(", "sg__.if_exp(", "sg__.and_(",
                 "sg__.range_(n)", "return sg__.ret(retval__, do_return__)"):
        assert call in r.code, call
    assert list(r.diagnostics) == []
    compiles(r.code)
    # the source map: increasing converted lines, original lines inside the file
    nsrc = len(SOURCE.splitlines())
    conv = [e.converted_line for e in r.source_map]
    assert conv == sorted(conv) and len(set(conv)) == len(conv)
    assert all(1 <= e.original.line <= nsrc and e.original.column >= 1 for e in r.source_map)
    assert all(e.original.file == "m.py" for e in r.source_map)
    # the `for` of f (line 8, column 5) is where its loop_body helper comes from
    clines = r.code.splitlines()
    for_line = next(i + 1 for i, t in enumerate(clines) if "def loop_body__" in t)
    entry = next(e for e in r.source_map if e.converted_line == for_line)
    assert (entry.original.line, entry.original.column) == (8, 5)


def test_convert_snek(channel, pb2):
    r = convert(channel, pb2, SOURCE, style=pb2.STYLE_SNEK)
    assert "style snek" in r.code.splitlines()[0]
    for call in ("sg__.for__(", "sg__.if__(", "sg__.while__(", "def then__", "def body__", "def cond__",
                 "sg__.return__(x)", "except sg__.NonLocalReturnValue as r__:"):
        assert call in r.code, call
    assert "if_stmt" not in r.code
    compiles(r.code)


def test_convert_one_function(channel, pb2):
    r = convert(channel, pb2, SOURCE, function="g")
    assert r.code.count("@sg__.converted(") == 1
    assert "@sg__.converted(sg__source_map__)\ndef g(xs):" in r.code
    # f is copied verbatim, comments and formatting included
    f_src = SOURCE[SOURCE.index("def f"):SOURCE.index("def g")]
    assert f_src in r.code
    compiles(r.code)
    r = convert(channel, pb2, SOURCE, function="K.m")
    assert "    @sg__.converted(sg__source_map__)\n    def m(self, a):" in r.code
    r = convert(channel, pb2, SOURCE, function="nope")
    assert r.code == SOURCE
    (d,) = r.diagnostics
    assert d.code == "unknown-function" and d.severity == pb2.Diagnostic.SEVERITY_ERROR


def test_convert_diagnostics_are_located(channel, pb2):
    r = convert(channel, pb2, UNCONVERTIBLE, filename="u.py")
    (d,) = r.diagnostics
    assert d.severity == pb2.Diagnostic.SEVERITY_WARNING
    assert d.code == "unsupported-construct"
    assert "yield" in d.message and "gen" in d.message and d.hint
    assert (d.location.file, d.location.line, d.location.column) == ("u.py", 3, 9)
    assert "def gen(n):\n    for i in range(n):\n        yield i\n" in r.code  # left as written
    assert "@sg__.converted(sg__source_map__)\ndef keep(x):" in r.code
    compiles(r.code)
    r = convert(channel, pb2, "def h(a):\n    tmp__ = a\n    return tmp__\n", filename="r.py")
    (d,) = r.diagnostics
    assert d.code == "reserved-name" and (d.location.line, d.location.column) == (2, 5)
    # still serving
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def test_convert_syntax_error_like_parse(channel, pb2):
    bad = "def f(:\n    pass\n"
    with pytest.raises(grpc.RpcError) as ce:
        convert(channel, pb2, bad, filename="bad.py")
    with pytest.raises(grpc.RpcError) as pe:
        rpc(channel, "Parse", pb2.ParseRequest(source=bad, filename="bad.py"), pb2.ParseReply)
    assert ce.value.code() == pe.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert ce.value.details() == pe.value.details() == "bad.py:1:7: invalid syntax"
    assert dict(ce.value.trailing_metadata()) == dict(pe.value.trailing_metadata())
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def stagctl(*args):
    return subprocess.run([harness.stagctl_bin(), *args], capture_output=True, text=True, timeout=30,
                          env=harness.base_env(), stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("mode", ["addr", "local"])
def test_stagctl_convert(daemon, tmp_path, mode):
    where = ["--local"] if mode == "local" else ["--addr", daemon.addr]
    src = tmp_path / "m.py"
    src.write_text(SOURCE)
    r = stagctl(*where, "convert", str(src))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# Converted by stagd") and "sg__.for_stmt(" in r.stdout and r.stderr == ""
    compiles(r.stdout)
    r = stagctl(*where, "convert", str(src), "--style", "snek", "--function", "f")
    assert r.returncode == 0 and "sg__.for__(" in r.stdout and r.stdout.count("@sg__.converted(") == 1
    compiles(r.stdout)
    r = stagctl(*where, "convert", str(src), "--style", "tf")
    assert r.returncode == 2 and "--style expects autograph or snek" in r.stderr
    u = tmp_path / "u.py"
    u.write_text(UNCONVERTIBLE)
    r = stagctl(*where, "convert", str(u))
    assert r.returncode == 0
    assert r.stderr.splitlines()[0] == (f"{u}:3:9: warning: function 'gen' is not converted: it contains "
                                        "'yield' (a generator) [unsupported-construct]")
    assert r.stderr.splitlines()[1].startswith("  hint: ")
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    r = stagctl(*where, "convert", str(bad))
    assert r.returncode == 1 and r.stderr.strip() == f"{bad}:1:7: error: invalid syntax"
    r = stagctl(*where, "convert", str(src), "--function", "nope")
    assert r.returncode == 1 and "[unknown-function]" in r.stderr


def test_convert_stdlib_sample_compiles(channel, pb2):
    """Real-world code: every 25th module of CPython 3.12's stdlib converts (both
    styles) without an error status and the result compiles."""
    if not os.path.exists(CPYTHON312):
        pytest.fail(f"the CPython 3.12 oracle {CPYTHON312} is missing (pyenv install 3.12.1)")
    root = subprocess.run([CPYTHON312, "-c", "import os, ast; print(os.path.dirname(ast.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    files = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".py"))[::25]
    assert len(files) >= 6
    checker = ("import sys, json\nfor name, code in json.load(sys.stdin):\n"
               "    compile(code, name, 'exec')\nprint('ok')")
    batch = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            src = fh.read()
        for style in (pb2.STYLE_AUTOGRAPH, pb2.STYLE_SNEK):
            r = convert(channel, pb2, src, style=style, filename=f)
            assert all(d.location.line >= 1 for d in r.diagnostics)
            batch.append([f"{f}[{style}]", r.code])
    r = subprocess.run([CPYTHON312, "-c", checker], input=json.dumps(batch), capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


STAR_SOURCE = '''import math


def depth(n):
    """How deep plain recursion goes (issue 21: the runtime's frames must not cut it)."""
    if n == 0:
        return 0
    return 1 + depth(n - 1)


def grow(k):
    out = []
    for i in range(k):
        if i % 2:
            out.append(i)
    return out


_private = 1
VALUE = 2
'''


def _exec_module(code, name):
    import types
    mod = types.ModuleType(name)
    exec(compile(code, name + ".py", "exec"), mod.__dict__)
    return mod


def _star(mod):
    """The names `from mod import *` binds."""
    names = getattr(mod, "__all__", None)
    return sorted(names if names is not None else [n for n in vars(mod) if not n.startswith("_")])


@pytest.mark.parametrize("style", ["autograph", "snek"])
def test_converted_module_on_plain_values_star_import_and_recursion(channel, pb2, style):
    """A converted module exports what the original exports (`from m import *` skips the
    runtime's names, an `__all__` of its own is kept), and its functions recurse as deep
    as the originals: at least 900 of the default limit of 1000 frames."""
    import sys
    st = pb2.STYLE_AUTOGRAPH if style == "autograph" else pb2.STYLE_SNEK
    r = convert(channel, pb2, STAR_SOURCE, style=st, filename="star.py")
    assert not r.diagnostics
    orig = _exec_module(STAR_SOURCE, "star_orig")
    conv = _exec_module(r.code, "star_conv")
    assert "sg__" in vars(conv)
    assert _star(conv) == _star(orig) == ["VALUE", "depth", "grow", "math"]
    own = convert(channel, pb2, STAR_SOURCE + "__all__ = ['grow']\n", style=st, filename="star.py")
    assert _star(_exec_module(own.code, "star_own")) == ["grow"]
    assert conv.grow(7) == orig.grow(7) == [1, 3, 5]
    # the converted body (its helpers close over the loop's variables) is a function of
    # its own: the plain path makes no cells (they cost every call; bench/plain_speed.py)
    assert conv.grow.__code__.co_cellvars == orig.grow.__code__.co_cellvars == ()

    def deepest(fn):
        lo, hi = 0, sys.getrecursionlimit()
        while lo < hi:  # the largest n that fn(n) reaches
            mid = (lo + hi + 1) // 2
            try:
                fn(mid)
                lo = mid
            except RecursionError:
                hi = mid - 1
        return lo

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        reached_orig, reached_conv = deepest(orig.depth), deepest(conv.depth)
    finally:
        sys.setrecursionlimit(limit)
    assert reached_conv >= 900 and reached_conv >= reached_orig - 10, (reached_orig, reached_conv)
