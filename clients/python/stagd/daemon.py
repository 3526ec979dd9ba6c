# SPDX-License-Identifier: Apache-2.0
"""daemon.py — starts and stops a private local `stagd` for this Python process.

The binary (find_binary), first found of:
  1. $STAGD_BIN (an explicit choice wins);
  2. beside this package: PREFIX/bin/stagd of the prefix the package is installed in
     (/usr/bin/stagd for the .deb's /usr/lib/python3/dist-packages/stagd, PREFIX/bin for
     `cmake --install --prefix PREFIX`, VENV/bin for a venv), or, in a checkout,
     <repo>/build-release/server/stagd then <repo>/build/server/stagd;
  3. `stagd` on PATH.
The daemon listens on a private unix socket in a fresh temporary directory (or on the
address asked for), is ready once it logs `serving gRPC on ADDR`, and is stopped with
SIGTERM when the interpreter exits (or when `stop()` is called).
"""
import atexit
import collections
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from .client import live_clients

REPO_ROOT = Path(__file__).resolve().parents[3]
_READY = re.compile(r"serving gRPC on ([^\s\"]+)")  # text or JSON logs

_running = []
_lock = threading.Lock()


def beside_package():
    """The places a stagd binary installed with this package would be (in order)."""
    here = Path(__file__).resolve().parent
    if here == REPO_ROOT / "clients" / "python" / "stagd" and (REPO_ROOT / "proto" / "stagd.proto").is_file():
        # a checkout: its own builds (never /bin/stagd, which merged /usr makes /usr/bin)
        return [REPO_ROOT / b / "server" / "stagd" for b in ("build-release", "build")]
    return [up / "bin" / "stagd" for up in here.parents[:4]]  # PREFIX/lib/python3*/*-packages/stagd


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_binary():
    """Path of the stagd executable (see the module docstring)."""
    env = os.environ.get("STAGD_BIN")
    if env:
        if not _executable(env):
            raise FileNotFoundError(f"stagd: STAGD_BIN={env} is not an executable file")
        return env
    for place in beside_package():
        if _executable(place):
            return str(place)
    found = shutil.which("stagd")
    if found:
        return found
    raise FileNotFoundError(
        "stagd: no daemon binary: $STAGD_BIN is not set, none is installed beside this "
        f"package ({', '.join(str(p) for p in beside_package())}) and none is on PATH. "
        "Install stagd (the .deb: apt install ./stagd_*.deb; or cmake --install "
        "build-release --prefix ~/.local and put ~/.local/bin on PATH), build it in this "
        "checkout (bash scripts/build.sh release), or set STAGD_BIN (docs/deploy.md \"Install\")")


class LocalDaemon:
    """One stagd child process. `addr` is the address it serves once started."""

    def __init__(self, listen=None, args=(), binary=None):
        self._tmpdir = None
        if listen is None:
            self._tmpdir = tempfile.mkdtemp(prefix="stagd-")
            listen = f"unix:{self._tmpdir}/stagd.sock"
        self.listen = listen
        self.args = list(args)
        self.binary = binary or find_binary()
        self.addr = None
        self.proc = None
        self.log = collections.deque(maxlen=200)  # the last lines of its stderr
        self._ready = threading.Event()

    def start(self, timeout=30.0):
        cmd = [self.binary, "--listen", self.listen, *self.args]
        # Own session: a Ctrl-C in the terminal or notebook must not kill the daemon
        # under us; atexit stops it.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        threading.Thread(target=self._drain, name="stagd-log", daemon=True).start()
        with _lock:
            _running.append(self)
        if not self._ready.wait(timeout) or self.addr is None:
            self.stop()
            tail = "\n".join(self.log)
            raise RuntimeError(f"stagd: the daemon ({' '.join(cmd)}) did not become ready "
                               f"within {timeout:g} s; its log:\n{tail}")
        return self

    def _drain(self):
        # Reads stderr to the end so the pipe never fills; notes the ready line.
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.log.append(line)
            m = _READY.search(line)
            if m and self.addr is None:
                self.addr = m.group(1)
                self._ready.set()
        self._ready.set()  # exited: wake start()

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def stop(self, timeout=10.0):
        """SIGTERM, wait up to `timeout`, then SIGKILL. Returns the exit status."""
        with _lock:
            if self in _running:
                _running.remove(self)
        rc = None
        # Close our channels first: the daemon lets connected clients drain on SIGTERM.
        for c in live_clients():
            if self.addr is not None and c.addr == self.addr:
                c.close()
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            rc = self.proc.returncode
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
        return rc


def start(listen=None, args=(), timeout=30.0):
    """Starts a LocalDaemon and returns it once it serves."""
    return LocalDaemon(listen, args).start(timeout)


@atexit.register
def stop_all():
    """Stops every daemon this process started."""
    with _lock:
        daemons = list(_running)
    for d in daemons:
        d.stop()
