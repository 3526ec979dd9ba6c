# SPDX-License-Identifier: Apache-2.0
"""test_import_layers.py — the Python client (clients/python/stagd) has no import cycles and
keeps the layer order documented in docs/client.md "How the package is layered".

The checker reads every module of the package with `ast` (nothing is imported) and
collects every import of a module of the package: module level and inside functions and
methods, `import stagd.x`, `from stagd.x import y`, relative ones (`from . import x`,
`from .. import name`), and `importlib.import_module` / `__import__` with a literal name.
An import resolves to the module it names — `from P import n` to the submodule `P.n`
when there is one, else to `P` itself (its `__init__`); the parent packages Python
initialises on the way are not edges. Imports only under `if TYPE_CHECKING:` are exempt.

It then fails naming each cycle (`a -> b -> a`, each step with the file and line of its
import), and each import from a module to a layer its own layer may not import. The
layers come from the table in docs/client.md, so the documentation and the check cannot
drift apart. The checker's own tests run it on small synthetic packages.
"""
import ast
import re
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = REPO / "clients" / "python" / "stagd"
LAYERS_DOC = REPO / "docs" / "client.md"
LAYERS_HEADING = "## How the package is layered"


# ----------------------------------------------------------------------- the checker

def package_modules(root, name):
    """{module name: path} of every .py file of the package at `root` named `name`."""
    mods = {}
    for path in sorted(Path(root).rglob("*.py")):
        parts = [name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Imports(ast.NodeVisitor):
    """(line, absolute dotted name, imported names or None) of each import in a module."""

    def __init__(self, package):
        self.package = package  # the package a relative import starts from
        self.found = []

    def visit_If(self, node):
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            self.found.append((node.lineno, alias.name, None))

    def visit_ImportFrom(self, node):
        base = self._absolute(node.level, node.module or "")
        self.found.append((node.lineno, base, [a.name for a in node.names]))

    def visit_Call(self, node):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in ("import_module", "__import__") and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            target = node.args[0].value
            if name == "import_module" and target.startswith("."):
                # relative to `package` when it is a literal, else (__package__) to ours
                given = node.args[1:2] or [k.value for k in node.keywords if k.arg == "package"]
                anchor = given[0].value if given and isinstance(given[0], ast.Constant) \
                    else self.package
                level = len(target) - len(target.lstrip("."))
                target = _Imports(anchor)._absolute(level, target.lstrip("."))
            self.found.append((node.lineno, target, None))
        self.generic_visit(node)

    def _absolute(self, level, module):
        if level == 0:
            return module
        parts = self.package.split(".")
        base = parts[:len(parts) - (level - 1)] if level > 1 else parts
        return ".".join(base + ([module] if module else []))


def import_edges(root, name):
    """{(importer, imported): (file, line) of the first such import} between the modules
    of the package (see the module docstring for how an import resolves)."""
    mods = package_modules(root, name)

    def resolve(dotted):
        while dotted and dotted not in mods:  # `import pkg.mod.Class`: the module part
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    edges = {}
    for mod, path in mods.items():
        is_package = path.name == "__init__.py"
        visitor = _Imports(mod if is_package else mod.rpartition(".")[0])
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        shown = path.relative_to(Path(root).parent).as_posix()  # pkg/sub/m.py
        for line, dotted, names in visitor.found:
            if dotted != name and not dotted.startswith(name + "."):
                continue
            targets = [f"{dotted}.{n}" if f"{dotted}.{n}" in mods else dotted
                       for n in names] if names else [dotted]
            for target in map(resolve, targets):
                if target is not None and target != mod:
                    edges.setdefault((mod, target), (shown, line))
    return edges


def find_cycles(edges):
    """One cycle [m1, m2, ..., m1] per strongly connected component with more than one
    module (Tarjan), in a stable order."""
    graph = {}
    for a, b in sorted(edges):
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index, low, stack, on_stack, comps = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    cycles = []
    for comp in comps:
        start = min(comp)
        path, seen = [start], {start}
        while True:  # walk inside the component until a module repeats
            nxt = next(w for w in graph[path[-1]] if w in comp)
            if nxt in seen:
                cycles.append(path[path.index(nxt):] + [nxt])
                break
            path.append(nxt)
            seen.add(nxt)
    return cycles


def describe_cycle(cycle, edges):
    steps = []
    for a, b in zip(cycle, cycle[1:]):
        shown, line = edges[(a, b)]
        steps.append(f"{a} -> {b} ({shown}:{line})")
    return "import cycle: " + "; ".join(steps)


def parse_layers(markdown, package):
    """[(layer name, [module names], {layer names it may import})] from the first table
    after the LAYERS_HEADING line, bottom layer first. Module cells name modules
    relative to the package in backticks (`runtime.sexpr`); the package's own
    `__init__` is written as the package's name. `—` in the last column: no other layer."""
    lines = markdown.splitlines()
    try:
        start = lines.index(LAYERS_HEADING)
    except ValueError:
        raise AssertionError(f"no heading {LAYERS_HEADING!r}") from None
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or set(cells[0]) <= set("-: ") or cells[0] == "layer":
            continue
        mods = [m if m == package else f"{package}.{m}"
                for m in re.findall(r"`([A-Za-z_][\w.]*)`", cells[1])]
        may = set() if cells[2] in ("—", "-") else {
            x.strip() for x in cells[2].split(",") if x.strip()}
        rows.append((cells[0], mods, may))
    if not rows:
        raise AssertionError(f"no layer table under {LAYERS_HEADING!r}")
    return rows


def layer_problems(layers, mods, edges):
    """What breaks the layering: modules in no layer or in two, names of no module,
    may-import lists naming a layer that is not below, and each import that reaches a
    layer its importer's layer may not import."""
    problems, layer_of, order = [], {}, {}
    for i, (name, members, may) in enumerate(layers):
        order[name] = i
        for other in sorted(may):
            if order.get(other, i) >= i:
                problems.append(f"layer {name!r} may import {other!r}, which is not a layer "
                                "below it")
        for m in members:
            if m not in mods:
                problems.append(f"layer {name!r} lists {m}, which is no module of the package")
            elif m in layer_of:
                problems.append(f"{m} is in two layers, {layer_of[m]!r} and {name!r}")
            layer_of.setdefault(m, name)
    for m in sorted(set(mods) - set(layer_of)):
        problems.append(f"{m} is in no layer (add it to the table)")
    may_import = {name: may for name, _, may in layers}
    for (a, b), (shown, line) in sorted(edges.items()):
        la, lb = layer_of.get(a), layer_of.get(b)
        if la is None or lb is None or la == lb or lb in may_import[la]:
            continue
        problems.append(f"{shown}:{line}: {a} (layer {la!r}) imports {b} (layer {lb!r}), "
                        f"but {la!r} may import only {sorted(may_import[la]) or 'nothing'}")
    return problems


# ----------------------------------------------------------------- the real package

def test_the_package_has_no_import_cycles():
    edges = import_edges(PACKAGE_DIR, "stagd")
    # the checker sees deferred and relative imports (a guard against reading nothing)
    assert ("stagd", "stagd.ipython") in edges  # inside load_ipython_extension
    assert ("stagd.runtime.lsp_stage", "stagd.runtime.stage") in edges
    cycles = find_cycles(edges)
    assert not cycles, "\n".join(describe_cycle(c, edges) for c in cycles)


def test_the_package_keeps_its_documented_layers():
    mods = package_modules(PACKAGE_DIR, "stagd")
    layers = parse_layers(LAYERS_DOC.read_text(encoding="utf-8"), "stagd")
    problems = layer_problems(layers, mods, import_edges(PACKAGE_DIR, "stagd"))
    assert not problems, "\n".join(problems)


# ------------------------------------------------- the checker on synthetic packages

def _package(tmp_path, files):
    root = tmp_path / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_checker_names_a_cycle_through_deferred_and_dynamic_imports(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from .c import thing\n    return thing\n",
        "c.py": "import importlib\n\n\ndef g():\n    return importlib.import_module('pkg.a')\n",
        "d.py": "import os\nimport numpy\nfrom pkg import a\n",  # no cycle through d
    })
    edges = import_edges(root, "pkg")
    assert set(edges) == {("pkg.a", "pkg.b"), ("pkg.b", "pkg.c"), ("pkg.c", "pkg.a"),
                          ("pkg.d", "pkg.a")}
    cycles = find_cycles(edges)
    assert cycles == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert describe_cycle(cycles[0], edges) == (
        "import cycle: pkg.a -> pkg.b (pkg/a.py:1); pkg.b -> pkg.c (pkg/b.py:2); "
        "pkg.c -> pkg.a (pkg/c.py:5)")


def test_checker_sees_imports_of_the_package_itself(tmp_path):
    # `from .. import name` (a name, not a module) and `import pkg` reach the __init__
    root = _package(tmp_path, {
        "__init__.py": "from .sub import m\n\n\ndef helper():\n    pass\n",
        "sub/__init__.py": "",
        "sub/m.py": "def f():\n    from .. import helper\n    return helper\n",
        "n.py": "def f():\n    import pkg\n    return pkg\n",
        "o.py": "def f():\n    return __import__('pkg.n')\n",
        "sub/p.py": ("import importlib\n\n\ndef f():\n"
                     "    importlib.import_module('.q', __package__)\n"
                     "    return importlib.import_module('.n', package='pkg')\n"),
        "sub/q.py": "",
    })
    edges = import_edges(root, "pkg")
    assert set(edges) == {("pkg", "pkg.sub.m"), ("pkg.sub.m", "pkg"), ("pkg.n", "pkg"),
                          ("pkg.o", "pkg.n"), ("pkg.sub.p", "pkg.sub.q"),
                          ("pkg.sub.p", "pkg.n")}
    assert find_cycles(edges) == [["pkg", "pkg.sub.m", "pkg"]]


def test_checker_exempts_type_checking_imports_only(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": ("import typing\nfrom typing import TYPE_CHECKING\n"
                 "if TYPE_CHECKING:\n    from . import a\nelse:\n    from . import c\n"
                 "if typing.TYPE_CHECKING:\n    import pkg.a\n"),
        "c.py": "from .b import x\n",
    })
    edges = import_edges(root, "pkg")
    assert set(edges) == {("pkg.a", "pkg.b"), ("pkg.b", "pkg.c"), ("pkg.c", "pkg.b")}
    assert find_cycles(edges) == [["pkg.b", "pkg.c", "pkg.b"]]


LAYERS_MD = """\
# Something

## How the package is layered

| layer | modules | may import |
| --- | --- | --- |
| base | `low`, `sub.x` | — |
| middle | `mid` | base |
| top | `pkg`, `top` | base, middle |

Text after the table.
"""


def test_checker_reads_the_layer_table_and_finds_upward_imports(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from . import top\n",
        "low.py": "def f():\n    from .mid import g\n",  # upward, deferred
        "sub/__init__.py": "",
        "sub/x.py": "from .. import low\n",
        "mid.py": "from . import low\n",
        "top.py": "from .sub import x\nfrom . import mid\n",
    })
    layers = parse_layers(LAYERS_MD, "pkg")
    assert layers == [("base", ["pkg.low", "pkg.sub.x"], set()),
                      ("middle", ["pkg.mid"], {"base"}),
                      ("top", ["pkg", "pkg.top"], {"base", "middle"})]
    mods = package_modules(root, "pkg")
    problems = layer_problems(layers, mods, import_edges(root, "pkg"))
    assert problems == [
        "pkg.sub is in no layer (add it to the table)",
        "pkg/low.py:2: pkg.low (layer 'base') imports pkg.mid (layer 'middle'), but 'base' "
        "may import only nothing"]


def test_checker_rejects_a_table_that_is_no_order(tmp_path):
    root = _package(tmp_path, {"__init__.py": "", "a.py": "", "b.py": ""})
    layers = [("one", ["pkg.a", "pkg.gone"], {"two"}), ("two", ["pkg.b", "pkg.a"], {"one"})]
    problems = layer_problems(layers, package_modules(root, "pkg"), {})
    assert problems == [
        "layer 'one' may import 'two', which is not a layer below it",
        "layer 'one' lists pkg.gone, which is no module of the package",
        "pkg.a is in two layers, 'one' and 'two'",
        "pkg is in no layer (add it to the table)"]
    with pytest.raises(AssertionError, match="no heading"):
        parse_layers("# Nothing here\n", "pkg")
