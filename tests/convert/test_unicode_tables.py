#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""test_unicode_tables.py — the parser's Unicode tables (convert/unicode_gen.py, from
the UCD of Debian's unicode-data package) asked through the C lookups
(unicode_tool): Unicode 15.0 facts and the generator's errors everywhere, and a sample
of code points compared with CPython 3.12's unicodedata where a 3.12 exists.

usage: test_unicode_tables.py --tool unicode_tool --gen unicode_gen.py --ucd DIR
                              --built py_unicode_gen.c [--python312 PATH]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)


def ask(tool, lines):
    r = subprocess.run([tool], input="".join(x + "\n" for x in lines), capture_output=True, text=True,
                       check=True)
    return r.stdout.splitlines()


def facts(args):
    """What Unicode 15.0 with CPython's rules says, hard-coded: right on every machine."""
    names = {
        "CJK UNIFIED IDEOGRAPH-31350": "31350",   # CJK Extension H, new in 15.0
        "KAWI LETTER A": "11F04",                 # new in 15.0
        "TANGUT IDEOGRAPH-17000": "-",            # R2: no Tangut names in CPython
        "HANGUL SYLLABLE GAG": "AC01",            # R2: algorithmic
        "hangul syllable ga": "AC00",             # case-insensitive
        "LINE FEED": "A", "NULL": "0", "BYTE ORDER MARK": "FEFF",  # R3: aliases
        "LATIN CAPITAL LETTER GHA": "1A2",        # R3: a correction alias
        "LATIN SMALL LETTER A": "61", "NO SUCH CHARACTER": "-",
    }
    got = ask(args.tool, ["N " + n for n in names])
    for (n, want), g in zip(names.items(), got):
        check(g == want, f"\\N{{{n}}}: {g}, want {want}")
    cps = {  # cp: (printable, id start, id continue, NFKC)
        0x20: "1 0 0 20", 0xA0: "0 0 0 20", 0xAD: "0 0 0 AD", 0x378: "0 0 0 378", 0xE000: "0 0 0 E000",
        0x1E4D0: "1 1 1 1E4D0",                   # NAG MUNDARI LETTER O: an identifier in 15.0, not 14.0
        0x11F04: "1 1 1 11F04", 0x0300: "1 0 1 300", 0xFB01: "1 1 1 66.69", 0x2126: "1 1 1 3A9",
        0x1E9B: "1 1 1 1E61", 0xAC00: "1 1 1 AC00", 0x2028: "0 0 0 2028", 0x17000: "1 1 1 17000",
    }
    got = ask(args.tool, ["C %X" % c for c in cps])
    for (c, want), g in zip(cps.items(), got):
        check(g == "%X %s" % (c, want), f"U+{c:04X}: {g}, want {want}")
    with open(args.built, encoding="utf-8") as f:
        head = f.readline()
    check("(Unicode 15.0.0)" in head, f"{args.built} says {head.strip()}")


def generator_errors(args):
    """A UCD of another version, or none, stops the generator with what to do."""
    with tempfile.TemporaryDirectory() as d:
        ucd = os.path.join(d, "ucd")
        os.mkdir(ucd)
        with open(os.path.join(args.ucd, "DerivedCoreProperties.txt"), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(ucd, "DerivedCoreProperties.txt"), "w", encoding="utf-8") as f:
            f.write(text.replace("DerivedCoreProperties-15.0.0", "DerivedCoreProperties-14.0.0", 1))
        for ucd_dir, want in ((ucd, "is Unicode 14.0.0; CPython 3.12 (the parser's reference) is Unicode 15.0.0"),
                              (os.path.join(d, "none"), "install Debian's unicode-data package")):
            r = subprocess.run([sys.executable, args.gen, os.path.join(d, "out"), ucd_dir],
                               capture_output=True, text=True)
            check(r.returncode != 0 and want in r.stderr, f"generator with {ucd_dir}: {r.returncode} {r.stderr!r}")
            check(not os.path.exists(os.path.join(d, "out", "py_unicode_gen.c")), "a table was written anyway")


ORACLE = r"""
import json, sys, unicodedata
cps = [int(x, 16) for x in sys.stdin.read().split()]
out = {"version": unicodedata.unidata_version, "cps": [], "names": []}
for cp in cps:
    c = chr(cp)
    s = c.isprintable(), c.isidentifier(), ("a" + c).isidentifier()
    nf = "-" if 0xD800 <= cp <= 0xDFFF else ".".join("%X" % ord(x) for x in unicodedata.normalize("NFKC", c))
    out["cps"].append("%X %d %d %d %s" % (cp, s[0], cp >= 0x80 and s[1], cp >= 0x80 and s[2], nf))
    n = unicodedata.name(c, None)
    if n:
        out["names"].append([n, "%X" % cp])
json.dump(out, sys.stdout)
"""


def against_cpython(args, py312):
    """A sample (every 7th code point and all those new in 15.0) as CPython 3.12 sees it."""
    sample = set(range(0, 0x110000, 7))
    with open(os.path.join(args.ucd, "DerivedAge.txt"), encoding="utf-8") as f:
        for ln in f:
            fields = ln.split("#")[0].split(";")
            if len(fields) == 2 and fields[1].strip() == "15.0":
                a, _, b = fields[0].strip().partition("..")
                sample.update(range(int(a, 16), int(b or a, 16) + 1))
    sample = sorted(sample)
    r = subprocess.run([py312, "-c", ORACLE], input=" ".join("%X" % c for c in sample), capture_output=True,
                       text=True, check=True)
    import json
    want = json.loads(r.stdout)
    check(want["version"] == "15.0.0", f"{py312} has Unicode {want['version']}")
    got = ask(args.tool, ["C %X" % c for c in sample])
    bad = [(g, w) for g, w in zip(got, want["cps"]) if g != w]
    check(not bad, f"{len(bad)} of {len(sample)} code points differ from CPython 3.12 (ours, 3.12's): {bad[:5]}")
    got = ask(args.tool, ["N " + n for n, _ in want["names"]])
    bad = [(n, g, cp) for (n, cp), g in zip(want["names"], got) if g != cp]
    check(not bad, f"{len(bad)} of {len(want['names'])} names differ from CPython 3.12: {bad[:5]}")
    # the tables do not depend on the Python that generates them
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([py312, args.gen, d, args.ucd], check=True)
        with open(os.path.join(d, "py_unicode_gen.c"), encoding="utf-8") as a, open(args.built, encoding="utf-8") as b:
            check(a.read() == b.read(), f"the generator run by {py312} writes other tables than the build's")
    print(f"compared {len(sample)} code points and {len(want['names'])} names with {py312}")


def find_python312(configured):
    """The first candidate that runs and is 3.12 (CMake's, then python3.12 on PATH; a
    pyenv shim without that version installed does not run), and what was tried."""
    cands = [c for c in (configured, shutil.which("python3.12")) if c and not c.endswith("NOTFOUND")]
    for c in cands:
        r = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == "True":
            return c, ""
    return None, "tried " + ", ".join(cands) if cands else "none on PATH"


def main():
    p = argparse.ArgumentParser()
    for a in ("--tool", "--gen", "--ucd", "--built"):
        p.add_argument(a, required=True)
    p.add_argument("--python312", default="")
    args = p.parse_args()
    facts(args)
    generator_errors(args)
    py312, tried = find_python312(args.python312)
    if py312:
        against_cpython(args, py312)
    else:
        print(f"SKIPPED the comparison with CPython 3.12: no working python3.12 ({tried}); "
              "the facts and generator checks ran")
    for f in FAILS:
        print("FAIL:", f)
    print("unicode tables:", "FAILED" if FAILS else "ok")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
