# SPDX-License-Identifier: Apache-2.0
"""test_convert_random.py — random differential testing of the converter.

Programs from tests/convert/semantics/_genprog.py (a fixed seed range) are converted
through the module's daemon (Convert RPC, style autograph and snek) and compared with
their originals by _semcheck (return value, exception type and message, printed output,
argument and global mutations). A finding fails the test with its seed, the differences
and a minimized program. Longer runs by hand: tests/convert/semantics/_convfuzz.py
(see docs/converter.md "Random differential testing").

Run: STAGD_BIN=... /usr/bin/python3 -m pytest tests/integration/test_convert_random.py
"""
import os
import sys

import grpc
import pytest

import harness

SEM_DIR = os.path.join(str(harness.REPO), "tests", "convert", "semantics")
if SEM_DIR not in sys.path:
    sys.path.insert(0, SEM_DIR)

import _convfuzz  # noqa: E402

SEEDS = range(0, 1600)   # both styles: 47 s on the 2-core machine (ASan build) while a -j2 build runs


@pytest.mark.parametrize("style", _convfuzz.STYLES)
def test_random_programs_preserved(daemon, pb2, style):
    with grpc.insecure_channel(daemon.addr) as ch:
        convert = _convfuzz.grpc_converter(ch, pb2)
        findings, stats = _convfuzz.run(SEEDS, (style,), convert)
    assert stats["programs"] == len(SEEDS)
    # the generator must mostly produce convertible functions, or the test checks little
    assert stats["converted_f"] >= 0.95 * len(SEEDS), stats
    assert stats["cases"] >= 3 * len(SEEDS), stats
    if findings:
        pytest.fail(f"{len(findings)} of {len(SEEDS)} random programs differ after conversion "
                    f"(style {style}):\n\n" + "\n\n".join(f.text() for f in findings[:5]), pytrace=False)


def test_reducer_keeps_the_finding():
    """The minimizer shrinks a program with a (simulated) converter bug to the statement
    that shows it: a converter that drops every `print` differs only in printed output."""
    def dropping_prints(text, style, filename):
        return "\n".join(l.split("print(")[0] + "pass" if "print(" in l else l
                         for l in text.splitlines()) + "\n", None

    def differs(seed):
        rep, err, _ = _convfuzz.check(_convfuzz._genprog.generate(seed), "identity", dropping_prints, seed)
        return err is None and rep.passed < rep.total
    seed = next(s for s in range(200) if differs(s))
    text = _convfuzz._genprog.generate(seed)
    mini = _convfuzz.minimize(text, "identity", dropping_prints, seed)
    assert "print(" in mini.split("def f(", 1)[1] and len(mini) < len(text)
    rep, err, _ = _convfuzz.check(mini, "identity", dropping_prints, seed)
    assert rep.total == 1 and rep.passed == 0   # CASES cut down to the failing input
    assert all(l.startswith("printed output") for _, lines in rep.failures for l in lines)
