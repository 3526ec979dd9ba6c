# SPDX-License-Identifier: Apache-2.0
"""test_stagctl_cli.py — stagctl's conventions as a user meets them, on the real binary:
--version, per-command --help, `--`, addresses without a port, unreachable daemons,
numbers no float64 holds in --args, colored diagnostics (NO_COLOR, a real pseudo-
terminal), exit codes, and the bash / zsh completions written from the command table
(checked in real bash and zsh)."""
import json
import os
import pty
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import harness

HERE = Path(__file__).resolve().parent
COMMANDS = ["parse", "unparse", "convert", "stage", "run", "grad", "run-model", "models", "devices",
            "health", "version", "stats", "ping", "completion", "help"]


def stagctl(*args, env=None, timeout=30, stdin=subprocess.DEVNULL, cwd=None):
    return subprocess.run([harness.stagctl_bin(), *args], capture_output=True, text=True, cwd=cwd,
                          env=env or harness.base_env(), timeout=timeout, stdin=stdin)


def identity(tmp_path, name="id.sexp"):
    p = tmp_path / name
    p.write_text("(def f (x) x)\n")
    return p


# ------------------------------------------------------------ --version, --help, --

def test_version_flag(stagctl_bin):
    r = stagctl("--version")
    assert r.returncode == 0 and r.stderr == "", r
    m = re.fullmatch(r"stagctl (\S+) \(API stagd\.v1\)\n", r.stdout)
    assert m, r.stdout
    daemon = json.loads(stagctl("--local", "version").stdout)
    assert m.group(1) == daemon["version"]


def test_top_level_help_lists_every_command_and_option(stagctl_bin):
    r = stagctl("--help")
    assert r.returncode == 0 and r.stderr == "", r
    listed = re.findall(r"^  ([\w-]+) {2,}", r.stdout.split("commands:")[1], re.M)
    assert listed == COMMANDS
    for opt in ("--addr", "--local", "--timeout", "--json-errors", "--color", "--version", "--help"):
        assert opt in r.stdout
    assert "NO_COLOR" in r.stdout and "Exit status: 0 success, 1 bad input, 2 usage" in r.stdout


@pytest.mark.parametrize("cmd", COMMANDS)
def test_command_help(stagctl_bin, cmd):
    # `COMMAND --help` and `help COMMAND` print the same page, exit 0, need no daemon
    r = stagctl("--addr", "127.0.0.1:1", cmd, "--help")
    assert r.returncode == 0 and r.stderr == "", r
    assert r.stdout.startswith(f"usage: stagctl [OPTIONS] {cmd}"), r.stdout
    assert stagctl("help", cmd).stdout == r.stdout
    assert stagctl(cmd, "-h").stdout == r.stdout


def test_run_help_names_its_options(stagctl_bin):
    out = stagctl("run", "--help").stdout
    for opt in ("--entry NAME", "--args JSON", "--device DEV", "--help"):
        assert opt in out, out
    assert "Infinity" in out


def test_help_wins_over_bad_arguments(stagctl_bin):
    # like git: `run --bogus --help` shows the help instead of failing on --bogus
    r = stagctl("run", "--help", "--bogus")
    assert r.returncode == 0 and r.stdout.startswith("usage: stagctl [OPTIONS] run"), r


def test_double_dash_ends_options(stagctl_bin, tmp_path):
    f = identity(tmp_path, "-x.sexp")
    r = stagctl("--local", "run", "--entry", "f", "--args", "[5]", "--", "-x.sexp", cwd=tmp_path)
    assert r.returncode == 0, r
    assert r.stdout == "5\n"
    # without `--` the name is an unknown option, and --help after `--` is an operand
    r = stagctl("--local", "run", "-x.sexp", cwd=tmp_path)
    assert r.returncode == 2 and "unknown option '-x.sexp'" in r.stderr, r
    r = stagctl("--local", "run", "--", "--help", cwd=tmp_path)
    assert r.returncode == 1 and "--help: error: cannot read" in r.stderr, r
    # `--` before the command ends the global options
    assert stagctl("--local", "--", "run", "--entry", "f", "--args", "[6]", str(f)).stdout == "6\n"


@pytest.mark.parametrize("args, exit_code, needle", [
    (["frobnicate"], 2, "unknown command 'frobnicate'"),
    (["rnu"], 2, "did you mean 'run'?"),
    (["--frob", "version"], 2, "unknown option '--frob'"),
    (["--addr"], 2, "option '--addr' needs a value"),
    (["--local", "run"], 2, "run: expected FILE.sexp"),
    (["--local", "run", "a", "b"], 2, "unexpected argument 'b'"),
    (["--local", "parse", "--json=yes", "f.py"], 2, "option '--json' takes no value"),
    (["--local", "grad", "f.sexp"], 2, "--entry NAME is required"),
    (["--local", "stage", "--dump", "png", "f.sexp"], 2, "--dump expects sexpr, text, dot or json"),
    (["--timeout", "0", "version"], 2, "--timeout expects a positive number"),
    (["--color", "sometimes", "version"], 2, "--color expects auto, always or never"),
    (["completion", "fish"], 2, "expected bash or zsh"),
    (["--local", "parse", "/nonexistent/x.py"], 1, "/nonexistent/x.py: error: cannot read"),
])
def test_exit_codes(stagctl_bin, args, exit_code, needle):
    r = stagctl(*args)
    assert r.returncode == exit_code, r
    assert needle in r.stderr, r.stderr
    assert r.stdout == ""
    if exit_code == 2:  # a usage error points at the right help
        assert re.search(r"hint: see stagctl (\w+ )?--help", r.stderr), r.stderr


def test_no_command_prints_help_and_exits_2(stagctl_bin):
    r = stagctl()
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("usage: stagctl"), r


# ------------------------------------------------------------------ addresses

@pytest.mark.parametrize("addr, needle", [
    ("localhost", "'localhost' has no port: write localhost:7420"),
    ("[::1]", "'[::1]' has no port: write [::1]:7420"),
    ("::1", "write an IPv6 address in brackets, [::1]:PORT"),
    (":7420", "has no host"),
    ("localhost:99999", "HOST:PORT (1-65535)"),
    ("unix:", "names no socket: write unix:PATH"),
])
def test_addr_without_a_port_is_a_usage_error(stagctl_bin, addr, needle):
    # gRPC would dial `localhost` at port 443 and answer with a c-ares message
    r = stagctl("--addr", addr, "version", timeout=10)
    assert r.returncode == 2, r
    assert needle in r.stderr and "--addr" in r.stderr, r.stderr
    r = stagctl("version", env=harness.base_env(STAGD_ADDR=addr), timeout=10)
    assert r.returncode == 2 and "$STAGD_ADDR" in r.stderr and needle in r.stderr, r.stderr


def test_local_ignores_the_address(stagctl_bin):
    r = stagctl("--local", "version", env=harness.base_env(STAGD_ADDR="localhost"))
    assert r.returncode == 0, r


@pytest.mark.parametrize("addr, reason", [
    ("127.0.0.1:1", "connection refused (no daemon listens there)"),
    ("unix:/nonexistent/stagd.sock", "no such socket"),
    ("nosuchhost.invalid:7420", "the host name does not resolve"),
])
def test_unreachable_daemon_says_what_to_do(stagctl_bin, addr, reason):
    r = stagctl("--addr", addr, "version", timeout=60)
    assert r.returncode == 2 and r.stdout == "", r
    lines = r.stderr.splitlines()
    assert lines[0] == f"stagctl: error: cannot reach stagd at {addr}: {reason} (UNAVAILABLE)", r.stderr
    assert lines[1].startswith(f"  hint: start a daemon with `stagd --listen {addr}`"), r.stderr
    assert "--local" in lines[1] and "$STAGD_ADDR" in lines[1]
    for noise in ("C-ares", "ARES_", "last error", "UNKNOWN", "443"):
        assert noise not in r.stderr
    j = json.loads(stagctl("--json-errors", "--addr", addr, "version", timeout=60).stderr)
    assert j["status"] == "UNAVAILABLE" and reason in j["message"] and "--local" in j["hint"], j


# ------------------------------------------------------------ numbers in --args

@pytest.mark.parametrize("args, where, what", [
    ("[1e400]", "1:2", "the number 1e400 is out of float64's range"),
    ("[-1E+400]", "1:2", "the number -1E+400 is out of float64's range"),
    ('[{"tuple": [1.5,\n  [2.0, 1e309]]}]', "2:9", "the number 1e309 is out of float64's range"),
    ('["é", 1e400]', "1:7", "the number 1e400"),
    ("[99999999999999999999]", "1:2", "the integer 99999999999999999999 does not fit an int64"),
    ("[-9223372036854775809]", "1:2", "the integer -9223372036854775809 does not fit an int64"),
])
def test_args_numbers_out_of_range_are_located_errors(stagctl_bin, tmp_path, args, where, what):
    f = identity(tmp_path)
    r = stagctl("--local", "run", str(f), "--entry", "f", "--args", args)
    assert r.returncode == 1 and r.stdout == "", r  # never the string "inf" or a clamped integer
    assert r.stderr.startswith(f"--args:{where}: error: {what}"), r.stderr
    j = json.loads(stagctl("--local", "--json-errors", "run", str(f), "--entry", "f", "--args", args).stderr)
    assert (j["file"], f"{j['line']}:{j['column']}") == ("--args", where) and j["status"] == "INVALID_ARGUMENT", j


def test_infinity_hint(stagctl_bin, tmp_path):
    r = stagctl("--local", "run", str(identity(tmp_path)), "--entry", "f", "--args", "[1e400]")
    assert 'hint: write the string "Infinity" or "-Infinity" for an infinite value' in r.stderr, r.stderr


@pytest.mark.parametrize("args, out", [
    ("[1e-400]", "0.0"),                       # rounds to zero, as json.loads and float() do
    ("[1.7976931348623157e308]", "1.7976931348623157e+308"),
    ("[-9223372036854775808]", "-9223372036854775808"),
    ('["1e400"]', '"1e400"'),                  # a string is not a number
])
def test_args_numbers_in_range_pass(stagctl_bin, tmp_path, args, out):
    r = stagctl("--local", "run", str(identity(tmp_path)), "--entry", "f", "--args", args)
    assert r.returncode == 0, r
    assert r.stdout == out + "\n"


# ----------------------------------------------------------------------- color

RED_ERROR = "\x1b[1;31merror:\x1b[0m"


def run_on_tty(args, env):
    """stagctl with its stderr on a pseudo-terminal; (exit status, what it wrote there)."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([harness.stagctl_bin(), *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        rc = p.wait(timeout=30)
    finally:
        os.close(master)
    return rc, b"".join(chunks).decode()


@pytest.mark.parametrize("env, colored", [
    ({}, True),
    ({"NO_COLOR": "1"}, False),
    ({"NO_COLOR": ""}, True),         # no-color.org: only a non-empty NO_COLOR counts
    ({"TERM": "dumb"}, False),
])
def test_colors_on_a_terminal(stagctl_bin, tmp_path, env, colored):
    args = ["--local", "run", str(identity(tmp_path)), "--entry", "f", "--args", "[1e400]"]
    e = harness.base_env(**{"TERM": "xterm", **env})
    if "NO_COLOR" not in env:
        e.pop("NO_COLOR", None)
    rc, text = run_on_tty(args, e)
    assert rc == 1
    assert (RED_ERROR in text) == colored, repr(text)
    assert ("\x1b[" in text) == colored
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text).replace("\r\n", "\n")
    assert plain.startswith("--args:1:2: error: the number 1e400"), repr(plain)


def test_color_flag(stagctl_bin, tmp_path):
    args = ["run", str(identity(tmp_path)), "--entry", "f", "--args", "[1e400]"]
    piped = stagctl("--local", *args)
    assert "\x1b[" not in piped.stderr  # not a terminal: plain
    forced = stagctl("--color=always", "--local", *args, env=harness.base_env(NO_COLOR="1"))
    assert forced.stderr.startswith("\x1b[1m--args:1:2:\x1b[0m " + RED_ERROR), repr(forced.stderr)
    assert "\x1b[1;36mhint:\x1b[0m" in forced.stderr
    e = harness.base_env(TERM="xterm")
    e.pop("NO_COLOR", None)
    rc, text = run_on_tty(["--color", "never", "--local", *args], e)
    assert rc == 1 and "\x1b[" not in text


def test_converter_warnings_are_colored_like_errors(stagctl_bin, tmp_path):
    f = tmp_path / "g.py"
    f.write_text("def f(x):\n    yield x\n")
    r = stagctl("--color=always", "--local", "convert", str(f))
    assert r.returncode == 0, r
    assert f"\x1b[1m{f}:2:5:\x1b[0m \x1b[1;35mwarning:\x1b[0m function 'f' is not converted" in r.stderr, r.stderr


# ------------------------------------------------------------------ completions

def command_options(cmd):
    """The options a command's --help lists (the table's rows)."""
    out = stagctl(cmd, "--help").stdout
    return sorted(set(re.findall(r"^  (--[\w-]+)", out, re.M)))


BASH_DRIVER = r"""
source <("$STAGCTL" completion bash) || exit 3
complete -p stagctl
while IFS= read -r line; do
  read -ra COMP_WORDS <<< "$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMP_LINE=$line COMP_POINT=${#line}
  COMPREPLY=()
  _stagctl
  printf '%s\n' "${COMPREPLY[*]}"
done
"""


def bash_complete(lines, cwd):
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, cwd=cwd, timeout=30,
                       env=harness.base_env(STAGCTL=harness.stagctl_bin()))
    assert r.returncode == 0 and r.stderr == "", r
    out = r.stdout.split("\n")
    return out[0], [sorted(x.split()) for x in out[1:1 + len(lines)]]


def test_bash_completion(stagctl_bin, tmp_path):
    (tmp_path / "model.sexp").write_text("")
    (tmp_path / "notes.txt").write_text("")
    cases = {
        "stagctl ": COMMANDS,
        "stagctl r": ["run", "run-model"],
        "stagctl --local g": ["grad"],
        "stagctl --addr host:7420 ver": ["version"],
        "stagctl --co": ["--color"],
        "stagctl --color a": ["always", "auto"],
        "stagctl stage --dump ": ["dot", "json", "sexpr", "text"],
        "stagctl convert --style ": ["autograph", "snek"],
        "stagctl run --device ": ["cpu", "vulkan"],
        "stagctl run --entry ": [],
        "stagctl run mo": ["model.sexp"],
        "stagctl run -- --": [],
        "stagctl completion ": ["bash", "zsh"],
        "stagctl help gr": ["grad"],
    }
    for cmd in COMMANDS:
        cases[f"stagctl {cmd} --"] = command_options(cmd)
    spec, got = bash_complete(list(cases), tmp_path)
    assert spec == "complete -o bashdefault -o filenames -F _stagctl stagctl", spec
    for (line, want), g in zip(cases.items(), got):
        assert g == sorted(want), (line, g)


def test_zsh_completion(stagctl_bin, tmp_path):
    zsh = shutil.which("zsh")
    assert zsh, "zsh is not installed (Debian: apt-get install zsh; scripts/install-deps.sh has it)"
    script = tmp_path / "_stagctl"
    script.write_text(stagctl("completion", "zsh").stdout)
    (tmp_path / "model.sexp").write_text("")
    cases = {
        "stagctl ": COMMANDS,
        "stagctl r": ["run", "run-model"],
        "stagctl --color=": ["always", "auto", "never"],
        "stagctl stage --dump ": ["dot", "json", "sexpr", "text"],
        "stagctl run --d": ["--device"],
        "stagctl run mo": ["model.sexp"],
        "stagctl completion ": ["bash", "zsh"],
        "stagctl help gr": ["grad"],
    }
    r = subprocess.run([zsh, "-f", str(HERE / "shell" / "zsh_complete.zsh"), str(script), *cases],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       env=harness.base_env(TERM="xterm"))
    assert r.returncode == 0, r
    got = r.stdout.splitlines()
    assert len(got) == len(cases), r
    for (line, want), g in zip(cases.items(), got):
        assert g.split() == sorted(want), (line, g)


def test_build_writes_the_completion_files(stagctl_bin):
    built = Path(harness.stagctl_bin()).parent
    assert (built / "stagctl.bash").read_text() == stagctl("completion", "bash").stdout
    assert (built / "_stagctl").read_text() == stagctl("completion", "zsh").stdout
