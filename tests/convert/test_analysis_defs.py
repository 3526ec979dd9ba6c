# SPDX-License-Identifier: Apache-2.0
"""test_analysis_defs.py — checks reaching definitions against CPython 3.12's compiler.

CPython 3.12 emits LOAD_FAST for a local variable it has proven bound at that point and
LOAD_FAST_CHECK where it may be unbound (its own dataflow over the bytecode CFG). For
every load of a function's local that both see, the analysis (test_analysis_tool
--defs, i.e. py_an_reaching_defs) must never claim "definitely bound" where CPython
checks: that would be unsound. The other direction (the analysis unsure where CPython
proves it, e.g. thanks to constant folding or duplicated finally blocks) is only
imprecision; it is reported and must stay below --max-imprecise percent.

Skipped: functions with more than 64 locals (CPython then checks every load), names
of inlined comprehension variables (CPython saves and restores them around the
comprehension and then checks every load of them), and files with `except*` (CPython's
control flow for exception groups is more conservative than Python's semantics).

usage: python3.12 test_analysis_defs.py --tool PATH [--min-loads N] [FILE_OR_DIR...]
(no paths: the interpreter's top-level standard library modules)
"""
import argparse
import ast
import dis
import glob
import os
import subprocess
import sys
import sysconfig
import warnings


def py_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".py"):
                        yield os.path.join(root, f)
        else:
            yield p


def cpython_loads(code, out):
    """{(line, col, name): all loads proven bound} over function code objects."""
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            cpython_loads(c, out)
    if code.co_name.startswith("<") or not (code.co_flags & 1) or code.co_nlocals > 64:
        return  # module / class bodies, lambdas, genexprs; too many locals
    insns = list(dis.get_instructions(code))
    # variables of inlined comprehensions (PEP 709) are saved and restored around them
    # with LOAD_FAST_AND_CLEAR, after which CPython checks every load of that name
    inlined = {i.argval for i in insns if i.opname == "LOAD_FAST_AND_CLEAR"}
    for ins in insns:
        if ins.opname not in ("LOAD_FAST", "LOAD_FAST_CHECK") or ins.argval in inlined:
            continue
        pos = ins.positions
        if pos is None or pos.lineno is None:
            continue
        key = (pos.lineno, pos.col_offset, ins.argval)
        out[key] = out.get(key, True) and ins.opname == "LOAD_FAST"


def parse_tool(text):
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            cur = out.setdefault(line[3:], {})
        elif line.startswith("!! "):
            out[line[3:]] = None
            cur = None
        elif cur is not None:
            pos, name, bound = line.split(" ")
            ln, col = pos.split(":")
            cur[(int(ln), int(col), name)] = bound == "1"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--min-loads", type=int, default=1)
    ap.add_argument("--max-imprecise", type=float, default=2.0)
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    paths = args.paths or sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))
    files, loads = [], {}
    for f in py_files(paths):
        try:
            raw = open(f, "rb").read()
            code = compile(raw, f, "exec")
            tree = ast.parse(raw)
        except (SyntaxError, ValueError):
            continue
        if any(isinstance(node, ast.TryStar) for node in ast.walk(tree)):
            continue
        files.append(f)
        loads[f] = {}
        cpython_loads(code, loads[f])
    compared = unsound = imprecise = 0
    errors = []
    for i in range(0, len(files), 200):
        batch = files[i:i + 200]
        res = subprocess.run([args.tool, "--defs"] + batch, capture_output=True, text=True,
                             check=True)
        mine = parse_tool(res.stdout)
        for f in batch:
            m = mine.get(f)
            if m is None:
                errors.append(f"{f}: the analysis tool could not parse it")
                continue
            for key, proven in loads[f].items():
                if key not in m:
                    continue
                compared += 1
                if m[key] and not proven:
                    unsound += 1
                    errors.append(f"{f}:{key[0]}:{key[1]}: {key[2]}: analysis says bound, "
                                  "CPython checks")
                elif proven and not m[key]:
                    imprecise += 1
    for e in errors[:50]:
        print("MISMATCH", e)
    pct = 100.0 * imprecise / max(compared, 1)
    print(f"{len(files)} files, {compared} loads compared with CPython: {unsound} unsound, "
          f"{imprecise} imprecise ({pct:.2f}%)")
    if errors or compared < args.min_loads or pct > args.max_imprecise:
        sys.exit(1)


if __name__ == "__main__":
    main()
