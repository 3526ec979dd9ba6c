# SPDX-License-Identifier: Apache-2.0
"""syntax_errors.py — compare our syntax errors with CPython 3.12's on invalid snippets.

    python3.12 syntax_errors.py --tool PATH/pyast_tool [--snippets FILE]
                                [--min-reject N] [--min-location N] [--min-message N]

For every snippet of syntax_errors.txt that CPython's ast.parse rejects, we must reject
it too (all of them, unless --min-reject says otherwise); the number whose (line,
column) equal CPython's (lineno, offset) and whose message equals CPython's msg are
printed and checked against floors (which can only be raised). Snippets CPython
accepts are listed and must be none.

Second corpus (--truncated N): N stdlib files cut at a random byte (fixed seed), a
realistic stream of half-typed code. Accept/reject must agree with CPython on every
one; location and message matches are reported and checked against floors.
"""
import argparse
import ast
import glob
import os
import random
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")  # SyntaxWarnings from the corpus are not our concern


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts = text.split("\n----\n")
    return [p + "\n" for p in parts[1:] if p.strip()]


def truncated_files(n):
    root = os.path.dirname(ast.__file__)
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "site-packages")
        files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    rng = random.Random(20261122)
    rng.shuffle(files)
    out = []
    for f in files:
        if len(out) >= n:
            break
        with open(f, "rb") as fh:
            b = fh.read()
        if len(b) < 10 or b"coding" in b[:200]:
            continue
        cut = rng.randrange(len(b))
        try:
            out.append(b[:cut].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return out


def main():
    if sys.version_info[:2] != (3, 12):
        print("FAIL: must run under CPython 3.12 (the oracle)", file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--snippets", default=os.path.join(os.path.dirname(__file__),
                                                       "syntax_errors.txt"))
    ap.add_argument("--min-reject", type=int, default=-1)
    ap.add_argument("--min-location", type=int, default=0)
    ap.add_argument("--min-message", type=int, default=0)
    ap.add_argument("--bytes-snippets", nargs="*",
                    default=sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "source_cases", "err_*.py"))),
                    help="whole files compared as bytes (source encodings, coding declarations)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--truncated", type=int, default=300)
    ap.add_argument("--min-trunc-location", type=int, default=0)
    ap.add_argument("--min-trunc-message", type=int, default=0)
    args = ap.parse_args()
    snippets = load(args.snippets)
    for bf in args.bytes_snippets:
        with open(bf, "rb") as f:
            snippets.append(f.read())
    n_snippets = len(snippets)
    snippets += truncated_files(args.truncated)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, s in enumerate(snippets):
            p = os.path.join(tmp, "s%d.py" % i)
            with open(p, "wb") as f:
                f.write(s if isinstance(s, bytes) else s.encode("utf-8"))
            paths.append(p)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        proc = subprocess.run([args.tool, "batch", out], input="\n".join(paths) + "\n",
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print("FAIL: the tool crashed (exit %d)\n%s" % (proc.returncode, proc.stderr[-2000:]),
                  file=sys.stderr)
            return 1
        invalid = rejected = loc = msg = 0
        t_total = t_agree = t_invalid = t_loc = t_msg = 0
        accepted_by_cpython = []
        rows = []
        for i, s in enumerate(snippets):
            if i >= n_snippets:
                t_total += 1
                try:
                    ast.parse(s.encode("utf-8"))
                    exp = None
                except SyntaxError as e:
                    exp = (e.lineno, e.offset, e.msg)
                except ValueError as e:
                    exp = (0, 0, str(e))
                errf = os.path.join(out, "%d.err" % i)
                got = None
                if os.path.exists(errf):
                    with open(errf, encoding="utf-8", errors="replace") as f:
                        line, col, m = f.read().split(" ", 2)
                    got = (int(line), int(col), m)
                if (exp is None) == (got is None):
                    t_agree += 1
                else:
                    rows.append(("TRUNC-DISAGREE", s[-80:], exp, got))
                if exp is not None and got is not None:
                    t_invalid += 1
                    t_loc += got[0] == exp[0] and got[1] == (exp[1] or 0)
                    t_msg += got[2] == exp[2]
                continue
            try:
                ast.parse(s if isinstance(s, bytes) else s.encode("utf-8"))
                accepted_by_cpython.append(s)
                continue
            except SyntaxError as e:
                exp = (e.lineno, e.offset, e.msg)
            except ValueError as e:
                exp = (0, 0, str(e))
            invalid += 1
            errf = os.path.join(out, "%d.err" % i)
            if not os.path.exists(errf):
                rows.append(("ACCEPTED", s, exp, None))
                continue
            rejected += 1
            with open(errf, encoding="utf-8", errors="replace") as f:
                line, col, m = f.read().split(" ", 2)
            got = (int(line), int(col), m)
            # CPython's (0, -1) — an error about the whole source (its encoding) — is
            # our (0, 0): no line, no column
            ok_loc = got[0] == exp[0] and got[1] == (0 if exp[:2] == (0, -1) else (exp[1] or 0))
            ok_msg = got[2] == exp[2]
            loc += ok_loc
            msg += ok_msg
            if not (ok_loc and ok_msg):
                rows.append(("DIFF", s, exp, got))
    print("syntax errors: %d snippets, %d invalid for CPython" % (n_snippets, invalid))
    print("  rejected         %4d / %d" % (rejected, invalid))
    print("  line+column      %4d / %d (%.1f%%)" % (loc, invalid, 100.0 * loc / max(invalid, 1)))
    print("  message          %4d / %d (%.1f%%)" % (msg, invalid, 100.0 * msg / max(invalid, 1)))
    print("truncated stdlib files: %d, accept/reject agrees with CPython on %d; of the %d "
          "rejected, line+column equal %d, message equal %d"
          % (t_total, t_agree, t_invalid, t_loc, t_msg))
    if args.verbose:
        for kind, s, exp, got in rows:
            print("%s %r\n   cpython %r\n   ours    %r" % (kind, s, exp, got))
    failed = False
    if accepted_by_cpython:
        print("FAIL: %d snippets are valid for CPython: %r" % (len(accepted_by_cpython),
                                                              accepted_by_cpython[:5]),
              file=sys.stderr)
        failed = True
    if invalid < 150:
        print("FAIL: fewer than 150 invalid snippets", file=sys.stderr)
        failed = True
    if t_agree != t_total:
        print("FAIL: accept/reject differs from CPython on %d truncated files"
              % (t_total - t_agree), file=sys.stderr)
        failed = True
    for name, got, floor in (("truncated line+column", t_loc, args.min_trunc_location),
                             ("truncated message", t_msg, args.min_trunc_message)):
        if got < floor:
            print("FAIL: %s %d below the floor %d" % (name, got, floor), file=sys.stderr)
            failed = True
    need = invalid if args.min_reject < 0 else args.min_reject
    for name, got, floor in (("rejected", rejected, need), ("line+column", loc, args.min_location),
                             ("message", msg, args.min_message)):
        if got < floor:
            print("FAIL: %s %d below the floor %d" % (name, got, floor), file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
