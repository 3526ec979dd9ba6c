#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""test_adfuzz_self.py — checks of the AD differential tester itself (adfuzz.py,
adfuzz_gen.py) on the CPU: a deliberately wrong gradient (a hand-made grad_all) is caught
by the finite-difference check, a function that is not smooth anywhere near the points
counts as non-smooth (not as a pass), a failing gradient is an error and a failing f the
generator's fault, an optimized gradient or a device gradient off by
1e-9 relative is caught, generated programs are deterministic per seed, and the
minimizer shrinks a program whose gradient is wrong only where it uses `tanh` (an
injected fault) to a small one that still uses `tanh`.
Usage: test_adfuzz_self.py PATH/TO/gr_tool
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adfuzz as A  # noqa: E402
import adfuzz_gen as G  # noqa: E402

TOOL = sys.argv[1]
failures = []


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name} {detail}")


class HandMade(G.Program):
    """f given as text; grad_all optionally replaced (a wrong gradient)."""

    def __init__(self, params, body, grad_all=None):
        super().__init__(0, [], params, [], G.leaf(body, ()), 0)
        self.grad_all = grad_all

    def source(self):
        src = super().source()
        if self.grad_all:
            src = src[:src.index("(def grad_all")] + self.grad_all + "\n"
        return src


class Skewed:
    """A tool whose gradients come back scaled by 1 + eps (a fake divergence)."""

    def __init__(self, tool, eps):
        self.tool, self.eps = tool, eps

    def __getattr__(self, k):
        return getattr(self.tool, k)

    def run(self, src, args, entry=None):
        r = self.tool.run(src, args, entry)
        if entry == "grad_all" and r["rc"] == 0:
            v = A.dec(json.loads(r["stdout"]))
            v = tuple(x * (1 + self.eps) for x in v) if isinstance(v, tuple) else v * (1 + self.eps)
            r = dict(r, stdout=json.dumps(A.enc(v) if not isinstance(v, float) else v))
        return r


class Faulty:
    """A tool whose gradient programs compute sin where they say tanh (an injected fault)."""

    def __init__(self, tool):
        self.tool = tool

    def __getattr__(self, k):
        return getattr(self.tool, k)

    def run(self, src, args, entry=None):
        if entry == "grad_all" and "(tanh" in src:
            src = src.replace("(tanh", "(sin")
        return self.tool.run(src, args, entry)


tools = A.Tools(TOOL, "none")
try:
    # a right and a wrong gradient of the same f
    good = HandMade([("x0", ()), ("x1", (2, 3))], "(* (sin x0) (sum (tanh x1)))")
    expect("right gradient passes", A.check(tools, good)[0] == "ok", A.check(tools, good))
    wrong = HandMade([("x0", ()), ("x1", (2, 3))], "(* (sin x0) (sum (tanh x1)))",
                     "(def grad_all (x0 x1 n) (tuple ((grad f 0) x0 x1 n) (* 1.001 ((grad f 1) x0 x1 n))))")
    k, why = A.check(tools, wrong)
    expect("wrong gradient caught", k == "fd" and "x1" in why, (k, why))
    # a gradient of the wrong shape
    flat = HandMade([("x1", (2, 3))], "(sum (tanh x1))", "(def grad_all (x1 n) (sum ((grad f 0) x1 n) 0))")
    k, why = A.check(tools, flat)
    expect("wrong shape caught", k == "error" and "shape" in why, (k, why))
    # a gradient that fails is a failure, not a pass; when f fails too, the generator is
    # at fault (reported as such)
    k, why = A.check(tools, HandMade([("x0", ())], "(sin x0)", "(def grad_all (x0 n) (assert (< x0 -100.0) \"grad broke\"))"))
    expect("error reported", k == "error" and "grad broke" in why, (k, why))
    k, why = A.check(tools, HandMade([("x0", ())], "(frobnicate x0)"))
    expect("generator error reported", k == "generator" and "frobnicate" in why, (k, why))
    expect("same error elsewhere", A.same_error("-:1:2: error: bad 3 (X)", "-:4:5: error: bad 7 (X)"))
    expect("other error", not A.same_error("-:1:2: error: bad (X)", "-:1:2: error: worse (X)"))
    # a staircase with steps between H/2 and H: a jump inside every H-interval, so the
    # differences at H and H/2 never agree (a step much finer than H would look smooth)
    stairs = HandMade([("x0", ())], "(+ x0 (// (* x0 6666.0) 1.0))")
    k, why = A.check(tools, stairs)
    expect("non-smooth not counted as a pass", k == "nonsmooth", (k, why))
    # optimized vs not, device vs cpu: 1e-9 relative is caught
    t2 = A.Tools(TOOL, "none")
    t2.noopt = Skewed(t2.noopt, 1e-9)
    k, why = A.check(t2, good)
    expect("optimized vs --no-optimize divergence caught", k == "opt", (k, why))
    t2.noopt = t2.noopt.tool
    t2.dev = Skewed(A.Tool(TOOL, "cpu"), 1e-7)
    k, why = A.check(t2, good)
    expect("device divergence caught", k == "device", (k, why))
    t2.dev.tool.stop()
    t2.stop()
    # determinism
    expect("same seed, same program", G.generate(5).source() == G.generate(5).source())
    expect("other seed, other program", G.generate(5).source() != G.generate(6).source())

    # the minimizer: a fault injected into the optimized gradient of programs using tanh
    real_opt = tools.opt
    tools.opt = Faulty(real_opt)
    seed = next(s for s in range(100) if "(tanh" in G.generate(s).f_source() and
                G.generate(s).nodes() > 40 and A.check(tools, G.generate(s))[0] != "ok")
    prog = G.generate(seed)
    kind = A.check(tools, prog)[0]
    small = A.minimize(tools, prog, kind)
    expect("minimized keeps the fault", A.check(tools, small)[0] == kind)
    expect("minimized is small", small.nodes() <= 12 and small.nodes() < prog.nodes() / 3,
           f"{small.nodes()} of {prog.nodes()}:\n{small.source()}")
    expect("minimized still uses tanh", "(tanh" in small.source())
    tools.opt = real_opt
finally:
    tools.stop()

if failures:
    print("test_adfuzz_self: FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("test_adfuzz_self: ok")
