# SPDX-License-Identifier: Apache-2.0
"""test_install.py — installing stagd (docs/deploy.md "Install"): `cmake --install` of the
build that made $STAGD_BIN into a fresh prefix, then everything run from there (the
daemon, stagctl, the configuration file, the systemd unit, the man pages, the Python
package finding the daemon beside it); `pip install clients/python` in a venv, offline
(Debian's setuptools and wheel wheels), and `stagd.connect()` finding the daemon on PATH
or saying how to install it. The .deb in a fresh Debian root is deploy/test.sh's.
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import harness

REPO = harness.REPO


def _build_dir():
    """The CMake build tree $STAGD_BIN (build/server/stagd) was made in."""
    build = Path(harness.stagd_bin()).resolve().parents[1]
    if not (build / "CMakeCache.txt").is_file():
        pytest.fail(f"STAGD_BIN={harness.stagd_bin()} is not inside a CMake build tree "
                    "(build/server/stagd): cannot test its installation", pytrace=False)
    return build


def _cmake_version():
    m = re.search(r"project\(stagd VERSION (\S+)", (REPO / "CMakeLists.txt").read_text())
    return m.group(1)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    res = subprocess.run(["cmake", "--install", str(_build_dir()), "--prefix", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return root


# Where the install puts the Python package for a prefix other than /usr and /usr/local:
# the standard layout, the user site of Debian's python3 for ~/.local (cmake/install.cmake).
SITE = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"


def _clean_env(**extra):
    """No STAGD_*, no PYTHONPATH, a PATH without any stagd: only what is installed."""
    env = harness.base_env()
    env.pop("PYTHONPATH", None)
    env["PATH"] = "/usr/bin:/bin"
    env["ASAN_OPTIONS"] = "detect_leaks=0"  # the installed build may be the sanitized one
    env.update({k: str(v) for k, v in extra.items()})
    return env


def test_install_lays_out_the_prefix(prefix):
    for rel in ("bin/stagd", "bin/stagctl"):
        assert os.access(prefix / rel, os.X_OK), rel
    for rel in ("share/man/man1/stagd.1", "share/man/man1/stagctl.1",
                "lib/systemd/system/stagd.service", "etc/stagd/stagd.conf",
                "share/doc/stagd/LICENSE", "share/doc/stagd/NOTICE", "share/doc/stagd/copyright",
                f"{SITE}/stagd/__init__.py",
                f"{SITE}/stagd/_generated/stagd_pb2.py",
                f"{SITE}/stagd/_generated/health_pb2.py"):
        assert (prefix / rel).is_file(), rel
    # the man pages are the programs' --help: every option is there
    stagd_man = (prefix / "share/man/man1/stagd.1").read_text()
    for flag in ("metrics\\-listen", "models", "log\\-format", "shutdown\\-timeout\\-ms"):
        assert flag in stagd_man, flag
    assert "run\\-model" in (prefix / "share/man/man1/stagctl.1").read_text()
    assert "Apache License" in (prefix / "share/doc/stagd/LICENSE").read_text()


def test_installed_stagctl_and_daemon_run(prefix, start_daemon):
    res = subprocess.run([str(prefix / "bin/stagctl"), "--local", "version"], capture_output=True,
                         text=True, env=_clean_env(), timeout=60)
    assert res.returncode == 0, res.stderr
    assert f'"version": "{_cmake_version()}"' in res.stdout
    # the default configuration file is valid and the daemon serves with it
    d = start_daemon("--config", str(prefix / "etc/stagd/stagd.conf"), "--listen", "127.0.0.1:0",
                     binary=str(prefix / "bin/stagd"), env=_clean_env())
    res = subprocess.run([str(prefix / "bin/stagctl"), "--addr", d.addr, "health"],
                         capture_output=True, text=True, env=_clean_env(), timeout=30)
    assert res.returncode == 0 and "SERVING" in res.stdout, res.stdout + res.stderr


def test_systemd_unit_verifies(prefix, tmp_path):
    unit = (prefix / "lib/systemd/system/stagd.service").read_text()
    m = re.search(r"^ExecStart=(\S+) --config (\S+)$", unit, re.M)
    assert m, unit
    assert m.group(1).endswith("/bin/stagd") and m.group(2).endswith("/stagd/stagd.conf")
    for option in ("DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict",
                   "CapabilityBoundingSet=\n", "KillSignal=SIGTERM"):
        assert option in unit, option
    # verified against the installed files (the unit names the configured prefix)
    local = tmp_path / "stagd.service"
    local.write_text(unit.replace(m.group(1), str(prefix / "bin/stagd"))
                     .replace(m.group(2), str(prefix / "etc/stagd/stagd.conf")))
    res = subprocess.run(["systemd-analyze", "verify", "--man=no", str(local)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_installed_python_package_starts_the_installed_daemon(prefix):
    site = prefix / SITE
    code = textwrap.dedent("""
        import stagd, stagd._proto as p
        c = stagd.connect(autostart=True)
        print(c.daemon.binary)
        print(p.generated_dir())
        print(c.version().version)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                         env=_clean_env(PYTHONPATH=str(site)), timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    binary, generated, version = res.stdout.split()
    assert binary == str(prefix / "bin/stagd")  # beside the package, not PATH or a checkout
    assert generated == str(site / "stagd/_generated")  # no protoc at import
    assert version == _cmake_version()


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A venv (seeing Debian's grpcio, protobuf, NumPy) with `pip install clients/python`
    done offline from a copy of the sources (no build files left in the checkout)."""
    root = tmp_path_factory.mktemp("venv")
    src = root / "src"
    shutil.copytree(REPO / "clients/python", src / "clients/python",
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    shutil.copytree(REPO / "proto", src / "proto")
    env = _clean_env(PATH=os.environ["PATH"], PIP_NO_INDEX="1",
                     PIP_FIND_LINKS="/usr/share/python-wheels")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(root / "v")],
                   check=True, env=env, timeout=120)
    res = subprocess.run([str(root / "v/bin/pip"), "install", "-q", "clients/python"],
                         capture_output=True, text=True, cwd=src, env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return root / "v"


def test_pip_installed_package_finds_the_daemon_on_path(venv, prefix):
    code = ("import stagd, stagd._proto as p; c = stagd.connect(autostart=True); "
            "print(c.daemon.binary, p.generated_dir(), stagd.__file__)")
    env = _clean_env(PATH=f"{prefix / 'bin'}:/usr/bin:/bin")
    res = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True, text=True,
                         cwd="/", env=env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    binary, generated, module = res.stdout.split()
    assert binary == str(prefix / "bin/stagd")
    assert generated.startswith(str(venv)) and module.startswith(str(venv))


def test_connect_without_any_daemon_says_how_to_install(venv):
    code = "import stagd; stagd.connect(autostart=True)"
    res = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True, text=True,
                         cwd="/", env=_clean_env(), timeout=60)
    assert res.returncode != 0
    assert "FileNotFoundError" in res.stderr and "no daemon binary" in res.stderr
    assert "STAGD_BIN" in res.stderr and "apt install ./stagd_" in res.stderr


def test_stagd_bin_wins_over_the_other_places(venv, prefix, tmp_path):
    fake = tmp_path / "not-stagd"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    code = "import stagd.daemon as d; print(d.find_binary())"
    env = _clean_env(PATH=f"{prefix / 'bin'}:/usr/bin:/bin", STAGD_BIN=str(fake))
    res = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True, text=True,
                         cwd="/", env=env, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == str(fake), res.stderr


def test_python_package_version_is_the_project_version():
    text = (REPO / "clients/python/pyproject.toml").read_text()
    assert re.search(r'^version = "(\S+)"', text, re.M).group(1) == _cmake_version()


def test_a_checkout_runs_its_own_build_before_path(prefix):
    """The checkout's client finds the checkout's build (build-release/, then build/), not
    an installed stagd on PATH: the README's snippet after `scripts/demo.sh`."""
    code = "import stagd.daemon as d; print(d.find_binary())"
    env = _clean_env(PATH=f"{prefix / 'bin'}:/usr/bin:/bin", PYTHONPATH=str(REPO / "clients/python"))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                         env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    builds = [REPO / b / "server/stagd" for b in ("build-release", "build")]
    assert res.stdout.strip() == str(next(b for b in builds if os.access(b, os.X_OK)))


@pytest.mark.parametrize("prefix_arg, site", [
    ("/usr", "usr/lib/python3/dist-packages"),
    ("/usr/local", f"usr/local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/dist-packages"),
])
def test_python_package_goes_where_debians_python_reads_it(prefix_arg, site, tmp_path):
    """--prefix /usr and /usr/local (staged through DESTDIR): the package lands in a
    directory on Debian's python3's sys.path, so the LSP graph helper imports it."""
    env = dict(os.environ, DESTDIR=str(tmp_path))
    res = subprocess.run(["cmake", "--install", str(_build_dir()), "--prefix", prefix_arg],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / site / "stagd/_generated/stagd_pb2.py").is_file(), res.stdout
    assert f"/{site}" in subprocess.run(["/usr/bin/python3", "-c", "import sys; print(sys.path)"],
                                        capture_output=True, text=True).stdout
