# SPDX-License-Identifier: Apache-2.0
"""test_execute_records.py — Execute with records and strings among its binary Value
arguments: they run on the value path (no JSON text round trip), the reply's binary
`result` carries records and strings, errors name the argument's path, and the Python
client turns dicts into records and back."""
import json
import struct

import grpc
import numpy as np
import pytest

from harness import rpc


def stage(channel, pb2, src):
    return rpc(channel, "Stage", pb2.StageRequest(sexpr=src, filename="rec.sexp"), pb2.StageReply).graph_id


def f32(pb2, *xs):
    return pb2.Value(tensor=pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[len(xs)],
                                       data=struct.pack(f"<{len(xs)}f", *xs)))


def record(pb2, **fields):
    return pb2.Value(record=pb2.Record(fields=[pb2.Field(name=k, value=v) for k, v in fields.items()]))


def execute(channel, pb2, gid, *args, **kw):
    return rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=gid, args=list(args), **kw), pb2.ExecuteReply)


def execute_error(channel, pb2, gid, *args):
    with pytest.raises(grpc.RpcError) as e:
        execute(channel, pb2, gid, *args)
    return e.value


def floats(v):
    return list(struct.unpack(f"<{len(v.tensor.data) // 4}f", v.tensor.data))


LINEAR = "(def linear (p x) (+ (* (getattr p w) x) (getattr p b)))"


def test_record_argument_runs_on_the_value_path(channel, pb2):
    gid = stage(channel, pb2, LINEAR)
    p = record(pb2, w=f32(pb2, 2.0, 3.0), b=pb2.Value(float_value=0.5))
    r = execute(channel, pb2, gid, p, f32(pb2, 1.0, -1.0))
    # the value path answers with the binary result too (the JSON path gives none)
    assert r.result.WhichOneof("kind") == "tensor" and floats(r.result) == [2.5, -2.5]
    assert json.loads(r.result_json)["data"] == [2.5, -2.5]


def test_records_nested_in_tuples_and_records(channel, pb2):
    src = "(def f (t) (* (getattr (getattr (getitem t 1) inner) k) (getitem t 0)))"
    gid = stage(channel, pb2, src)
    inner = record(pb2, k=pb2.Value(int_value=7))
    arg = pb2.Value(tuple=pb2.Tuple(items=[pb2.Value(int_value=3), record(pb2, inner=inner)]))
    assert execute(channel, pb2, gid, arg).result.int_value == 21


def test_tree_record_recursion(channel, pb2):
    src = ("(def tree_prod (base tree) (if (getattr tree is_empty) base"
           " (* (* (tree_prod base (getattr tree left)) (tree_prod base (getattr tree right)))"
           " (getattr tree value))))")
    gid = stage(channel, pb2, src)
    leaf = record(pb2, is_empty=pb2.Value(bool_value=True))
    tree = record(pb2, is_empty=pb2.Value(bool_value=False), value=pb2.Value(float_value=3.0),
                  left=leaf, right=leaf)
    r = execute(channel, pb2, gid, pb2.Value(float_value=2.0), tree)
    assert r.result.float_value == 12.0 and json.loads(r.result_json) == 12.0


def test_record_and_string_results(channel, pb2):
    src = "(def f (x s) (record (y (* x 2)) (name s) (pair (tuple s x))))"
    gid = stage(channel, pb2, src)
    r = execute(channel, pb2, gid, pb2.Value(int_value=4), pb2.Value(string_value="héllo \"q\""))
    assert r.result.WhichOneof("kind") == "record"
    fields = {f.name: f.value for f in r.result.record.fields}
    assert [f.name for f in r.result.record.fields] == ["y", "name", "pair"]  # declaration order
    assert fields["y"].int_value == 8 and fields["name"].string_value == "héllo \"q\""
    assert [v.WhichOneof("kind") for v in fields["pair"].tuple.items] == ["string_value", "int_value"]
    assert json.loads(r.result_json) == {"record": {"y": 8, "name": "héllo \"q\"",
                                                    "pair": {"tuple": ["héllo \"q\"", 4]}}}
    # a record argument comes back unchanged (identity)
    ident = stage(channel, pb2, "(def ident (x) x)")
    p = record(pb2, w=f32(pb2, 1.5), tag=pb2.Value(string_value="float64"), n=pb2.Value(none=True))
    back = execute(channel, pb2, ident, p, no_result_json=True)
    assert back.result_json == "" and back.result == p


def test_string_arguments(channel, pb2):
    # a dtype name and any other string (print shows it)
    gid = stage(channel, pb2, "(def f (x dt msg) (begin (print msg) (cast x dt)))")
    r = execute(channel, pb2, gid, f32(pb2, 1.5, 2.5), pb2.Value(string_value="int64"),
                pb2.Value(string_value="not a dtype"))
    assert r.result.tensor.dtype == pb2.DTYPE_INT64 and r.output == "not a dtype\n"
    e = execute_error(channel, pb2, gid, f32(pb2, 1.0), pb2.Value(string_value="no-such-dtype"),
                      pb2.Value(string_value=""))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.details().startswith("rec.sexp:1:") and "cast: expected a dtype" in e.details()


def test_bad_records_name_the_argument_path(channel, pb2):
    gid = stage(channel, pb2, LINEAR)
    x = f32(pb2, 1.0)
    # a field whose tensor bytes do not fit its shape, inside a tuple inside a record
    bad = pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[2], data=b"\0" * 4)
    arg = record(pb2, w=pb2.Value(tuple=pb2.Tuple(items=[x, pb2.Value(tensor=bad)])), b=x)
    e = execute_error(channel, pb2, gid, arg, x)
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "args[0].w.tuple[1]: float32 tensor of 2 elements needs 8 bytes, got 4" in e.details()
    # duplicate and empty field names, a field without a value, an empty Value
    dup = pb2.Value(record=pb2.Record(fields=[pb2.Field(name="w", value=x), pb2.Field(name="w", value=x)]))
    e = execute_error(channel, pb2, gid, x, pb2.Value(tuple=pb2.Tuple(items=[dup])))
    assert "args[1].tuple[0]: duplicate field 'w'" in e.details()
    empty = pb2.Value(record=pb2.Record(fields=[pb2.Field(name="", value=x)]))
    e = execute_error(channel, pb2, gid, empty, x)
    assert "args[0]: field 0 has an empty name" in e.details()
    novalue = pb2.Value(record=pb2.Record(fields=[pb2.Field(name="w")]))
    e = execute_error(channel, pb2, gid, novalue, x)
    assert "args[0].w: field without a value" in e.details()
    e = execute_error(channel, pb2, gid, record(pb2, w=x, b=pb2.Value()), x)
    assert "args[0].b: empty Value" in e.details()
    # a record without the field the program reads, and a field of the wrong type
    e = execute_error(channel, pb2, gid, record(pb2, w=x, bias=x), x)
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "record has no field 'b'" in e.details()
    e = execute_error(channel, pb2, gid, record(pb2, w=pb2.Value(string_value="oops"), b=x), x)
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "str" in e.details()
    # records nested deeper than 64 levels
    deep = x
    for _ in range(70):
        deep = record(pb2, inner=deep)
    e = execute_error(channel, pb2, gid, deep, x)
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "values nest too deeply" in e.details()
    assert e.details().startswith("args[0].inner.inner.")
    # the daemon keeps serving
    assert floats(execute(channel, pb2, gid, record(pb2, w=x, b=x), x).result) == [2.0]


def test_python_client_passes_dicts_as_records(daemon):
    import stagd
    from stagd.tensor import _arg_value, _wrap
    client = stagd.Client(daemon.addr)
    try:
        pb2 = client.pb2
        v = _arg_value(client, {"w": np.float32(2.0), "name": "float64", "t": (1, None)}, "cpu", [])
        assert v.WhichOneof("kind") == "record"
        assert [f.name for f in v.record.fields] == ["w", "name", "t"]
        assert v.record.fields[1].value.string_value == "float64"
        with pytest.raises(TypeError, match="field names must be strings"):
            _arg_value(client, {1: 2.0}, "cpu", [])
        gid = client.call("Stage", {"sexpr": LINEAR}).graph_id
        req = pb2.ExecuteRequest(graph_id=gid, args=[
            _arg_value(client, {"w": np.array([2.0, 3.0], np.float32), "b": 0.5}, "cpu", []),
            _arg_value(client, np.array([1.0, -1.0], np.float32), "cpu", [])])
        out = _wrap(client.call("Execute", req).result, client)
        np.testing.assert_array_equal(out, np.array([2.5, -2.5], np.float32))
        ident = client.call("Stage", {"sexpr": "(def ident (x) x)"}).graph_id
        req = pb2.ExecuteRequest(graph_id=ident, args=[_arg_value(client, {"a": 1, "s": "x"}, "cpu", [])])
        assert _wrap(client.call("Execute", req).result, client) == {"a": 1, "s": "x"}
        # nested tuples and records (filled in place, tensor.py _fill_nested), empty
        # ones included, come back as they went
        nested = {"e": (), "r": {}, "t": (1, {"u": (2.5, None, "s"), "v": {}}, ((),)), "b": True}
        req = pb2.ExecuteRequest(graph_id=ident, args=[_arg_value(client, nested, "cpu", [])])
        assert _wrap(client.call("Execute", req).result, client) == nested
        with pytest.raises(TypeError, match="field names must be strings"):
            _arg_value(client, ({"a": {2: 1.0}},), "cpu", [])
    finally:
        client.close()


def test_record_results_as_handles_on_each_device(daemon):
    """return_handles: the tensors inside a record result stay in the daemon as handles
    (on vulkan:0 as well when the daemon has it); strings and scalars come inline."""
    import stagd
    from stagd.tensor import Tensor, _arg_value, _wrap
    client = stagd.Client(daemon.addr)
    try:
        pb2 = client.pb2
        src = "(def f (p x) (record (y (+ (* (getattr p w) x) (getattr p b))) (tag (getattr p tag))))"
        gid = client.call("Stage", {"sexpr": src}).graph_id
        devices = [d.name for d in client.list_devices() if d.name in ("cpu", "vulkan:0")]
        for dev in devices:
            for handles in (False, True):
                req = pb2.ExecuteRequest(graph_id=gid, device=dev, return_handles=handles, args=[
                    _arg_value(client, {"w": np.array([2.0, 3.0], np.float32), "b": 0.5, "tag": "hi"},
                               dev, []),
                    _arg_value(client, np.array([1.0, -1.0], np.float32), dev, [])])
                reply = client.call("Execute", req)
                y = reply.result.record.fields[0].value
                assert y.WhichOneof("kind") == ("handle" if handles else "tensor"), (dev, handles)
                out = _wrap(reply.result, client)
                assert isinstance(out["y"], Tensor if handles else np.ndarray) and out["tag"] == "hi"
                np.testing.assert_array_equal(np.asarray(out["y"].numpy() if handles else out["y"]),
                                              np.array([2.5, -2.5], np.float32))
    finally:
        client.close()


def test_return_handles_with_json_arguments_is_refused(channel, pb2):
    # the handle path takes Value arguments only; args_json was silently ignored there
    # ("@f takes 1 argument, got 0")
    gid = stage(channel, pb2, "(def f (x) (* x 2.0))")
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, "Execute", pb2.ExecuteRequest(graph_id=gid, args_json="[[1.0]]", return_handles=True),
            pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "return_handles takes its arguments as args" in e.value.details()
    r = execute(channel, pb2, gid, f32(pb2, 1.0), return_handles=True)
    assert r.result.handle.id


def test_variables_outlive_their_program(fresh_daemon):
    """A variable a handle holds keeps its strings and field names after the program that
    made them left the graph cache (1,024 programs) — it read freed memory before — on
    each device; a function cannot be stored in it (refused with the reason, the daemon
    serving on), while a variable used only inside its request may hold one."""
    import stagd
    client = stagd.Client(fresh_daemon.addr)

    def stage(src):
        return client.call("Stage", {"sexpr": src}).graph_id

    def evict(tag):
        for i in range(1030):
            stage(f"(def {tag}{i} (x) (+ x {i}))")

    def fetch_fields(hid):
        rec = client.call("Fetch", client.pb2.FetchRequest(ids=[hid])).values[0].record
        return [(f.name, f.value) for f in rec.fields]

    try:
        pb2 = client.pb2
        devices = [d.name for d in client.list_devices() if d.name in ("cpu", "vulkan:0")]
        made = stage('(def f () (variable (record (label_one "first") (pair (tuple 2 "second")))))')
        ids = {dev: client.call("Execute", pb2.ExecuteRequest(graph_id=made, device=dev, return_handles=True)
                                ).result.handle.id for dev in devices}
        evict("a")
        with pytest.raises(stagd.NotFound):
            client.call("Execute", pb2.ExecuteRequest(graph_id=made))  # evicted indeed
        for dev in devices:
            fields = fetch_fields(ids[dev])
            assert [n for n, _ in fields] == ["label_one", "pair"], dev
            assert fields[0][1].string_value == "first"
            assert fields[1][1].tuple.items[1].string_value == "second"
        for dev in devices:
            handle = pb2.Value(handle=pb2.TensorHandle(id=ids[dev], device=dev, variable=True))
            client.call("Execute", pb2.ExecuteRequest(
                graph_id=stage('(def g (v) (assign v (record (other "third"))))'), device=dev, args=[handle]))
            with pytest.raises(stagd.InvalidArgument, match="cannot hold a function"):
                client.call("Execute", pb2.ExecuteRequest(
                    graph_id=stage("(def k (v) (assign v (lambda (y) y)))"), device=dev, args=[handle]))
            r = client.call("Execute", pb2.ExecuteRequest(
                graph_id=stage("(def m (x) (let v (variable (lambda (y) (* x y))) ((read v) 3)))"),
                device=dev, args=[pb2.Value(int_value=2)]))
            assert r.result.int_value == 6, dev
            evict("b" + dev.replace(":", "_"))
            assert [(n, v.string_value) for n, v in fetch_fields(ids[dev])] == [("other", "third")], dev
    finally:
        client.close()
