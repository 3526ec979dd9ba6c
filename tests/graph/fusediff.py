#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""fusediff.py — random differential test of the executor's fused elementwise chains
(graph/exec/fused.c) against the same programs run op by op (STAGD_FUSE=0).

Each seed makes a program whose body is a chain of elementwise ops (+ - * / maximum
minimum, unary math, unary minus) over float32 tensors, with operands drawn from the
chain so far, the parameters (float32 of the chain's shape — or, to exercise the
fallback, a broadcast row or column, float64, int32 or a 0-d tensor) and Python number
literals; some programs reuse an intermediate value or return one, which ends a chain.
Sizes straddle the fused kernel's block (1024) and the parallel threshold (65536). All
cases run through two `gr_tool batch` processes, one with fusion and one without; the
outputs (exit status, result JSON, errors) must be identical — the float printer is
exact, so equal text is equal bits.

Some programs open their chain with a matmul (x0 @ x3, a [R, 5] result from a [5, 5]
matrix), a reduction or a softmax over an axis, or a reshape: the chain that reads such
a temporary for the last time writes its output over it on the CPU (its epilogue, in
place) when the temporary has the output's shape and nothing else holds it (a reshape
is a view: never); the CPU's counters must show that this happened (--min-in-place of
the programs). On a Vulkan device a chain after a float32 matmul or reduction runs in
that kernel as its epilogue (graph/vulkan/exec_vulkan_fused.c), counted by
--min-epilogue.

With --device vulkan:N the same programs run on that Vulkan device, where a chain is one
generated kernel (graph/vulkan/exec_vulkan_fused.c) and op by op is one dispatch per
op: the results must again be identical, and the executor's counters must show that
chains did run fused (--min-fused of the programs, or the test fails: a fusion that
silently stopped happening would otherwise pass).

Usage: fusediff.py PATH/TO/gr_tool [--seeds A:B] [--device D] [--min-fused F]
                   [--min-in-place F] [--show SEED]
"""
import argparse
import json
import os
import random
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from json_values import enc  # noqa: E402

BINARY = ["+", "-", "*", "/", "maximum", "minimum"]
UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "sin", "cos", "-"]
LITERALS = ["1.5", "2", "-0.25", "3.0", "0.1", "-7", "1e-3", "100000001"]
SIZES = [1, 5, 1023, 1025, 3000, 70000]


def case(seed):
    """(source, args JSON) of one seeded program."""
    r = random.Random(seed)
    n = r.choice(SIZES)
    headed = r.random() < 0.5  # the chain reads a head's result: an epilogue (2-d mostly)
    shape = [n] if r.random() < (0.2 if headed else 0.6) else [max(1, n // 5), 5] if n >= 5 else [n]
    rng = np.random.default_rng(seed)

    def f32(shp):
        return (rng.standard_normal(shp) * 3).astype(np.float32)

    args = [f32(shape), f32(shape)]
    odd = r.random()
    if odd < 0.15:  # broadcast along the rows, or (2-D) a column
        args.append(f32(shape[-1:]) if len(shape) == 1 or r.random() < 0.5 else f32([shape[0], 1]))
    elif odd < 0.25:
        args.append(rng.standard_normal(shape))  # float64
    elif odd < 0.32:
        args.append(rng.integers(-5, 5, shape).astype(np.int32))
    elif odd < 0.38:
        args.append(np.float32(1.25))  # a 0-d tensor
    else:
        args.append(f32(shape))
    params = ["x0", "x1", "x2"]
    cur = r.choice(params)
    lets, names = [], []
    two_d = len(shape) == 2
    args.append(f32([5, 5]) if two_d else np.float32(0.5))  # x3: the matmul's matrix
    if headed:
        heads = ["(softmax x0 -1)", "(reshape x0 (tuple -1))"]
        if two_d:
            heads += ["(matmul x0 x3)"] * 6 + ["(sum x0 0)", "(mean x1 -1)",
                      "(softmax x1 0)", "(transpose x0)", "(reshape (matmul x0 x3) (tuple -1 5))"]
        lets.append(("h", r.choice(heads)))
        names.append("h")
        cur = "h"
    for i in range(r.randint(1, 7) if headed else r.randint(2, 12)):
        if r.random() < 0.35:
            op = r.choice(UNARY)
            expr = f"({op} {cur})"
        else:
            op = r.choice(BINARY)
            other = r.choice(params + LITERALS + LITERALS)
            if names and r.random() < 0.08:
                other = r.choice(names)  # an earlier value read again: ends a chain
            if r.random() < 0.05:
                other = cur  # (op t t)
            a, b = (cur, other) if r.random() < 0.7 else (other, cur)
            expr = f"({op} {a} {b})"
        name = f"t{i}"
        lets.append((name, expr))
        names.append(name)
        cur = name
    out = cur
    if len(names) > 2 and r.random() < 0.2:
        out = f"(tuple {r.choice(names[:-1])} {cur})"
    body = out
    for name, expr in reversed(lets):
        body = f"(let {name} {expr}\n  {body})"
    src = f"(def main (x0 x1 x2 x3)\n  {body})\n"
    return src, json.dumps([enc(a) for a in args])


def without_stats(line):
    """(the case's answer without the counters, its counts of chains fused on the device
    and of those run as a matmul's epilogue there, its count of chains run in place on
    the CPU)"""
    r = json.loads(line)
    kept, fused, epilogues, in_place = [], 0, 0, 0
    for ln in r["stderr"].splitlines(keepends=True):
        if ln.startswith("vk_stats "):
            st = json.loads(ln[len("vk_stats "):])
            fused += st["fused"]
            epilogues += st["epilogues"]
        elif ln.startswith("cpu_stats "):
            in_place += json.loads(ln[len("cpu_stats "):])["in_place"]
        else:
            kept.append(ln)
    r["stderr"] = "".join(kept)
    return json.dumps(r, sort_keys=True), fused, epilogues, in_place


def run_all(tool, cases, fuse, device):
    env = dict(os.environ)
    env["STAGD_FUSE"] = "1" if fuse else "0"
    data = bytearray()
    for src, args in cases:
        s, a = src.encode(), args.encode()
        data += f"case {len(s)} {len(a)}\n".encode() + s + a
    cmd = [tool, "batch", "--stats"] + (["--device", device] if device != "cpu" else [])
    p = subprocess.run(cmd, input=bytes(data), stdout=subprocess.PIPE, env=env,
                       timeout=600, check=False)
    lines = p.stdout.decode().splitlines()
    if len(lines) != len(cases):
        sys.exit(f"fusediff: gr_tool batch (STAGD_FUSE={env['STAGD_FUSE']}) answered "
                 f"{len(lines)} of {len(cases)} cases (exit {p.returncode})")
    return [without_stats(ln) for ln in lines]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--seeds", default="0:200")
    ap.add_argument("--show", type=int)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--min-fused", type=float, default=0.0,
                    help="fraction of the programs that must have run a fused chain")
    ap.add_argument("--min-epilogue", type=float, default=0.0,
                    help="(device) fraction of the programs that must have run an epilogue")
    ap.add_argument("--min-in-place", type=float, default=0.0,
                    help="(CPU) fraction of the programs that must have run a chain in place")
    a = ap.parse_args()
    if a.show is not None:
        print(case(a.show)[0])
        return 0
    lo, hi = map(int, a.seeds.split(":"))
    seeds = list(range(lo, hi))
    cases = [case(s) for s in seeds]
    fused_runs = run_all(a.tool, cases, True, a.device)
    plain_runs = run_all(a.tool, cases, False, a.device)
    fused = [f[0] for f in fused_runs]
    plain = [p[0] for p in plain_runs]
    nfused = sum(1 for f in fused_runs if f[1])
    nepilogue = sum(1 for f in fused_runs if f[2])
    nin_place = sum(1 for f in fused_runs if f[3])
    if any(any(p[1:]) for p in plain_runs):
        print("fusediff: STAGD_FUSE=0 still fused chains")
        return 1
    bad = [s for s, f, p in zip(seeds, fused, plain) if f != p]
    ok = sum(1 for f in fused if json.loads(f)["rc"] == 0)
    for s in bad[:5]:
        i = seeds.index(s)
        print(f"seed {s}: fused and op-by-op results differ\n{cases[i][0]}\n"
              f"fused:    {fused[i][:400]}\nop by op: {plain[i][:400]}")
    print(f"fusediff: {len(seeds)} programs on {a.device} ({ok} ran without error), "
          f"{len(bad)} mismatched" + (f", {nfused} ran a fused kernel, {nepilogue} an epilogue"
                                      if a.device != "cpu" else f", {nin_place} ran a chain in place"))
    if nfused < a.min_fused * len(seeds):
        print(f"fusediff: fewer than {a.min_fused:.0%} of the programs ran a fused kernel")
        return 1
    if nepilogue < a.min_epilogue * len(seeds):
        print(f"fusediff: fewer than {a.min_epilogue:.0%} of the programs ran a matmul epilogue")
        return 1
    if nin_place < a.min_in_place * len(seeds):
        print(f"fusediff: fewer than {a.min_in_place:.0%} of the programs ran a chain in place")
        return 1
    if ok < len(seeds) // 2:
        print("fusediff: too few programs ran; the generator is broken")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
