# SPDX-License-Identifier: Apache-2.0
"""test_lsp_features.py — stagd's LSP language features against the service API and over
TCP: stagd/convertedCode equals the Convert method on the same text (its source map
with runs of equal original positions folded), diagnostics and hovers are per session
on a shared daemon, and a TCP client that vanishes with work in flight leaves the
daemon serving. The protocol details are tested in tests/lsp (Node, Neovim)."""
import time

import harness

URI = "file:///work/model.py"

SOURCE = """LIMIT = 3

def f(x, n):
    y = x * 2
    if y > n:
        y = y - 1
    while n > 0:
        n = n - 1
    return y

class Model:
    def step(self, a):
        for k in range(LIMIT):
            a = a + k
        return a

def gen():
    yield 1
"""


def open_doc(s, text, uri=URI, version=1):
    s.notify("textDocument/didOpen",
             {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})


def wait_diagnostics(s, uri, version, timeout=harness.IO_TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        m = s.read_message(max(0.0, deadline - time.monotonic()))
        p = m.get("params") or {}
        if m.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri and p.get("version") == version:
            return p["diagnostics"]


def fold(entries):
    """Keeps the first of each run of entries with the same original position."""
    out, prev = [], None
    for e in entries:
        key = (e["original"]["line"], e["original"].get("column", 1))
        if key != prev:
            out.append(e)
        prev = key
    return out


def test_converted_code_matches_the_convert_method():
    s = harness.StdioLsp()
    try:
        s.initialize()
        open_doc(s, SOURCE)
        wait_diagnostics(s, URI, 1)
        for style, enum in (("autograph", "STYLE_AUTOGRAPH"), ("snek", "STYLE_SNEK")):
            lsp = s.request("stagd/convertedCode", {"textDocument": {"uri": URI}, "style": style})
            assert "result" in lsp, lsp
            rpc = s.request("stagd/convert", {"source": SOURCE, "filename": "/work/model.py", "style": enum})
            assert "result" in rpc, rpc
            assert lsp["result"]["text"] == rpc["result"]["code"]
            want = [{"convertedLine": e["convertedLine"],
                     "original": {"line": e["original"]["line"], "column": e["original"].get("column", 1)}}
                    for e in rpc["result"]["sourceMap"]]
            assert lsp["result"]["sourceMap"] == fold(want)
        # Asked twice without an edit: the same answer (from the document's cache).
        a = s.request("stagd/convertedCode", {"textDocument": {"uri": URI}})
        b = s.request("stagd/convertedCode", {"textDocument": {"uri": URI}})
        assert a["result"] == b["result"]
        # An edit is seen by the next request.
        s.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                            "contentChanges": [{"text": "def h(z):\n    return z\n"}]})
        c = s.request("stagd/convertedCode", {"textDocument": {"uri": URI}})
        assert "def h(z):" in c["result"]["text"] and "def f(" not in c["result"]["text"]
        assert s.request("shutdown")["result"] is None
        s.notify("exit")
        assert s.wait() == 0
    finally:
        s.close()


def test_tcp_sessions_have_their_own_documents_and_diagnostics(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--lsp-listen", "127.0.0.1:0", expect_lsp=1)
    a, b = harness.TcpLsp(d.lsp_addr), harness.TcpLsp(d.lsp_addr)
    try:
        a.initialize()
        b.initialize()
        open_doc(a, SOURCE)
        open_doc(b, "def f(:\n    pass\n")  # the same URI, another text, another session
        da = wait_diagnostics(a, URI, 1)
        db = wait_diagnostics(b, URI, 1)
        assert [x["code"] for x in da] == ["unsupported-construct"], da
        assert [x["code"] for x in db] == ["syntax"], db
        h = a.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 4, "character": 5}})
        assert ("**Staged** when `n` or `x` is a staged tensor, plain Python otherwise: the condition depends on "
                "parameter `n`, `x` (through `y`)") in h["result"]["contents"]["value"], h
        h = a.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 12, "character": 9}})
        assert "**Runs in Python**" in h["result"]["contents"]["value"], h
        sym = b.request("textDocument/documentSymbol", {"textDocument": {"uri": URI}})
        assert sym["result"] == [], sym  # b's text does not parse
        # a vanishes with a conversion and an analysis in flight; b goes on
        a.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                            "contentChanges": [{"text": SOURCE * 20}]})
        a.send_request("stagd/convertedCode", {"textDocument": {"uri": URI}, "style": "snek"})
        a.close()
        time.sleep(0.3)
        lens = b.request("textDocument/codeLens", {"textDocument": {"uri": URI}})
        assert lens["result"] == [], lens
        assert b.request("stagd/version")["result"]["api"] == "stagd.v1"
        assert d.proc.poll() is None
    finally:
        a.close()
        b.close()
