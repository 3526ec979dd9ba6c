# SPDX-License-Identifier: Apache-2.0
"""ipython_display.py — rich displays of the notebook extension (stagd.ipython).

`ConvertedCode` shows the converted code of a cell and its diagnostics; `GraphView` a
staged graph (SVG and PNG through Graphviz `dot` when it is installed, its text dump
otherwise). Both work without IPython: their plain text is `str(obj)`; Jupyter picks
the richest `_repr_*_` that returns something (HTML with pygments highlighting, SVG).

A graph goes out as one MIME bundle: `text/html` (an `<img>` holding the SVG as a data
URI), `image/svg+xml`, `image/png` and `text/plain`. Front ends show the HTML or the
SVG; exporters that cannot use either take the PNG (LaTeX, PDF). The `<img>` is there
because Debian 12's nbconvert (6.5) exports `image/svg+xml` through its HTML cleaner,
which drops every child of `<svg>` (blank graphs in exported HTML), and prefers SVG to
PNG; an `<img>` in `text/html` is exported as it is.
"""
import base64
import html
import re
import shutil
import subprocess

_LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$", re.S)

SEVERITIES = {0: "info", 1: "error", 2: "warning", 3: "info", 4: "hint"}
_COLORS = {"error": "#b00020", "warning": "#9a6700", "info": "#0550ae", "hint": "#57606a"}

DOT_TIMEOUT = 30.0  # seconds `dot -Tsvg` / `dot -Tpng` may take


def _pygments():
    """The pygments modules (highlight, PythonLexer, HtmlFormatter), or None."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return None
    return highlight, PythonLexer, HtmlFormatter


class Diagnostic:
    """One located message about the cell: severity name, 1-based line and column."""

    def __init__(self, severity, message, line=0, column=0, hint="", code="", file="<cell>"):
        self.severity, self.message, self.line, self.column = severity, message, line, column
        self.hint, self.code, self.file = hint, code, file

    @classmethod
    def from_proto(cls, d, file):
        loc = d.location
        return cls(SEVERITIES.get(int(d.severity), "error"), d.message, loc.line, loc.column,
                   d.hint, d.code, file)

    @classmethod
    def from_error(cls, err, file):
        """A daemon error whose details read `FILE:LINE:COL: MESSAGE` (docs/api.md)."""
        details = getattr(err, "details", None) or str(err)
        m = _LOCATED.match(details)
        if m:
            return cls("error", m.group("msg"), int(m.group("line")), int(m.group("col")),
                       file=file)
        return cls("error", details, file=file)

    def header(self):
        where = f"{self.file}:{self.line}:{self.column}: " if self.line else f"{self.file}: "
        code = f" [{self.code}]" if self.code else ""
        return f"{where}{self.severity}: {self.message}{code}"

    def excerpt(self, source):
        """The offending source line and a caret under the column ("" when unknown)."""
        lines = source.splitlines()
        if not 1 <= self.line <= len(lines):
            return ""
        text = lines[self.line - 1]
        caret = " " * max(self.column - 1, 0) + "^"
        return f"{self.line:4d} | {text}\n     | {caret}"

    def text(self, source):
        parts = [self.header()]
        ex = self.excerpt(source)
        if ex:
            parts.append(ex)
        if self.hint:
            parts.append(f"     = hint: {self.hint}")
        return "\n".join(parts)


class ConvertedCode:
    """The result of `%%stagd_convert`: `.code` (the converted module, "" when the cell
    could not be converted), `.source` (the cell), `.diagnostics`, `.source_map`
    ({converted line: (line, column)})."""

    def __init__(self, source, code, diagnostics, source_map=None, title="converted code"):
        self.source, self.code, self.diagnostics = source, code, list(diagnostics)
        self.source_map = dict(source_map or {})
        self.title = title

    @property
    def errors(self):
        return [d for d in self.diagnostics if d.severity == "error"]

    def diagnostics_text(self):
        return "\n".join(d.text(self.source) for d in self.diagnostics)

    def __str__(self):
        parts = []
        if self.diagnostics:
            parts.append(self.diagnostics_text())
        if self.code:
            parts.append(self.code.rstrip("\n"))
        return "\n\n".join(parts)

    def __repr__(self):
        return str(self)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))

    def _diagnostics_html(self):
        out = []
        for d in self.diagnostics:
            color = _COLORS.get(d.severity, "#000")
            body = html.escape(d.header())
            ex = d.excerpt(self.source)
            hint = f"\n= hint: {html.escape(d.hint)}" if d.hint else ""
            out.append(f'<pre class="stagd-diagnostic stagd-{d.severity}" style="border-left:4px '
                       f'solid {color};padding-left:6px;color:{color}"><b>{body}</b>'
                       f'{chr(10) + html.escape(ex) if ex else ""}{hint}</pre>')
        return "".join(out)

    def _repr_html_(self):
        """Highlighted HTML, or None without pygments (Jupyter then shows the text)."""
        pg = _pygments()
        if pg is None:
            return None
        highlight, lexer, formatter = pg
        code = ""
        if self.code:
            fmt = formatter(noclasses=True, nobackground=True)
            code = highlight(self.code, lexer(), fmt)
        return f'<div class="stagd-converted">{self._diagnostics_html()}{code}</div>'


def _dot(dot_source, fmt):
    """The bytes Graphviz `dot -T<fmt>` writes, or None when dot is not installed or fails."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        r = subprocess.run([exe, f"-T{fmt}"], input=dot_source.encode(), capture_output=True,
                           timeout=DOT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def run_dot(dot_source):
    """SVG text from Graphviz `dot`, or None when dot is not installed or fails."""
    out = _dot(dot_source, "svg")
    text = out.decode("utf-8", "replace") if out else ""
    if "<svg" not in text:
        return None
    return text[text.index("<svg"):]  # without the XML prologue, to inline it


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_dot_png(dot_source):
    """PNG bytes from Graphviz `dot -Tpng`, or None when dot is not installed or fails."""
    out = _dot(dot_source, "png")
    return out if out and out.startswith(PNG_SIGNATURE) else None


class GraphView:
    """A staged graph as shown by `%stagd_graph`: `.dumps` ({format name: text}), `.svg`
    and `.png` (None when not rendered), `.format` (the dump shown as text) and `.name`."""

    def __init__(self, dumps, svg=None, format="text", name="", png=None):
        self.dumps, self.svg, self.format, self.name = dict(dumps), svg, format, name
        self.png = png

    @property
    def text(self):
        return self.dumps.get(self.format, "")

    def __str__(self):
        return self.text.rstrip("\n")

    def __repr__(self):
        return str(self)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))

    def _repr_svg_(self):
        return self.svg

    def _repr_png_(self):
        return self.png

    def _repr_html_(self):
        """The SVG as an <img> (see the module docstring), or None when not rendered."""
        if self.svg is None:
            return None
        uri = "data:image/svg+xml;base64," + base64.b64encode(self.svg.encode()).decode("ascii")
        alt = html.escape(f"graph of {self.name}" if self.name else "staged graph", quote=True)
        return f'<img class="stagd-graph" src="{uri}" alt="{alt}">'
