# SPDX-License-Identifier: Apache-2.0
"""test_analysis_symtable.py — checks the activity analysis' scope tree against
CPython 3.12's own compiler (the `symtable` module) over many real files.

For every module, function, lambda, comprehension and class scope CPython reports, the
analysis (run through test_analysis_tool) must have the same scope (matched by kind,
name and line among the siblings) with the same local variables, parameters, `global`
and `nonlocal` declarations and — for function-like scopes — free variables (names
taken from an enclosing function). Files with PEP 695 type parameters are skipped
(the analysis gives them no scope of their own, documented in docs/analyses.md).

Two CPython 3.12 implementation details are applied to the analysis' answer before
comparing, since the analysis describes the source (what the converter re-emits) and
symtable the compiled code: list / set / dict comprehensions are inlined (PEP 709: their
variables are reported as locals of the enclosing scope and they have no table), and
private names inside classes are mangled (`__x` → `_C__x`).

usage: python3.12 test_analysis_symtable.py --tool PATH [--min-files N] [FILE_OR_DIR...]
(no paths: the interpreter's top-level standard library modules and its scope-heavy
tests — grammar, scopes, comprehensions, walrus, super, classes, pattern matching)
"""
import argparse
import ast
import glob
import os
import subprocess
import symtable
import sys
import sysconfig
import warnings

IMPLICIT = {"__class__", "__classdict__"}
DEFAULT_TESTS = ["test_scope", "test_named_expressions", "test_listcomps", "test_grammar",
                 "test_super", "test_dictcomps", "test_setcomps", "test_genexps",
                 "test_class", "test_patma"]


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


def parse_tool(text):
    """{path: [(parent, kind, name, line, locals, params, globals, nonlocals, free, read)]}"""
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            cur = out.setdefault(line[3:], [])
        elif line.startswith("!! "):
            out[line[3:]] = None
            cur = None
        elif cur is not None:
            f = line.split("|")
            sets = [frozenset(x for x in s.split(",") if x) for s in f[5:11]]
            cur.append((int(f[1]), f[2], f[3], int(f[4]), *sets))
    return out


class Node:
    def __init__(self, row):
        self.row = row
        self.children = []
        self.parent = None


INLINED = {"listcomp", "setcomp", "dictcomp"}


def mangle(name, cls):
    if cls is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = cls.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


def inline_and_mangle(node, cls):
    """PEP 709 inlining and private-name mangling applied to the analysis' tree."""
    if node.row[1] == "class":
        cls = node.row[2]
    m = lambda names: {mangle(x, cls) for x in names}
    node.sets = [m(node.row[i]) for i in range(4, 10)]  # the analysis' own answer
    node.locals = set(node.sets[0])  # plus inlined comprehension variables
    kids = []
    for c in node.children:
        inline_and_mangle(c, cls)
        if c.comprehension and c.row[2] in INLINED:
            # CPython merges a comprehension variable only if the enclosing scope
            # does not use the name itself
            node.locals |= c.locals - node.sets[5] - node.sets[2] - node.sets[3]
            kids.extend(c.kids)
        else:
            kids.append(c)
    node.kids = kids
    node.comprehension = node.row[1] == "comprehension"
    if node.comprehension:
        node.row = (node.row[0], "function") + tuple(node.row[2:])


def build_tree(rows):
    """rows[i] is scope i; row[0] is its parent's index (-1 for the module)."""
    nodes = [Node(row) for row in rows]
    root = None
    for n in nodes:
        if n.row[0] < 0:
            root = n
        else:
            n.parent = nodes[n.row[0]]
            n.parent.children.append(n)
    inline_and_mangle(root, None)
    return root


def function_free(node):
    """Names of node.free that resolve to a local of an enclosing function scope (in the
    analysis' own tree, before inlining)."""
    out = set()
    for x in node.sets[4]:
        p = node.parent
        while p is not None:
            kind, locs, globs = p.row[1], p.sets[0], p.sets[2]
            if kind == "module":
                break
            if kind == "class":
                p = p.parent
                continue
            if x in globs:
                break
            if x in locs or x in p.sets[3]:
                out.add(x)
                break
            p = p.parent
    return out


def walk(node):
    yield node
    for c in node.kids:
        yield from walk(c)


def has_type_params(t):
    if t.get_type() not in ("module", "function", "class"):
        return True
    return any(has_type_params(c) for c in t.get_children())


def compare(path, table, node, errors):
    kind = table.get_type()
    name = "top" if kind == "module" else table.get_name()
    line = 0 if kind == "module" else table.get_lineno()
    where = f"{path}: {kind} {name}@{line}"
    row = node.row
    if (row[1], row[2], row[3]) != (kind, name, line):
        errors.append(f"{where}: matched {row[1]} {row[2]}@{row[3]}")
        return
    syms = [s for s in table.get_symbols() if not s.get_name().startswith(".")]
    want = {
        "locals": {s.get_name() for s in syms if s.is_local()} - IMPLICIT,
        "globals": {s.get_name() for s in syms if s.is_declared_global()},
        "nonlocals": {s.get_name() for s in syms if s.is_nonlocal()},
    }
    got = {"locals": node.locals - IMPLICIT, "globals": node.sets[2], "nonlocals": node.sets[3]}
    if kind == "module":
        # CPython marks a module name `global` when any function declares it so, and
        # then does not count it as local even where a function binds it
        declared = set().union(*(n.sets[2] for n in walk(node)))
        got["globals"] = declared
        got["locals"] = got["locals"] - declared
        want["locals"] = want["locals"] - declared
    if kind == "function":
        want["params"] = {p for p in table.get_parameters() if not p.startswith(".")}
        got["params"] = node.sets[1]
        want["free"] = set(table.get_frees()) - IMPLICIT
        got["free"] = function_free(node) - IMPLICIT
    for k in want:
        if want[k] != got[k]:
            errors.append(f"{where}: {k}: cpython {sorted(want[k])} analysis {sorted(got[k])}")
    mine = list(node.kids)
    for ct in table.get_children():
        ck = ("top" if ct.get_type() == "module" else ct.get_name(), ct.get_lineno())
        cands = [i for i, c in enumerate(mine) if (c.row[2], c.row[3]) == ck]
        if not cands:
            errors.append(f"{where}: no scope for {ct.get_type()} {ck[0]}@{ck[1]}")
            continue
        # several scopes on one line (nested lambdas, generator expressions): the
        # visiting orders differ, so prefer the one with the same local names
        tl = {s.get_name() for s in ct.get_symbols()
              if s.is_local() and not s.get_name().startswith(".")} - IMPLICIT
        best = next((i for i in cands if mine[i].locals - IMPLICIT == tl), cands[0])
        compare(path, ct, mine.pop(best), errors)
    for c in mine:
        errors.append(f"{where}: extra scope {c.row[1]} {c.row[2]}@{c.row[3]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--min-files", type=int, default=1)
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # the corpus has invalid escapes etc.
    paths = args.paths
    if not paths:
        lib = sysconfig.get_paths()["stdlib"]
        paths = sorted(glob.glob(os.path.join(lib, "*.py"))) + [
            os.path.join(lib, "test", t + ".py") for t in DEFAULT_TESTS]
    files, sources = [], {}
    for f in py_files(paths):
        try:
            raw = open(f, "rb").read()
            compile(raw, f, "exec", ast.PyCF_ONLY_AST)  # as bytes: coding cookies apply
            table = symtable.symtable(raw.decode("utf-8"), f, "exec")
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        if has_type_params(table):
            continue
        files.append(f)
        sources[f] = table
    checked, errors = 0, []
    for i in range(0, len(files), 200):
        batch = files[i:i + 200]
        res = subprocess.run([args.tool] + batch, capture_output=True, text=True, check=True)
        trees = parse_tool(res.stdout)
        for f in batch:
            rows = trees.get(f)
            if rows is None:
                errors.append(f"{f}: the analysis tool could not parse it")
                continue
            compare(f, sources[f], build_tree(rows), errors)
            checked += 1
    for e in errors[:50]:
        print("MISMATCH", e)
    print(f"{checked} files checked against symtable, {len(errors)} mismatches")
    if errors or checked < args.min_files:
        sys.exit(1)


if __name__ == "__main__":
    main()
