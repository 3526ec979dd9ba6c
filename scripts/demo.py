# SPDX-License-Identifier: Apache-2.0
"""demo.py — the main job end to end: start stagd, talk to it three ways, stop it.

Run through scripts/demo.sh, which builds everything and sets STAGD_BIN, STAGCTL_BIN
and PYTHONPATH. Every step prints what the daemon answered.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import stagd


def loss_fn(w, b, x, y):
    """Mean squared error of a line w*x + b (staged by stagd.function below)."""
    err = w * x + b - y
    return sum(err * err) / len(x)


def client_demo(client):
    """The Python client: eager tensors held in the daemon, a GradientTape, and a
    staged training step whose gradient comes from graph AD (docs/client.md)."""
    import numpy as np
    stagd.set_default_client(client)
    x = stagd.constant([[2.0]])
    print("eager matmul([[2.]], [[1.]]) =", stagd.matmul(x, stagd.constant([[1.0]])).numpy().tolist())
    v = stagd.constant(3.0)
    with stagd.GradientTape() as tape:
        tape.watch(v)
        y = v * v
    print("GradientTape: d(v*v)/dv at 3.0 =", float(tape.gradient(y, v)))

    xs = np.linspace(-1.0, 1.0, 32, dtype=np.float32)
    ys = (3.0 * xs - 1.0).astype(np.float32)
    w, b = stagd.Variable(0.0), stagd.Variable(0.0)
    loss = stagd.function(loss_fn)
    grad_loss = stagd.grad(loss, argnums=(0, 1))

    def step(x, y):
        wv, bv = w.read_value(), b.read_value()
        gw, gb = grad_loss(wv, bv, x, y)
        w.assign_sub(0.5 * gw)
        b.assign_sub(0.5 * gb)
        return loss(wv, bv, x, y)

    train_step = stagd.function(step)
    first = float(train_step(xs, ys))
    for _ in range(99):
        last = float(train_step(xs, ys))
    print(f"staged training step x100 (traced {train_step.trace_count} time): loss {first:.3f} -> "
          f"{last:.2e}, w = {float(w.numpy()):.3f}, b = {float(b.numpy()):.3f}")


def banner(text):
    print(f"\n== {text}", flush=True)


def start_daemon():
    proc = subprocess.Popen(
        [os.environ["STAGD_BIN"], "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    for line in proc.stderr:
        m = re.search(r"serving gRPC on (\S+)", line)
        if m:
            return proc, m.group(1)
        if time.monotonic() > deadline:
            break
    proc.kill()
    sys.exit("demo: stagd did not start")


def lsp_session():
    """initialize → stagd/version → shutdown → exit over stdio, with real framing."""
    proc = subprocess.Popen([os.environ["STAGD_BIN"], "--lsp", "--stdio", "--log-level", "warn"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(msg):
        body = json.dumps(msg).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def receive():
        length = None
        while True:
            line = proc.stdout.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(proc.stdout.read(length))

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    init = receive()["result"]
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send({"jsonrpc": "2.0", "id": 2, "method": "stagd/version"})
    version = receive()["result"]
    send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    receive()
    send({"jsonrpc": "2.0", "method": "exit"})
    code = proc.wait(timeout=10)
    return init["serverInfo"], version, code


def main():
    banner("starting stagd")
    proc, addr = start_daemon()
    print(f"stagd is serving gRPC on {addr} (pid {proc.pid})")
    try:
        banner("Python client: stagd.connect(addr)")
        client = stagd.connect(addr)
        print("health:", client.health())
        v = client.version()
        print("version:", v.version, "api:", v.api, "grpc core:", v.grpc_version)
        for d in client.list_devices():
            print(f"device: {d.name} ({d.type}) {d.description}")

        banner("Parse through the daemon: CPython 3.12's ast.dump of a function")
        src = "def power(x, n):\n    return x ** n\n"
        print(src, end="")
        print(client.call("Parse", {"source": src, "filename": "power.py"}).dump)

        banner("Stage and Execute Snek's staged power(x, 2) (Figure 6) at x = 10")
        sexpr = "(def runX (in1)\n (begin\n  (let x0 (* in1 1)\n   (let x1 (* in1 x0)\n    x1))))\n"
        print(sexpr, end="")
        text_dump = 2  # stagd.v1.DumpFormat.DUMP_FORMAT_TEXT
        staged = client.call("Stage", {"sexpr": sexpr, "filename": "runX.sexp", "dumps": [text_dump]})
        print(f"graph id {staged.graph_id}; optimized IR:\n{staged.dumps[0].text}")
        result = client.call("Execute", {"graph_id": staged.graph_id, "args_json": "[10]"})
        print("runX(10) =", result.result_json)

        banner("Convert: AutoGraph-style conversion, then the converted code run on plain values")
        src = ("def collatz_steps(n):\n"
               "    steps = 0\n"
               "    while n != 1:\n"
               "        if n % 2 == 0:\n"
               "            n = n // 2\n"
               "        else:\n"
               "            n = 3 * n + 1\n"
               "        steps += 1\n"
               "    return steps\n")
        print(src, end="")
        conv = client.call("Convert", {"source": src, "filename": "collatz.py"})
        print(conv.code)
        namespace = {}
        exec(compile(conv.code, "collatz_converted.py", "exec"), namespace)
        print("converted collatz_steps(27) =", namespace["collatz_steps"](27))

        banner("Grad of Myia's Figure 1, f(x, y) = x**3 * y**4, at (2, 3)")
        sexpr = "(def f (x y) (* (** x 3) (** y 4)))\n(def df (x y) ((grad f 0) x y))\n"
        print(sexpr, end="")
        staged = client.call("Stage", {"sexpr": sexpr, "filename": "fig1.sexp", "entry": "df"})
        result = client.call("Execute", {"graph_id": staged.graph_id, "args_json": "[2.0, 3.0]"})
        print("df/dx(2, 3) =", result.result_json)

        banner("Python client: eager tensors, a GradientTape, a staged training step")
        client_demo(client)

        banner(f"stagctl --addr {addr} health")
        subprocess.run([os.environ["STAGCTL_BIN"], "--addr", addr, "health"], check=True)
        banner(f"stagctl --addr {addr} ping hello")
        subprocess.run([os.environ["STAGCTL_BIN"], "--addr", addr, "ping", "hello"], check=True)

        banner("LSP over stdio: stagd --lsp --stdio")
        info, version, code = lsp_session()
        print("serverInfo:", info)
        print("stagd/version:", version["version"], "features:", ", ".join(version.get("features", [])))
        print("LSP session exit code:", code)
    finally:
        banner("stopping stagd (SIGTERM)")
        proc.send_signal(signal.SIGTERM)
        print("stagd exit code:", proc.wait(timeout=20))


if __name__ == "__main__":
    main()
