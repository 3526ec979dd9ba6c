# SPDX-License-Identifier: Apache-2.0
"""test_stage_random.py — random differential testing of staged Python functions.

Functions from tests/integration/_stagegen.py (a fixed seed range) run as plain Python on
NumPy and through `stagd.function` in the module's daemon (Convert, staging, Execute), on
the CPU and, for a smaller range, on vulkan:0; results must agree in structure, shapes,
dtypes and values (_stagefuzz.compare). A third range runs the statement and container
programs (`state=True`: containers as state and results, tensor lists, variables bound
on some paths, staged `raise`, `match`, lazy `and`/`or`; _stagefuzz.compare_tree). A finding fails the test with its seed, its
arguments and a minimized program. Longer runs by hand:

    /usr/bin/python3 tests/integration/_stagefuzz.py --seed 0 --count 5000 [--device vulkan:0]
    /usr/bin/python3 tests/integration/_stagefuzz.py --state --seed 0 --count 2000

(docs/runtime.md "Random differential testing").

Run: STAGD_BIN=... /usr/bin/python3 -m pytest tests/integration/test_stage_random.py
"""
import re

import numpy as np
import pytest

import stagd
import _stagefuzz
import _stagegen

CPU_SEEDS = range(0, 600)     # 1800 calls: 22-30 s on the loaded 2-core machine (ASan build)
VULKAN_SEEDS = range(0, 100)  # lavapipe: 5-9 s
STATE_SEEDS = range(0, 60)    # statements and containers: 180 calls, about 30 s loaded


@pytest.fixture
def client(daemon):
    c = stagd.Client(daemon.addr)
    yield c
    c.close()


def _run(client, seeds, device=None, state=False):
    findings, stats = _stagefuzz.run(seeds, client, device, state=state)
    assert stats["programs"] == len(seeds) and stats["cases"] == 3 * len(seeds), stats
    if findings:
        pytest.fail(f"{len(findings)} of {len(seeds)} random staged functions differ from NumPy"
                    f"{' on ' + device if device else ''}:\n\n"
                    + "\n\n".join(f.report() for f in findings[:5]), pytrace=False)


def test_random_staged_functions_match_numpy(client):
    _run(client, CPU_SEEDS)


def test_random_staged_functions_match_numpy_on_vulkan(client):
    if "vulkan:0" not in [d.name for d in client.list_devices()]:
        pytest.fail("the daemon has no vulkan:0 (Mesa lavapipe is expected)", pytrace=False)
    with stagd.device("vulkan:0"):  # results stay on the device the call ran on
        x = np.arange(4, dtype=np.float32)
        out = stagd.function(lambda_free_double, client=client)(x)
    assert out.device == "vulkan:0"
    _run(client, VULKAN_SEEDS, "vulkan:0")


def test_random_state_programs_match_numpy(client):
    _run(client, STATE_SEEDS, state=True)


def test_state_generator_covers_containers_and_statements():
    progs = [_stagegen.generate(s, state=True) for s in STATE_SEEDS]
    text = "\n".join(p.text for p in progs)
    for construct in ('{"a": ', '["b"][0] = ', " = P(", ".s * 0.5", "[1] += ", "tl", ".append(",
                      "stagd.stack(", "raise ValueError(", "match n:", "case 1 | 3:", " or x[n] > ",
                      " and x[n] > ", "-0.5 < ", '{"r": '):
        assert construct in text, construct
    # a variable bound under a staged condition and read after it (UnboundLocalError on
    # the paths that skip it, in both the reference and the staged program)
    assert sum(1 for p in progs if re.search(r"^ +u\d+ = ", p.text, re.M)) > 10
    # the plain generator is unchanged by the state statements (same programs per seed)
    assert all("match n:" not in _stagegen.generate(s).text for s in range(50))


def lambda_free_double(x):
    return x * 2.0


def test_generator_covers_the_staged_constructs():
    """The seed range exercises what the brief asks for (so the test checks something)."""
    text = "\n".join(_stagegen.generate(s).text for s in CPU_SEEDS)
    for construct in ("while ", "for i", "in range(n)", "in m:", "in x:", "break", "continue",
                      "elif ", "else:", "if flag:", "return ", ".append(", "set_element_type",
                      "def h", "def g", "stagd.where(", "@ ", "stagd.softmax(", "m[", "k[",
                      "float(", "int(", "sum(", "max(", "min(", "//", "%", " if "):
        assert construct in text, construct
    assert sum(p.count("\n    return ") > 1 for p in text.split("def f(")) > 100  # early returns
    dtypes = {_stagegen.generate(s).dtype for s in range(20)}
    assert dtypes == {"float32", "float64"}
    # float() of staged values next to float32 vectors (weak, as in NumPy), scalars as
    # maximum/minimum/where operands next to vectors
    f32 = [p.text for p in map(_stagegen.generate, CPU_SEEDS) if p.dtype == "float32"]
    assert sum("float(" in t for t in f32) > 50
    for construct in ("stagd.minimum(", "stagd.where(x < ", "stagd.maximum("):
        assert any(construct in t for t in f32), construct


def test_reducer_keeps_the_finding(client, monkeypatch):
    """A (simulated) bug — the reference's tanh computing sin — is reported with a
    program cut down to statements that still show it."""
    monkeypatch.setattr(_stagegen.NUMPY_STAGD, "tanh", staticmethod(np.sin))
    seed = next(s for s in range(100) if "tanh" in _stagegen.generate(s).text
                and _stagefuzz.run([s], client, minimize_findings=False)[0])
    (finding,), _ = _stagefuzz.run([seed], client)
    assert finding.seed == seed and finding.diffs[0].startswith("result")
    assert "tanh" in finding.mini and len(finding.mini) < len(finding.text)
    assert finding.mini.rstrip().splitlines()[-1].startswith("    return ")
    assert f"seed {seed}:" in finding.report() and "minimized program" in finding.report()
