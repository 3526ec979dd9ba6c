# SPDX-License-Identifier: Apache-2.0
"""gen_util.py — what the build-time generators (asdl_gen.py, unicode_gen.py) share.

write_lines always rewrites its file: the build runs a generator only when an input
changed, and a fresh timestamp is what tells make the output is up to date (leaving
an unchanged file untouched made every later build run the generators again).
"""
import os


def write_lines(path, lines):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
