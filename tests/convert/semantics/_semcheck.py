# SPDX-License-Identifier: Apache-2.0
"""_semcheck.py — the comparison engine of the semantic-preservation corpus.

Runs every function of a corpus module (the files next to this one that do not start
with `_`) on every input its `CASES` table declares, once in the original module and
once in a converted version of it, and reports each difference in return value (value
and type), raised exception (type and message), printed output, mutation of the
arguments and mutation of the module's globals.

Each case runs in a fresh namespace (the module code is compiled once and executed
again per case), with its own deep copy of the arguments, under a time limit. Used by
tests/integration/test_convert_semantics.py (converter through the daemon) and
tests/integration/test_convert_semantics_harness.py (self-test with deliberately wrong
"conversions"). Standalone, it runs a converter command over the corpus and prints the
per-module table:

    python3 tests/convert/semantics/_semcheck.py [--stagctl PATH [--local]] [--style S] [MODULE...]
"""
import contextlib
import copy
import io
import os
import re
import signal
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CLIENT = os.path.join(REPO, "clients", "python")
if CLIENT not in sys.path:
    sys.path.insert(0, CLIENT)

CASE_TIMEOUT_S = 10.0
ITER_LIMIT = 10000          # items taken from an iterator result when describing it
_ADDR = re.compile(r"0x[0-9a-fA-F]+")
# globals that are not program state: the corpus tables and names the converter invents
_SKIP_GLOBALS = {"CASES"}


def corpus_modules():
    """Names (without .py) of the corpus modules, sorted."""
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.endswith(".py") and not f.startswith("_"))


def corpus_path(name):
    return os.path.join(HERE, name + ".py")


def read_source(name):
    with open(corpus_path(name), encoding="utf-8") as f:
        return f.read()


class CaseTimeout(BaseException):
    """Raised by the alarm when a case runs longer than CASE_TIMEOUT_S (a BaseException
    so that the corpus's `except Exception` cannot swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds):
    def on_alarm(signum, frame):
        raise CaseTimeout(f"case ran longer than {seconds} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _norm_text(s):
    return _ADDR.sub("0x?", s)


def _qualname(t):
    return getattr(t, "__qualname__", getattr(t, "__name__", repr(t)))


def describe(v, _stack=None):
    """A plain, comparable description of a value: type and contents, recursively.
    Objects of the module's classes are described by class name and attributes, so the
    two sides (different namespaces, different class objects) can be compared."""
    stack = _stack if _stack is not None else []
    if any(v is s for s in stack):
        return ("cycle",)
    if len(stack) > 60:
        return ("too-deep",)
    t = type(v)
    if v is None or t in (bool, int, str, bytes, complex):
        return (t.__name__, v)
    if t is float:
        return ("float", repr(v))  # nan == nan, -0.0 != 0.0
    if t is range:
        return ("range", repr(v))
    stack.append(v)
    try:
        if t in (list, tuple):
            return (t.__name__, [describe(x, stack) for x in v])
        if t is dict:
            return ("dict", [(describe(k, stack), describe(x, stack)) for k, x in v.items()])
        if t in (set, frozenset):
            return (t.__name__, sorted(repr(describe(x, stack)) for x in v))
        if isinstance(v, BaseException):
            return ("exception", _qualname(t), describe(v.args, stack))
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                          types.ModuleType)):
            return ("callable", t.__name__, _qualname(v))
        if isinstance(v, (types.GeneratorType, map, filter, zip, enumerate, reversed)) or (
                hasattr(v, "__next__") and hasattr(v, "__iter__")):
            items = []
            try:
                for x in v:
                    items.append(describe(x, stack))
                    if len(items) >= ITER_LIMIT:
                        break
            except Exception as e:  # the iterator's own exception is part of its behaviour
                items.append(("raised", _qualname(type(e)), _norm_text(str(e))))
            return ("iterator", t.__name__, items)
        if hasattr(v, "__dict__") or hasattr(t, "__slots__"):
            attrs = dict(vars(v)) if hasattr(v, "__dict__") else {}
            for s in getattr(t, "__slots__", ()):
                if hasattr(v, s):
                    attrs[s] = getattr(v, s)
            return ("object", _qualname(t), describe(attrs, stack))
        return ("other", _qualname(t), _norm_text(repr(v)))
    finally:
        stack.pop()


def plain_globals(ns):
    """The program state among a module namespace's globals: everything except dunder
    names, names the converter invents (ending in `__`), modules and the CASES table."""
    out = {}
    for k in sorted(ns):
        if k.startswith("__") or k.endswith("__") or k in _SKIP_GLOBALS:
            continue
        v = ns[k]
        if isinstance(v, types.ModuleType):
            continue
        out[k] = describe(v)
    return out


def _fresh_ns(name, path):
    return {"__name__": "semantics_" + name, "__file__": path, "__builtins__": __builtins__}


def compile_module(text, path):
    """Compiles module text; returns (code, None) or (None, error text)."""
    try:
        return compile(text, path, "exec"), None
    except SyntaxError as e:
        return None, f"{type(e).__name__}: {e}"


def exec_module(code, name, path):
    """Executes compiled module code in a fresh namespace; returns (ns, stdout, error)."""
    ns = _fresh_ns(name, path)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), _time_limit(CASE_TIMEOUT_S):
            exec(code, ns)
    except (Exception, CaseTimeout) as e:
        return ns, out.getvalue(), f"{_qualname(type(e))}: {_norm_text(str(e))}"
    return ns, out.getvalue(), None


def case_call(entry):
    """A CASES entry → (args tuple, kwargs dict). A tuple is positional arguments; a dict
    {'args': (...), 'kwargs': {...}} adds keyword arguments."""
    if isinstance(entry, tuple):
        return entry, {}
    if isinstance(entry, dict) and set(entry) <= {"args", "kwargs"}:
        return tuple(entry.get("args", ())), dict(entry.get("kwargs", {}))
    raise TypeError(f"a CASES entry must be a tuple of arguments or a dict with 'args'/'kwargs', "
                    f"got {entry!r}")


def _converted_forms():
    """While this is active, converted functions run their converted bodies on plain
    values, as during staging (stagd.runtime.converted_forms); outside, their plain path
    (the original statements) runs."""
    from stagd.runtime import converted_forms
    return converted_forms()


def run_case(code, name, path, fname, index, forms=False):
    """Runs CASES[fname][index] in a fresh namespace of the module; returns the observed
    behaviour as a dict of comparable descriptions. forms: call the function with the
    converted bodies in force (_converted_forms)."""
    ns, _, err = exec_module(code, name, path)
    if err:
        return {"module": err}
    if fname not in ns:
        return {"module": f"the module defines no '{fname}'"}
    try:
        args, kwargs = case_call(ns["CASES"][fname][index])
        args, kwargs = copy.deepcopy((args, kwargs))
    except Exception as e:
        return {"module": f"bad CASES entry {fname}[{index}]: {type(e).__name__}: {e}"}
    fn = ns[fname]
    out = io.StringIO()
    obs = {}
    try:
        with contextlib.redirect_stdout(out), _time_limit(CASE_TIMEOUT_S), \
                (_converted_forms() if forms else contextlib.nullcontext()):
            try:
                result = fn(*args, **kwargs)
                obs["return"] = describe(result)
            except CaseTimeout:
                raise
            except Exception as e:
                obs["raise"] = (_qualname(type(e)), _norm_text(str(e)))
    except CaseTimeout as e:
        obs["raise"] = ("TIMEOUT", str(e))
    obs["stdout"] = out.getvalue()
    obs["args"] = describe((list(args), kwargs))
    obs["globals"] = plain_globals(ns)
    return obs


def _short(v, n=300):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "…"


def diff_observations(orig, conv):
    """One line per aspect in which the converted behaviour differs."""
    lines = []
    if "module" in orig:
        return [f"original module: {orig['module']}"]
    if "module" in conv:
        return [f"converted module: {conv['module']}"]
    if "return" in orig and "return" in conv:
        if orig["return"] != conv["return"]:
            lines.append(f"return value: original {_short(orig['return'])}, converted {_short(conv['return'])}")
    elif "return" in orig:
        lines.append(f"original returned {_short(orig['return'])}, converted raised {conv['raise'][0]}: "
                     f"{_short(conv['raise'][1])}")
    elif "return" in conv:
        lines.append(f"original raised {orig['raise'][0]}: {_short(orig['raise'][1])}, converted "
                     f"returned {_short(conv['return'])}")
    elif orig["raise"][0] != conv["raise"][0]:
        lines.append(f"exception type: original {orig['raise'][0]}: {_short(orig['raise'][1])}, converted "
                     f"{conv['raise'][0]}: {_short(conv['raise'][1])}")
    elif orig["raise"][1] != conv["raise"][1]:
        lines.append(f"exception message ({orig['raise'][0]}): original {orig['raise'][1]!r}, converted "
                     f"{conv['raise'][1]!r}")
    if orig["stdout"] != conv["stdout"]:
        lines.append(f"printed output: original {_short(orig['stdout'])}, converted {_short(conv['stdout'])}")
    if orig["args"] != conv["args"]:
        lines.append(f"arguments after the call: original {_short(orig['args'])}, converted {_short(conv['args'])}")
    if orig["globals"] != conv["globals"]:
        keys = sorted(set(orig["globals"]) | set(conv["globals"]))
        for k in keys:
            a, b = orig["globals"].get(k, "<absent>"), conv["globals"].get(k, "<absent>")
            if a != b:
                lines.append(f"global {k!r} after the call: original {_short(a)}, converted {_short(b)}")
    return lines


class ModuleReport:
    """The outcome of one module: counts and a list of (case label, difference lines)."""

    def __init__(self, name, style):
        self.name, self.style = name, style
        self.total = 0
        self.passed = 0
        self.failures = []      # (label, [lines])
        self.module_error = None

    def summary(self):
        s = f"{self.name} [{self.style}]: {self.passed}/{self.total} cases pass"
        if self.module_error:
            s += f" (module error: {self.module_error})"
        return s

    def details(self, limit=200):
        out = [self.summary()]
        if self.module_error and self.passed == 0:
            return out[0]  # every case failed for the one reason the summary names
        for label, lines in self.failures[:limit]:
            out.append(f"  {label}:")
            out += [f"    {l}" for l in lines]
        if len(self.failures) > limit:
            out.append(f"  … and {len(self.failures) - limit} more")
        return "\n".join(out)


def compare_module(name, original_text, converted_text, style="identity", path=None,
                   converted_path=None):
    """Runs every case of the module in both versions; returns a ModuleReport. A converted
    text that does not compile or execute, or lacks a function, fails every case."""
    path = path or corpus_path(name)
    converted_path = converted_path or f"<converted {style}>/{name}.py"
    rep = ModuleReport(name, style)
    ocode, err = compile_module(original_text, path)
    if err:
        rep.module_error = f"the original does not compile: {err}"
        return rep
    ons, oout, err = exec_module(ocode, name, path)
    if err:
        rep.module_error = f"the original does not execute: {err}"
        return rep
    cases = ons.get("CASES")
    if not isinstance(cases, dict) or not cases:
        rep.module_error = "the original module has no CASES table"
        return rep
    converted = "sg__.require_api(" in converted_text
    ccode, cerr = compile_module(converted_text, converted_path)
    if not cerr:
        _, cout, cerr = exec_module(ccode, name, converted_path)
        if not cerr and cout != oout:
            cerr = f"module-level printed output differs: original {oout!r}, converted {cout!r}"
    for fname, entries in cases.items():
        for i in range(len(entries)):
            rep.total += 1
            label = f"{name}.{fname} case {i} {_short(entries[i], 120)}"
            if cerr:
                rep.failures.append((label, [f"converted module: {cerr}"]))
                continue
            o = run_case(ocode, name, path, fname, i)
            c = run_case(ccode, name, converted_path, fname, i)
            lines = diff_observations(o, c)
            if converted:  # and the converted bodies (what runs while staging)
                c = run_case(ccode, name, converted_path, fname, i, forms=True)
                lines += ["(converted body) " + ln for ln in diff_observations(o, c)]
            if lines:
                rep.failures.append((label, lines))
            else:
                rep.passed += 1
    if cerr:
        rep.module_error = cerr
    return rep


def function_names(text):
    """Top-level function names of a module text (for reports)."""
    return re.findall(r"^def (\w+)", text, re.M)


def converted_function_count(text):
    """How many functions carry the converter's `@sg__.converted` decorator."""
    return len(re.findall(r"@sg__\.converted\(", text))


def _main(argv):
    import argparse
    import subprocess
    ap = argparse.ArgumentParser(description="run the semantic-preservation corpus")
    ap.add_argument("--stagctl", help="stagctl binary (default: identity conversion)")
    ap.add_argument("--local", action="store_true", help="pass --local to stagctl")
    ap.add_argument("--addr", help="pass --addr ADDR to stagctl")
    ap.add_argument("--style", default="autograph", choices=["autograph", "snek"])
    ap.add_argument("-v", "--verbose", action="store_true", help="list every failing case")
    ap.add_argument("modules", nargs="*")
    a = ap.parse_args(argv)
    total = passed = 0
    for name in a.modules or corpus_modules():
        text = read_source(name)
        if a.stagctl:
            cmd = [a.stagctl] + (["--local"] if a.local else []) + (["--addr", a.addr] if a.addr else [])
            cmd += ["convert", corpus_path(name), "--style", a.style]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                print(f"{name} [{a.style}]: conversion failed (exit {p.returncode}): {p.stderr.strip()[:500]}")
                total += sum(len(v) for v in _cases_of(text))
                continue
            conv, style = p.stdout, a.style
        else:
            conv, style = text, "identity"
        rep = compare_module(name, text, conv, style)
        total += rep.total
        passed += rep.passed
        print(rep.details() if a.verbose else rep.summary())
    print(f"TOTAL: {passed}/{total} cases pass")
    return 0 if passed == total else 1


def _cases_of(text):
    ns = _fresh_ns("x", "x")
    exec(compile(text, "x", "exec"), ns)
    return ns["CASES"].values()


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
