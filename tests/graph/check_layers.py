#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The include layering of graph/ (docs/design.md "graph/"): each subsystem folder may
include its own headers and the public header (gr_<folder>.h; program's is gr.h) of the
folders below it, nothing else — no sibling's private header, no arrow up, hence no
cycle. Usage: check_layers.py [GRAPH_DIR]   (exit 1 naming each bad include)
          check_layers.py --self-test       (proves the check fails where it must)"""
import os
import re
import sys
import tempfile

# folder -> the folders it may include from (besides itself)
ALLOWED = {
    "ir": set(),
    "infer": {"ir"},
    "opt": {"ir"},
    "ad": {"ir"},
    "exec": {"ir"},
    "vulkan": {"exec", "ir"},
    "pyfront": {"ir"},
    "program": {"ir", "infer", "opt", "ad", "exec", "vulkan", "pyfront"},
}
PUBLIC = {d: f"gr_{d}.h" for d in ALLOWED}
PUBLIC["program"] = "gr.h"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check(graph_dir):
    """Returns a list of 'FILE: message' problems."""
    owner = {}  # header name -> folder holding it
    files = []
    for d in sorted(os.listdir(graph_dir)):
        path = os.path.join(graph_dir, d)
        if not os.path.isdir(path):
            continue
        if d not in ALLOWED:
            return [f"{path}: a folder that is no known subsystem (add it to check_layers.py "
                    f"and docs/design.md)"]
        for f in sorted(os.listdir(path)):
            if f.endswith(".h"):
                if f in owner:
                    return [f"{path}/{f}: a header of that name is in {owner[f]}/ too"]
                owner[f] = d
            if f.endswith((".c", ".h")):
                files.append((d, os.path.join(path, f)))
    problems = []
    for d, path in files:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            o = owner.get(inc)
            if o is None or o == d:
                continue  # another library's header (kn.h, sg.h) or its own folder's
            rel = os.path.relpath(path, graph_dir)
            if o not in ALLOWED[d]:
                problems.append(f"{rel}: includes {o}/{inc}, but {d}/ may only use "
                                f"{', '.join(sorted(ALLOWED[d])) or 'no other subsystem'}")
            elif inc != PUBLIC[o]:
                problems.append(f"{rel}: includes {o}/{inc}, a private header of {o}/ "
                                f"(use {PUBLIC[o]})")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as t:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
            with open(os.path.join(t, rel), "w") as f:
                f.write(text)
        write("ir/gr_ir.h", "#include \"sg.h\"\n")
        write("exec/gr_exec.h", '#include "gr_ir.h"\n')
        write("exec/ops_cpu.h", '#include "gr_exec.h"\n')
        write("vulkan/x.c", '#include "gr_exec.h"\n#include "kn.h"\n')
        assert check(t) == [], check(t)
        write("ir/value.c", '#include "gr_exec.h"\n')  # an arrow up
        write("vulkan/y.c", '#include "ops_cpu.h"\n')  # a sibling's private header
        got = check(t)
        assert len(got) == 2, got
        assert "ir/value.c: includes exec/gr_exec.h" in got[0], got
        assert "vulkan/y.c: includes exec/ops_cpu.h, a private header" in got[1], got
        write("extra/z.c", "")
        assert "no known subsystem" in check(t)[0]
    print("check_layers self-test: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    gdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "graph")
    bad = check(gdir)
    for p in bad:
        print(p)
    print(f"graph layering: {len(bad)} bad include(s)")
    sys.exit(1 if bad else 0)
