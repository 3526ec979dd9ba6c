# SPDX-License-Identifier: Apache-2.0
"""test_hostile_input.py — issue 24 part A: legal or hostile input never crashes the
daemon and never changes data silently. Each input is generated here (no big files):

* D1 a long if/elif chain converts (gRPC and LSP didOpen) into code that grows
  linearly with the chain and still behaves like the original;
* D2/D3 expressions nested deeper than CPython's tree limit (a 58k-term sum, a 100k-link
  attribute chain) get a located error from Parse (dump, JSON, unparse) and Convert;
  just under the limit every walker still works;
* deeply nested protobuf Values are refused before protobuf-c unpacks them;
* D7 JSON values are exact or INVALID_ARGUMENT naming the position;
* D8 invalid UTF-8 in a string field (gRPC) or an LSP body is INVALID_ARGUMENT.
After each bad request the daemon answers Ping.
"""
import json
import os
import subprocess
import sys

import grpc
import pytest

import harness
from harness import frame, raw_rpc, rpc

PING = "/stagd.v1.Stagd/Ping"


def alive(channel, pb2):
    assert rpc(channel, "Ping", pb2.PingRequest(payload="ok"), pb2.PingReply).payload == "ok"


def invalid(channel, method, request, reply_cls):
    with pytest.raises(grpc.RpcError) as e:
        rpc(channel, method, request, reply_cls)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value
    return e.value.details() or ""


def elif_chain(n):
    lines = ["def f(x):", "    if x == 0:", "        r = 0"]
    for k in range(1, n):
        lines += [f"    elif x == {k}:", f"        r = {k * 10}"]
    lines += ["    else:", "        r = -1", "    return r", ""]
    return "\n".join(lines)


def convert(channel, pb2, src, style=0):
    return rpc(channel, "Convert", pb2.ConvertRequest(source=src, filename="m.py", style=style),
               pb2.ConvertReply, timeout=120)


# ------------------------------------------------------------------ D1: elif chains

def test_d1_long_elif_chain_converts_linearly_and_runs(channel, pb2, tmp_path):
    small, big = elif_chain(100), elif_chain(1100)
    for style in (pb2.Style.Value("STYLE_AUTOGRAPH"), pb2.Style.Value("STYLE_SNEK")):
        rs, rb = convert(channel, pb2, small, style), convert(channel, pb2, big, style)
        assert rs.code and rb.code
        # linear: 11x the branches, at most ~11x the code (nested helpers grew quadratically)
        per_small = len(rs.code) / len(small)
        per_big = len(rb.code) / len(big)
        assert per_big < 1.3 * per_small, (style, per_small, per_big)
        assert len(rb.code) < 40 * len(big), (style, len(rb.code))
        mod = tmp_path / f"conv{style}.py"
        mod.write_text(rb.code)
        check = ("import importlib.util, sys\n"
                 f"spec = importlib.util.spec_from_file_location('conv', {str(mod)!r})\n"
                 "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                 "print([m.f(k) for k in (0, 1, 555, 1099, 1100, -3)])\n")
        out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120,
                             env=harness.base_env())
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.strip() == "[0, 10, 5550, 10990, -1, -1]", out.stdout
    alive(channel, pb2)


def test_d1_long_elif_chain_lsp_did_open(lsp):
    lsp.notify("textDocument/didOpen", {"textDocument": {
        "uri": "file:///tmp/elif.py", "languageId": "python", "version": 1, "text": elif_chain(1100)}})
    resp = lsp.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///tmp/elif.py"}})
    assert "result" in resp, resp
    assert lsp.request("stagd/version")["result"]["api"] == "stagd.v1"


# -------------------------------------------------- D2/D3: deeper than CPython's limit

DEEP = {
    "sum": "x = " + "+".join(["1"] * 58000) + "\n",
    "attribute": "x = a" + ".b" * 100000 + "\n",
    "attribute_600k": "x = a" + ".b" * 300000 + "\n",
    "calls": "x = f" + "()" * 50000 + "\n",
    "subscripts": "x = a" + "[0]" * 50000 + "\n",
}


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_d2_d3_too_deep_is_a_located_error(channel, pb2, kind):
    src = DEEP[kind]
    details = invalid(channel, "Parse", pb2.ParseRequest(source=src, filename="deep.py", want_json=True,
                                                         want_unparse=True), pb2.ParseReply)
    assert "too deeply nested" in details and "deep.py:1:" in details, details
    details = invalid(channel, "Convert", pb2.ConvertRequest(source="def g(a, f):\n    " + src.replace("\n", "")
                                                             + "\n    return x\n", filename="deep.py"),
                      pb2.ConvertReply)
    assert "too deeply nested" in details and "deep.py:2:" in details, details
    alive(channel, pb2)


def test_too_deep_lsp_did_open_is_a_diagnostic(lsp):
    uri = "file:///tmp/deep.py"
    lsp.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": DEEP["attribute_600k"]}})
    while True:
        msg = lsp.read_message()
        if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
            break
    diags = msg["params"]["diagnostics"]
    assert diags and "too deeply nested" in diags[0]["message"], diags
    assert diags[0]["range"]["start"]["line"] == 0, diags
    for method in ("textDocument/documentSymbol", "textDocument/codeLens"):
        assert "result" in lsp.request(method, {"textDocument": {"uri": uri}})
    assert lsp.request("stagd/version")["result"]["api"] == "stagd.v1"


@pytest.mark.parametrize("piece,n", [("+1", 2900), (".b", 2900), ("()", 2900), ("[0]", 2900), ("[i]", 2900)])
def test_just_under_the_limit_every_walker_works(channel, pb2, piece, n):
    expr = ("a" if piece != "+1" else "1") + piece * n
    src = f"def g(a, i):\n    x = {expr}\n    return x\n"
    r = rpc(channel, "Parse", pb2.ParseRequest(source=src, filename="d.py", want_json=True, want_unparse=True),
            pb2.ParseReply, timeout=120)
    assert r.dump.startswith("Module(") and r.json and r.unparsed.startswith("def g(a, i):")
    again = rpc(channel, "Parse", pb2.ParseRequest(source=r.unparsed, filename="d.py"), pb2.ParseReply, timeout=120)
    assert again.dump == r.dump
    c = convert(channel, pb2, src)
    assert "def g(a, i):" in c.code
    alive(channel, pb2)


# ------------------------------------------------------- nested protobuf messages

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def nested_value(depth):
    """A Value holding a tuple holding a Value ... depth times (built as prefixes)."""
    heads, size = [], 0
    for _ in range(depth):
        t = b"\x0a" + varint(size)  # Tuple.items = 1
        size += len(t)
        v = b"\x42" + varint(size)  # Value.tuple = 8
        size += len(v)
        heads.append(t)
        heads.append(v)
    return b"".join(reversed(heads)), size


def test_deeply_nested_protobuf_values_are_refused(channel, pb2):
    value, size = nested_value(100000)
    req = b"\x0a\x01g" + b"\x1a" + varint(size) + value  # graph_id = "g", args = [value]
    with pytest.raises(grpc.RpcError) as e:
        raw_rpc(channel, "/stagd.v1.Stagd/Execute", req, timeout=60)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value
    assert "nested more than 500" in e.value.details(), e.value.details()
    alive(channel, pb2)


def test_field_number_zero_is_refused(channel, pb2):
    # found by fuzz_requests: protobuf-c kept field 0 as an unknown field
    with pytest.raises(grpc.RpcError) as e:
        raw_rpc(channel, PING, b"\x80\x00\x00")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "field number 0" in e.value.details()
    alive(channel, pb2)


# ---------------------------------------------------------------- D7: exact values

@pytest.fixture(scope="module")
def identity(daemon):
    ch = grpc.insecure_channel(daemon.addr)
    st = rpc(ch, "Stage", harness.pb2.StageRequest(sexpr="(def f (x) x)", filename="id.sexp"),
             harness.pb2.StageReply)
    yield ch, st.graph_id
    ch.close()


def run_json(identity, args):
    ch, gid = identity
    r = rpc(ch, "Execute", harness.pb2.ExecuteRequest(graph_id=gid, args_json=args), harness.pb2.ExecuteReply)
    return json.loads(r.result_json)


def tensor(dtype, data):
    return json.dumps([{"dtype": dtype, "shape": [len(data)], "data": data}])


def test_d7_non_finite_floats_round_trip(identity):
    for spelled in (["NaN", "-Infinity", "Infinity"], ["nan", "-inf", "inf"]):
        for dt in ("float32", "float64"):
            out = run_json(identity, tensor(dt, spelled + [1.5]))
            assert out["data"] == ["nan", "-inf", "inf", 1.5], out
            again = run_json(identity, json.dumps([out]))
            assert again == out


def test_d7_exact_integers_round_trip(identity):
    big = [2**63 - 1, -2**63, 9007199254740993]
    assert run_json(identity, tensor("int64", big))["data"] == big
    assert run_json(identity, json.dumps([2**63 - 1])) == 2**63 - 1
    assert run_json(identity, tensor("int32", [2**31 - 1, -2**31]))["data"] == [2**31 - 1, -2**31]
    # a nested list mixes bools with ints as NumPy does
    assert run_json(identity, "[[1, true, false]]")["data"] == [1, 1, 0]


@pytest.mark.parametrize("args,where", [
    (tensor("float32", ["abc", 1.0]), "data[0]"),
    (tensor("float32", [1.0, True]), "data[1]"),
    (tensor("float64", [1.0, 2.0, None]), "data[2]"),
    (tensor("int64", [1, "NaN"]), "data[1]"),
    (tensor("int64", [1, 2.5]), "data[1]"),
    (tensor("int32", [0, 2**40]), "data[1]"),
    (tensor("int32", [-2**31 - 1]), "data[0]"),
    (tensor("bool", [True, 1]), "data[1]"),
    ("[123456789012345678901234567890]", "offset 1"),
    (tensor("int64", [2**64 + 5]), "offset"),
    ("[-9223372036854775809]", "offset 1"),
])
def test_d7_inexact_values_are_invalid_argument(identity, args, where):
    ch, gid = identity
    with pytest.raises(grpc.RpcError) as e:
        rpc(ch, "Execute", harness.pb2.ExecuteRequest(graph_id=gid, args_json=args), harness.pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value
    assert where in e.value.details(), e.value.details()


@pytest.mark.parametrize("shape", [
    [471, 11111, 111111111111771, 11111, 11195],  # the product overflows int64 (fuzz_json_value)
    [2**62, 2**62, 4],
    [2**33],
])
def test_d7_a_shape_too_large_is_refused_before_its_product_overflows(identity, shape):
    ch, gid = identity
    args = json.dumps([{"dtype": "float16", "shape": shape, "data": [1.0, 2.0, 3.0, 4.0]}])
    with pytest.raises(grpc.RpcError) as e:
        rpc(ch, "Execute", harness.pb2.ExecuteRequest(graph_id=gid, args_json=args), harness.pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.value
    assert "too large" in e.value.details(), e.value.details()


# ------------------------------------------------------------------ D8: UTF-8

@pytest.mark.parametrize("bad", [b"\xff", b"a\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
def test_d8_invalid_utf8_in_a_string_field(channel, pb2, bad):
    req = b"\x12" + varint(len(bad)) + bad  # PingRequest.payload = 2
    with pytest.raises(grpc.RpcError) as e:
        raw_rpc(channel, PING, req)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value
    assert "payload" in e.value.details() and "UTF-8" in e.value.details(), e.value.details()
    # nested: a string inside a Value inside ExecuteRequest.args
    value = b"\x2a" + varint(len(bad)) + bad  # Value.string_value = 5
    with pytest.raises(grpc.RpcError) as e:
        raw_rpc(channel, "/stagd.v1.Stagd/Execute", b"\x1a" + varint(len(value)) + value)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "string_value" in e.value.details()
    good = "✓ ok".encode()
    assert pb2.PingReply.FromString(raw_rpc(channel, PING, b"\x12" + varint(len(good)) + good)).payload == "✓ ok"
    alive(channel, pb2)


def test_d8_invalid_utf8_in_an_lsp_body(lsp):
    body = b'{"jsonrpc": "2.0", "id": 41, "method": "stagd/ping", "params": {"payload": "a\xffb"}}'
    lsp.send_raw(frame(body))
    resp = lsp.read_response(41)
    assert resp["error"]["code"] == -32602 and "UTF-8" in resp["error"]["message"], resp
    assert lsp.request("stagd/version")["result"]["api"] == "stagd.v1"
