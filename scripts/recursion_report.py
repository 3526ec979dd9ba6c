#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""recursion_report.py — lists every recursive cycle in the daemon's C code.

Usage: scripts/recursion_report.py [BUILD_DIR] [--dirs convert,graph,server,common,kernels]

Recompiles each source of the chosen folders (flags from BUILD_DIR/compile_commands.json,
sanitizers off) with GCC's -fcallgraph-info=su, which writes each function's direct
calls and its frame size, adds the calls made through the AST visitor
(py_visit_children(node, FN, ...) calls FN), and prints the strongly connected
components of the call graph: each is a set of functions that can recurse. For each it
prints the members (file:line, frame bytes) so a reviewer can check that every one is
bounded by a limit (docs/parser.md "Limits", docs/daemon.md "Hostile input").
Calls through other function pointers are not followed (listed at the end).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def parse_ci(path):
    """(nodes: title -> (label), edges: [(src, dst)]) of one .ci (VCG) file."""
    text = open(path, encoding="utf-8", errors="replace").read()
    nodes, edges = {}, []
    for m in re.finditer(r'node: \{ title: "([^"]+)" label: "([^"]*)"', text):
        nodes[m.group(1)] = m.group(2)
    for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', text):
        edges.append((m.group(1), m.group(2)))
    return nodes, edges


def compile_one(entry, outdir, root):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a.startswith("-fsanitize") or a.startswith("-fno-sanitize") or a == "-Werror":
            continue
        out.append(a)
    rel = os.path.relpath(entry["file"], root).replace("/", "_")
    obj = os.path.join(outdir, rel + ".o")
    out += ["-fcallgraph-info=su", "-o", obj]
    r = subprocess.run(out, cwd=entry["directory"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"compile failed: {entry['file']}\n{r.stderr[-2000:]}\n")
        return None
    ci = obj[:-2] + ".ci"
    if not os.path.exists(ci):  # older GCCs name it after the object
        ci = obj + ".ci"
    return ci if os.path.exists(ci) else None


def visitor_edges(root, files):
    """py_visit_children(x, FN, ...) inside function F: F -> FN is a possible call."""
    edges = []
    for f in files:
        src = open(f, encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"py_visit_children\([^,]+,\s*(\w+)\s*,", src):
            edges.append(("py_visit_children", m.group(1)))
    return edges


def tarjan(graph):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for v0 in list(graph):
        if v0 in index:
            continue
        work = [(v0, iter(graph.get(v0, ())))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def main():
    argv = sys.argv[1:]
    dirs = ["convert", "graph", "server", "common", "kernels"]
    if "--dirs" in argv:
        i = argv.index("--dirs")
        dirs = argv[i + 1].split(",")
        del argv[i:i + 2]
    build = argv[0] if argv else "build"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    db = json.load(open(os.path.join(build, "compile_commands.json")))
    chosen = [e for e in db
              if os.path.relpath(e["file"], root).split("/")[0] in dirs
              or os.path.relpath(e["file"], build).split("/")[0] in dirs]
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            cis = [c for c in ex.map(lambda e: compile_one(e, tmp, root), chosen) if c]
        nodes, graph = {}, {}
        for ci in cis:
            n, es = parse_ci(ci)
            for k, v in n.items():
                if k not in nodes or "\n" in v:
                    nodes[k] = v
            for a, b in es:
                graph.setdefault(a, set()).add(b)
    for a, b in visitor_edges(root, [e["file"] for e in chosen]):
        graph.setdefault(a, set()).add(b)
    comps = [c for c in tarjan(graph)
             if len(c) > 1 or c[0] in graph.get(c[0], ())]
    comps.sort(key=lambda c: min(nodes.get(f, f).split("\\n")[1] if "\\n" in nodes.get(f, "") else f
                                 for f in c))
    print(f"{len(comps)} recursive cycles in {', '.join(dirs)}:\n")
    for c in comps:
        print(f"cycle of {len(c)}:")
        for f in sorted(c):
            label = nodes.get(f, f).split("\\n")
            where = label[1] if len(label) > 1 else "?"
            size = next((x for x in label[2:] if "bytes" in x), "")
            where = os.path.relpath(where, root) if where.startswith("/") else where
            print(f"  {f:40s} {where:45s} {size}")
        print()
    indirect = sorted(a for a, bs in graph.items() if "__indirect_call" in bs)
    print(f"functions that call through other pointers ({len(indirect)}): " + ", ".join(indirect))


if __name__ == "__main__":
    main()
