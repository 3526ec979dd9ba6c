#!/usr/bin/python3
"""spdx.py — puts `SPDX-License-Identifier: Apache-2.0` at the top of every source file
git knows, or checks that every one has it (--check, ctest `license.spdx`).

The line goes first, in the file's comment syntax, above the comment that says what the
file is for — after a `#!` line and a Python coding declaration, which must stay on the
first lines. Test data the parser and fuzzers read byte for byte (tests/convert/
source_cases, fuzz corpora) is left alone. Files are handled as bytes (some corpus files
are in legacy encodings).

Usage: scripts/spdx.py [--check] [REPO]      scripts/spdx.py --self-test
"""
import re
import subprocess
import sys
from pathlib import Path

TAG = b"SPDX-License-Identifier: Apache-2.0"
SLASHES = (".c", ".h", ".comp", ".glsl", ".proto", ".ts", ".mjs")
HASHES = (".py", ".sh", ".cmake", ".cfg", ".conf", ".in", ".yaml", ".yml")
DASHES = (".lua", ".asdl")
HASH_NAMES = ("CMakeLists.txt", "Containerfile", "run", ".yamllint", ".gitignore")
SKIP = re.compile(r"^(tests/convert/source_cases/|.*/fuzz_corpus/|.*node_modules/|.*package-lock\.json$)")
CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")


def comment_for(path):
    name = path.name
    if name.endswith(SLASHES):
        return b"// " + TAG
    if name.endswith(HASHES) or name in HASH_NAMES:
        return b"# " + TAG
    if name.endswith(DASHES):
        return b"-- " + TAG
    return None


def files(repo):
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=repo, capture_output=True, check=True).stdout
    for rel in out.decode().split("\0"):
        if rel and not SKIP.match(rel) and (repo / rel).is_file():
            line = comment_for(Path(rel))
            if line:
                yield rel, line


def has_tag(data):
    return TAG in b"\n".join(data.split(b"\n")[:5])


def add_tag(data, line):
    lines = data.split(b"\n")
    at = 0
    if lines and lines[0].startswith(b"#!"):
        at = 1
    while at < len(lines) and at < 2 and CODING.match(lines[at]):
        at += 1
    return b"\n".join(lines[:at] + [line] + lines[at:])


def self_test():
    """The check fails where it must and the fix keeps #! and coding lines first."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        repo = Path(d)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / "a.c").write_bytes(b"/* a.c - x */\nint x;\n")
        (repo / "b.py").write_bytes(b"#!/usr/bin/python3\n# -*- coding: latin-1 -*-\nx = 1\n")
        (repo / "c.txt").write_bytes(b"not source\n")
        assert main(["--check", d]) == 1
        assert main([d]) == 0 and main(["--check", d]) == 0
        assert (repo / "a.c").read_bytes() == b"// " + TAG + b"\n/* a.c - x */\nint x;\n"
        assert (repo / "b.py").read_bytes().split(b"\n")[:3] == [
            b"#!/usr/bin/python3", b"# -*- coding: latin-1 -*-", b"# " + TAG]
        assert (repo / "c.txt").read_bytes() == b"not source\n"
    print("spdx.py self-test: ok")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    repo = Path(rest[0] if rest else Path(__file__).resolve().parents[1])
    missing = []
    for rel, line in files(repo):
        path = repo / rel
        data = path.read_bytes()
        if has_tag(data):
            continue
        if check:
            missing.append(rel)
        else:
            path.write_bytes(add_tag(data, line))
            print(f"added: {rel}")
    if missing:
        print(f"{len(missing)} source files lack '{TAG.decode()}' in their first lines "
              f"(run scripts/spdx.py to add it):", file=sys.stderr)
        for rel in missing:
            print(f"  {rel}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
