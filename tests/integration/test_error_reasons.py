# SPDX-License-Identifier: Apache-2.0
"""test_error_reasons.py — the daemon's error reasons (the `stagd-reason` trailing
metadata, docs/api.md "Error reasons") pick the client's exception class: each family
(an index or axis out of bounds, shapes that do not broadcast, a staged assert) raises its
class through the daemon, staged and eager, on the CPU and vulkan:0; the class comes from
the reason, never the message's wording; an unknown reason keeps the status code's class;
stagctl --json-errors and LSP error data carry the same reason."""
import json
import subprocess

import grpc
import numpy as np
import pytest

import harness
from harness import rpc
import stagd
from stagd.client import error_from_rpc

DEVICES = ["cpu", "vulkan:0"]


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


# -- the mapping, without a daemon -------------------------------------------------------
class FakeRpcError(grpc.RpcError):
    """What grpc raises for a failed unary call: code, details, trailing metadata."""

    def __init__(self, code, details, trailing=()):
        self._code, self._details, self._trailing = code, details, tuple(trailing)

    def code(self):
        return self._code

    def details(self):
        return self._details

    def trailing_metadata(self):
        return self._trailing


IA = grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("reason,cls,base", [
    ("index_out_of_bounds", stagd.IndexOutOfBounds, IndexError),
    ("shape_mismatch", stagd.ShapeMismatch, ValueError),
])
def test_reason_picks_the_class_whatever_the_message(reason, cls, base):
    # a message that no longer says "out of bounds" or "broadcast" keeps the class...
    e = error_from_rpc(FakeRpcError(IA, "x.py:3:1: reworded entirely", [("stagd-reason", reason)]))
    assert type(e) is cls and isinstance(e, base) and isinstance(e, stagd.InvalidArgument)
    assert e.reason == reason and e.code == IA and e.details == "x.py:3:1: reworded entirely"
    # ...and the old wordings without the metadata are plain InvalidArgument: no regex
    for text in ("getitem: index 7 is out of bounds for axis 0 with size 4",
                 "+: shapes (2) and (3) cannot be broadcast together"):
        e = error_from_rpc(FakeRpcError(IA, text))
        assert type(e) is stagd.InvalidArgument and e.reason is None


def test_assertion_reason_and_unknown_reasons():
    fp = grpc.StatusCode.FAILED_PRECONDITION
    e = error_from_rpc(FakeRpcError(fp, "assertion failed", [("stagd-reason", "assertion")]))
    assert type(e) is stagd.AssertionFailed and isinstance(e, AssertionError)
    assert isinstance(e, stagd.FailedPrecondition)
    e = error_from_rpc(FakeRpcError(fp, "speculation failed", [("stagd-reason", "speculation")]))
    assert type(e) is stagd.SpeculationFailed and isinstance(e, stagd.FailedPrecondition)
    assert not isinstance(e, AssertionError)  # the client falls back; never the program's
    # a reason this client does not know, or one that does not fit the code: the code's class
    e = error_from_rpc(FakeRpcError(IA, "m", [("stagd-reason", "something_new")]))
    assert type(e) is stagd.InvalidArgument and e.reason == "something_new"
    e = error_from_rpc(FakeRpcError(fp, "m", [("stagd-reason", "shape_mismatch")]))
    assert type(e) is stagd.FailedPrecondition
    e = error_from_rpc(FakeRpcError(grpc.StatusCode.NOT_FOUND, "m", [("other", "x")]))
    assert type(e) is stagd.NotFound and e.reason is None


# -- through the daemon -----------------------------------------------------------------
def take_row(x, i):
    return x[i]


def add(x, y):
    return x + y


def product(a, b):
    return a @ b


def write_rows(x, v):
    x[1:3] = v
    return x


def checked(x):
    assert x[0] > 10.0, "the first value is too small"
    return x * 2.0


X = np.arange(12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_staged_families_raise_their_class(device):
    take = stagd.function(take_row, static_argnames=("i",))
    with stagd.device(device):
        with pytest.raises(IndexError) as e:
            take(X, 9)
        assert type(e.value) is stagd.IndexOutOfBounds and e.value.reason == "index_out_of_bounds"
        with pytest.raises(ValueError) as e:
            stagd.function(add)(X, np.ones(4, np.float32))
        assert type(e.value) is stagd.ShapeMismatch and e.value.reason == "shape_mismatch"
        assert "cannot be broadcast together" in str(e.value)
        with pytest.raises(ValueError) as e:
            stagd.function(write_rows)(X, np.ones((3, 3), np.float32))
        assert type(e.value) is stagd.ShapeMismatch and "could not broadcast" in str(e.value)
        with pytest.raises(ValueError) as e:  # matmul's inner dimensions, as NumPy
            stagd.function(product)(X, X)
        assert type(e.value) is stagd.ShapeMismatch and "do not align (3 != 4)" in str(e.value)
        with pytest.raises(ValueError) as e:
            stagd.function(write_rows)(X, np.ones((3, 3), np.float32))
        # the located re-raise at the user's line keeps the class and the reason
        assert e.value.lineno == write_rows.__code__.co_firstlineno + 1
        assert e.value.reason == "shape_mismatch"
        f = stagd.function(checked)
        with pytest.raises(AssertionError) as e:
            f(np.zeros(3, np.float32))
        assert type(e.value) is stagd.AssertionFailed and "the first value is too small" in str(e.value)
        # the daemon keeps serving
        np.testing.assert_array_equal(np.asarray(take(X, 1)), X[1])
        np.testing.assert_array_equal(np.asarray(f(np.full(3, 50, np.float32))),
                                      np.full(3, 100, np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_eager_ops_raise_their_class(device, client):
    with stagd.device(device):
        x, y = stagd.constant(X), stagd.constant(np.ones(4, np.float32))
        idx = stagd.constant(np.array([0, 7], np.int64))
    calls = [  # (op, args, class): EagerOp straight to the daemon, no Python-side checks
        ("+", (x, y), stagd.ShapeMismatch),
        ("where", (stagd.constant(np.array([True, False])), x, x), stagd.ShapeMismatch),
        ("gather", (x, idx), stagd.IndexOutOfBounds),
        ("sum", (x, 2), stagd.IndexOutOfBounds),
        ("getitem", (x, -5), stagd.IndexOutOfBounds),
        ("matmul", (x, x), stagd.ShapeMismatch),  # (4,3) @ (4,3): NumPy's ValueError
    ]
    for op, args, cls in calls:
        values, keep = stagd.tensor._arg_values(client, args, device)
        with pytest.raises(cls) as e:
            client.call("EagerOp", client.pb2.EagerOpRequest(op=op, args=values, device=device))
        assert e.value.reason in ("shape_mismatch", "index_out_of_bounds"), (op, e.value)
        del keep
    # through the Tensor API: x + y with shapes that do not broadcast
    with pytest.raises(ValueError):
        x + y


def test_trailing_metadata_names_the_reason(channel, pb2):
    st = rpc(channel, "Stage", pb2.StageRequest(sexpr="(def f (x i)\n  (getitem x i))",
                                                filename="r.sexp"), pb2.StageReply)
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args_json="[[1,2,3], 7]"),
            pb2.ExecuteReply)
    md = dict(e.value.trailing_metadata())
    assert md["stagd-reason"] == "index_out_of_bounds" and md["stagd-line"] == "2", md
    assert type(error_from_rpc(e.value)) is stagd.IndexOutOfBounds
    with pytest.raises(grpc.RpcError) as e:  # an error without a reason: no key
        rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=st.graph_id, args_json="[1]"),
            pb2.ExecuteReply)
    assert e.value.code() == IA and "stagd-reason" not in dict(e.value.trailing_metadata())


def stagctl(*args):
    return subprocess.run([harness.stagctl_bin(), *args], capture_output=True, text=True,
                          env=harness.base_env(), timeout=30, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("remote", [False, True])
def test_stagctl_json_errors_carry_the_reason(tmp_path, daemon, remote):
    where = ["--addr", daemon.addr] if remote else ["--local"]
    p = tmp_path / "bad.sexp"
    p.write_text("(def g (x k)\n  (getitem x k))\n")  # a source no other test stages
    r = stagctl(*where, "--json-errors", "run", str(p), "--args", "[[1,2,3], 7]")
    assert r.returncode == 1 and r.stdout == "", r
    err = json.loads(r.stderr)
    assert err == {"status": "INVALID_ARGUMENT", "file": str(p), "line": 2, "column": 3,
                   "reason": "index_out_of_bounds",
                   "message": "getitem: index 7 is out of bounds for axis 0 with size 3"}, err
    # without a reason the key is absent; without the flag the text form is unchanged
    r = stagctl(*where, "--json-errors", "run", str(p), "--args", "[[1,2,3], 7, 8]")
    assert "reason" not in json.loads(r.stderr) and r.returncode == 1
    r = stagctl(*where, "run", str(p), "--args", "[[1,2,3], 7]")
    assert r.stderr == f"{p}:2:3: error: getitem: index 7 is out of bounds for axis 0 with size 3\n"


def test_lsp_error_data_carries_the_reason(lsp):
    st = lsp.request("stagd/stage", {"sexpr": "(def f (x i)\n  (getitem x i))", "filename": "l.sexp"})
    gid = st["result"]["graphId"]
    resp = lsp.request("stagd/execute", {"graphId": gid, "argsJson": "[[1,2,3], 7]"})
    data = resp["error"]["data"]
    assert data["reason"] == "index_out_of_bounds" and data["line"] == 2, resp
    resp = lsp.request("stagd/execute", {"graphId": gid, "argsJson": "[1]"})
    assert "reason" not in resp["error"]["data"], resp
