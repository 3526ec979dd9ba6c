#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""unicode_gen.py — Unicode tables for the Python front end, from the Unicode
Character Database (Debian's unicode-data package, /usr/share/unicode/).

Usage: unicode_gen.py OUTDIR [UCD_DIR]   (writes OUTDIR/py_unicode_gen.c, in the build
tree; UCD_DIR defaults to /usr/share/unicode)

  - the code points for which str.isprintable() is false (repr escapes them);
  - character names for \\N{...} escapes: an explicit sorted table, plus ranges for
    the names made of a prefix and the hex code point (CJK UNIFIED IDEOGRAPH-4E00),
    plus the formal name aliases (NameAliases.txt) that \\N{...} accepts;
  - identifiers: XID_Start / XID_Continue, and the data for NFKC of whole names
    (full compatibility decompositions, canonical combining classes, canonical
    compositions);
  - source encodings (see codec_tables).

The parser must equal CPython 3.12, whose unicodedata is Unicode 15.0.0, so the
Unicode tables come from a UCD of exactly that version — never from the unicodedata
of whatever Python runs the build (Debian 12's python3 is 3.11, Unicode 14) — and the
generator stops with an error on any other version. What CPython derives from the UCD
in its own way (Tools/unicode/makeunicodedata.py and Modules/unicodedata.c) is written
down here, each rule where it is applied:

  R1 printable: a code point is printable unless its General_Category is Cc, Cf, Cs,
     Co, Cn (unassigned), Zs, Zl or Zp — except U+0020 SPACE, which is printable.
  R2 names: UnicodeData.txt's name field, except that names in <angle brackets>
     (<control>, the <..., First>/<..., Last> range markers) are no names; of the
     ranges, only the CJK unified ideographs (every "CJK Ideograph..." range) get the
     name "CJK UNIFIED IDEOGRAPH-%X" and the Hangul syllables their algorithmic names
     (Unicode's chapter 3.12, short Jamo names from Jamo.txt). Tangut ideographs have
     no name in CPython 3.12 (unicodedata.name(chr(0x17000)) raises), nor do private
     use and surrogate code points.
  R3 aliases: \\N{...} and unicodedata.lookup() accept every alias of NameAliases.txt
     (all five types), case-insensitively like names.
  R4 identifiers: str.isidentifier() of a non-ASCII code point is XID_Start (first
     character) / XID_Continue (others) of DerivedCoreProperties.txt.
  R5 NFKC: CPython's normalize() uses the UCD's decompositions (UnicodeData.txt field
     5, compatibility ones included), applied recursively, then the canonical ordering
     of combining marks (a stable sort of each run of non-starters by combining
     class); Hangul syllables decompose algorithmically (unicode.c); a canonical pair
     composes unless its composite is Full_Composition_Exclusion
     (DerivedNormalizationProps.txt).
"""
import os
import re
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # gen_util, beside this file
from gen_util import write_lines  # noqa: E402

UNICODE_VERSION = "15.0.0"  # CPython 3.12's unicodedata.unidata_version
DEFAULT_UCD = "/usr/share/unicode"
MAX_CP = 0x110000


class Ucd:
    """The parts of the UCD the tables need, read from its text files."""

    def __init__(self, d):
        self.dir = d
        self.version = self._version()
        self.category = {}   # cp → General_Category (absent: Cn)
        self.name = {}       # cp → name, as unicodedata.name() gives it (R2)
        self.ccc = {}        # cp → canonical combining class (absent: 0)
        self.decomp = {}     # cp → (is_compat, [cp, ...])
        self._unicode_data()
        self.xid_start = self._property("DerivedCoreProperties.txt", "XID_Start")
        self.xid_continue = self._property("DerivedCoreProperties.txt", "XID_Continue")
        self.comp_excl = self._property("DerivedNormalizationProps.txt", "Full_Composition_Exclusion")

    def _lines(self, fname):
        """The data lines of a UCD file as lists of stripped fields (comments cut)."""
        path = os.path.join(self.dir, fname)
        try:
            f = open(path, encoding="utf-8")
        except OSError as e:
            sys.exit(f"unicode_gen.py: cannot read {path}: {e.strerror} "
                     "(install Debian's unicode-data package, or point STAGD_UCD_DIR at a UCD)")
        with f:
            for ln in f:
                ln = ln.split("#", 1)[0].strip()
                if ln:
                    yield [x.strip() for x in ln.split(";")]

    def _version(self):
        path = os.path.join(self.dir, "DerivedCoreProperties.txt")
        try:
            with open(path, encoding="utf-8") as f:
                first = f.readline()
        except OSError as e:
            sys.exit(f"unicode_gen.py: cannot read {path}: {e.strerror} "
                     "(install Debian's unicode-data package, or point STAGD_UCD_DIR at a UCD)")
        m = re.match(r"# DerivedCoreProperties-(\d+\.\d+\.\d+)\.txt", first)
        if not m:
            sys.exit(f"unicode_gen.py: {path} does not start with its version line")
        if m.group(1) != UNICODE_VERSION:
            sys.exit(f"unicode_gen.py: the UCD at {self.dir} is Unicode {m.group(1)}; CPython 3.12 "
                     f"(the parser's reference) is Unicode {UNICODE_VERSION}: point STAGD_UCD_DIR at "
                     f"a UCD {UNICODE_VERSION} (Debian 12's unicode-data package)")
        return m.group(1)

    def _unicode_data(self):
        jamo = {int(f[0], 16): f[1] for f in self._lines("Jamo.txt")}
        first = None
        for f in self._lines("UnicodeData.txt"):
            cp, name, cat, ccc, dec = int(f[0], 16), f[1], f[2], int(f[3]), f[5]
            if name.endswith(", First>"):
                first = cp
                continue
            if name.endswith(", Last>"):
                label = name[1:-len(", Last>")]
                for c in range(first, cp + 1):
                    self.category[c] = cat
                    if label.startswith("CJK Ideograph"):
                        self.name[c] = "CJK UNIFIED IDEOGRAPH-%X" % c  # R2
                    elif label == "Hangul Syllable":
                        self.name[c] = hangul_name(c, jamo)  # R2
                continue
            self.category[cp] = cat
            if not name.startswith("<"):  # R2: <control> is no name
                self.name[cp] = name
            if ccc:
                self.ccc[cp] = ccc
            if dec:
                parts = dec.split()
                compat = parts[0].startswith("<")
                self.decomp[cp] = (compat, [int(x, 16) for x in parts[compat:]])

    def _property(self, fname, prop):
        out = set()
        for f in self._lines(fname):
            if len(f) >= 2 and f[1] == prop:
                a, _, b = f[0].partition("..")
                out.update(range(int(a, 16), int(b or a, 16) + 1))
        return out

    def aliases(self):
        """(alias, cp) for every line of NameAliases.txt (R3)."""
        return [(f[1], int(f[0], 16)) for f in self._lines("NameAliases.txt")]

    def printable(self, cp):  # R1
        return cp == 0x20 or self.category.get(cp, "Cn")[0] not in "CZ"

    def nfkd(self, cp):
        """The full compatibility decomposition of one code point, canonically ordered (R5)."""
        out = []

        def expand(c):
            d = self.decomp.get(c)
            if d is None:
                out.append(c)
            else:
                for x in d[1]:
                    expand(x)
        expand(cp)
        # canonical ordering: a stable sort of each run of non-starters by class
        i = 0
        while i < len(out):
            if self.ccc.get(out[i], 0) == 0:
                i += 1
                continue
            j = i
            while j < len(out) and self.ccc.get(out[j], 0) != 0:
                j += 1
            out[i:j] = sorted(out[i:j], key=lambda c: self.ccc[c])
            i = j
        return out


def hangul_name(cp, jamo):
    """HANGUL SYLLABLE + the short names of its leading, vowel and trailing Jamo."""
    s = cp - 0xAC00
    lead, vowel, trail = s // 588, (s % 588) // 28, s % 28
    return ("HANGUL SYLLABLE " + jamo[0x1100 + lead] + jamo[0x1161 + vowel]
            + (jamo[0x11A7 + trail] if trail else ""))


def is_surrogate_or_hangul(cp):
    return 0xD800 <= cp <= 0xDFFF or 0xAC00 <= cp <= 0xD7A3


def ranges_of(pred, lo, hi):
    """[(first, last), ...] of the runs of code points in [lo, hi) where pred holds."""
    out, st = [], None
    for cp in range(lo, hi + 1):
        ok = cp < hi and pred(cp)
        if ok and st is None:
            st = cp
        elif not ok and st is not None:
            out.append((st, cp - 1))
            st = None
    return out


def c_array(out, decl, rows, fmt):
    out.append("%s = {" % decl)
    out.extend("  {%s}," % fmt % tuple(r) for r in rows)
    out.append("};")


def unicode_tables(ucd, out):
    ranges = ranges_of(lambda cp: not ucd.printable(cp), 0, MAX_CP)
    c_array(out, "const uint32_t py_nonprintable_ranges[][2]", ranges, "0x%x, 0x%x")
    out.append("const size_t py_nonprintable_count = %d;\n" % len(ranges))
    names, algo = [], {}
    pat = re.compile(r"^(.*-)([0-9A-F]{4,6})$")
    for cp in sorted(ucd.name):
        n = ucd.name[cp]
        m = pat.match(n)
        if m and int(m.group(2), 16) == cp:
            r = algo.setdefault(m.group(1), [])
            if r and r[-1][1] == cp - 1:
                r[-1][1] = cp
            else:
                r.append([cp, cp])
            continue
        names.append((n, cp))
    known = set(ucd.name.values())
    names.extend((a, cp) for a, cp in ucd.aliases() if a not in known)
    names.sort()
    out.append("const char py_uname_blob[] =")
    line, offs, pos = "", [], 0
    for n, cp in names:
        offs.append((pos, cp))
        pos += len(n) + 1
        line += n + "\\0"
        if len(line) > 90:
            out.append('  "%s"' % line)
            line = ""
    out.append('  "%s";' % line)
    c_array(out, "const uint32_t py_uname_index[][2]", offs, "%d, 0x%x")
    out.append("const size_t py_uname_count = %d;\n" % len(offs))
    rows = [(prefix, a, b) for prefix, rs in sorted(algo.items()) for a, b in rs]
    c_array(out, "const py_uname_range py_uname_ranges[]", rows, '"%s", 0x%x, 0x%x')
    out.append("const size_t py_uname_range_count = %d;" % len(rows))
    for nm, prop in (("py_id_start", ucd.xid_start), ("py_id_continue", ucd.xid_continue)):  # R4
        rs = ranges_of(lambda cp: cp in prop, 0x80, MAX_CP)
        c_array(out, "const uint32_t %s_ranges[][2]" % nm, rs, "0x%x, 0x%x")
        out.append("const size_t %s_count = %d;" % (nm, len(rs)))
    # NFKC of identifiers (CPython normalises whole names), R5: each code point's full
    # NFKD (Hangul syllables are algorithmic), combining classes, and the canonical
    # pairs that compose
    dec = []
    for cp in sorted(ucd.decomp):
        if cp >= 0x80 and not is_surrogate_or_hangul(cp):
            d = ucd.nfkd(cp)
            if d != [cp]:
                dec.append((cp, d))
    out.append("const uint32_t py_nfkd_data[] = {")
    pos, idx, line = 0, [], []
    for cp, ds in dec:
        idx.append((cp, pos, len(ds)))
        pos += len(ds)
        line.extend("0x%x" % x for x in ds)
        if len(line) > 12:
            out.append("  " + ",".join(line) + ",")
            line = []
    out.append("  " + ",".join(line) + "};")
    c_array(out, "const uint32_t py_nfkd_index[][3]", idx, "0x%x, %d, %d")
    out.append("const size_t py_nfkd_count = %d;" % len(idx))
    ccc, st = [], None
    for cp in range(MAX_CP + 1):
        k = ucd.ccc.get(cp, 0)
        if st and (k != st[2] or cp != st[1] + 1):
            ccc.append(st)
            st = None
        if k:
            st = [st[0], cp, k] if st else [cp, cp, k]
    c_array(out, "const uint32_t py_ccc_ranges[][3]", ccc, "0x%x, 0x%x, %d")
    out.append("const size_t py_ccc_count = %d;" % len(ccc))
    comp = sorted((d[0], d[1], cp) for cp, (compat, d) in ucd.decomp.items()
                  if not compat and len(d) == 2 and cp not in ucd.comp_excl
                  and not is_surrogate_or_hangul(cp))
    c_array(out, "const uint32_t py_comp_pairs[][3]", comp, "0x%x, 0x%x, 0x%x")
    out.append("const size_t py_comp_count = %d;" % len(comp))


def codec_tables(out):
    """Source encodings. These are CPython's codecs, not Unicode data: the byte tables
    of its single-byte (charmap) codecs and the names and aliases of its codecs, taken
    from the encodings package of the Python running this script. The build runs it
    with /usr/bin/python3; Debian 12's 3.11 gives exactly 3.12's tables (3.13 adds the
    alias windows-31j)."""
    # single-byte source encodings (coding declarations other than UTF-8)
    import codecs
    import encodings.aliases
    mods = ["cp1252", "cp1251", "cp1250", "cp1253", "cp1254", "cp1257", "koi8_r", "koi8_u",
            "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7",
            "iso8859_8", "iso8859_9", "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_15",
            "iso8859_16", "cp437", "cp850", "cp866", "mac_roman", "ascii"]
    # every other single-byte (charmap) codec of this Python: cp1255, mac_cyrillic, ...
    import importlib
    import pkgutil
    for info in sorted(pkgutil.iter_modules(encodings.__path__), key=lambda i: i.name):
        try:
            mod = importlib.import_module("encodings." + info.name)
        except Exception:
            continue
        table = getattr(mod, "decoding_table", None)
        if isinstance(table, str) and len(table) == 256 and info.name not in mods:
            mods.append(info.name)
    out.append("const py_codec py_codecs[] = {")
    cnt = 0
    for m in mods:
        names = {m, m.replace("_", "-")}
        for alias, target in encodings.aliases.aliases.items():
            if target == m:
                names.add(alias)
                names.add(alias.replace("_", "-"))
        table = []
        for b in range(256):
            try:
                table.append(ord(bytes([b]).decode(m)))
            except UnicodeDecodeError:
                table.append(0xffffffff)
        for n in sorted(names):
            out.append('  {"%s", {%s}},' % (n, ",".join("0x%x" % t for t in table)))
            cnt += 1
    out.append("};")
    out.append("const size_t py_codec_count = %d;" % cnt)
    # multi-byte source encodings, decoded with glibc's iconv: Python codec name (and
    # aliases, in find_coding's spelling: lowercase, '-' for '_') → iconv name; quirk 1
    # = Shift_JIS family, whose single bytes 0x5c / 0x7e are ASCII in Python, 2 = GBK,
    # where Python rejects the single byte 0x80 that glibc reads as the euro sign
    mb = [("shift_jis", "SHIFT_JIS", 1), ("cp932", "CP932", 0), ("euc_jp", "EUC-JP", 0),
          ("euc_jis_2004", "EUC-JISX0213", 0), ("euc_jisx0213", "EUC-JISX0213", 0),
          ("shift_jis_2004", "SHIFT_JISX0213", 1), ("shift_jisx0213", "SHIFT_JISX0213", 1),
          ("gbk", "GBK", 2), ("gb2312", "EUC-CN", 0), ("gb18030", "GB18030", 0), ("big5", "BIG5", 0),
          ("big5hkscs", "BIG5-HKSCS", 0), ("cp950", "CP950", 0), ("euc_kr", "EUC-KR", 0),
          ("cp949", "UHC", 0), ("johab", "JOHAB", 0), ("iso2022_jp", "ISO-2022-JP", 0),
          ("iso2022_kr", "ISO-2022-KR", 0)]
    out.append("const py_mb_codec py_mb_codecs[] = {")
    cnt = 0
    for m, ic, fix in mb:
        names = {m} | {k for k, v in encodings.aliases.aliases.items() if v == m}
        for n in sorted(names):
            out.append('  {"%s", "%s", "%s", %d},' % (n.replace("_", "-"), m, ic, fix))
            cnt += 1
    out.append("};")
    out.append("const size_t py_mb_codec_count = %d;" % cnt)
    # codecs that exist but are not text encodings (CPython refuses them by name)
    nt = ["base64_codec", "bz2_codec", "hex_codec", "quopri_codec", "rot_13", "uu_codec", "zlib_codec"]
    names = set()
    for m in nt:
        names |= {m, m.replace("_", "-")} | {k.replace("_", "-") for k, v in encodings.aliases.aliases.items() if v == m}
    out.append("const char *const py_nontext_codecs[] = {%s};" % ", ".join('"%s"' % n for n in sorted(names)))
    out.append("const size_t py_nontext_codec_count = %d;" % len(names))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: unicode_gen.py OUTDIR [UCD_DIR]")
    outdir = sys.argv[1]
    ucd = Ucd(sys.argv[2] if len(sys.argv) == 3 else DEFAULT_UCD)
    out = ["/* py_unicode_gen.c — GENERATED by convert/unicode_gen.py (Unicode %s). */" % ucd.version,
           '#include "unicode_data.h"\n#include <stddef.h>\n']
    unicode_tables(ucd, out)
    codec_tables(out)
    write_lines(os.path.join(outdir, "py_unicode_gen.c"), out)


if __name__ == "__main__":
    main()
