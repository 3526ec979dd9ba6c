#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""vkdiff.py — random differential testing of the Vulkan executor against the CPU one.

Generates seeded random programs (vkdiff_gen.py), runs each on `--device cpu` and on the
Vulkan device through two long-lived `gr_tool batch` processes, and compares: both fail
with the same status code, or both succeed with results of the same dtypes and shapes
whose values agree within the conformance suite's tolerances (vkdiff_gen.TOL; exact for
integers and bools). On a mismatch it prints the seed, the symptom and a minimized
program (statements replaced by fresh parameters and dead code dropped while it still
mismatches). First it checks that vkdiff_gen.OP_COVERAGE names every row of the op
table (graph/ir/ops.c), so a new primitive is either generated or excluded with a reason.

Usage: vkdiff.py PATH/TO/gr_tool [--device vulkan:0] [--seeds A:B] [--show SEED]
       [--no-minimize]
Exit status 1 when any seed mismatched. ctest runs a bounded seed range
(graph.vkdiff); docs/vulkan.md "Random differential testing" says how to run long.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vkdiff_gen as G  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from json_values import dec, enc  # noqa: E402

OPS_C = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "graph", "ir", "ops.c")
CASE_TIMEOUT = 60


def check_coverage(ops_c_text=None):
    rows = re.findall(r'ROW\("([^"]+)"', ops_c_text or open(OPS_C).read())
    missing = [r for r in rows if r not in G.OP_COVERAGE]
    stale = [k for k in G.OP_COVERAGE if k not in rows]
    if missing or stale:
        sys.exit(f"vkdiff: vkdiff_gen.OP_COVERAGE is out of date with graph/ir/ops.c: rows not "
                 f"covered {missing}, entries that are no rows {stale}")
    return rows


class Tool:
    """One `gr_tool batch` process: a case in, its result line out; restarted after a
    crash or hang (which is that case's result)."""

    def __init__(self, tool, device, timeout=CASE_TIMEOUT):
        self.cmd = [tool, "batch", "--device", device] + (["--stats"] if device != "cpu" else [])
        self.p = None
        self.timeout = timeout

    def start(self):
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        os.set_blocking(self.p.stderr.fileno(), False)

    def run(self, src, args, entry=None):
        """One case (calling def `entry`, default the last); a crash or hang is rc -1."""
        if self.p is None or self.p.poll() is not None:
            self.start()
        s, a = src.encode(), json.dumps([enc(x) for x in args]).encode()
        head = f"case {len(s)} {len(a)}" + (f" {entry}" if entry else "")
        try:
            self.p.stdin.write(f"{head}\n".encode() + s + a)
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        r, _, _ = select.select([self.p.stdout], [], [], self.timeout)
        line = self.p.stdout.readline() if r else b""
        if not line:
            self.stop()
            return {"rc": -1, "stdout": "", "stderr": "gr_tool crashed or hung"}
        return json.loads(line)

    def stop(self):
        if self.p:
            self.p.kill()
            self.p.wait()
            self.p = None


def error_code(r):
    m = re.findall(r"\(([A-Z_]+)\)\s*$", r["stderr"].strip(), re.M)
    return m[-1] if m else r["stderr"].strip()[-200:]


def differ(prog, rc, rv):
    """Why the CPU result rc and the device result rv disagree, or None."""
    if rc["rc"] != 0 or rv["rc"] != 0:
        if rc["rc"] != rv["rc"] or error_code(rc) != error_code(rv):
            return (f"cpu rc {rc['rc']} {rc['stderr'].strip()[-300:]!r} vs device rc {rv['rc']} "
                    f"{rv['stderr'].strip()[-300:]!r}")
        return None
    a, b = dec(json.loads(rc["stdout"])), dec(json.loads(rv["stdout"]))
    tols = {st.val.name: st.val.tol for st in prog.stmts}
    tols.update({p.name: 0.0 for p in prog.params})
    for k, (x, y) in enumerate(zip(a, b)):
        name = prog.outputs[k]
        if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
            if x != y:
                return f"output {k} ({name}): cpu {x!r} vs device {y!r}"
            continue
        if x.dtype != y.dtype or x.shape != y.shape:
            return f"output {k} ({name}): cpu {x.dtype}{x.shape} vs device {y.dtype}{y.shape}"
        if x.dtype.kind == "f":
            t = max(G.TOL[str(x.dtype)], tols.get(name, 0.0))
            ok = np.allclose(y.astype(np.float64), x.astype(np.float64), rtol=t, atol=t,
                             equal_nan=True)
        else:
            ok = np.array_equal(x, y)
        if not ok:
            bad = np.argwhere(~np.isclose(y.astype(np.float64), x.astype(np.float64), rtol=t,
                                          atol=t, equal_nan=True)) if x.dtype.kind == "f" else \
                np.argwhere(x != y)
            i = tuple(bad[0]) if len(bad) else ()
            return (f"output {k} ({name}) {x.dtype}{x.shape}: {len(bad)} elements differ, "
                    f"first at {i}: cpu {x[i]!r} vs device {y[i]!r}")
    return None


def check(tools, prog):
    src, args = prog.source(), prog.args()
    rc, rv = tools[0].run(src, args), tools[1].run(src, args)
    return differ(prog, rc, rv)


def minimize(tools, prog):
    """Smaller programs that still mismatch: the earliest statement that mismatches as
    the only output, then each statement replaced by a fresh parameter of its type,
    dead code dropped after each step."""
    best = G.prune(prog)
    # the earliest statement that mismatches as the only output
    for st in best.stmts:
        cand = G.prune(G.Program(best.params, best.stmts, [st.val.name], best.seed))
        if check(tools, cand):
            best = cand
            break
    changed = True
    counter = 900000
    while changed:
        changed = False
        for i in range(len(best.stmts) - 1, -1, -1):
            st = best.stmts[i]
            counter += 1
            p = G.Val(f"p{counter}", st.val.dtype, st.val.shape)
            pat = re.compile(rf"(?<![\w$]){re.escape(st.val.name)}(?![\w$])")
            stmts = [G.Stmt(s.val, pat.sub(p.name, s.expr), s.defs) for s in best.stmts[i + 1:]]
            outs = [p.name if o == st.val.name else o for o in best.outputs]
            cand = G.prune(G.Program(best.params + [p], best.stmts[:i] + stmts, outs, best.seed))
            if cand.nodes() < best.nodes() and check(tools, cand):
                best, changed = cand, True
                break
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--device", default="vulkan:0")
    ap.add_argument("--seeds", default="0:200")
    ap.add_argument("--show", type=int, help="print one seed's program and arguments")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--size", type=int, default=12, help="most statements per program")
    o = ap.parse_args()
    rows = check_coverage()
    if o.show is not None:
        prog = G.generate(o.show, o.size)
        print(prog.source())
        print(json.dumps([enc(x) for x in prog.args()]))
        return 0
    lo, hi = map(int, o.seeds.split(":"))
    tools = [Tool(o.tool, "cpu"), Tool(o.tool, o.device)]
    t0 = time.time()
    bad, errors, nodes, totals = [], 0, 0, {}
    for seed in range(lo, hi):
        prog = G.generate(seed, o.size)
        nodes += prog.nodes()
        src, args = prog.source(), prog.args()
        rc, rv = tools[0].run(src, args), tools[1].run(src, args)
        errors += rc["rc"] != 0
        for line in rv["stderr"].splitlines():
            if line.startswith("vk_stats "):
                for k, v in json.loads(line[9:]).items():
                    totals[k] = totals.get(k, 0) + v
        why = differ(prog, rc, rv)
        if why:
            print(f"MISMATCH seed {seed}: {why}", flush=True)
            small = prog if o.no_minimize else minimize(tools, prog)
            print(f"  minimized ({small.nodes()} of {prog.nodes()} statements; "
                  f"args {json.dumps([enc(x) for x in small.args()])}):", flush=True)
            print("  " + small.source().replace("\n", "\n  "), flush=True)
            print(f"  now: {check(tools, small)}", flush=True)
            bad.append(seed)
    for t in tools:
        t.stop()
    n = hi - lo
    print(f"vkdiff: {n} programs ({nodes} statements, {errors} failing alike on both is "
          f"{'expected' if errors < n / 4 else 'TOO MANY'}), {len(rows)} op rows checked, "
          f"{len(bad)} mismatches {bad}, {time.time() - t0:.1f} s")
    print(f"vkdiff: device counters over all programs {json.dumps(totals)}")
    return 1 if bad or errors >= n / 4 else 0


if __name__ == "__main__":
    sys.exit(main())
