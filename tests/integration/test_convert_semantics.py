# SPDX-License-Identifier: Apache-2.0
"""test_convert_semantics.py — semantic preservation of the converter (issue 5).

Every module of tests/convert/semantics/ is converted through the running daemon
(Convert RPC, style autograph and snek), then the original and the converted module are
executed in fresh namespaces (with clients/python on sys.path, so `import stagd.runtime`
works) and every function is called on every input of the module's CASES table. Return
values (value and type), exception types and messages, printed output, mutations of the
arguments and of the module globals must be equal (the comparison engine is
tests/convert/semantics/_semcheck.py). A conversion that fails, reports an error
diagnostic, or differs in any case fails the test; the per-module pass counts are
printed at the end of the module's run.

Run: STAGD_BIN=... /usr/bin/python3 -m pytest tests/integration/test_convert_semantics.py
"""
import contextlib
import os
import sys

import grpc
import pytest

import harness
from harness import rpc

SEM_DIR = os.path.join(str(harness.REPO), "tests", "convert", "semantics")
if SEM_DIR not in sys.path:
    sys.path.insert(0, SEM_DIR)

import _semcheck  # noqa: E402

MODULES = _semcheck.corpus_modules()
STYLES = ("autograph", "snek")
CONVERT_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def sem_reports(request):
    """Collects each (module, style) report; prints the pass-count table at the end."""
    reports = {}
    yield reports
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    if tr is None or not reports:
        return
    cap = request.config.pluginmanager.get_plugin("capturemanager")
    with cap.global_and_fixture_disabled() if cap else contextlib.nullcontext():
        _write_table(tr, reports)


def _write_table(tr, reports):
    tr.write_line("")
    tr.write_line("semantic preservation (cases passing / cases):")
    totals = {s: [0, 0] for s in STYLES}
    for name in MODULES:
        cells = []
        for s in STYLES:
            r = reports.get((name, s))
            if r is None:
                cells.append(f"{s} not run")
                continue
            totals[s][0] += r.passed
            totals[s][1] += r.total
            cells.append(f"{s} {r.passed}/{r.total}")
        tr.write_line(f"  {name:28s} " + "  ".join(cells))
    tr.write_line("  " + "TOTAL".ljust(28) + " " +
                  "  ".join(f"{s} {totals[s][0]}/{totals[s][1]}" for s in STYLES))


def convert(channel, pb2, name, style):
    """The Convert RPC on a corpus module; fails the test when conversion fails."""
    rel = os.path.relpath(_semcheck.corpus_path(name), str(harness.REPO))
    st = {"autograph": pb2.STYLE_AUTOGRAPH, "snek": pb2.STYLE_SNEK}[style]
    req = pb2.ConvertRequest(source=_semcheck.read_source(name), filename=rel, style=st)
    try:
        reply = rpc(channel, "Convert", req, pb2.ConvertReply, timeout=CONVERT_TIMEOUT_S)
    except grpc.RpcError as e:
        pytest.fail(f"Convert {rel} --style {style} failed: {e.code().name}: {e.details()}", pytrace=False)
    diags = [f"{d.location.file}:{d.location.line}:{d.location.column}: "
             f"{pb2.Diagnostic.Severity.Name(d.severity)}: {d.message} [{d.code}]"
             for d in reply.diagnostics]
    errors = [d for d in reply.diagnostics if d.severity == pb2.Diagnostic.SEVERITY_ERROR]
    if errors:
        pytest.fail(f"Convert {rel} --style {style} reported errors:\n" + "\n".join(diags), pytrace=False)
    if "sg__.require_api(" not in reply.code:
        pytest.fail(f"Convert {rel} --style {style} returned no converted module (no runtime import):\n"
                    + reply.code[:2000], pytrace=False)
    return reply.code, diags


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("module", MODULES)
def test_semantics_preserved(channel, pb2, module, style, sem_reports, record_property):
    code, diags = convert(channel, pb2, module, style)
    rep = _semcheck.compare_module(module, _semcheck.read_source(module), code, style)
    sem_reports[(module, style)] = rep
    record_property("cases", rep.total)
    record_property("passed", rep.passed)
    record_property("converted_functions", _semcheck.converted_function_count(code))
    assert rep.total > 0, f"{module}: no cases"
    if rep.passed != rep.total:
        text = rep.details()
        if diags:
            text += "\nconverter diagnostics:\n" + "\n".join(diags)
        pytest.fail(text, pytrace=False)


def test_corpus_size():
    """The issue asks for at least 300 functions, each run on several inputs."""
    counts = {}
    for name in MODULES:
        ns = {"__name__": "corpus_size"}
        exec(compile(_semcheck.read_source(name), _semcheck.corpus_path(name), "exec"), ns)
        counts[name] = ns["CASES"]
        for fname, entries in ns["CASES"].items():
            assert callable(ns.get(fname)), f"{name}: CASES names '{fname}', which is not a function"
            assert len(entries) >= 1, f"{name}.{fname}: no inputs"
    functions = sum(len(c) for c in counts.values())
    several = sum(1 for c in counts.values() for e in c.values() if len(e) >= 2)
    assert functions >= 300, f"the corpus has {functions} functions with cases, fewer than 300"
    assert several >= 0.9 * functions, f"only {several} of {functions} functions have two or more inputs"
