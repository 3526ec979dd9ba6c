# SPDX-License-Identifier: Apache-2.0
"""ipython.py — the IPython/Jupyter extension of stagd (`%load_ext stagd`, docs/notebook.md).

Magics:
  %%stagd_convert [--style autograph|snek] [--function NAME] [--run] [--addr ADDR]
      shows the converted code of the cell (Convert RPC), highlighted, with its
      diagnostics; a cell that cannot be converted fails with the located message.
  %stagd_graph [--format svg|text|dot|sexpr|json] [--no-optimize] FN [ARGS]
      stages FN (a stagd.function, or a plain function) for the Python arguments ARGS
      and renders its graph: SVG and PNG through Graphviz `dot` when installed, text otherwise.
  %%stagd_progress [--threshold SECONDS] [DESCRIPTION]
      runs the cell; when it takes longer than the threshold an elapsed-time display
      appears (stagd.progress.busy).
The daemon is the default client's (stagd.connect(): $STAGD_ADDR, …) unless --addr names one.
"""
import argparse
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from . import progress as _progress
from .client import CONNECT_TIMEOUT, Client, InvalidArgument, default_client
from .function import function as staged_function
from .ipython_display import ConvertedCode, Diagnostic, GraphView, run_dot, run_dot_png

CELL_FILE = "<cell>"
DUMP_FORMATS = ("sexpr", "text", "dot", "json")  # stagd.function(...).graph formats
STYLES = {"autograph": 1, "snek": 2}  # proto Style


def convert_error(converted):
    """The error of a cell the daemon could not convert: a UsageError (IPython shows its
    message without a traceback) whose `.converted` holds the diagnostics."""
    n = len(converted.errors)
    err = UsageError(f"%%stagd_convert: {n} error{'s' if n != 1 else ''} in the cell\n"
                     + converted.diagnostics_text())
    err.converted = converted
    return err


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (shown by IPython without a traceback)."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}\nusage: {self.format_usage().strip()}")

    def exit(self, status=0, message=None):
        raise UsageError(message or self.format_help())


def _convert_parser():
    p = _Parser(prog="%%stagd_convert", add_help=False)
    p.add_argument("--style", choices=sorted(STYLES), default="autograph")
    p.add_argument("--function", default="", help="convert only this function")
    p.add_argument("--run", action="store_true", help="also run the cell as written")
    p.add_argument("--addr", default=None, help="daemon address (default: stagd.connect())")
    return p


def _progress_parser():
    p = _Parser(prog="%%stagd_progress", add_help=False)
    p.add_argument("--threshold", "-t", type=float, default=_progress.BUSY_THRESHOLD)
    p.add_argument("desc", nargs="*")
    return p


_GRAPH_USAGE = ("%stagd_graph [--format svg|text|dot|sexpr|json] [--no-optimize] "
                "FN [ARGS]")


def _split_graph_line(line):
    """(options, fn expression, args expression) of a %stagd_graph line. ARGS is kept
    verbatim (a Python argument list), so only the leading --options are tokenized."""
    opts = {"format": "svg", "no_optimize": False}
    rest = line.strip()
    while rest.startswith("--"):
        word, _, rest = rest.partition(" ")
        rest = rest.lstrip()
        name, eq, value = word.partition("=")
        if name == "--format":
            if not eq:
                value, _, rest = rest.partition(" ")
                rest = rest.lstrip()
            if value not in ("svg", *DUMP_FORMATS):
                raise UsageError(f"%stagd_graph: unknown --format {value!r} (svg, text, dot, "
                                 f"sexpr or json)\nusage: {_GRAPH_USAGE}")
            opts["format"] = value
        elif name == "--no-optimize" and not eq:
            opts["no_optimize"] = True
        else:
            raise UsageError(f"%stagd_graph: unknown option {word}\nusage: {_GRAPH_USAGE}")
    if not rest:
        raise UsageError(f"%stagd_graph: no function given\nusage: {_GRAPH_USAGE}")
    fn_expr, _, args_expr = rest.partition(" ")
    return opts, fn_expr, args_expr.strip()


def _check_arguments(staged, name, args):
    """A UsageError, before any tracing, when `args` do not fit the function's
    parameters (a wrong count would otherwise surface as a TypeError from deep in the
    tracer)."""
    sig = getattr(staged, "_signature", None)
    if sig is None:
        return
    try:
        sig.bind(*args)
    except TypeError as e:
        n = len(args)
        raise UsageError(f"%stagd_graph: {name}{sig} cannot take {n} argument{'s' if n != 1 else ''}: "
                         f"{e}\nusage: {_GRAPH_USAGE}") from None


@magics_class
class StagdMagics(Magics):
    """The stagd magics (see the module docstring)."""

    def __init__(self, shell):
        super().__init__(shell)
        self._clients = {}

    def client(self, addr=None):
        if addr is None:
            return default_client()
        c = self._clients.get(addr)
        if c is None:  # a client of its own: --addr does not change the default one
            c = Client(addr)
            if not c.is_serving(timeout=CONNECT_TIMEOUT):
                c.close()
                raise UsageError(f"no stagd daemon answers at {addr} (--addr)")
            self._clients[addr] = c
        return c

    # -- %%stagd_convert ------------------------------------------------------------
    def convert_source(self, source, style="autograph", function="", addr=None):
        """ConvertedCode of `source` (daemon errors become error diagnostics)."""
        req = {"source": source, "filename": CELL_FILE, "style": STYLES[style],
               "function": function}
        try:
            reply = self.client(addr).call("Convert", req)
        except InvalidArgument as e:
            return ConvertedCode(source, "", [Diagnostic.from_error(e, CELL_FILE)])
        diags = [Diagnostic.from_proto(d, CELL_FILE) for d in reply.diagnostics]
        smap = {e.converted_line: (e.original.line, e.original.column) for e in reply.source_map}
        return ConvertedCode(source, reply.code, diags, smap)

    @cell_magic
    def stagd_convert(self, line, cell):
        args = _convert_parser().parse_args(shlex.split(line))
        result = self.convert_source(cell, args.style, args.function, args.addr)
        if result.errors:
            raise convert_error(result)
        if args.run:
            self._run_here(cell)
        return result

    def _run_here(self, cell):
        """Runs the cell's code in the user namespace under a linecache'd file name (so
        inspect.getsource, and stagd.function, find the functions it defines)."""
        code = self.shell.transform_cell(cell)
        filename = self.shell.compile.cache(code, self.shell.execution_count, raw_code=cell)
        exec(compile(code, filename, "exec"), self.shell.user_ns)

    # -- %stagd_graph -----------------------------------------------------------------
    def _eval(self, expr, what):
        try:
            return self.shell.ev(expr)
        except Exception as e:
            raise UsageError(f"%stagd_graph: cannot evaluate the {what} {expr!r}: "
                             f"{type(e).__name__}: {e}") from None

    def graph_view(self, fn, args, format="svg", no_optimize=False):
        """Stages `fn` (a stagd.function, or a plain function it wraps) for `args` through
        its `.graph(*args, format=...)`; returns a GraphView (SVG when format is svg and
        Graphviz is installed, else the text dump)."""
        staged = fn if callable(getattr(fn, "graph", None)) else staged_function(fn)
        name = getattr(getattr(staged, "fn", fn), "__name__", "fn")
        _check_arguments(staged, name, args)
        kw = {"optimize": False} if no_optimize else {}
        if format == "svg":
            dumps = {f: staged.graph(*args, format=f, **kw) for f in ("dot", "text")}
            return GraphView(dumps, run_dot(dumps["dot"]), "text", name, run_dot_png(dumps["dot"]))
        return GraphView({format: staged.graph(*args, format=format, **kw)}, None, format, name)

    @line_magic
    def stagd_graph(self, line):
        opts, fn_expr, args_expr = _split_graph_line(line)
        fn = self._eval(fn_expr, "function")
        if not callable(fn):
            raise UsageError(f"%stagd_graph: {fn_expr} is a {type(fn).__name__}, not a function")
        args = self._eval(f"({args_expr},)", "arguments") if args_expr else ()
        return self.graph_view(fn, args, **opts)

    # -- %%stagd_progress ---------------------------------------------------------------
    @cell_magic
    def stagd_progress(self, line, cell):
        args = _progress_parser().parse_args(shlex.split(line))
        if args.threshold < 0:
            raise UsageError(f"%%stagd_progress: --threshold must be >= 0, got {args.threshold:g}")
        desc = " ".join(args.desc) or "cell"
        with _progress.busy(desc, threshold=args.threshold) as b:
            run = self.shell.run_cell(cell)
            b.failed = not run.success


def load_ipython_extension(ip):
    ip.register_magics(StagdMagics)


def unload_ipython_extension(ip):
    for kind in ("line", "cell"):
        table = ip.magics_manager.magics[kind]
        for name in ("stagd_convert", "stagd_graph", "stagd_progress"):
            table.pop(name, None)
