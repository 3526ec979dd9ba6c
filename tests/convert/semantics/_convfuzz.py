# SPDX-License-Identifier: Apache-2.0
"""_convfuzz.py — random differential testing of the converter.

Generates programs with _genprog.generate(seed), converts each through the daemon's
Convert RPC (style autograph and/or snek), and compares the original and the converted
module with _semcheck.compare_module (return value, exception type and message, printed
output, mutations of arguments and globals). A difference, or a conversion that fails
or reports an error, is a finding: it is printed with its seed, style, the differences
and a minimized program (statements of `f` deleted while the same kind of difference
remains; CASES cut down to the failing inputs).

Used by tests/integration/test_convert_random.py (a fixed seed range) and by hand:

    PYTHONPATH=clients/python STAGD_GENERATED_DIR=build/python/stagd_gen \\
      python3 tests/convert/semantics/_convfuzz.py --stagd build/server/stagd \\
      [--seed 0] [--count 500] [--style autograph|snek|both] [--no-reduce]

(`--addr HOST:PORT` uses a running daemon instead of starting one; `--identity` checks
the generator itself: the identity "conversion" must never differ.)
"""
import ast
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import _genprog   # noqa: E402
import _semcheck  # noqa: E402

STYLES = ("autograph", "snek")
CONVERT_TIMEOUT_S = 60.0


class Finding:
    """One program whose conversion differs: seed, style, report text, minimized text."""

    def __init__(self, seed, style, details, program, minimized=None):
        self.seed, self.style, self.details = seed, style, details
        self.program, self.minimized = program, minimized

    def text(self):
        out = [f"seed {self.seed} style {self.style}:", self.details]
        if self.minimized:
            out += ["minimized program:", self.minimized]
        return "\n".join(out)


def grpc_converter(channel, pb2):
    """convert(text, style, filename) → (code, None) or (None, error text) via the RPC."""
    import grpc

    stub = channel.unary_unary("/stagd.v1.Stagd/Convert",
                               request_serializer=pb2.ConvertRequest.SerializeToString,
                               response_deserializer=pb2.ConvertReply.FromString)

    def convert(text, style, filename):
        st = {"autograph": pb2.STYLE_AUTOGRAPH, "snek": pb2.STYLE_SNEK}[style]
        try:
            reply = stub(pb2.ConvertRequest(source=text, filename=filename, style=st),
                         timeout=CONVERT_TIMEOUT_S)
        except grpc.RpcError as e:
            return None, f"Convert failed: {e.code().name}: {e.details()}"
        errors = [f"{d.location.line}:{d.location.column}: {d.message} [{d.code}]"
                  for d in reply.diagnostics if d.severity == pb2.Diagnostic.SEVERITY_ERROR]
        if errors:
            return None, "Convert reported errors: " + "; ".join(errors)
        return reply.code, None
    return convert


def identity_converter(text, style, filename):
    return text, None


def f_converted(code):
    """Whether the converted module's `f` carries the converter's decorator (it is left
    alone, with a warning, when it uses a documented unsupported construct)."""
    return "@sg__.converted(sg__source_map__)\ndef f(" in code


def check(text, style, convert, seed=None, only_cases=None):
    """Converts and compares one program. Returns (ModuleReport or None, error text or
    None, converted code)."""
    filename = f"genprog_{seed}.py"
    code, err = convert(text, style, filename)
    if err:
        return None, err, None
    rep = _semcheck.compare_module(f"genprog_{seed}", text, code, style, path=filename)
    return rep, None, code


def _aspect(rep, err):
    """A coarse kind of finding, so that the reducer keeps the same bug."""
    if err:
        return "convert: " + err.split(":")[0]
    if rep.module_error:
        return "module: " + rep.module_error.split(":")[0]
    return sorted({l.split(":")[0] for _, lines in rep.failures for l in lines})[0]


def _failing(rep, err):
    return bool(err) or rep.module_error is not None or rep.passed != rep.total


def _with_cases(text, cases):
    head, _, _ = text.rpartition("\nCASES = ")
    return f"{head}\nCASES = {{'f': {cases!r}}}\n"


def _cases(text):
    return ast.literal_eval(text.rpartition("\nCASES = ")[2].strip())["f"]


def _stmt_lists(node):
    """Every statement list inside node (bodies, orelse, handlers' bodies, finalbody)."""
    out = []
    for field in ("body", "orelse", "finalbody"):
        v = getattr(node, field, None)
        if isinstance(v, list) and v and isinstance(v[0], ast.stmt):
            out.append(v)
            for s in v:
                out += _stmt_lists(s)
    for h in getattr(node, "handlers", []) or []:
        out.append(h.body)
        for s in h.body:
            out += _stmt_lists(s)
    return out


def _is_loop_counter(s):
    """`wN += 1`, the generator's while-loop counter step."""
    return (isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)
            and s.target.id[:1] == "w" and s.target.id[1:].isdigit())


def _candidates(text):
    """Texts with one statement of `f` removed (or a compound statement replaced by its
    body), first-to-last, outer statements first."""
    tree = ast.parse(text)
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    lists = _stmt_lists(fdef)
    for li, lst in enumerate(lists):
        for i in range(len(lst)):
            for mode in ("delete", "hoist"):
                t = ast.parse(text)
                fd = next(n for n in t.body if isinstance(n, ast.FunctionDef) and n.name == "f")
                tl = _stmt_lists(fd)[li]
                s = tl[i]
                if _is_loop_counter(s):
                    continue   # keeps the loop bounded
                if mode == "delete":
                    if isinstance(s, ast.Global):
                        continue
                    new = []
                else:
                    new = [x for f in ("body", "orelse", "finalbody") for x in (getattr(s, f, None) or [])
                           if isinstance(getattr(s, f, None), list)]
                    if not new or isinstance(s, ast.FunctionDef):
                        continue
                tl[i:i + 1] = new
                if not tl:
                    tl.append(ast.Pass())
                yield ast.unparse(ast.fix_missing_locations(t)) + "\n"


def minimize(text, style, convert, seed, budget_s=60.0):
    """Deletes statements of `f` (and extra CASES) while the same kind of finding
    remains; returns the smallest text found within the time budget."""
    rep, err, _ = check(text, style, convert, seed)
    if not _failing(rep, err):
        return text
    kind = _aspect(rep, err)
    if rep is not None and rep.failures and not rep.module_error:
        idx = int(rep.failures[0][0].split(" case ")[1].split()[0])
        text = _with_cases(text, [_cases(text)[idx]])

    def still(t):
        try:
            ns_ok, _ = _semcheck.compile_module(t, "<min>")
            if ns_ok is None:
                return False
            r, e, _ = check(t, style, convert, seed)
        except Exception:   # a candidate the generator's invariants no longer hold for
            return False
        return _failing(r, e) and _aspect(r, e) == kind

    deadline = time.monotonic() + budget_s
    saved_timeout, _semcheck.CASE_TIMEOUT_S = _semcheck.CASE_TIMEOUT_S, 2.0
    try:
        return _reduce(text, still, deadline)
    finally:
        _semcheck.CASE_TIMEOUT_S = saved_timeout


def _reduce(text, still, deadline):
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for cand in _candidates(text):
            if time.monotonic() > deadline:
                break
            if len(cand) < len(text) and still(cand):
                text, changed = cand, True
                break
    return text


def run(seeds, styles, convert, reduce=True, log=None):
    """Checks every seed in every style; returns (findings, stats dict)."""
    findings = []
    stats = {"programs": 0, "cases": 0, "converted_f": 0}
    for seed in seeds:
        text = _genprog.generate(seed)
        for style in styles:
            stats["programs"] += 1
            rep, err, code = check(text, style, convert, seed)
            if code is not None and f_converted(code):
                stats["converted_f"] += 1
            if rep is not None:
                stats["cases"] += rep.total
            if not _failing(rep, err):
                continue
            details = err if err else rep.details(limit=3)
            mini = minimize(text, style, convert, seed) if reduce else None
            findings.append(Finding(seed, style, details, text, mini))
            if log:
                log(findings[-1].text())
    return findings, stats


def _main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="random differential testing of the converter")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=200, help="programs (default 200)")
    ap.add_argument("--style", default="both", choices=["autograph", "snek", "both"])
    ap.add_argument("--addr", help="a running daemon's gRPC address")
    ap.add_argument("--stagd", help="start this stagd binary for the run")
    ap.add_argument("--identity", action="store_true", help="no conversion (checks the generator)")
    ap.add_argument("--no-reduce", action="store_true", help="do not minimize findings")
    ap.add_argument("--print", type=int, metavar="SEED", help="print the program of SEED and exit")
    a = ap.parse_args(argv)
    if a.print is not None:
        print(_genprog.generate(a.print))
        return 0
    styles = STYLES if a.style == "both" else (a.style,)
    daemon = None
    if a.identity:
        convert = identity_converter
    else:
        import grpc
        from stagd import _proto
        pb2, _ = _proto.load()
        addr = a.addr
        if not addr:
            sys.path.insert(0, os.path.join(_semcheck.REPO, "tests", "integration"))
            import harness
            if a.stagd:
                os.environ["STAGD_BIN"] = a.stagd
            daemon = harness.Daemon(["--listen", "127.0.0.1:0", "--workers", "2"])
            addr = daemon.addr
        convert = grpc_converter(grpc.insecure_channel(addr), pb2)
    t0 = time.monotonic()
    try:
        findings, stats = run(range(a.seed, a.seed + a.count), styles, convert,
                              reduce=not a.no_reduce, log=lambda s: print(s + "\n", flush=True))
    finally:
        if daemon:
            daemon.terminate()
    dt = time.monotonic() - t0
    print(f"{stats['programs']} programs ({a.count} seeds x {len(styles)} styles), {stats['cases']} cases, "
          f"f converted in {stats['converted_f']}, {len(findings)} findings, {dt:.1f} s")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
