#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""test_vkdiff_self.py — checks of the differential tester itself (vkdiff.py,
vkdiff_gen.py) that need no device: the op-table coverage check fails on a row it does
not know, the comparison reports each kind of divergence and accepts what the
tolerances allow, generated programs stage and run on the CPU, and the minimizer
shrinks a mismatching program to the statement that causes it.
Usage: test_vkdiff_self.py PATH/TO/gr_tool
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vkdiff as V  # noqa: E402
import vkdiff_gen as G  # noqa: E402

TOOL = sys.argv[1]
failures = []


def expect(name, cond):
    if not cond:
        failures.append(name)


# coverage: the real table passes; an unknown row and a stale entry fail with their names
rows = V.check_coverage()
expect("every op row covered", len(rows) == len(G.OP_COVERAGE))
for text, word in [('ROW("+", "add", 2, 2, P, KN_ADD, a, b), ROW("frob", NULL, 1, 1, P, 0, a, b)',
                    "frob"), ('ROW("+", "add", 2, 2, P, KN_ADD, a, b)', "exp")]:
    try:
        V.check_coverage(text)
        failures.append(f"coverage check passed without {word}")
    except SystemExit as e:
        expect(f"coverage message names {word}", word in str(e))

# the comparison
prog = G.Program([], [G.Stmt(G.Val("v1", "float32", (2,), False, 0.0), "(exp p1)")], ["v1"], 0)


def res(rc, out="", err=""):
    return {"rc": rc, "stdout": out, "stderr": err}


def tensor(dt, data, shape=None):
    return '{"tuple":[{"dtype":"%s","shape":%s,"data":%s}]}' % (
        dt, shape or [len(data)], str(data).replace("'", '"'))


ok = res(0, tensor("float32", [1.0, 2.0]))
expect("same result", V.differ(prog, ok, ok) is None)
expect("within float32's tolerance", V.differ(prog, ok, res(0, tensor("float32", [1.00001, 2.0]))) is None)
expect("past float32's tolerance", "differ" in (V.differ(prog, ok, res(0, tensor("float32", [1.001, 2.0]))) or ""))
expect("NaN equals NaN", V.differ(prog, res(0, tensor("float32", ["nan", 2.0])),
                                  res(0, tensor("float32", ["nan", 2.0]))) is None)
expect("dtype", "float64" in (V.differ(prog, ok, res(0, tensor("float64", [1.0, 2.0]))) or ""))
expect("shape", "(1, 2)" in (V.differ(prog, ok, res(0, tensor("float32", [1.0, 2.0], [1, 2]))) or ""))
expect("integers exact", V.differ(prog, res(0, tensor("int64", [1, 2])), res(0, tensor("int64", [1, 3]))))
bad = res(1, err="-:1:2: error: bad (INVALID_ARGUMENT)\n")
expect("same error", V.differ(prog, bad, bad) is None)
expect("error vs result", V.differ(prog, bad, ok))
expect("other error code", V.differ(prog, bad, res(1, err="-:1:2: error: bad (UNIMPLEMENTED)\n")))
expect("crash", V.differ(prog, ok, res(-1, err="gr_tool crashed or hung")))
# a value made by a float32 op keeps float32's tolerance in a float64 result
prog64 = G.Program([], [G.Stmt(G.Val("v1", "float64", (2,), False, G.TOL["float32"]), "(x)")], ["v1"], 0)
expect("inherited tolerance", V.differ(prog64, res(0, tensor("float64", [1.0, 2.0])),
                                        res(0, tensor("float64", [1.00001, 2.0]))) is None)

# generated programs stage and run on the CPU; the generator is deterministic
cpu = V.Tool(TOOL, "cpu")
errors = 0
for seed in range(40):
    p = G.generate(seed, 20)
    expect(f"seed {seed} deterministic", p.source() == G.generate(seed, 20).source())
    r = cpu.run(p.source(), p.args())
    errors += r["rc"] != 0
    if r["rc"] not in (0, 1):
        failures.append(f"seed {seed}: {r['stderr'][-300:]}")
expect(f"at most 4 of 40 programs fail (empty max/min/argmax): {errors}", errors <= 4)


# the minimizer against a fake device that gets `exp` wrong: one statement remains
class WrongExp:
    def run(self, src, args):
        return cpu.run(src.replace("(exp ", "(neg "), args)


big = None
for seed in range(200):
    p = G.generate(seed, 20)
    if V.check([cpu, WrongExp()], p) and p.nodes() >= 6:
        big = p
        break
expect("a mismatching program found", big is not None)
if big:
    small = V.minimize([cpu, WrongExp()], big)
    expect(f"minimized to one exp ({small.nodes()} of {big.nodes()}): {small.source()}",
           small.nodes() <= 2 and "(exp " in small.source() and V.check([cpu, WrongExp()], small))
cpu.stop()

print(f"{'FAIL' if failures else 'ok'}: vkdiff self-test")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
