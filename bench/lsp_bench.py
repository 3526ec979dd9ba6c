#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""LSP latency after an edit (issue 9: < 50 ms): `stagd --lsp --stdio` holds a 5,000-line
Python file; each round sends one incremental textDocument/didChange and, right after
it, stagd/convertedCode, and times (from the didChange) the arrival of the
publishDiagnostics for the new version and of the convertedCode answer (its last
byte; the client's JSON parsing is not counted). Rounds run
with the debounce at 0 ms and at the default (20 ms, included in the time).
Baseline, side by side on the same connection: the stagd/convert service method with
the whole source in the request (what a client without document sync would do).

Usage: lsp_bench.py PATH/TO/stagd [LINES] [ROUNDS]   (use a Release build)"""
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

stagd = sys.argv[1]
want_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 30

FUNC = """def f{i}(x, n):
    y = x * {i}
    if y > n:
        y = y - 1
    else:
        y = y + 1
    i = 0
    while i < n:
        i += 1
        if i > {i}:
            break
    for k in range(3):
        y = y + k
    return y

"""


def make_source(lines):
    parts, n, i = ["import math\nLIMIT = 4\n\n"], 3, 0
    while n < lines:
        f = FUNC.format(i=i)
        parts.append(f)
        n += f.count("\n")
        i += 1
    return "".join(parts)


class Session:
    def __init__(self, debounce_ms):
        env = dict(os.environ, STAGD_LOG_LEVEL="warn")
        self.p = subprocess.Popen([stagd, "--lsp", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.q = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()
        self.next_id = 1
        self.request("initialize", {"capabilities": {}, "initializationOptions": {"debounceMs": debounce_ms}})
        self.notify("initialized", {})

    def _reader(self):
        out = self.p.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                c = out.read(1)
                if not c:
                    return
                header += c
            n = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            body = out.read(n)
            arrived = time.perf_counter()  # the answer is here; parsing it is the client's work
            self.q.put((arrived, json.loads(body)))

    def send(self, msg):
        b = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.p.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        return i

    def wait(self, pred):
        while True:
            t, m = self.q.get(timeout=30)
            if pred(m):
                return t, m

    def request(self, method, params):
        i = self.send_request(method, params)
        _, m = self.wait(lambda m: m.get("id") == i)
        if "error" in m:
            sys.exit(f"{method}: {m['error']}")
        return m["result"]

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.p.wait(timeout=10)


def ms(xs):
    return f"median {statistics.median(xs):6.1f} ms  p90 {sorted(xs)[int(len(xs) * 0.9) - 1]:6.1f} ms"


def run(src, debounce_ms):
    uri = "file:///bench/big.py"
    s = Session(debounce_ms)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": src}})
    s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == 1)
    diag_ms, conv_ms, base_ms = [], [], []
    for r in range(rounds):
        version = r + 2
        line = 4 + 15 * (r % 50)  # "    y = x * {i}" of some function: change its constant
        edit = {"range": {"start": {"line": line, "character": 12}, "end": {"line": line, "character": 12}},
                "text": "1"}
        t0 = time.perf_counter()
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]})
        cid = s.send_request("stagd/convertedCode", {"textDocument": {"uri": uri}, "style": "autograph"})
        got_diag = got_conv = None
        while got_diag is None or got_conv is None:
            t, m = s.wait(lambda m: True)
            if m.get("id") == cid:
                if "error" in m:
                    sys.exit(f"stagd/convertedCode: {m['error']}")
                got_conv = t
            elif m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == version:
                if m["params"]["diagnostics"]:
                    sys.exit(f"unexpected diagnostics: {m['params']['diagnostics'][:2]}")
                got_diag = t
        diag_ms.append((got_diag - t0) * 1e3)
        conv_ms.append((got_conv - t0) * 1e3)
        t0 = time.perf_counter()
        s.request("stagd/convert", {"source": src, "filename": "big.py"})
        base_ms.append((time.perf_counter() - t0) * 1e3)
    s.close()
    return diag_ms, conv_ms, base_ms


def main():
    src = make_source(want_lines)
    print(f"lsp_bench: {src.count(chr(10))} lines, {len(src)} bytes, {rounds} edits per run, stagd={stagd}")
    for debounce in (0, 20):
        diag, conv, base = run(src, debounce)
        print(f"debounce {debounce:2d} ms: edit → publishDiagnostics     {ms(diag)}")
        print(f"debounce {debounce:2d} ms: edit → stagd/convertedCode    {ms(conv)}")
        print(f"baseline:          stagd/convert (whole source) {ms(base)}")
        print(f"ratio convertedCode / baseline: {statistics.median(conv) / statistics.median(base):.2f}")
    print("target: < 50 ms for both (issue 9)")


main()
