# SPDX-License-Identifier: Apache-2.0
"""_stagefuzz.py — random differential testing of staged Python functions.

Each program from _stagegen.generate(seed) runs twice per argument tuple: as plain Python
on NumPy (`stagd` bound to _stagegen.NUMPY_STAGD: the reference) and through
`stagd.function` in a daemon (Convert, staging, Execute; optionally on a Vulkan device).
Results must agree: same structure (tuple arity), array shapes and dtypes, values within
float tolerance, and an exception on one side only is a finding. A finding is reported
with its seed, the case, the symptom and a program minimized by statement deletion.

    STAGD_BIN=build/server/stagd STAGD_GENERATED_DIR=build/python/stagd_gen \\
      /usr/bin/python3 tests/integration/_stagefuzz.py --seed 0 --count 500 [--device vulkan:0]

(starts its own daemon; --addr uses a running one). tests/integration/test_stage_random.py
runs a fixed seed range; docs/runtime.md "Random differential testing".
"""
import argparse
import atexit
import contextlib
import itertools
import os
import re
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import harness  # noqa: E402  (puts clients/python on sys.path)
import stagd  # noqa: E402
import _stagegen  # noqa: E402

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-12)}

_tmpdir = tempfile.mkdtemp(prefix="stagefuzz-")
atexit.register(shutil.rmtree, _tmpdir, True)
_serial = itertools.count()


def _load(text, stagd_module):
    """Execs `text` from a file of its own (inspect reads the source back) with `stagd`
    bound to `stagd_module`; returns the namespace."""
    path = os.path.join(_tmpdir, f"prog{next(_serial)}.py")
    with open(path, "w") as fh:
        fh.write(text)
    ns = {"__name__": os.path.basename(path)[:-3], "__file__": path, "stagd": stagd_module}
    exec(compile(text, path, "exec"), ns)
    return ns


def _as_arrays(result, dtype):
    items = result if isinstance(result, tuple) else (result,)
    out = []
    for v in items:
        if isinstance(v, stagd.Tensor):
            v = v.numpy()
        elif isinstance(v, list):  # a plain list of the reference: the staged list stacks it
            v = np.asarray(v, dtype=dtype) if v else np.zeros((0,), dtype)
        out.append(np.asarray(v))
    return isinstance(result, tuple), out


def compare(ref, got, dtype):
    """Differences between the reference result and the staged one (list of strings)."""
    rt, ra = _as_arrays(ref, dtype)
    gt, ga = _as_arrays(got, dtype)
    if rt != gt or len(ra) != len(ga):
        return [f"structure: reference {type(ref).__name__} of {len(ra)}, staged "
                f"{type(got).__name__} of {len(ga)}"]
    diffs = []
    for i, (r, g) in enumerate(zip(ra, ga)):
        if r.shape != g.shape:
            diffs.append(f"result {i}: shape {r.shape} (reference) vs {g.shape} (staged)")
            continue
        if r.ndim and r.dtype != g.dtype:
            diffs.append(f"result {i}: dtype {r.dtype} (reference) vs {g.dtype} (staged)")
        elif r.dtype.kind in "iub" and g.dtype.kind == "f" or r.dtype.kind == "f" and g.dtype.kind in "iub":
            diffs.append(f"result {i}: scalar kind {r.dtype} (reference) vs {g.dtype} (staged)")
        # a float32 program's float64 results (float() of a float32 sum, a float32
        # scalar times a Python float) carry float32 rounding from the sums before them
        tol = TOL["float32" if np.float32 in (r.dtype, g.dtype) or dtype == "float32" else "float64"]
        if not np.allclose(r.astype(np.float64), g.astype(np.float64), equal_nan=True, **tol):
            diffs.append(f"result {i}: values {r.tolist()} (reference) vs {g.tolist()} (staged)")
    return diffs


def compare_tree(ref, got, dtype):
    """compare() for results holding containers (state programs): the same structure —
    container kinds, dict keys, lengths — and the leaves compared as compare() does."""
    from stagd.runtime import tree

    def leaves(v):
        return tree.flatten(v, is_leaf=lambda x: isinstance(x, stagd.Tensor))
    rl, rt = leaves(ref)
    gl, gt = leaves(got)
    if rt != gt:
        return [f"structure: reference {tree.describe(rt)} vs staged {tree.describe(gt)}"]
    return compare(tuple(rl), tuple(gl), dtype)


def _call(fn, args, device):
    try:
        with stagd.device(device) if device else contextlib.nullcontext():
            return fn(*args), None
    except Exception as e:  # noqa: BLE001 — every exception is a behaviour to compare
        return None, e


def _exc(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"


def check(text, cases, dtype, client, device=None, state=False):
    """Runs one program; returns [(case index, [difference, ...])] (empty when equal).
    state: containers in the results (compare_tree), and an exception on both sides
    must be the same type (the staged program raises the Python exception too)."""
    findings = []
    try:
        ref_ns = _load(text, _stagegen.NUMPY_STAGD)
        staged = stagd.function(_load(text, stagd)["f"], client=client)
    except SyntaxError as e:
        return [(None, [f"invalid program: {e}"])]
    for ci, args in enumerate(cases):
        with np.errstate(all="ignore"):
            ref, ref_err = _call(ref_ns["f"], [np.copy(a) if isinstance(a, np.ndarray) else a
                                               for a in args], None)
        got, got_err = _call(staged, args, device)
        if ref_err and got_err:
            if state and type(ref_err) in (ValueError, UnboundLocalError) and \
                    (type(got_err) is not type(ref_err) or str(got_err) != str(ref_err)):
                findings.append((ci, [f"exception: reference {_exc(ref_err)}, staged {_exc(got_err)}"]))
            continue  # both raise (the types differ by design: daemon errors are StagdErrors)
        if ref_err:
            findings.append((ci, [f"reference raised {_exc(ref_err)}; staged returned"]))
        elif got_err:
            findings.append((ci, [f"staged raised {_exc(got_err)}"]))
        else:
            diffs = (compare_tree if state else compare)(ref, got, dtype)
            if diffs:
                findings.append((ci, diffs))
    return findings


def _kind(findings):
    return findings[0][1][0].split(":")[0].split(" (")[0] if findings else None


_COUNTER_STEP = re.compile(r"c\d+ \+= 1")


def _blocks(lines):
    """(start, end) line ranges that can be deleted: each statement with its nested block
    (not f's final return, nor a while loop's counter step, which bounds the loop)."""
    out = []
    for i, line in enumerate(lines):
        if (not line.strip() or line.startswith("def f(") or line.startswith("    return")
                or _COUNTER_STEP.fullmatch(line.strip()) or not line.startswith(" ")):
            continue
        ind = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > ind:
            j += 1
        out.append((i, j))
    return out


def minimize(text, case, dtype, client, device=None, state=False):
    """Deletes statements (with their blocks) while the same kind of difference remains."""
    want = _kind(check(text, [case], dtype, client, device, state))
    lines = text.splitlines()
    changed = True
    while changed:
        changed = False
        for start, end in sorted(_blocks(lines), key=lambda b: b[0] - b[1]):
            if end > len(lines):
                continue
            cand = lines[:start] + lines[end:]
            ind = len(lines[start]) - len(lines[start].lstrip())
            prev = lines[start - 1] if start else ""
            if prev.rstrip().endswith(":") and (end >= len(lines) or
                                                len(lines[end]) - len(lines[end].lstrip()) < ind):
                cand = lines[:start] + [" " * ind + "pass"] + lines[end:]
                if lines[start].strip() == "pass":
                    continue
            ctext = "\n".join(cand) + "\n"
            try:
                compile(ctext, "<cand>", "exec")
            except SyntaxError:
                continue
            if _kind(check(ctext, [case], dtype, client, device, state)) == want:
                lines, changed = cand, True
                break
    return "\n".join(lines) + "\n"


class Finding:
    def __init__(self, seed, case, diffs, text, mini, device):
        self.seed, self.case, self.diffs, self.text, self.mini, self.device = seed, case, diffs, text, mini, device

    def refused(self):
        """Staging refused the program with a located StagingError (no wrong value)."""
        return all(d.startswith("staged raised StagingError") for d in self.diffs)

    def report(self):
        args = ", ".join(repr(a.tolist()) if isinstance(a, np.ndarray) else repr(a) for a in self.case)
        return (f"seed {self.seed}{' on ' + self.device if self.device else ''}: " + "; ".join(self.diffs)
                + f"\n  arguments (x, y, m, k, a, n, flag) = ({args})\n  minimized program:\n"
                + "".join("    " + l + "\n" for l in self.mini.splitlines()))


def run(seeds, client, device=None, minimize_findings=True, log=None, state=False):
    findings, stats = [], {"programs": 0, "cases": 0}
    for seed in seeds:
        p = _stagegen.generate(seed, state)
        stats["programs"] += 1
        stats["cases"] += len(p.cases)
        got = check(p.text, p.cases, p.dtype, client, device, state)
        if got:
            ci, diffs = got[0]
            case = p.cases[ci] if ci is not None else None
            mini = (minimize(p.text, case, p.dtype, client, device, state)
                    if minimize_findings and case else p.text)
            findings.append(Finding(seed, case, diffs, p.text, mini, device))
            if log:
                log(findings[-1].report())
    return findings, stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--device", default=None, help="run the staged functions on this device (vulkan:0)")
    ap.add_argument("--addr", default=None, help="a running daemon (default: start one)")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--state", action="store_true",
                    help="programs with containers as state, tensor lists, variables bound on "
                         "some paths, staged raise and match (_stagegen.Gen._state_stmt)")
    opts = ap.parse_args(argv)
    daemon = None
    if opts.addr is None:
        daemon = harness.Daemon(["--listen", "127.0.0.1:0", "--workers", "4"])
    client = stagd.Client(opts.addr or daemon.addr)
    stagd.set_default_client(client)
    try:
        findings, stats = run(range(opts.seed, opts.seed + opts.count), client, opts.device,
                              not opts.no_minimize, log=lambda s: print(s, flush=True),
                              state=opts.state)
    finally:
        client.close()
        if daemon:
            daemon.terminate()
    refused = [f for f in findings if f.refused()]
    print(f"{stats['programs']} programs, {stats['cases']} cases, {len(findings)} findings "
          f"({len(refused)} refused with a located StagingError, "
          f"{len(findings) - len(refused)} different results or exceptions)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
