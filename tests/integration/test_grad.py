# SPDX-License-Identifier: Apache-2.0
"""test_grad.py — the Grad RPC and `stagctl grad` against the real daemon: gradient
graphs that execute to the right numbers (Myia Figure 1), --wrt selection, dumps, and
located errors for a bad wrt index, a non-differentiable primitive and an unknown def."""
import json
import subprocess

import grpc
import pytest

import harness
from harness import rpc

FIG1 = "(def f (x y) (* (** x 3) (** y 4)))\n"


def stage(channel, pb2, src, entry="", filename="g.sexp"):
    return rpc(channel, "Stage", pb2.StageRequest(sexpr=src, filename=filename, entry=entry),
               pb2.StageReply)


def execute(channel, pb2, gid, args):
    r = rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json=args), pb2.ExecuteReply)
    return json.loads(r.result_json)


def numbers(v):
    if isinstance(v, dict) and "tuple" in v:
        return [numbers(x)[0] for x in v["tuple"]]
    if isinstance(v, dict) and "data" in v:
        return list(v["data"])
    return [v]


def test_grad_rpc_fig1(channel, pb2):
    st = stage(channel, pb2, FIG1)
    r = rpc(channel, "Grad", pb2.GradRequest(graph_id=st.graph_id, entry="f", wrt=[0]), pb2.GradReply)
    assert r.graph_id and r.graph_id != st.graph_id
    assert "grad_f" in r.dump
    assert numbers(execute(channel, pb2, r.graph_id, "[2.0, 3.0]")) == [972.0]
    both = rpc(channel, "Grad", pb2.GradRequest(graph_id=st.graph_id, entry="f"), pb2.GradReply)
    assert numbers(execute(channel, pb2, both.graph_id, "[2.0, 3.0]")) == [972.0, 864.0]


TREE_PROD = """(def tree_prod (base tree)
  (if (getattr tree is_empty) base
      (let l (tree_prod base (getattr tree left))
        (let r (tree_prod base (getattr tree right))
          (* (* l r) (getattr tree value))))))
"""


def test_grad_rpc_through_recursion_and_closures(channel, pb2):
    """The Grad RPC re-stages the program's dump: control flow, records, recursion and
    closures survive it (docs/ad.md)."""
    st = stage(channel, pb2, TREE_PROD)
    r = rpc(channel, "Grad", pb2.GradRequest(graph_id=st.graph_id, entry="tree_prod", wrt=[0]),
            pb2.GradReply)
    e = {"record": {"is_empty": True, "value": 0.0, "left": None, "right": None}}
    tree = {"record": {"is_empty": False, "value": 3.0,
                       "left": {"record": {"is_empty": False, "value": 2.0, "left": e, "right": e}},
                       "right": e}}
    assert numbers(execute(channel, pb2, r.graph_id, json.dumps([1.5, tree]))) == [18 * 1.5 * 1.5]
    hof = stage(channel, pb2, "(def twice (f x) (f (f x)))\n"
                              "(def g (x y) (twice (lambda (z) (* z y)) x))\n", entry="g")
    r = rpc(channel, "Grad", pb2.GradRequest(graph_id=hof.graph_id, entry="g"), pb2.GradReply)
    assert numbers(execute(channel, pb2, r.graph_id, "[2.0, 3.0]")) == [9.0, 12.0]


def test_grad_rpc_errors(channel, pb2):
    st = stage(channel, pb2, FIG1)
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Grad", pb2.GradRequest(graph_id=st.graph_id, entry="f", wrt=[5]), pb2.GradReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "out of range" in e.value.details() and ":1:1:" in e.value.details(), e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Grad", pb2.GradRequest(graph_id=st.graph_id, entry="nope"), pb2.GradReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no def named 'nope'" in e.value.details()
    eff = stage(channel, pb2, "(def h (x) (begin (print x) (* x x)))\n")
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Grad", pb2.GradRequest(graph_id=eff.graph_id, entry="h"), pb2.GradReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not differentiable" in e.value.details()
    md = dict(e.value.trailing_metadata())
    assert md.get("stagd-line") and md.get("stagd-column"), md
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Grad", pb2.GradRequest(graph_id="gnope", entry="f"), pb2.GradReply)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    # still serving
    assert rpc(channel, "Version", pb2.VersionRequest(), pb2.VersionReply).api == "stagd.v1"


def stagctl(*args):
    return subprocess.run([harness.stagctl_bin(), *args], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


def test_stagctl_grad(daemon, tmp_path):
    f = tmp_path / "fig1.sexp"
    f.write_text(FIG1)
    r = stagctl("--addr", daemon.addr, "grad", str(f), "--entry", "f", "--wrt", "1", "--dump", "sexpr")
    assert r.returncode == 0, r.stderr
    assert "(def grad_f" in r.stdout
    r = stagctl("--addr", daemon.addr, "grad", str(f), "--entry", "f", "--wrt", "7")
    assert r.returncode != 0
    assert "out of range" in r.stderr, r.stderr
    g = tmp_path / "eff.sexp"
    g.write_text("(def h (x) (begin (print x) (* x x)))\n")
    r = stagctl("--addr", daemon.addr, "grad", str(g), "--entry", "h")
    assert r.returncode != 0
    assert "not differentiable" in r.stderr, r.stderr
