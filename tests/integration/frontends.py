# SPDX-License-Identifier: Apache-2.0
"""frontends.py — what the notebook tests need to see a notebook as its users do:
nbconvert's HTML export (Debian 12's nbconvert 6.5, run as `python3 -m nbconvert`),
the classic Jupyter Notebook server (Debian's python3-notebook 6.4), and screenshots of
either taken with headless Chromium (Debian's chromium), measured with Pillow.

A screenshot is judged by its long dark lines: rows and columns holding a run of at
least 60 dark pixels (luminance below 128), which Graphviz's boxes and straight edges
draw and text (a graph's text dump included), prompts and the Notebook's chrome do not.
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import harness

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
SCREENSHOT_TIMEOUT = 120


def chromium():
    exe = shutil.which("chromium")
    assert exe, "chromium is not installed (Debian: apt-get install chromium; scripts/install-deps.sh has it)"
    return exe


def screenshot(url, out_png, workdir, size=(1000, 800), budget_ms=None):
    """Loads url in a fresh headless Chromium profile and writes out_png; a Pillow image."""
    from PIL import Image  # Debian: python3-pil (a dependency of python3-matplotlib)
    profile = workdir / f"chromium-profile-{os.path.basename(str(out_png))}"
    args = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
            f"--screenshot={out_png}"]
    if budget_ms:  # let the page's scripts run (the Notebook front end renders outputs in JS)
        args.append(f"--virtual-time-budget={budget_ms}")
    r = subprocess.run([*args, url], capture_output=True, text=True, timeout=SCREENSHOT_TIMEOUT,
                       env={**os.environ, "HOME": str(workdir)})
    assert r.returncode == 0 and os.path.exists(out_png), f"chromium failed ({r.returncode}):\n{r.stderr[-3000:]}"
    shutil.rmtree(profile, ignore_errors=True)
    return Image.open(out_png).convert("L")


def graph_lines_of(shots, workdir, **kw):
    """{name: graph_lines} of {name: (url, png path)}, the screenshots taken side by side
    (Chromium takes 5-10 s a page on two shared cores)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(shots)) as pool:
        futures = {name: pool.submit(screenshot, url, png, workdir, **kw) for name, (url, png) in shots.items()}
        return {name: graph_lines(f.result()) for name, f in futures.items()}


def _rows_with_runs(img, min_run):
    w, h = img.size
    data = img.tobytes()
    count = 0
    for y in range(h):
        row = data[y * w:(y + 1) * w]
        dark = bytes(1 if v < 128 else 0 for v in row)
        if b"\x01" * min_run in dark:
            count += 1
    return count


def graph_lines(img, min_run=60):
    """Rows plus columns of a grayscale image with a dark run of at least min_run pixels."""
    from PIL import Image
    return _rows_with_runs(img, min_run) + _rows_with_runs(img.transpose(Image.Transpose.TRANSPOSE), min_run)


def export_html(notebook_path, out_dir):
    """`python3 -m nbconvert --to html` as a user runs it; the HTML file's path."""
    r = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(out_dir),
                        str(notebook_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    html = out_dir / (notebook_path.stem + ".html")
    assert html.exists(), r.stderr
    return html


class NotebookServer:
    """The classic Notebook (`python3 -m notebook`) serving `root` on a free port, with
    its configuration, data and runtime folders under `home`."""

    TOKEN = "stagd-test-token"

    def __init__(self, root, home, env):
        self.port = harness.free_port()
        self.env = {**env, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / "config"),
                    "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
        self.log = open(home / "notebook-server.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "notebook", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
             "--port-retries=0", f"--NotebookApp.token={self.TOKEN}", f"--notebook-dir={root}",
             *(["--allow-root"] if os.geteuid() == 0 else [])],  # CI and these machines run as root
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert self.proc.poll() is None, (home / "notebook-server.log").read_text()
            assert time.monotonic() < deadline, "the Notebook server did not answer within 60 s"
            time.sleep(0.2)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}?token={self.TOKEN}"

    def trust(self, notebook):
        """`jupyter trust` (nbformat.sign): as if the user had run it, so its outputs are shown
        unsanitized."""
        r = subprocess.run([sys.executable, "-m", "nbformat.sign", str(notebook)], env=self.env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
