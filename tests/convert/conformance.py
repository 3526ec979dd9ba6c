# SPDX-License-Identifier: Apache-2.0
"""conformance.py — compare stagd's Python front end with CPython 3.12 on the stdlib.

Run by ctest with CPython 3.12 (the oracle):
    python3.12 conformance.py --tool PATH/pyast_tool [--min-dump N] [--min-attrs N]
                              [--min-unparse N] [--min-reject N] [--jobs J] [FILES...]

For every .py file of the 3.12 standard library (site-packages excluded), or the
FILES given:
  * where CPython parses it: our ast.dump text must equal CPython's byte for byte, with
    and without attributes, and our unparse output, parsed by CPython, must give an AST
    equal to the original;
  * where CPython rejects it, we must reject it too.
Counts are printed; the run fails if any count is below its floor (default: all files,
i.e. 100%). Floors can only be raised.
"""
import argparse
import ast
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")  # SyntaxWarnings from the corpus are not our concern
import time


def oracle_check():
    if sys.version_info[:2] != (3, 12):
        print("FAIL: conformance.py must run under CPython 3.12 (the oracle); got %s"
              % sys.version.split()[0], file=sys.stderr)
        sys.exit(2)


def stdlib_files():
    root = os.path.dirname(ast.__file__)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "site-packages")
        for f in sorted(filenames):
            if f.endswith(".py"):
                out.append(os.path.join(dirpath, f))
    return out


def cpython_result(path):
    """(dump, attrs_dump) or ('ERR', lineno, offset, msg)."""
    with open(path, "rb") as f:
        src = f.read()
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        return ("ERR", e.lineno, e.offset, e.msg)
    except (ValueError, UnicodeError) as e:
        return ("ERR", 0, 0, str(e))
    return (ast.dump(tree), ast.dump(tree, include_attributes=True))


def cpython_batch(paths):
    return [cpython_result(p) for p in paths]


def run_tool(tool, paths, outdir):
    os.makedirs(outdir, exist_ok=True)
    proc = subprocess.run([tool, "batch", outdir], input="\n".join(paths) + "\n",
                          capture_output=True, text=True)
    return proc.returncode, proc.stderr


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def unparse_ok(ours_src, expected_dump):
    try:
        return ast.dump(ast.parse(ours_src)) == expected_dump
    except Exception:
        return False


def main():
    oracle_check()
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--min-dump", type=int, default=-1)
    ap.add_argument("--min-attrs", type=int, default=-1)
    ap.add_argument("--min-unparse", type=int, default=-1)
    ap.add_argument("--min-reject", type=int, default=-1)
    ap.add_argument("--show", type=int, default=30, help="mismatching files to list")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or stdlib_files()
    if not files:
        print("FAIL: no files found", file=sys.stderr)
        return 2
    t0 = time.time()
    jobs = max(1, args.jobs)
    chunks = [files[i::jobs] for i in range(jobs)]
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        futs = [pool.submit(cpython_batch, c) for c in chunks]
        with concurrent.futures.ThreadPoolExecutor(jobs) as tp:
            tool_futs = [tp.submit(run_tool, args.tool, c, os.path.join(tmp, str(i)))
                         for i, c in enumerate(chunks)]
            for i, f in enumerate(tool_futs):
                rc, err = f.result()
                if rc != 0:
                    print("FAIL: the tool crashed on chunk %d (exit %d)\n%s" % (i, rc, err[-2000:]),
                          file=sys.stderr)
                    return 1
        expected = [f.result() for f in futs]
        n_ok_parse = n_dump = n_attrs = n_unparse = 0
        n_rej = n_rej_ok = 0
        bad = {"dump": [], "attrs": [], "unparse": [], "reject": [], "accept": []}
        unparse_jobs = []
        for ci, chunk in enumerate(chunks):
            for k, path in enumerate(chunk):
                exp = expected[ci][k]
                base = os.path.join(tmp, str(ci), str(k))
                ours_err = read(base + ".err")
                if exp[0] == "ERR":
                    n_rej += 1
                    if ours_err is not None:
                        n_rej_ok += 1
                    else:
                        bad["reject"].append(path)
                    continue
                n_ok_parse += 1
                if ours_err is not None:
                    bad["accept"].append("%s: %s" % (path, ours_err))
                    continue
                if read(base + ".dump") == exp[0]:
                    n_dump += 1
                else:
                    bad["dump"].append(path)
                if read(base + ".attrs") == exp[1]:
                    n_attrs += 1
                else:
                    bad["attrs"].append(path)
                unparse_jobs.append((path, read(base + ".unparse") or "", exp[0]))
        results = list(pool.map(unparse_ok, [u[1] for u in unparse_jobs],
                                [u[2] for u in unparse_jobs], chunksize=16))
        for (path, _, _), ok in zip(unparse_jobs, results):
            if ok:
                n_unparse += 1
            else:
                bad["unparse"].append(path)
    dt = time.time() - t0
    print("conformance: %d files in %.1fs (%d parsed by CPython, %d rejected)"
          % (len(files), dt, n_ok_parse, n_rej))
    print("  dump            %5d / %d" % (n_dump, n_ok_parse))
    print("  dump+attributes %5d / %d" % (n_attrs, n_ok_parse))
    print("  unparse         %5d / %d" % (n_unparse, n_ok_parse))
    print("  rejected too    %5d / %d" % (n_rej_ok, n_rej))
    for k, v in bad.items():
        if v:
            print("  mismatching (%s): %d, first ones:" % (k, len(v)))
            for x in v[:args.show]:
                print("    " + x)
    floors = [("dump", n_dump, args.min_dump, n_ok_parse),
              ("dump+attributes", n_attrs, args.min_attrs, n_ok_parse),
              ("unparse", n_unparse, args.min_unparse, n_ok_parse),
              ("rejected", n_rej_ok, args.min_reject, n_rej)]
    failed = False
    for name, got, floor, total in floors:
        need = total if floor < 0 else floor
        if got < need:
            print("FAIL: %s %d below the required %d" % (name, got, need), file=sys.stderr)
            failed = True
        elif floor >= 0 and got < total:
            print("NOTE: %s floor is %d of %d (not yet 100%%)" % (name, floor, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
