# SPDX-License-Identifier: Apache-2.0
"""plain_speed.py — converted code on plain values against the original: CPython's own
test suites of 20 pure-Python standard library modules, each run once on the module as
it is and once on the module converted by stagd (AutoGraph style), in fresh processes.
Prints per module the test time of each (best of --repeat processes, each running the
suite repeatedly for about a second and keeping its best run), the ratio
converted/original, whether the suite passes on the converted module (same number of
tests run, no failure or error the original does not have), and the overall ratio (total
time) and the worst module. Goal (issue 21): overall <= 1.5x, worst <= 3x.

Needs the interpreter's own test package (`test.test_difflib`, ...): the `python3` on
PATH here (pyenv 3.11) has it; Debian's needs `libpython3.11-testsuite`. The conversion
goes through `stagctl --local convert` (no daemon); the converted module runs with
clients/python on sys.path.

    python3 bench/plain_speed.py [--stagctl build-release/clients/stagctl/stagctl]
        [--repeat 3] [--modules difflib,textwrap]
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import time
import types
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIN_SECONDS, MAX_RUNS = 1.0, 200  # each process reruns a suite for about this long

# module → its test module (pure Python modules whose suites run in a few seconds)
MODULES = {
    "difflib": "test.test_difflib", "html.parser": "test.test_htmlparser",
    "textwrap": "test.test_textwrap", "shlex": "test.test_shlex", "fnmatch": "test.test_fnmatch",
    "colorsys": "test.test_colorsys", "statistics": "test.test_statistics",
    "fractions": "test.test_fractions", "base64": "test.test_base64", "quopri": "test.test_quopri",
    "calendar": "test.test_calendar", "ipaddress": "test.test_ipaddress",
    "configparser": "test.test_configparser", "posixpath": "test.test_posixpath",
    "ntpath": "test.test_ntpath", "pprint": "test.test_pprint", "graphlib": "test.test_graphlib",
    "string": "test.test_string", "getopt": "test.test_getopt", "netrc": "test.test_netrc",
}


def convert(stagctl, path):
    out = subprocess.run([stagctl, "--local", "convert", path], capture_output=True, text=True,
                         check=True)
    return out.stdout


def install_converted(name, code, path):
    """The converted module in sys.modules (and on its package) in place of the original."""
    mod = types.ModuleType(name)
    mod.__file__ = path
    mod.__package__ = name.rpartition(".")[0]
    sys.modules[name] = mod
    exec(compile(code, path, "exec"), mod.__dict__)
    if "." in name:
        parent, _, child = name.rpartition(".")
        setattr(importlib.import_module(parent), child, mod)
    return mod


def run_suite(test_name):
    """(seconds, tests run, failures + errors) of one test module, quietly."""
    suite = unittest.defaultTestLoader.loadTestsFromName(test_name)
    runner = unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0)
    t0 = time.perf_counter()
    result = runner.run(suite)
    dt = time.perf_counter() - t0
    return dt, result.testsRun, len(result.failures) + len(result.errors)


def child(args):
    """One run in this (fresh) process: prints a JSON line."""
    sys.path.insert(0, os.path.join(REPO, "clients", "python"))
    name = args.child
    mod = importlib.import_module(name)
    path = mod.__file__
    if args.converted:
        with open(args.converted) as f:
            code = f.read()
        install_converted(name, code, path)
    test_mod = importlib.import_module(MODULES[name])
    used = getattr(test_mod, name.split(".")[-1], None)
    used = used if isinstance(used, types.ModuleType) else None
    dt, n, bad = run_suite(MODULES[name])
    spent, runs = dt, 1
    while spent < MIN_SECONDS and runs < MAX_RUNS:  # short suites: the best of several runs
        t, _, _ = run_suite(MODULES[name])
        dt, spent, runs = min(dt, t), spent + t, runs + 1
    print(json.dumps({"seconds": dt, "tests": n, "bad": bad, "runs": runs,
                      "module_seen": used is None or used is sys.modules[name]}))


def measure(name, converted_path, repeat):
    best = None
    for _ in range(repeat):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", name]
        if converted_path:
            cmd += ["--converted", converted_path]
        out = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        if out.returncode != 0 or not lines:
            return {"error": (out.stderr or out.stdout)[-800:]}
        r = json.loads(lines[-1])
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stagctl", default=os.path.join(REPO, "build-release", "clients", "stagctl",
                                                      "stagctl"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modules", default=",".join(MODULES))
    ap.add_argument("--child")
    ap.add_argument("--converted")
    args = ap.parse_args()
    if args.child:
        return child(args)
    names = [m for m in args.modules.split(",") if m]
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"stagd_plain_speed_{os.getpid()}")
    os.makedirs(tmp, exist_ok=True)
    rows, total_o, total_c = [], 0.0, 0.0
    print(f"{'module':14s} {'original s':>10s} {'converted s':>11s} {'ratio':>6s}  tests")
    for name in names:
        path = importlib.import_module(name).__file__
        conv = os.path.join(tmp, name + ".py")
        with open(conv, "w") as f:
            f.write(convert(args.stagctl, path))
        o = measure(name, None, args.repeat)
        c = measure(name, conv, args.repeat)
        if "error" in o or "error" in c:
            print(f"{name:14s} failed to run: {(o.get('error') or c.get('error'))!r}")
            continue
        ratio = c["seconds"] / o["seconds"]
        ok = c["tests"] == o["tests"] and c["bad"] <= o["bad"] and c["module_seen"]
        rows.append((name, ratio))
        total_o += o["seconds"]
        total_c += c["seconds"]
        print(f"{name:14s} {o['seconds']:10.3f} {c['seconds']:11.3f} {ratio:6.2f}  "
              f"{c['tests']} run, {c['bad']} failed/errors"
              f"{'' if ok else ' (DIFFERS from the original: ' + str(o['tests']) + ' run, ' + str(o['bad']) + ' failed)'}")
    if rows:
        worst = max(rows, key=lambda r: r[1])
        print(f"overall (total time) {total_c / total_o:.2f}x; worst {worst[0]} {worst[1]:.2f}x "
              f"(goal: <= 1.5x overall, <= 3x worst)")


if __name__ == "__main__":
    sys.exit(main())
