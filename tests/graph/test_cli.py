#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""gr_tool end to end: the SEXPR.md examples and other programs in examples/, the four
dump formats (DOT checked with Graphviz's `dot` when installed, JSON parsed), located
diagnostics in the FILE:LINE:COL: error: MESSAGE form, exit codes, deadlines, and
`gr_tool batch` giving each case exactly what `gr_tool run` gives.
Usage: test_cli.py PATH/TO/gr_tool EXAMPLES_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOL, EX = sys.argv[1], sys.argv[2]
failures = []


def tool(*args, stdin=None):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, input=stdin, timeout=60)


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def run(file, args, *extra):
    return tool("run", os.path.join(EX, file), "--args", args, *extra)


tree = {"record": {"is_empty": False, "value": 3,
                   "left": {"record": {"is_empty": True}},
                   "right": {"record": {"is_empty": False, "value": 5,
                                        "left": {"record": {"is_empty": True}},
                                        "right": {"record": {"is_empty": True}}}}}}
CASES = [("runX.sexp", "[10]", 100), ("aggregate.sexp", "[100]", 5050),
         ("tree_prod.sexp", json.dumps([2, tree]), 2 * (2 * 2 * 5) * 3),
         ("closures.sexp", "[7]", {"tuple": [12, False, True]}),
         ("loop_print.sexp", "[10]", 1024),
         ("set_branch.sexp", "[9]", {"tuple": [18, 11]}), ("set_branch.sexp", "[3]", {"tuple": [3, 10]}),
         ("set_closure.sexp", "[5]", {"tuple": [10, 110]})]
for f, a, want in CASES:
    for opt in ([], ["--no-optimize"]):
        p = run(f, a, *opt)
        expect(f"run {f} {opt}", p.returncode == 0 and json.loads(p.stdout) == want,
               f"rc={p.returncode} out={p.stdout} err={p.stderr}")
p = run("loop_print.sexp", "[3]")
expect("print order", p.stderr.startswith("start 3\nresult 8\n"), repr(p.stderr))

# grad: Myia Figure 1, d/dx x**3 * y**4 at (2, 3) = 972 (graph/ad/ad.c, docs/ad.md)
for opt in ([], ["--no-optimize"]):
    p = run("grad.sexp", "[2, 3]", *opt)
    expect(f"grad {opt}", p.returncode == 0 and json.loads(p.stdout) == 972, f"rc={p.returncode} out={p.stdout} err={p.stderr}")

have_dot = shutil.which("dot") is not None
for f in ["runX.sexp", "aggregate.sexp", "tree_prod.sexp", "closures.sexp", "loop_print.sexp",
          "set_branch.sexp", "set_closure.sexp"]:
    path = os.path.join(EX, f)
    for opt in ([], ["--no-optimize"]):
        for fmt in ["sexpr", "text", "dot", "json"]:
            p = tool("stage", path, "--dump", fmt, *opt)
            expect(f"stage {f} {fmt}", p.returncode == 0 and p.stdout, p.stderr)
            if fmt == "json":
                try:
                    j = json.loads(p.stdout)
                    ok = "graphs" in j and all("nodes" in g and "output" in g for g in j["graphs"])
                    ids = {n["id"] for g in j["graphs"] for n in g["nodes"]}
                    ok = ok and all(i in ids for g in j["graphs"] for n in g["nodes"]
                                    for i in n.get("inputs", []) if not isinstance(i, str))
                except ValueError as e:
                    ok = False
                expect(f"json {f}", ok, p.stdout[:200])
            if fmt == "dot" and have_dot:
                d = subprocess.run(["dot", "-Tsvg"], input=p.stdout, capture_output=True, text=True)
                expect(f"dot accepts {f}", d.returncode == 0 and "<svg" in d.stdout, d.stderr)
            if fmt == "sexpr":
                with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as t:
                    t.write(p.stdout)
                args = dict((c[0], c[1]) for c in CASES)[f]
                r1 = run(f, args)
                r2 = tool("run", t.name, "--args", args)
                os.unlink(t.name)
                expect(f"sexpr dump re-runs {f}", r2.returncode == 0 and r1.stdout == r2.stdout,
                       r2.stderr)

# diagnostics
BAD = [("(def f (x)\n  (+ x 1)", "[1]", ":1:1: error: unbalanced parentheses"),
       ("(def f (x)\n  (nosuchop x))", "[1]", ":2:4: error: unknown primitive or function 'nosuchop'"),
       ("(def f (x)\n  (* x))", "[1]", ":2:3: error: wrong number of arguments to '*'"),
       # a primitive called through a computed value is checked where it runs (it once
       # ignored an extra argument, and inferred `ones` of none from nothing)
       ("(def f (x)\n  ((begin exp) x 2.0))", "[1.0]", ":2:3: error: wrong number of arguments to 'exp': got 2"),
       ("(def f (x)\n  ((expand_like ones (tuple 0.3))))", "[1.0]",
        ":2:3: error: wrong number of arguments to 'ones': got 0"),
       ("(def f ((x float32 (2 3)) (y float32 (3 3)))\n  (+ x y))", "[]",
        ":2:3: error: +: shapes (2,3) and (3,3) cannot be broadcast together"),
       ("(def f (n)\n  (+ 1 (f n)))", "[1]", ":2:8: error: recursion depth limit exceeded")]
for src, args, want in BAD:
    with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as t:
        t.write(src)
    p = tool("run", t.name, "--args", args)
    os.unlink(t.name)
    expect(f"diagnostic {want}", p.returncode == 1 and (t.name + want) in p.stderr, p.stderr)

with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as t:
    t.write("(def f (n)\n  (while (lambda (i) true) (lambda (i) (tuple (+ i 1))) (tuple n)))")
p = tool("run", t.name, "--args", "[0]", "--deadline-ms", "200")
os.unlink(t.name)
expect("endless while stops at the deadline", p.returncode == 1 and ":2:3: error: deadline exceeded" in p.stderr
       and "DEADLINE_EXCEEDED" in p.stderr, p.stderr)

# robustness: mutated programs and arguments never crash (exit 0, 1 or 2 only)
import random
random.seed(7)
srcs = [open(os.path.join(EX, f)).read() for f in sorted(os.listdir(EX)) if f.endswith(".sexp")]
tokens = ["(", ")", "(", ")", "x", "1", "2.5", "-1", "none", "true", "(tuple 1 2)", "(lambda (a) a)",
          "(if", "(while", "(let", "(getitem", "(+", "(matmul", "(reshape", "\"s\"", ";c\n",
          "(grad", "(def", "(set!", "(var", "(record (a 1))", "(getattr", "(slice", "(concat"]
argsets = ["[]", "[1]", "[1, 2]", "[[1,2],[3,4]]", "[{\"tuple\":[1,2]}]", "[2.5, true]",
           "[{\"record\":{\"is_empty\":true}}]", "[{\"dtype\":\"int32\",\"shape\":[2],\"data\":[1,2]}]"]
for i in range(150):
    src = random.choice(srcs)
    pos = random.randrange(len(src) + 1)
    cut = random.randrange(0, 6)
    src = src[:pos] + " ".join(random.choice(tokens) for _ in range(random.randrange(1, 4))) + src[pos + cut:]
    with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as t:
        t.write(src)
    p = tool("run", t.name, "--args", random.choice(argsets), "--deadline-ms", "2000")
    os.unlink(t.name)
    expect("fuzz no crash", p.returncode in (0, 1, 2) and "Sanitizer" not in p.stderr,
           f"rc={p.returncode} {p.stderr[-300:]}\n{src}")

# gr_tool batch: many runs in one process, each case's exit status and output exactly
# what `gr_tool run -` gives for it (errors included), --stats counted per case, and
# framing errors reported with the case number
def frame(src, args="", entry=""):
    s, a = src.encode(), args.encode()
    return f"case {len(s)} {len(a)}{' ' + entry if entry else ''}\n".encode() + s + a


batch_cases = [("(def f (a b) (* a b))", "[6, 7]", ""), ("(def f (x) (+ x", "[1]", ""),
               ("(def f (a) (sum a))", '[{"dtype":"int32","shape":[3],"data":[1,2,3]}]', ""),
               ("(def f (a) (max a))", '[{"dtype":"float32","shape":[0],"data":[]}]', ""),
               ("(def g () 5) (def h () 6)", "", "h"),
               ("(def f (n) (print n) n)", "[4]", ""),
               ("(def f (a) (cast a float16))", '[{"dtype":"int32","shape":[2],"data":[1,2]}]', "")]
for extra in ([], ["--stats"]):
    p = subprocess.run([TOOL, "batch", *extra], input=b"".join(frame(*c) for c in batch_cases),
                       capture_output=True, timeout=60)
    lines = p.stdout.decode().splitlines()
    expect("batch exit", p.returncode == 0 and len(lines) == len(batch_cases),
           f"rc={p.returncode} {p.stdout!r} {p.stderr!r}")
    for (src, args, entry), line in zip(batch_cases, lines):
        single = tool("run", "-", "--args", args or "[]", *(["--entry", entry] if entry else []),
                      *extra, stdin=src)
        r = json.loads(line)
        expect(f"batch = run {src!r} {extra}",
               (r["rc"], r["stdout"], r["stderr"]) == (single.returncode, single.stdout, single.stderr),
               f"batch {r} vs run rc={single.returncode} {single.stdout!r} {single.stderr!r}")
p = subprocess.run([TOOL, "batch"], input=frame("(def f () 1)") + b"kase 1 2\n", capture_output=True,
                   timeout=60)
expect("batch bad header", p.returncode == 2 and len(p.stdout.splitlines()) == 1 and
       b"case 2: bad header" in p.stderr, f"rc={p.returncode} {p.stdout!r} {p.stderr!r}")
p = subprocess.run([TOOL, "batch"], input=b"case 100 0\n(def f () 1)", capture_output=True, timeout=60)
expect("batch truncated", p.returncode == 2 and not p.stdout and
       b"case 1: input ends inside the case" in p.stderr, f"rc={p.returncode} {p.stderr!r}")

# regressions found by the fuzzer (fuzz_graph.c; docs/graph.md "Fuzzing")
def run_src(src, args, *extra):
    with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as t:
        t.write(src)
    p = tool("run", t.name, "--args", args, *extra)
    os.unlink(t.name)
    return p


def restage_same(name, src, args, *extra):
    """The sexpr dump of src stages again to the same id and runs to the same result."""
    with tempfile.NamedTemporaryFile("w", suffix=".sexp", delete=False) as t:
        t.write(src)
    d = tool("stage", t.name, "--dump", "sexpr", *extra)
    i1 = tool("id", t.name, *extra)
    r1 = tool("run", t.name, "--args", args, *extra)
    with open(t.name, "w") as f:
        f.write(d.stdout)
    i2 = tool("id", t.name, *extra)
    r2 = tool("run", t.name, "--args", args, *extra)
    os.unlink(t.name)
    expect(f"{name}: dump re-stages", d.returncode == 0 and i2.returncode == 0 and i1.stdout == i2.stdout,
           f"{i1.stdout!r} {i2.stdout!r} {i2.stderr}\n{d.stdout}")
    expect(f"{name}: dump re-runs", r1.returncode == 0 and (r1.stdout, r1.stderr) == (r2.stdout, r2.stderr),
           f"{r1.stdout!r} {r1.stderr!r} vs {r2.stdout!r} {r2.stderr!r}")


# JSON strings: escapes decoded (\uXXXX and surrogate pairs to UTF-8), raw control
# characters and bad escapes rejected with the offset
p = run_src("(def f (s) s)", '["a\\u0041\\u00e9\\ud83d\\ude00\\n\\/"]')
expect("json \\u escapes", p.returncode == 0 and json.loads(p.stdout) == "aA\u00e9\U0001F600\n/", p.stdout + p.stderr)
for bad, want in [('["a\x01"]', "offset 3: expected an escape (\\n, \\u00XX) instead of a raw control character"),
                  ('["\\ud83d"]', "offset 2: expected a \\uXXXX low surrogate"),
                  ('["\\u00"]', "offset 2: expected 4 hex digits after \\u"),
                  ('["\\u0000"]', "offset 2: expected a character other than \\u0000"),
                  ('["\\q"]', 'offset 2: expected an escape \\" \\\\ \\/')]:
    p = run_src("(def f (s) s)", bad)
    expect(f"json bad string {bad!r}", p.returncode == 1 and want in p.stderr, p.stderr)
# a string constant with a control character: the sexpr dump reads back
restage_same("dump string escapes", '(def f (x) (begin (print "a\x01\tb\\\"" x) x))', "[1]")
# a def named like AD's gradient graph: the dump keeps both apart
restage_same("grad name clash", "(def f (x) (* x x))\n(def grad_f (x) 0)\n"
             "(def main (x) (+ (grad_f x) ((grad f) x)))", "[3.0]")
p = run_src("(def f (x) (* x x))\n(def grad_f (x) 0)\n(def main (x) (+ (grad_f x) ((grad f) x)))", "[3.0]")
expect("grad name clash runs", p.returncode == 0 and json.loads(p.stdout) == 6.0, p.stdout + p.stderr)
for opt in ([], ["--no-optimize"]):
    restage_same(f"grad of while {opt}", "(def g (x) (getitem (while (lambda (i a) (< i 3)) "
                 "(lambda (i a) (tuple (+ i 1) (* a x))) (tuple 0 1.0)) 1))\n(def main (x) ((grad g) x))",
                 "[2.0]", *opt)
# staging errors the fuzzer reached: calling a non-function once inlining shows it, a
# reshape whose element count overflows, an integer literal beyond 64 bits
for src, want in [("(def adder (n) 5)\n(def main (a) (let f (adder 1) (f a)))",
                   ":2:32: error: cannot call a value of type int=5 (expected a function) (INVALID_ARGUMENT)"),
                  ("(def f (x)\n  (reshape x (tuple 9223372036854775807 3)))",
                   ":2:3: error: reshape: more than 268435456 elements (limit) (RESOURCE_EXHAUSTED)"),
                  ("(def f (x)\n  (+ x 9223372036854775808))",
                   ":2:8: error: integer '9223372036854775808' out of range: integers are 64-bit"),
                  # a nested def no call reaches (only returned) is checked all the same
                  ("(def f (a)\n  (begin (def g (x) ((> 1 2) x)) g))",
                   ":2:21: error: cannot call a value of type bool=false (expected a function)")]:
    for opt in ([], ["--no-optimize"]):
        p = run_src(src, "[[1, 2]]", *opt)
        expect(f"diagnostic {want} {opt}", p.returncode == 1 and want in p.stderr, p.stderr)
# an `if` the optimizer folded leaves its branch called directly: the dump reads back
restage_same("folded if branch", "(def even (n) (if (== n 0) true (odd (- n 1))))\n"
             "(def odd (n) (if (neg 0) false (even 0)))", "[4]")
# grad through a nested def that calls itself: a located error, not a stack overflow
p = run_src("(def outer (n)\n  (begin (def inner (k) (if (<= k 0) 0 (+ k (inner (- k 1))))) (inner n)))\n"
            "(def main (n) ((grad outer) n))", "[3.0]")
expect("grad of a recursive nested def", p.returncode == 1 and
       ":2:46: error: grad: differentiating the recursive nested def 'inner' is not implemented" in p.stderr,
       p.stderr)
p = run_src("(def outer (n)\n  (begin (def inner (k) (if (<= k 0) 0 (+ k (inner (- k 1))))) (inner n)))", "[3]")
expect("recursive nested def runs", p.returncode == 0 and json.loads(p.stdout) == 6, p.stdout + p.stderr)
# the CPU kernel's own check: a reshape to a shape only known at run time
p = run_src("(def f (x n)\n  (reshape x (tuple n 3)))", "[[1, 2], 9223372036854775807]")
expect("reshape overflow at run time", p.returncode == 1 and "more than 268435456 elements" in p.stderr, p.stderr)

print(f"{'ok' if not failures else 'FAILED'}: gr_tool cli tests (dot checked: {have_dot})")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
