# SPDX-License-Identifier: Apache-2.0
"""test_rpc_methods.py — Parse, Stage, Execute and DumpGraph through the running
daemon (gRPC), stagctl (--addr and --local) and LSP: real answers, located errors,
and the daemon serving on after each bad request. CPython 3.12 is the oracle for
Parse; the SEXPR.md examples give the expected run results."""
import json
import os
import struct
import subprocess

import grpc
import pytest

import harness
from harness import rpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "tests", "graph", "examples")
CPYTHON312 = "/root/.pyenv/versions/3.12.1/bin/python3"

SOURCE = "def f(x, *a, k=1):\n    if x > 0:\n        return [i * k for i in a]\n    return x\n"


def cpython_dump(src, attrs=False):
    if not os.path.exists(CPYTHON312):
        pytest.fail(f"the CPython 3.12 oracle {CPYTHON312} is missing (pyenv install 3.12.1)")
    code = f"import ast,sys; print(ast.dump(ast.parse(sys.stdin.read()), include_attributes={attrs}))"
    return subprocess.run([CPYTHON312, "-c", code], input=SOURCE, capture_output=True, text=True,
                          check=True).stdout.rstrip("\n")


def stagctl(*args):
    return subprocess.run([harness.stagctl_bin(), *args], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("attrs", [False, True])
def test_parse_matches_cpython(channel, pb2, attrs):
    r = rpc(channel, "Parse", pb2.ParseRequest(source=SOURCE, filename="f.py", include_attributes=attrs,
                                               want_json=True, want_unparse=True), pb2.ParseReply)
    assert r.dump == cpython_dump(SOURCE, attrs)
    tree = json.loads(r.json)
    assert tree["_type"] == "Module" and tree["body"][0]["_type"] == "FunctionDef"
    assert tree["body"][0]["name"] == "f"
    # the unparsed text parses back to the same AST (positions aside)
    again = rpc(channel, "Parse", pb2.ParseRequest(source=r.unparsed), pb2.ParseReply)
    assert again.dump == cpython_dump(SOURCE, False)


def test_parse_syntax_error_is_located(channel, pb2):
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Parse", pb2.ParseRequest(source="x = (1,\n", filename="bad.py"), pb2.ParseReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details() == "bad.py:1:5: '(' was never closed"
    md = dict(e.value.trailing_metadata())
    assert md["stagd-file-bin"] == b"bad.py" and md["stagd-line"] == "1" and md["stagd-column"] == "5"
    # still serving
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def stage(channel, pb2, name, *dumps, no_optimize=False):
    with open(os.path.join(EXAMPLES, name)) as f:
        src = f.read()
    return rpc(channel, "Stage", pb2.StageRequest(sexpr=src, filename=name, dumps=list(dumps),
                                                  no_optimize=no_optimize), pb2.StageReply)


@pytest.mark.parametrize("name,args,expected", [
    ("runX.sexp", "[10]", 100),          # Snek Figure 6
    ("aggregate.sexp", "[10]", 55),      # Snek Figure 13
])
def test_stage_and_execute_examples(channel, pb2, name, args, expected):
    st = stage(channel, pb2, name)
    assert st.graph_id
    again = stage(channel, pb2, name)
    assert again.graph_id == st.graph_id  # content-addressed, idempotent
    r = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args_json=args), pb2.ExecuteReply)
    assert json.loads(r.result_json) == expected


def test_execute_with_protobuf_values(channel, pb2):
    st = stage(channel, pb2, "runX.sexp")
    t = pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[3], data=struct.pack("<3f", 1.0, 2.0, -3.0))
    r = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args=[pb2.Value(tensor=t)]),
            pb2.ExecuteReply)
    out = json.loads(r.result_json)
    assert out["dtype"] == "float32" and out["shape"] == [3] and out["data"] == [1.0, 4.0, 9.0]
    bad = pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[3], data=b"\0" * 8)
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args=[pb2.Value(tensor=bad)]),
            pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "args[0]" in e.value.details() and "needs 12 bytes" in e.value.details()
    # Value arguments run as values: the reply carries the binary result too, equal to
    # result_json (the JSON path, for args_json, gives result_json only)
    assert r.result.tensor.dtype == pb2.DTYPE_FLOAT32 and list(r.result.tensor.shape) == [3]
    assert struct.unpack("<3f", r.result.tensor.data) == (1.0, 4.0, 9.0)
    j = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args_json="[2.5]"),
            pb2.ExecuteReply)
    assert json.loads(j.result_json) == 6.25 and j.result.WhichOneof("kind") is None
    s = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args=[pb2.Value(float_value=2.5)]),
            pb2.ExecuteReply)
    assert json.loads(s.result_json) == 6.25 and s.result.float_value == 6.25
    q = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args=[pb2.Value(tensor=t)],
                                                   no_result_json=True), pb2.ExecuteReply)
    assert q.result_json == "" and struct.unpack("<3f", q.result.tensor.data) == (1.0, 4.0, 9.0)
    # a record argument runs on the value path too (test_execute_records.py has more)
    tp = stage(channel, pb2, "tree_prod.sexp")
    leaf = pb2.Value(record=pb2.Record(fields=[pb2.Field(name="is_empty", value=pb2.Value(bool_value=True))]))
    r = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=tp.graph_id, args=[pb2.Value(float_value=2.0), leaf]),
            pb2.ExecuteReply)
    assert json.loads(r.result_json) == 2.0 and r.result.float_value == 2.0


def test_dump_graph_formats(channel, pb2):
    st = stage(channel, pb2, "runX.sexp", pb2.DUMP_FORMAT_SEXPR)
    assert st.dumps[0].format == pb2.DUMP_FORMAT_SEXPR and st.dumps[0].text.startswith("(def runX")
    for fmt, check in [(pb2.DUMP_FORMAT_DOT, lambda t: t.startswith("digraph")),
                       (pb2.DUMP_FORMAT_JSON, lambda t: isinstance(json.loads(t), dict)),
                       (pb2.DUMP_FORMAT_SEXPR, lambda t: t == st.dumps[0].text)]:
        r = rpc(channel, "DumpGraph", pb2.DumpGraphRequest(graph_id=st.graph_id, format=fmt), pb2.DumpGraphReply)
        assert check(r.text), r.text[:200]


def test_unknown_graph_id_and_bad_sexpr(channel, pb2):
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Execute", pb2.ExecuteRequest(graph_id="g0000", args_json="[]"), pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND and "g0000" in e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Stage", pb2.StageRequest(sexpr="(def f (x) (+ x", filename="bad.sexp"), pb2.StageReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details().startswith("bad.sexp:1:")
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Stage", pb2.StageRequest(sexpr="(def f (x) (frobnicate x))", filename="u.sexp"),
            pb2.StageReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "frobnicate" in e.value.details()
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def test_endless_while_hits_the_deadline(channel, pb2):
    src = ("(def spin (x) (getitem (while (lambda (i) (> i -1)) (lambda (i) (tuple (+ i 1))) (tuple x)) 0))")
    st = rpc(channel, "Stage", pb2.StageRequest(sexpr=src), pb2.StageReply)
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args_json="[0]"), pb2.ExecuteReply,
            timeout=0.5)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


@pytest.mark.parametrize("mode", ["local", "addr"])
def test_stagctl_parse_stage_run(daemon, tmp_path, mode):
    where = ["--local"] if mode == "local" else ["--addr", daemon.addr]
    src = tmp_path / "f.py"
    src.write_text(SOURCE)
    r = stagctl(*where, "parse", str(src))
    assert r.returncode == 0 and r.stdout.rstrip("\n") == cpython_dump(SOURCE)
    r = stagctl(*where, "run", os.path.join(EXAMPLES, "runX.sexp"), "--args", "[10]")
    assert r.returncode == 0 and json.loads(r.stdout) == 100
    r = stagctl(*where, "stage", os.path.join(EXAMPLES, "aggregate.sexp"), "--dump", "sexpr")
    assert r.returncode == 0 and "(def aggregate" in r.stdout
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    r = stagctl(*where, "parse", str(bad))
    assert r.returncode == 1
    assert r.stderr.strip() == f"{bad}:1:7: error: invalid syntax"


def test_lsp_parse(lsp):
    r = lsp.request("stagd/parse", {"source": "x = 1\n", "filename": "x.py"})
    assert r["result"]["dump"] == "Module(body=[Assign(targets=[Name(id='x', ctx=Store())], value=Constant(value=1))], type_ignores=[])"
    r = lsp.request("stagd/parse", {"source": "x = (\n", "filename": "x.py"})
    assert r["error"]["code"] == -32000
    assert r["error"]["data"] == {"status": "INVALID_ARGUMENT", "file": "x.py", "line": 1, "column": 5}
