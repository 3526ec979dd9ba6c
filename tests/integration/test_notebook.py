# SPDX-License-Identifier: Apache-2.0
# docs/example.ipynb executed end to end with nbclient in the "Python 3 (stagd)" kernel
# (installed from stagd.kernelspec into a temporary prefix) against a test daemon; any
# cell error fails the test. Also checks what the cells showed (docs/notebook.md), and
# that the graphs are seen where users look: in the HTML nbconvert exports and in the
# classic Notebook, both screenshotted with headless Chromium (frontends.py). With
# STAGD_UPDATE_DOCS=1 the screenshots are copied into docs/ (notebook-*.png).
import base64
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import frontends
import harness
import nbformat  # Debian: python3-nbformat, python3-nbclient, python3-ipykernel
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOK = harness.REPO / "docs" / "example.ipynb"
CLIENT_DIR = harness.REPO / "clients" / "python"
CELL_TIMEOUT = 120


def _kernelspec(*args, **env):
    """Runs `python3 -m stagd.kernelspec ARGS` as a user would (plus `env`)."""
    return subprocess.run([sys.executable, "-m", "stagd.kernelspec", *args],
                          env={**os.environ, "PYTHONPATH": str(CLIENT_DIR), **env},
                          capture_output=True, text=True, timeout=60)


def _install_kernel(prefix):
    r = _kernelspec("install", "--prefix", str(prefix))
    assert r.returncode == 0, r.stderr
    kdir = prefix / "share" / "jupyter" / "kernels" / "stagd"
    assert f"installed kernelspec stagd (Python 3 (stagd)) in {kdir}" in r.stdout
    return kdir


def _outputs(cell, kind):
    """The texts of one kind of output of a cell: 'stream', 'text/plain', 'image/svg+xml'…"""
    out = []
    for o in cell.outputs:
        if kind == "stream" and o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("execute_result", "display_data") and kind in o.get("data", {}):
            out.append(o.data[kind])
    return out


def _cell(nb, starts):
    for c in nb.cells:
        if c.cell_type == "code" and c.source.startswith(starts):
            return c
    raise AssertionError(f"no code cell starts with {starts!r}")


def test_kernelspec_install_writes_kernel_json(tmp_path):
    kdir = _install_kernel(tmp_path)
    spec = json.loads((kdir / "kernel.json").read_text())
    assert spec["display_name"] == "Python 3 (stagd)"
    assert spec["argv"][:3] == [sys.executable, "-m", "ipykernel_launcher"]
    assert "{connection_file}" in spec["argv"] and "--ext=stagd" in spec["argv"]
    assert spec["env"]["PYTHONPATH"] == str(CLIENT_DIR)
    assert "STAGD_ADDR" not in spec["env"]


def test_kernelspec_installs_for_the_user_by_default(tmp_path):
    r = _kernelspec("install", JUPYTER_DATA_DIR=str(tmp_path))
    assert r.returncode == 0, r.stderr
    spec = json.loads((tmp_path / "kernels" / "stagd" / "kernel.json").read_text())
    assert spec["display_name"] == "Python 3 (stagd)"


def test_kernelspec_show_includes_addr_and_python():
    r = _kernelspec("show", "--addr", "unix:/tmp/x", "--python", "/opt/py/bin/python3")
    assert r.returncode == 0, r.stderr
    spec = json.loads(r.stdout)
    assert spec["env"]["STAGD_ADDR"] == "unix:/tmp/x"
    assert spec["argv"][0] == "/opt/py/bin/python3"


def test_kernelspec_usage_errors(tmp_path):
    r = _kernelspec("install", "--user", "--prefix", str(tmp_path))
    assert r.returncode == 2 and "not allowed with argument" in r.stderr
    r = _kernelspec()
    assert r.returncode == 2 and "required: command" in r.stderr


@pytest.fixture(scope="module")
def kernel_env(daemon, tmp_path_factory):
    """The "Python 3 (stagd)" kernel installed in a temporary prefix, talking to the test
    daemon: (prefix, the environment Jupyter tools need to find and run it)."""
    prefix = tmp_path_factory.mktemp("kernel")
    _install_kernel(prefix)
    env = {"JUPYTER_PATH": str(prefix / "share" / "jupyter"),
           "JUPYTER_RUNTIME_DIR": str(prefix / "runtime"),  # connection files
           "IPYTHONDIR": str(prefix / "ipython"),
           "STAGD_ADDR": daemon.addr,
           "STAGD_AUTOSTART": "0"}  # the test daemon or a failure, never another
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        yield prefix, env


@pytest.fixture(scope="module")
def executed_example(kernel_env):
    """docs/example.ipynb executed with nbclient in the stagd kernel (outputs kept)."""
    prefix, _ = kernel_env
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata.kernelspec.name == "stagd"
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="stagd",
                            resources={"metadata": {"path": str(prefix)}})
    try:
        client.execute()
    except CellExecutionError as e:
        pytest.fail(f"docs/example.ipynb: a cell failed:\n{e}", pytrace=False)
    return nb


def test_example_notebook_runs_in_the_stagd_kernel(executed_example):
    nb = executed_example
    eager = "".join(_outputs(_cell(nb, "m = stagd.constant"), "stream"))
    assert eager == "[[4.]]\nd(v*v)/dv at 3.0 = 6.0\n", eager

    # %%stagd_convert --run: the converted code is shown (highlighted) and the plain
    # function is defined and behaves as Python says.
    conv = _cell(nb, "%%stagd_convert")
    html = "".join(_outputs(conv, "text/html"))
    assert "stagd-converted" in html and "sg__" in html and "while_stmt" in html
    assert _outputs(_cell(nb, "collatz_steps(27)"), "text/plain") == ["111"]

    staged = _cell(nb, "@stagd.function\ndef clipped_square")
    text = "".join(_outputs(staged, "stream"))
    assert text.startswith("9.0 1.0\n") and "(if " in text

    # %stagd_graph renders SVG and PNG through Graphviz (installed by scripts/install-deps.sh)
    graph = _cell(nb, "%stagd_graph clipped_square")
    svg = "".join(_outputs(graph, "image/svg+xml"))
    assert svg.startswith("<svg") and "clipped_square" in svg
    assert "graph @" in "".join(_outputs(graph, "text/plain"))
    (png,) = _outputs(graph, "image/png")
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    assert "".join(_outputs(graph, "text/html")).startswith('<img class="stagd-graph" src="data:image/svg+xml;base64,')

    assert _outputs(_cell(nb, "@stagd.function\ndef inner"), "text/plain") == ["47.0"]
    calls = _cell(nb, "%stagd_graph --no-optimize outer")
    assert _outputs(calls, "image/svg+xml")
    (dump,) = _outputs(calls, "text/plain")
    assert dump.count(" = @inner ") == 2 and "graph @inner(" in dump, dump

    train = _cell(nb, "rng = np.random")
    printed = "".join(_outputs(train, "stream"))
    assert "w = 3.0" in printed or "w = 2.9" in printed, printed
    # the progress bar: one display, updated in place to its final state
    bar = _outputs(train, "text/html")
    assert len(bar) == 1 and bar[0].startswith('<div class="stagd-progress"><progress value="150"')
    (line,) = _outputs(train, "text/plain")
    assert line.startswith("training: 100%|") and "| 150/150 [" in line and " loss=0.0" in line

    # the step reads and updates the captured variables in the graph
    dump = "".join(_outputs(_cell(nb, "%stagd_graph --format text"), "text/plain"))
    assert dump.startswith("graph @train_step")
    assert dump.count(" = read ") == 2 and dump.count(" = assign_sub ") == 2, dump  # (w -= ...: one op)

    plot = _cell(nb, "try:\n    import matplotlib")
    assert _outputs(plot, "image/png"), "the loss plot has no PNG output"

    long_cell = _cell(nb, "%%stagd_progress --threshold 0 staged sum")
    assert "".join(_outputs(long_cell, "stream")).strip() == str(sum(range(200000)))
    (busy,) = _outputs(long_cell, "text/plain")  # updated from the watcher thread
    assert busy.startswith("staged sum: done in ") and busy.endswith(" s"), busy


# ------------------------------------------------------------ export and front ends

GRAPH_IMG = re.compile(r'<img class="stagd-graph" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
# A graph's boxes and edges make about 30 long dark lines on a page (frontends.py);
# text, prompts and the Notebook's chrome none.
MIN_GRAPH_LINES = 8


def _graph_notebook(executed, svg_only=False):
    """A notebook of the example's `%stagd_graph clipped_square` cell with its outputs,
    or with only the SVG and text that %stagd_graph emitted before the PNG and the <img>
    (which nbconvert 6.5 exports blank, and an untrusted Notebook shows as text)."""
    cell = nbformat.from_dict(json.loads(json.dumps(_cell(executed, "%stagd_graph clipped_square"))))
    if svg_only:
        for o in cell.outputs:
            for mime in ("text/html", "image/png"):
                o.get("data", {}).pop(mime, None)
    nb = nbformat.v4.new_notebook(metadata=executed.metadata)
    nb.cells = [cell]
    return nb


def _write(nb, path):
    nbformat.write(nb, str(path))
    return path


def _keep_screenshot(png, name):
    if os.environ.get("STAGD_UPDATE_DOCS") == "1":
        shutil.copyfile(png, harness.REPO / "docs" / name)


def test_exported_html_holds_every_graph(executed_example, tmp_path):
    html = frontends.export_html(_write(executed_example, tmp_path / "example.ipynb"), tmp_path).read_text()
    graphs = GRAPH_IMG.findall(html)
    assert len(graphs) == 2, "the two %stagd_graph SVG cells"
    for g in graphs:
        svg = base64.b64decode(g).decode()
        assert svg.startswith("<svg") and '<g id="graph0"' in svg and "<text" in svg
    # nbconvert 6.5 cleans image/svg+xml of its children: no graph is exported that way
    assert 'data-mime-type="image/svg+xml"' not in html


def test_exported_html_shows_the_graph_in_chromium(executed_example, tmp_path):
    pages = {}
    for name, nb in (("graph", _graph_notebook(executed_example)),
                     ("svg-only", _graph_notebook(executed_example, svg_only=True))):
        page = frontends.export_html(_write(nb, tmp_path / f"{name}.ipynb"), tmp_path)
        pages[name] = (page.as_uri(), tmp_path / f"{name}.png")
    shots = frontends.graph_lines_of(pages, tmp_path, size=(900, 700))
    _keep_screenshot(tmp_path / "graph.png", "notebook-export.png")
    print(f"graph lines of the exported page: {shots}")
    assert shots["graph"] >= MIN_GRAPH_LINES, shots
    # with the SVG alone (the bug this guards against) the exported page had no graph
    assert shots["svg-only"] == 0, shots


def test_classic_notebook_shows_the_graph(executed_example, kernel_env, tmp_path):
    _, env = kernel_env
    root = tmp_path / "notebooks"
    root.mkdir()
    _write(_graph_notebook(executed_example), root / "untrusted.ipynb")
    _write(_graph_notebook(executed_example), root / "trusted.ipynb")
    _write(_graph_notebook(executed_example, svg_only=True), root / "svgonly.ipynb")
    home = tmp_path / "home"
    home.mkdir()
    server = frontends.NotebookServer(root, home, {**os.environ, **env})
    try:
        server.trust(root / "trusted.ipynb")
        pages = {name: (server.url(f"notebooks/{name}.ipynb"), tmp_path / f"classic-{name}.png")
                 for name in ("trusted", "untrusted", "svgonly")}
        shots = frontends.graph_lines_of(pages, tmp_path, size=(1100, 800), budget_ms=8000)
    finally:
        server.stop()
    _keep_screenshot(tmp_path / "classic-trusted.png", "notebook-classic.png")
    print(f"graph lines of the Notebook page: {shots}")
    # trusted (the user ran it): the HTML; untrusted (opened from elsewhere): the
    # Notebook shows only "safe" outputs, which the PNG is and the SVG is not — with the
    # SVG alone it showed the text dump
    assert shots["trusted"] >= MIN_GRAPH_LINES, shots
    assert shots["untrusted"] >= MIN_GRAPH_LINES, shots
    assert shots["svgonly"] == 0, shots
