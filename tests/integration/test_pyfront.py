# SPDX-License-Identifier: Apache-2.0
"""test_pyfront.py — Python staged straight to the graph in the daemon (issue 27,
docs/pyfront.md), end to end through `stagctl` against a daemon that has no Python on
its path (empty PYTHONPATH, an interpreter that does not exist):

* the corpus (pyfront_corpus.py, >100 functions): `stagctl run pyfront_corpus.py
  --entry NAME --args JSON` equals CPython running the same function on the same
  arguments (types too: int, float, bool, tuples, arrays and their dtypes), and
  `stagctl grad ... --wrt I --args JSON` equals central finite differences;
* every construct outside the subset is a located error naming it (exit 1), errors at
  run time carry the Python line, dumps show the Python names and lines;
* the editor's stagd/graph stages an in-subset function with no helper process (the
  configured interpreter does not exist) and still falls back to it for the rest;
* stagd.stage_source in the Python client.
"""
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import harness

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "pyfront_corpus.py"
sys.path.insert(0, str(HERE))
import pyfront_corpus as corpus  # noqa: E402

NO_PYTHON = {"PYTHONPATH": "", "STAGD_PYTHON": "/nonexistent/python3"}


@pytest.fixture(scope="module")
def addr(stagd_bin):
    """A daemon that could not run Python if it tried."""
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--workers", "4"], env=harness.base_env(**NO_PYTHON))
    yield d.addr
    rc = d.terminate()
    assert rc == 0, "\n".join(d.log.lines[-30:])
    assert not harness.sanitizer_reports(d.log.text())


def stagctl(addr, *args, timeout=60):
    return subprocess.run([harness.stagctl_bin(), "--addr", addr, *args], capture_output=True, text=True,
                          timeout=timeout, env=harness.base_env(**NO_PYTHON))


# ----------------------------------------------------------------- JSON values

def to_json(v):
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, tuple):
        return {"tuple": [to_json(x) for x in v]}
    if isinstance(v, np.ndarray):
        return {"dtype": str(v.dtype), "shape": list(v.shape), "data": v.ravel().tolist()}
    raise TypeError(f"no JSON form for {v!r}")


def from_json(j):
    """stagd's result → (kind, value): kinds 'bool', 'int', 'float', 'tuple', 'array'."""
    if isinstance(j, bool):
        return ("bool", j)
    if isinstance(j, int):
        return ("int", j)
    if isinstance(j, float) or j in ("nan", "inf", "-inf"):
        return ("float", float(j))
    if isinstance(j, dict) and "tuple" in j:
        return ("tuple", [from_json(x) for x in j["tuple"]])
    if isinstance(j, dict) and "dtype" in j:
        data = [float(x) if isinstance(x, str) else x for x in j["data"]]
        return ("array", np.array(data, dtype=j["dtype"]).reshape(j["shape"]))
    raise AssertionError(f"unexpected result {j!r}")


def same(want, got, path="result"):
    """CPython's value `want` against stagd's (kind, value): a NumPy scalar may come back
    as the Python number or the 0-d array of its dtype (np.float64 is a float)."""
    kind, v = got
    if isinstance(want, tuple):
        assert kind == "tuple" and len(v) == len(want), f"{path}: {got} != {want!r}"
        for i, (w, g) in enumerate(zip(want, v)):
            same(w, g, f"{path}[{i}]")
        return
    if isinstance(want, np.generic):
        if kind == "array":
            assert v.dtype == want.dtype and v.shape == (), f"{path}: {v!r} != {want!r}"
            v = v[()]
        want = want.item()
    elif isinstance(want, np.ndarray):
        assert kind == "array", f"{path}: {got} != array {want!r}"
        assert v.dtype == want.dtype and v.shape == want.shape, f"{path}: {v.dtype}{v.shape} != {want.dtype}{want.shape}"
        tol = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(v, want, rtol=tol, atol=tol, err_msg=path)
        return
    elif isinstance(want, bool):
        assert kind == "bool" and v == want, f"{path}: {got} != {want!r}"
        return
    elif isinstance(want, int):
        assert kind == "int" and v == want, f"{path}: {got} != {want!r}"
        return
    else:
        assert kind == "float", f"{path}: {got} != float {want!r}"
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(v), f"{path}: {v} != nan"
    else:
        assert v == pytest.approx(want, rel=1e-12, abs=1e-12), f"{path}: {v!r} != {want!r}"


def run(addr, name, args, *extra):
    r = stagctl(addr, "run", str(CORPUS), "--entry", name, "--args", json.dumps([to_json(a) for a in args]), *extra)
    assert r.returncode == 0, f"{name}{args!r}: exit {r.returncode}: {r.stderr}"
    return from_json(json.loads(r.stdout))


def expected(name, args):
    f = corpus.ORACLE.get(name) or getattr(corpus, name)
    return f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])


CASES = [(n, a) for n, cases in corpus.CASES.items() for a in cases]


def test_the_corpus_is_large_enough():
    fns = [n for n, v in vars(corpus).items() if callable(v) and getattr(v, "__module__", "") == corpus.__name__
           and not n.startswith("_")]
    assert len(fns) >= 100, len(fns)
    missing = sorted(set(fns) - set(corpus.CASES) - {"make_adder", "apply_twice", "compose", "lambda_module"})
    assert not missing, f"functions without cases: {missing}"


def test_corpus_equals_cpython(addr):
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda c: run(addr, c[0], c[1]), CASES))
    for (name, args), g in zip(CASES, got):
        same(expected(name, args), g, f"{name}{args!r}")


# ------------------------------------------------------------------ gradients

def numeric_grad(name, args, i):
    """Central differences of the corpus function w.r.t. argument i, in float64."""
    f = corpus.ORACLE.get(name) or getattr(corpus, name)
    x = args[i]

    def at(v):
        a = list(args)
        a[i] = v
        out = f(*a)
        return float(np.sum(out))

    if isinstance(x, np.ndarray):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            h = 1e-6 * max(1.0, abs(x[k]))
            p, m = x.copy(), x.copy()
            p[k] += h
            m[k] -= h
            g[k] = (at(p) - at(m)) / (2 * h)
        return g
    h = 1e-6 * max(1.0, abs(x))
    return (at(x + h) - at(x - h)) / (2 * h)


GRAD_CASES = [(n, a, i) for n, wrt in corpus.GRAD.items() for a in corpus.CASES[n] for i in wrt
              if isinstance(a[i], float) or (isinstance(a[i], np.ndarray) and a[i].dtype == np.float64)]


def test_the_gradient_cases_cover_the_forms():
    assert len(GRAD_CASES) >= 60, len(GRAD_CASES)


def test_corpus_gradients_equal_finite_differences(addr, pb2):
    """Through the RPCs (Stage with language PYTHON, Grad, Execute): one gradient program
    per function and parameter; `stagctl grad --args` is checked below on a few."""
    import grpc
    channel = grpc.insecure_channel(addr)
    src = CORPUS.read_text()
    ids = {}

    def grad_id(name, i):
        if (name, i) not in ids:
            st = harness.rpc(channel, "Stage", pb2.StageRequest(source=src, filename=str(CORPUS), entry=name,
                                                                language=pb2.SOURCE_LANGUAGE_PYTHON),
                             pb2.StageReply, timeout=60)
            ids[name, i] = harness.rpc(channel, "Grad", pb2.GradRequest(graph_id=st.graph_id, entry=name, wrt=[i]),
                                       pb2.GradReply, timeout=60).graph_id
        return ids[name, i]

    for name, args, i in GRAD_CASES:
        r = harness.rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=grad_id(name, i), args_json=json.dumps(
            [to_json(a) for a in args])), pb2.ExecuteReply, timeout=60)
        kind, v = from_json(json.loads(r.result_json))
        want = numeric_grad(name, args, i)
        where = f"d {name}{args!r} / d arg {i}"
        if isinstance(want, np.ndarray):
            assert kind == "array" and v.shape == want.shape, f"{where}: {kind} {v!r}"
        else:
            assert kind in ("float", "int", "array"), f"{where}: {kind} {v!r}"  # AD keeps int factors int
        np.testing.assert_allclose(np.asarray(v, dtype=np.float64), want, rtol=1e-5, atol=1e-6, err_msg=where)
    channel.close()


@pytest.mark.parametrize("name,args,wrt", [("mlp", corpus.CASES["mlp"][0], 1), ("rec_power", (1.1, 13), 0),
                                           ("closure_reads_param", (2.0, 0.5), 1)])
def test_stagctl_grad_with_args_prints_the_gradient(addr, name, args, wrt):
    r = stagctl(addr, "grad", str(CORPUS), "--entry", name, "--wrt", str(wrt), "--args",
                json.dumps([to_json(a) for a in args]))
    assert r.returncode == 0, r.stderr
    kind, v = from_json(json.loads(r.stdout))
    np.testing.assert_allclose(np.asarray(v, dtype=np.float64), numeric_grad(name, args, wrt), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------- errors

UNSUPPORTED = [
    ("def f(x):\n    return [x, 1]\n", 2, 12, "a list display"),
    ("def f(x):\n    return {'a': x}\n", 2, 12, "a dict display"),
    ("def f(x):\n    return [i for i in x]\n", 2, 12, "a list comprehension"),
    ("def f(x):\n    return (i for i in x)\n", 2, 12, "a generator expression"),
    ("def f(x):\n    y = {1}\n    return y\n", 2, 9, "a set display"),
    ("def f(x):\n    x[0] = 1.0\n    return x\n", 2, 5, "assignment to an item"),
    ("def f(x):\n    x.a = 1.0\n    return x\n", 2, 5, "assignment to an attribute"),
    ("def f(x):\n    try:\n        return x\n    except ValueError:\n        return 0\n", 2, 5, "'try'"),
    ("def f(x):\n    with x:\n        pass\n    return x\n", 2, 5, "'with'"),
    ("def f(x):\n    yield x\n", 2, 5, "'yield'"),
    ("async def f(x):\n    return x\n", 1, 1, "'async def'"),
    ("def f(x):\n    class C:\n        pass\n    return x\n", 2, 5, "a class definition"),
    ("def f(x):\n    global G\n    G = x\n    return x\n", 2, 5, "'global'"),
    ("def f(x):\n    def g():\n        nonlocal x\n        x = 1\n    return x\n", 3, 9, "'nonlocal'"),
    ("def f(x):\n    del x\n    return 1\n", 2, 5, "'del'"),
    ("def f(x):\n    import math\n    return x\n", 2, 5, "an import inside a function"),
    ("def f(x):\n    match x:\n        case 1:\n            return 1\n    return 0\n", 2, 5, "'match'"),
    ("def f(x):\n    return (y := x)\n", 2, 13, "assignment expression"),
    ("def f(x):\n    return f'{x}'\n", 2, 12, "an f-string"),
    ("def f(x):\n    return x if x is 2 else 0\n", 2, 17, "'is'"),
    ("def f(x):\n    return x in (1, 2)\n", 2, 12, "'in'"),
    ("def f(x):\n    return x << 2\n", 2, 12, "the operator '<<'"),
    ("def f(x):\n    return ~x\n", 2, 12, "the operator '~'"),
    ("def f(x):\n    return 1j * x\n", 2, 12, "complex numbers"),
    ("def f(*xs):\n    return 0\n", 1, 8, "*xs parameters"),
    ("def f(x, **kw):\n    return 0\n", 1, 12, "**kw parameters"),
    ("def f(x, *, k):\n    return 0\n", 1, 13, "keyword-only parameters"),
    ("@staticmethod\ndef f(x):\n    return x\n", 1, 2, "decorators"),
    ("def f(x):\n    return sorted(x)\n", 2, 12, "the builtin sorted()"),
    ("def f(x):\n    return x.append(1)\n", 2, 12, "the method '.append()'"),
    ("def f(x):\n    return x.dtype\n", 2, 12, "the attribute '.dtype'"),
    ("import math\ndef f(x):\n    return math.exp(x)\n", 3, 12, "math.exp() is outside the subset"),
    ("import numpy as np\ndef f(x):\n    return np.linalg.norm(x)\n", 3, 12, "numpy.linalg.norm()"),
    ("def f(x):\n    return 99999999999999999999\n", 2, 12, "does not fit in 64 bits"),
    ("def f(x):\n    y = x\n    g = lambda: y\n    y = 2\n    return g()\n", 3, 17, "assigns again"),
    ("def f(x):\n    g = lambda: z\n    z = 2\n    return g()\n", 2, 17, "not assigned on every path before"),
    ("def f(n):\n    for i in range(n):\n        g = lambda: i\n    return g()\n", 3, 21, "assigns again"),
    ("def f(x):\n    if x:\n        y = 1\n    return y\n", 4, 12, "not assigned on every path"),
    ("def f(n):\n    for i in range(n):\n        pass\n    return i\n", 4, 12, "not assigned on every path"),
    ("import numpy as np\nW = np.ones(3)\ndef f(x):\n    return W * x\n", 4, 12, "not a constant"[:0] + "other than a constant"),
    ("class C:\n    pass\ndef f(x):\n    return C\n", 4, 12, "a statement the daemon does not run"),
    ("K = 1\nK = 2\ndef f(x):\n    return K\n", 4, 12, "bound more than once"),
    ("def f(n):\n    for i in range(0, n, n):\n        pass\n    return 0\n", 2, 26, "range() with a step"),
    ("def f(x):\n    raise\n", 2, 5, "a bare 'raise'"),
    ("def f(x):\n    return range(x)\n", 2, 12, "only as the iterable of a for loop"),
]


@pytest.mark.parametrize("src,line,col,what", UNSUPPORTED, ids=[u[3][:40] for u in UNSUPPORTED])
def test_constructs_outside_the_subset_are_located(addr, tmp_path, src, line, col, what):
    p = tmp_path / "prog.py"
    p.write_text(src)
    r = stagctl(addr, "--json-errors", "run", str(p), "--entry", "f", "--args", "[1]")
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    e = json.loads(r.stderr.strip().splitlines()[-1])
    assert what in e["message"], e
    assert (e["file"], e["line"], e["column"]) == (str(p), line, col), e
    assert e["status"] == "INVALID_ARGUMENT"


def test_unsupported_has_its_reason_and_the_daemon_serves_on(addr, tmp_path):
    p = tmp_path / "prog.py"
    p.write_text("def f(x):\n    return [x]\n\ndef g(x):\n    return x + 1\n")
    r = stagctl(addr, "--json-errors", "run", str(p), "--entry", "f", "--args", "[1]")
    assert json.loads(r.stderr.strip().splitlines()[-1])["reason"] == "unsupported"
    # g is in the subset: what f does is not staged for g (functions lowered on demand)
    r = stagctl(addr, "run", str(p), "--entry", "g", "--args", "[1]")
    assert (r.returncode, r.stdout.strip()) == (0, "2")


RUNTIME_ERRORS = [
    ("def f(x):\n    assert x > 0, 'x must be positive'\n    return x\n", "[-1]", 2, "x must be positive"),
    ("def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x\n", "[-1]", 3, "ValueError: negative"),
    ("def f(x):\n    return 1 // x\n", "[0]", 2, "by zero"),
    ("def f(x):\n    return 1.0 / x\n", "[0.0]", 2, "by zero"),
    ("def f(t):\n    a, b = t\n    return a\n", '[{"tuple":[1,2,3]}]', 2, "cannot unpack"),
    ("def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n", "[2.5]", 3,
     "'float' object cannot be interpreted as an integer"),
    ("import numpy as np\ndef f(x):\n    return int(np.sqrt(x))\n", "[-1.0]", 3, "cannot convert float NaN to integer"),
    ("def f(x):\n    return float(x)\n", "[[1.0, 2.0]]", 2, "only size-1 arrays"),
    ("def f(x):\n    if x:\n        return 1\n    return 0\n", "[[1.0, 2.0]]", 2, "condition"),
    ("import numpy as np\ndef f(a, b):\n    return a @ b\n", "[[[1.0,2.0]], [[1.0,2.0]]]", 3, "matmul"),
    ("def f(x):\n    return x[1, 2]\n", "[[1.0, 2.0, 3.0]]", 2, ""),
]


@pytest.mark.parametrize("src,args,line,what", RUNTIME_ERRORS, ids=[r[3][:30] or "index" for r in RUNTIME_ERRORS])
def test_errors_while_running_carry_the_python_line(addr, tmp_path, src, args, line, what):
    p = tmp_path / "prog.py"
    p.write_text(src)
    r = stagctl(addr, "--json-errors", "run", str(p), "--entry", "f", "--args", args)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    e = json.loads(r.stderr.strip().splitlines()[-1])
    assert what in e["message"], e
    assert (e["file"], e["line"]) == (str(p), line), e


def test_errors_in_python_and_in_stagd_match_cpython(tmp_path):
    """The runtime errors above are errors in CPython too (so no value is made up)."""
    for src, args, _line, _what in RUNTIME_ERRORS:
        ns = {}
        exec(compile(src, "prog.py", "exec"), ns)
        vals = json.loads(args)
        vals = [tuple(v["tuple"]) if isinstance(v, dict) else np.array(v) if isinstance(v, list)
                else float(v) if isinstance(v, str) else v for v in vals]
        with pytest.raises(Exception):
            with np.errstate(all="raise"):
                ns["f"](*vals)


# --------------------------------------------------------------------- dumps

def test_dumps_show_python_names_and_lines(addr):
    r = stagctl(addr, "stage", str(CORPUS), "--entry", "newton_sqrt")
    assert r.returncode == 0, r.stderr
    assert "graph @newton_sqrt(%a_0_0)" in r.stdout and f"; {CORPUS}:" in r.stdout
    src = CORPUS.read_text().splitlines()
    line = next(i for i, l in enumerate(src, 1) if l.startswith("def newton_sqrt"))
    assert f"; {line + 2}:" in r.stdout and f"; {line + 3}:" in r.stdout, r.stdout  # the for, its body
    assert "%x_" in r.stdout  # the loop variable keeps its name
    for fmt in ("dot", "json", "sexpr"):
        d = stagctl(addr, "stage", str(CORPUS), "--entry", "newton_sqrt", "--dump", fmt)
        assert d.returncode == 0 and d.stdout.strip(), d.stderr
    j = json.loads(stagctl(addr, "stage", str(CORPUS), "--entry", "newton_sqrt", "--dump", "json").stdout)
    assert j["file"] == str(CORPUS)
    assert {n.get("line") for g in j["graphs"] for n in g["nodes"]} >= {line + 2, line + 3}
    g = stagctl(addr, "grad", str(CORPUS), "--entry", "newton_sqrt", "--wrt", "0")
    assert g.returncode == 0 and "graph @grad_newton_sqrt" in g.stdout and f"; {CORPUS}:" in g.stdout, g.stdout


def test_sexpr_dump_of_python_restages_to_the_same_graph(addr, tmp_path):
    """The S-expression dump of a staged .py function is a program of its own: staged
    from it, the same id and the same results (the run-time benchmark's baseline)."""
    for name, args in (("rnn", corpus.CASES["rnn"][0]), ("collatz", (27,)), ("nested_mutual", (6,))):
        sx = stagctl(addr, "stage", str(CORPUS), "--entry", name, "--dump", "sexpr").stdout
        p = tmp_path / f"{name}.sexp"
        p.write_text(sx)
        a = json.dumps([to_json(x) for x in args])
        py = stagctl(addr, "run", str(CORPUS), "--entry", name, "--args", a)
        sx_run = stagctl(addr, "run", str(p), "--entry", name, "--args", a)
        assert py.returncode == 0 and sx_run.returncode == 0, (py.stderr, sx_run.stderr)
        assert json.loads(py.stdout) == json.loads(sx_run.stdout)


def test_grad_without_args_prints_the_gradient_graph_and_checks_wrt(addr):
    r = stagctl(addr, "grad", str(CORPUS), "--entry", "mlp", "--wrt", "7")
    assert r.returncode == 1 and "wrt index 7 out of range" in r.stderr and f"{CORPUS}:" in r.stderr, r.stderr
    both = stagctl(addr, "grad", str(CORPUS), "--entry", "add_mul", "--args", "[1.0, 2.0]")
    assert json.loads(both.stdout) == {"tuple": [1.0, 2.0]}


def test_grad_of_a_function_with_more_than_one_element_is_refused(addr):
    """grad seeds a scalar: a tensor- or tuple-valued function is a located error, never
    the gradient of its sum (nor a tensor where the parameter is a number)."""
    for name, args, what in (("tensor_scalar_mix", corpus.CASES["tensor_scalar_mix"][0], "must return a scalar"),
                             ("while_float", (100.0,), "got a tuple")):
        r = stagctl(addr, "grad", str(CORPUS), "--entry", name, "--wrt", "1" if name == "tensor_scalar_mix" else "0",
                    "--args", json.dumps([to_json(a) for a in args]))
        assert r.returncode == 1 and what in r.stderr and f"{CORPUS}:" in r.stderr, (name, r.stdout, r.stderr)


# ---------------------------------------------------------------------- editor

SOURCE = """import numpy as np

def smooth(x, w):
    h = np.tanh(x * w)
    for _ in range(3):
        h = h * 0.5 + 1.0
    return h

def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)

def listy(x):
    return [x][0]
"""


def test_editor_graph_without_a_python_process():
    s = harness.StdioLsp(env=harness.base_env(**NO_PYTHON))
    try:
        init = s.request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                        "initializationOptions": {"python": "/nonexistent/python3"}})
        assert "result" in init, init
        s.notify("initialized", {})
        uri = "file:///work/editor_model.py"
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": SOURCE}})
        r = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "smooth"})
        assert "result" in r, r
        g = r["result"]
        assert g["stagedBy"] == "daemon" and g["params"] == ["x", "w"], g
        assert "graph @smooth(%x_0_0, %w_0_1)" in g["text"] and "; /work/editor_model.py:3:1" in g["text"], g["text"]
        out = s.request("stagd/execute", {"graphId": g["graphId"], "argsJson": "[0.5, 2.0]"})
        assert json.loads(out["result"]["resultJson"]) == pytest.approx(
            ((math.tanh(1.0) * 0.5 + 1.0) * 0.5 + 1.0) * 0.5 + 1.0)
        # a static argument, by position (inside power)
        p = s.request("stagd/graph", {"textDocument": {"uri": uri}, "position": {"line": 10, "character": 4},
                                      "args": {"n": 3}, "format": "dot"})
        assert p["result"]["function"] == "power" and p["result"]["params"] == ["x"], p
        assert p["result"]["text"].startswith("digraph")
        out = s.request("stagd/execute", {"graphId": p["result"]["graphId"], "argsJson": "[2.0]"})
        assert json.loads(out["result"]["resultJson"]) == 8.0
        # outside the subset: the helper's turn, which cannot start here
        e = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "listy"})
        assert "cannot start '/nonexistent/python3'" in e["error"]["message"], e
        # a located error of the daemon's own staging
        bad = s.request("stagd/graph", {"textDocument": {"uri": uri}, "function": "power", "args": {"m": 1}})
        assert bad["error"]["data"]["line"] == 9 and "no parameter named 'm'" in bad["error"]["message"], bad
    finally:
        s.close()


# ------------------------------------------------------------ Python client

def test_stage_source_in_the_python_client(addr):
    import stagd
    client = stagd.connect(addr, autostart=False)
    try:
        prog = stagd.stage_source(CORPUS.read_text(), "rnn", filename=str(CORPUS))
        args = corpus.CASES["rnn"][0]
        assert prog(*args) == pytest.approx(corpus.rnn(*args))
        assert "graph @rnn(" in prog.dump()
        g = prog.grad(wrt=1)
        np.testing.assert_allclose(np.asarray(g(*args)), numeric_grad("rnn", args, 1), rtol=1e-5, atol=1e-6)
        with pytest.raises(stagd.InvalidArgument) as e:
            stagd.stage_source("def f(x):\n    return [x]\n", "f")
        assert e.value.reason == "unsupported" and "a list display" in str(e.value)
    finally:
        client.close()
        stagd.set_default_client(None)
