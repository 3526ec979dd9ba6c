#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""adfuzz.py — random differential testing of reverse-mode AD (graph/ad*.c).

Generates seeded random differentiable programs (adfuzz_gen.py) and checks, per program,
through long-lived `gr_tool batch` processes:
  (a) `(grad f 0 1 ...)` w.r.t. every float parameter against central finite differences
      in float64 (each element perturbed by H and H/2; where the two disagree f is not
      smooth at the point — an `if` or a kink next to it — and a new point is drawn; a
      program whose points are all non-smooth counts as skipped, not passed);
  (b) the optimized gradient against the `--no-optimize` one (1e-12 relative);
  (c) the gradient on `--device` (vulkan:0) against the CPU one (1e-9 relative: the
      device's float64 exp/tanh/sin round differently from libm's).
A gradient that fails to stage or run is a mismatch too (the generator avoids the forms
docs/ad.md lists as unsupported); when f itself fails, the generator is at fault
(reported as GENERATOR, also a failure of the run). On a mismatch it prints the seed, the symptom and a minimized
program (nodes replaced by a child of their shape, or by a fresh parameter, while the
same kind of mismatch remains).

Usage: adfuzz.py PATH/TO/gr_tool [--device vulkan:0|none] [--seeds A:B] [--show SEED]
       [--no-minimize] [--size N]
Exit status 1 when any seed mismatched. ctest runs a bounded seed range (graph.adfuzz);
docs/ad.md "Random differential testing" says how to run long.
"""
import argparse
import copy
import json
import os
import re
import select
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adfuzz_gen as G  # noqa: E402
from vkdiff import Tool  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from json_values import dec, enc  # noqa: E402

H = 1e-4
SMOOTH_TOL = 1e-6     # |FD(H) - FD(H/2)| beyond this (relative): not smooth here
FD_TOL = 1e-5         # |AD - Richardson(FD)| relative
OPT_TOL = 1e-12
DEVICE_TOL = 1e-9
POINTS = 3            # points tried before a program counts as non-smooth
CASE_TIMEOUT = 120    # seconds a case may take (finite differences run many points)


class Tools:
    def __init__(self, tool, device):
        self.opt = Tool(tool, "cpu", CASE_TIMEOUT)
        self.noopt = Tool(tool, "cpu", CASE_TIMEOUT)
        self.noopt.cmd.append("--no-optimize")
        self.dev = Tool(tool, device, CASE_TIMEOUT) if device != "none" else None

    def stop(self):
        for t in (self.opt, self.noopt, self.dev):
            if t:
                t.stop()


def flat(v):
    """A gradient result (number, tensor or tuple of them) → list of float64 arrays."""
    if isinstance(v, tuple):
        return [np.asarray(x, dtype=np.float64) for x in v]
    return [np.asarray(v, dtype=np.float64)]


def grads(tool, prog, src, args):
    r = tool.run(src, args + [prog.n], "grad_all")
    if r["rc"] != 0:
        return None, f"grad_all failed (rc {r['rc']}): {r['stderr'].strip()[-400:]}"
    g = flat(dec(json.loads(r["stdout"])))
    if len(prog.params) == 1:
        g = g[:1]
    for (p, s), x in zip(prog.params, g):
        if x.shape != s:
            return None, f"gradient of {p} has shape {x.shape}, parameter {s}"
    return g, None


def close(a, b, tol):
    return np.allclose(a, b, rtol=tol, atol=tol * (1 + max(np.max(np.abs(b), initial=0), 0)))


def worst(a, b):
    d = np.abs(a - b)
    i = np.unravel_index(np.argmax(d), d.shape) if d.shape else ()
    return f"at {tuple(int(k) for k in i)}: {a[i]!r} vs {b[i]!r}"


def fd_check(tools, prog, src, args, g):
    """None when g matches central differences at args, 'nonsmooth' when f is not smooth
    there, else the symptom."""
    pts = []
    where = []
    for pi, (_, s) in enumerate(prog.params):
        for idx in np.ndindex(*s) if s else [()]:
            for h in (H, -H, H / 2, -H / 2):
                a = [np.array(x, dtype=np.float64) if not isinstance(x, float) else x for x in args]
                if s:
                    a[pi] = a[pi].copy()
                    a[pi][idx] += h
                else:
                    a[pi] = a[pi] + h
                pts.append(a)
            where.append((pi, idx))
    fsrc = prog.fd_source(len(pts))
    r = tools.noopt.run(fsrc, [x for a in pts for x in a], "fd_all")
    if r["rc"] != 0:
        return f"f failed (rc {r['rc']}): {r['stderr'].strip()[-400:]}"
    vals = [float(np.asarray(v)) for v in dec(json.loads(r["stdout"]))]
    for k, (pi, idx) in enumerate(where):
        fp, fm, fp2, fm2 = vals[4 * k:4 * k + 4]
        d1, d2 = (fp - fm) / (2 * H), (fp2 - fm2) / H
        if not np.isfinite(d1) or abs(d1 - d2) > SMOOTH_TOL * (1 + abs(d2)):
            return "nonsmooth"
        want = (4 * d2 - d1) / 3
        got = float(g[pi][idx])
        if not abs(got - want) <= FD_TOL * (1 + abs(want)):
            return (f"d f / d {prog.params[pi][0]}{list(idx)}: AD {got!r} vs finite "
                    f"differences {want!r}")
    return None


def check(tools, prog, rng_seed=0):
    """('ok'|'nonsmooth'|KIND, symptom) for one program. KIND names the check that
    failed (error, fd, opt, device), so the minimizer keeps the same kind."""
    src = prog.source()
    rng = np.random.default_rng(prog.seed * 7919 + rng_seed)
    last = None
    for _ in range(POINTS):
        args = prog.point(rng)
        g, err = grads(tools.opt, prog, src, args)
        if err:
            fv = tools.opt.run(src, args + [prog.n], "fval")
            if fv["rc"] != 0:  # f itself fails: the generator's typing is wrong
                return "generator", "f fails too: " + fv["stderr"].strip()[-300:]
            return "error", err
        g0, err = grads(tools.noopt, prog, src, args)
        if err:
            return "error", "--no-optimize: " + err
        for (p, _), a, b in zip(prog.params, g, g0):
            if not close(a, b, OPT_TOL):
                return "opt", f"d f / d {p}: optimized vs --no-optimize {worst(a, b)}"
        if tools.dev:
            gd, err = grads(tools.dev, prog, src, args)
            if err:
                return "device", "device: " + err
            for (p, _), a, b in zip(prog.params, gd, g):
                if not close(a, b, DEVICE_TOL):
                    return "device", f"d f / d {p}: device vs cpu {worst(a, b)}"
        why = fd_check(tools, prog, src, args, g)
        if why is None:
            return "ok", None
        if why != "nonsmooth":
            return "fd", why
        last = why
    return "nonsmooth", last


def replacements(prog):
    """Smaller variants of prog: a let binding's node replaced by a child of the same
    shape, or (in f) by a fresh parameter; helper bodies likewise (children only)."""
    def sites():
        for li, (_, node) in enumerate(prog.lets):
            yield ("let", li), node
        yield ("res", 0), prog.result
        for hi, h in enumerate(prog.helpers):
            if h[2] is not None:
                yield ("helper", hi), h[2]

    for where, root in list(sites()):
        paths = []

        def walk(n, path):
            paths.append((n, path))
            for i, k in enumerate(n.kids):
                walk(k, path + [i])
        walk(root, [])
        paths.sort(key=lambda np_: -np_[0].size())
        for node, path in paths:
            subs = [k for k in node.kids if k.shape == node.shape]
            if node.in_f and node.size() > 1 and all(isinstance(d, int) for d in node.shape):
                subs.append("param")
            for sub in subs:
                p2 = copy.deepcopy(prog)
                if sub == "param":
                    name = f"y{sum(n.size() for _, n in p2.lets) + len(p2.params)}"
                    while name in [q for q, _ in p2.params]:
                        name += "_"
                    p2.params.append((name, node.shape))
                    new = G.leaf(name, node.shape)
                else:
                    new = copy.deepcopy(sub)
                if where[0] == "let":
                    r = p2.lets[where[1]][1]
                elif where[0] == "res":
                    r = p2.result
                else:
                    r = p2.helpers[where[1]][2]
                if not path:
                    if where[0] == "let":
                        p2.lets[where[1]] = (p2.lets[where[1]][0], new)
                    elif where[0] == "res":
                        p2.result = new
                    else:
                        h = p2.helpers[where[1]]
                        p2.helpers[where[1]] = (h[0], h[1], new)
                else:
                    for i in path[:-1]:
                        r = r.kids[i]
                    r.kids[path[-1]] = new
                yield p2


def drop_lets(prog):
    """Variants without an unused let binding, or with the result on one value."""
    text = prog.result.text()
    for li in range(len(prog.lets) - 1, -1, -1):
        name = prog.lets[li][0]
        later = text + " ".join(n.text() for _, n in prog.lets[li + 1:])
        if not re.search(rf"(?<![\w$]){name}(?![\w$])", later):
            p2 = copy.deepcopy(prog)
            del p2.lets[li]
            yield p2
    for k in prog.result.kids:
        if len(prog.result.kids) > 1:
            p2 = copy.deepcopy(prog)
            p2.result = G.Node((), "(sum (sin {0}))", [copy.deepcopy(k)])
            yield p2


def drop_params(prog):
    for i in range(len(prog.params) - 1, -1, -1):
        name = prog.params[i][0]
        if not re.search(rf"(?<![\w$]){name}(?![\w$])", prog.f_source().split("\n", 1)[1]) \
                and len(prog.params) > 1:
            p2 = copy.deepcopy(prog)
            del p2.params[i]
            yield p2


def same_error(a, b):
    """The same error message (its location and numbers aside)."""
    strip = lambda s: re.sub(r"-:\d+:\d+:|[-\d.e]+", "", s or "")  # noqa: E731
    return strip(a) == strip(b)


def minimize(tools, prog, kind, budget=400, symptom=None):
    best = prog
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for cand in list(drop_lets(best)) + list(drop_params(best)) + list(replacements(best)):
            if cand.nodes() > best.nodes() or (cand.nodes() == best.nodes() and
                                                len(cand.params) >= len(best.params)):
                continue
            tries += 1
            k, why = check(tools, cand)
            if k == kind and (kind != "error" or same_error(why, symptom)):
                best, changed = cand, True
                break
            if tries >= budget:
                break
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--device", default="vulkan:0", help="device for check (c), or none")
    ap.add_argument("--seeds", default="0:100")
    ap.add_argument("--show", type=int, help="print one seed's program and a point")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--size", type=int, default=5, help="most let bindings in f")
    ap.add_argument("--depth", type=int, default=3, help="deepest expression of a binding")
    o = ap.parse_args()
    if o.show is not None:
        prog = G.generate(o.show, o.size, o.depth)
        print(prog.source(), end="")
        print("; args (grad_all, fval):",
              json.dumps([enc(x) for x in prog.point(np.random.default_rng(o.show * 7919))] + [prog.n]))
        return 0
    lo, hi = map(int, o.seeds.split(":"))
    tools = Tools(o.tool, o.device)
    t0 = time.time()
    bad, counts, nodes = [], {}, 0
    for seed in range(lo, hi):
        prog = G.generate(seed, o.size, o.depth)
        nodes += prog.nodes()
        kind, why = check(tools, prog)
        counts[kind] = counts.get(kind, 0) + 1
        if kind in ("ok", "nonsmooth"):
            continue
        if kind == "generator":  # not an AD failure, but the generator must not do it
            print(f"GENERATOR seed {seed}: {why}", flush=True)
            bad.append(seed)
            continue
        print(f"MISMATCH seed {seed} ({kind}): {why}", flush=True)
        small = prog if o.no_minimize else minimize(tools, prog, kind, symptom=why)
        print(f"  minimized ({small.nodes()} of {prog.nodes()} nodes):", flush=True)
        print("  " + small.source().replace("\n", "\n  "), flush=True)
        print(f"  args: {json.dumps([enc(x) for x in small.point(np.random.default_rng(seed * 7919))] + [small.n])}")
        print(f"  now: {check(tools, small)}", flush=True)
        bad.append(seed)
    tools.stop()
    n = hi - lo
    skipped = counts.get("nonsmooth", 0)
    print(f"adfuzz: {n} programs ({nodes} nodes): {counts.get('ok', 0)} passed, {skipped} "
          f"non-smooth at every point tried ({'expected' if skipped <= n / 4 else 'TOO MANY'}), "
          f"{len(bad)} mismatches {bad}, {time.time() - t0:.1f} s")
    return 1 if bad or skipped > n / 4 else 0


if __name__ == "__main__":
    sys.exit(main())
