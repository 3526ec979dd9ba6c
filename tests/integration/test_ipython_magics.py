# SPDX-License-Identifier: Apache-2.0
# The IPython extension (clients/python/stagd/ipython.py, docs/notebook.md) run in-process
# in an IPython InteractiveShell against a test daemon: %%stagd_convert (highlighted and
# plain displays, diagnostics with the offending line, --run, --style, option errors),
# %stagd_graph (SVG through Graphviz, text without it, dump formats, argument errors)
# and the progress displays (%%stagd_progress, stagd.progress).
import base64
import json
import os
import re
import shutil
import time

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import stagd
from stagd import ipython_display, progress


@pytest.fixture(scope="module")
def shell(daemon, tmp_path_factory):
    saved_dir = os.environ.get("IPYTHONDIR")
    os.environ["IPYTHONDIR"] = str(tmp_path_factory.mktemp("ipython"))  # history, profile
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "stagd")
    client = stagd.Client(daemon.addr)
    saved = stagd._default_client
    stagd._default_client = client  # the magics and stagd.function use the default client
    yield ip
    stagd._default_client = saved
    ip.run_line_magic("unload_ext", "stagd")
    client.close()
    if saved_dir is None:
        os.environ.pop("IPYTHONDIR", None)
    else:
        os.environ["IPYTHONDIR"] = saved_dir


def run(ip, cell):
    """Runs a cell; returns (its result, its error)."""
    r = ip.run_cell(cell, store_history=False)
    return r.result, r.error_in_exec


LOOP = "def countdown(x):\n    while x > 0:\n        x -= 1\n    return x\n"


def test_convert_shows_converted_code(shell):
    res, err = run(shell, "%%stagd_convert\n" + LOOP)
    assert err is None
    assert isinstance(res, ipython_display.ConvertedCode)
    assert "sg__.while_stmt(loop_test__1, loop_body__1" in res.code
    assert res.diagnostics == []
    assert str(res) == res.code.rstrip("\n")
    # the source map points the converted `x -= 1` back to the cell's line 3
    line = next(i for i, l in enumerate(res.code.splitlines(), 1) if l.strip() == "x -= 1")
    assert res.source_map[line] == (3, 9)
    html = res._repr_html_()
    assert html.startswith('<div class="stagd-converted">')
    assert "<span" in html and "while_stmt" in html  # pygments markup
    assert "countdown" not in shell.user_ns  # converting does not run the cell


def test_convert_without_pygments_is_plain_text(shell, monkeypatch):
    monkeypatch.setattr(ipython_display, "_pygments", lambda: None)
    res, err = run(shell, "%%stagd_convert\n" + LOOP)
    assert err is None
    assert res._repr_html_() is None  # Jupyter falls back to text/plain
    assert "def countdown(x):" in repr(res)


def test_convert_run_defines_the_function(shell):
    res, err = run(shell, "%%stagd_convert --run\n" + LOOP)
    assert err is None and "while_stmt" in res.code
    assert shell.user_ns["countdown"](5) == 0
    assert int(stagd.function(shell.user_ns["countdown"])(4)) == 0  # its source is found
    del shell.user_ns["countdown"]


def test_convert_snek_style(shell):
    res, err = run(shell, "%%stagd_convert --style snek\n" + LOOP)
    assert err is None
    assert "sg__.while__(cond__1, body__1)" in res.code


def test_syntax_error_names_the_line(shell):
    res, err = run(shell, "%%stagd_convert\ndef f(x):\n    if x > 0\n        return x\n")
    assert isinstance(err, UsageError)
    msg = str(err)
    assert msg.splitlines()[0] == "%%stagd_convert: 1 error in the cell"
    assert "<cell>:2:13: error: expected ':'" in msg
    assert "   2 |     if x > 0\n     |             ^" in msg
    d = err.converted.errors[0]
    assert (d.line, d.column) == (2, 13)
    res, err = run(shell, "1 + 1")  # the shell goes on
    assert err is None and res == 2


def test_unknown_function_is_an_error(shell):
    res, err = run(shell, "%%stagd_convert --function nope\n" + LOOP)
    assert isinstance(err, UsageError)
    assert "no function named 'nope'" in str(err) and "[unknown-function]" in str(err)


def test_warning_is_shown_with_the_code(shell):
    res, err = run(shell, "%%stagd_convert\ndef g(x):\n    y__ = 1\n    return x\n")
    assert err is None
    (d,) = res.diagnostics
    assert d.severity == "warning" and (d.line, d.column) == (2, 5)
    text = str(res)
    assert text.startswith("<cell>:2:5: warning: function 'g' is not converted")
    assert "   2 |     y__ = 1\n     |     ^" in text and "= hint: rename it" in text
    assert text.endswith("def g(x):\n    y__ = 1\n    return x")
    html = res._repr_html_()
    assert 'class="stagd-diagnostic stagd-warning"' in html
    assert "&lt;cell&gt;:2:5: warning: function &#x27;g&#x27; is not converted" in html


def test_convert_bad_option(shell):
    res, err = run(shell, "%%stagd_convert --style fortran\n" + LOOP)
    assert isinstance(err, UsageError)
    assert "invalid choice: 'fortran'" in str(err) and "usage: %%stagd_convert" in str(err)


GRAPH_FN = ("def affine(x, y):\n    if x > 1.0:\n        z = x * y\n    else:\n        z = y\n"
            "    return z + 1.0\n")


def test_graph_renders_svg(shell):
    assert shutil.which("dot"), "Graphviz dot is needed (scripts/install-deps.sh installs it)"
    run(shell, GRAPH_FN)
    res, err = run(shell, "%stagd_graph affine 2.0, 3.0")
    assert err is None
    assert isinstance(res, ipython_display.GraphView)
    svg = res._repr_svg_()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)  # what Graphviz drew
    assert "@affine" in labels and "if" in labels and "&gt;" in labels and "*" in labels
    assert str(res).startswith("graph @affine")
    assert res.dumps["dot"].startswith("digraph")
    # a PNG beside it, for the front ends and exporters that do not use the SVG
    png = res._repr_png_()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    # and the SVG as an <img> in text/html, which nbconvert 6.5 exports as it is
    page = res._repr_html_()
    m = re.fullmatch(r'<img class="stagd-graph" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" '
                     r'alt="graph of affine">', page)
    assert m and base64.b64decode(m.group(1)).decode() == svg


def test_graph_mime_bundle_as_ipython_displays_it(shell):
    run(shell, GRAPH_FN)
    res, err = run(shell, "%stagd_graph affine 2.0, 3.0")
    assert err is None
    data, _ = shell.display_formatter.format(res)
    assert {"text/plain", "text/html", "image/svg+xml", "image/png"} <= set(data), sorted(data)
    assert data["image/png"] == res.png


def test_graph_without_graphviz_is_text(shell, monkeypatch):
    run(shell, GRAPH_FN)
    monkeypatch.setattr(ipython_display.shutil, "which", lambda name: None)
    res, err = run(shell, "%stagd_graph affine 2.0, 3.0")
    assert err is None
    assert res._repr_svg_() is None and res._repr_png_() is None and res._repr_html_() is None
    assert "graph @affine" in repr(res) and "return" in repr(res)


def test_graph_formats_of_a_staged_function(shell):
    run(shell, "import stagd\n@stagd.function\ndef scale(x, k):\n    return x * k\n")
    res, err = run(shell, "%stagd_graph --format sexpr scale 2.0, 4.0")
    assert err is None and res._repr_svg_() is None
    assert str(res).startswith("(def scale") and re.search(r"\(\* x\S* k\S*\)", str(res))
    res, err = run(shell, "%stagd_graph --format=json scale 2.0, 4.0")
    assert err is None
    assert isinstance(json.loads(str(res)), (dict, list))
    res, err = run(shell, "%stagd_graph --format dot --no-optimize scale 2.0, 4.0")
    assert err is None and str(res).startswith("digraph")


@pytest.mark.parametrize("line, message", [
    ("", "no function given"),
    ("--format png affine 1.0", "unknown --format 'png'"),
    ("--bogus affine 1.0", "unknown option --bogus"),
    ("nope 1.0", "cannot evaluate the function 'nope': NameError"),
    ("affine 1.0, undefined_arg", "cannot evaluate the arguments"),
    ("not_callable 1.0", "not_callable is a int, not a function"),
])
def test_graph_errors(shell, line, message):
    run(shell, GRAPH_FN + "not_callable = 3\n")
    res, err = run(shell, "%stagd_graph " + line)
    assert isinstance(err, UsageError), err
    assert message in str(err)


@pytest.mark.parametrize("args, message", [
    ("1.0", "affine(x, y) cannot take 1 argument: missing a required argument: 'y'"),
    ("1, 2, 3", "affine(x, y) cannot take 3 arguments: too many positional arguments"),
])
def test_graph_wrong_arity_is_a_usage_error(shell, args, message):
    # one line and the usage, no traceback through IPython and the tracer; a
    # stagd.function is named by the function it wraps
    run(shell, GRAPH_FN + "import stagd\nstaged_affine = stagd.function(affine)\n")
    for fn in ("affine", "staged_affine"):
        res, err = run(shell, f"%stagd_graph {fn} {args}")
        assert isinstance(err, UsageError), err
        assert str(err) == (f"%stagd_graph: {message}\n"
                            "usage: %stagd_graph [--format svg|text|dot|sexpr|json] [--no-optimize] FN [ARGS]")


def test_progress_magic_runs_the_cell_and_shows_time(shell, capsys):
    res, err = run(shell, "%%stagd_progress --threshold 0 sleeping\nimport time\n"
                          "time.sleep(0.4)\nslept = True\n")
    assert err is None and shell.user_ns["slept"] is True
    err_text = capsys.readouterr().err
    assert "sleeping: running for" in err_text
    assert err_text.rstrip().split("\r")[-1].startswith("sleeping: done in 0.")


@pytest.mark.parametrize("line, message", [
    ("--threshold -1", "--threshold must be >= 0, got -1"),
    ("--threshold soon", "argument --threshold/-t: invalid float value: 'soon'"),
])
def test_progress_magic_bad_threshold(shell, line, message):
    res, err = run(shell, f"%%stagd_progress {line}\nnever_run = 1\n")
    assert isinstance(err, UsageError) and message in str(err)
    assert "never_run" not in shell.user_ns


def test_progress_magic_quiet_when_fast(shell, capsys):
    res, err = run(shell, "%%stagd_progress --threshold 30\nfast = 1\n")
    assert err is None and shell.user_ns["fast"] == 1
    assert "done in" not in capsys.readouterr().err


class Recorder:
    def __init__(self):
        self.shown, self.closed = [], []

    def update(self, view):
        self.shown.append(view.text())

    def close(self, view):
        self.closed.append(view.text())


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_progress_bar_counts_and_closes():
    out, clock = Recorder(), Clock()
    bar = progress.progress(range(4), desc="training", out=out, clock=clock, width=8)
    seen = []
    for i in bar:
        clock.t += 0.5
        seen.append(i)
        bar.set_postfix(loss=1.0 / (i + 1))
    assert seen == [0, 1, 2, 3]
    assert out.shown[0] == "training:   0%|        | 0/4 [0:00, 0 it/s]"
    assert out.closed == ["training: 100%|########| 4/4 [0:02, 2 it/s] loss=0.25"]
    assert bar._repr_html_().startswith('<div class="stagd-progress"><progress value="4" max="4"')


def test_progress_bar_closes_on_break_and_throttles():
    out, clock = Recorder(), Clock()
    bar = progress.progress(iter(range(100)), out=out, clock=clock, min_interval=1.0)
    for i in bar:
        clock.t += 0.25
        if i == 9:
            break
    assert out.closed == ["9 it [0:02, 3.6 it/s]"]
    assert 1 < len(out.shown) < 10  # redrawn at most once a second of the clock


def test_progress_rejects_negative_total():
    with pytest.raises(ValueError, match="total must be >= 0"):
        progress.Progress(-1, out=Recorder())


def test_busy_shows_elapsed_only_past_threshold():
    out = Recorder()
    with progress.busy("staged call", threshold=0.05, interval=0.02, out=out) as b:
        time.sleep(0.3)
    assert b.shown and out.shown and out.shown[0].startswith("staged call: running for 0:00")
    assert len(out.closed) == 1 and out.closed[0].startswith("staged call: done in 0.")
    quiet = Recorder()
    with progress.busy("quick", threshold=10.0, out=quiet) as b:
        pass
    assert not b.shown and quiet.shown == [] and quiet.closed == []


def test_busy_reports_failure():
    out = Recorder()
    with pytest.raises(RuntimeError):
        with progress.busy("doomed", threshold=0.0, interval=0.01, out=out):
            time.sleep(0.1)
            raise RuntimeError("boom")
    assert out.closed[0].startswith("doomed: failed after 0.")


def test_convert_addr_uses_that_daemon_only(shell, daemon):
    default = stagd._default_client
    res, err = run(shell, f"%%stagd_convert --addr {daemon.addr}\n" + LOOP)
    assert err is None and "while_stmt" in res.code
    assert stagd._default_client is default
    res, err = run(shell, "%%stagd_convert --addr unix:/nonexistent/stagd.sock\n" + LOOP)
    assert isinstance(err, UsageError)
    assert "no stagd daemon answers at unix:/nonexistent/stagd.sock" in str(err)


def test_busy_threshold_zero_always_shows():
    out, clock = Recorder(), Clock()
    with progress.busy("instant", threshold=0, interval=10.0, out=out, clock=clock):
        clock.t += 1.5
    assert out.shown[0] == "instant: running for 0:00 (0.0 s)"
    assert out.closed == ["instant: done in 1.50 s"]


def test_busy_rejects_negative_threshold():
    with pytest.raises(ValueError, match="threshold must be >= 0"):
        progress.busy(threshold=-1)


def test_unload_and_reload(shell):
    shell.run_line_magic("unload_ext", "stagd")
    try:
        res, err = run(shell, "%stagd_graph affine 1.0")
        assert isinstance(err, UsageError) and "not found" in str(err)
    finally:
        shell.run_line_magic("load_ext", "stagd")
    res, err = run(shell, "%%stagd_convert\n" + LOOP)
    assert err is None and "while_stmt" in res.code


def test_timed_wraps_every_call(shell):
    run(shell, "import stagd\n@stagd.function\ndef double(x):\n    return x * 2.0\n")
    out = Recorder()
    slow = progress.timed(shell.user_ns["double"], threshold=0, out=out)
    assert float(slow(2.5)) == 5.0 and float(slow(1.0)) == 2.0
    assert slow.__name__ == "double" and slow.__wrapped__ is shell.user_ns["double"]
    assert len(out.closed) == 2 and all(c.startswith("double: done in ") for c in out.closed)
