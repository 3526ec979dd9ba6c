# SPDX-License-Identifier: Apache-2.0
"""test_staging_corpus.py — the staged-program corpus (tests/integration/_stagecorpus.py:
control-flow form × container × staged/plain operand × early exit, and hand-written
programs by category) staged in both conversion styles: each program called with staged
inputs must give its plain-Python result (value, structure, container types, or the
same exception). A program a style cannot stage must fail with a located staging error
(counted as refused, never a different value): the AutoGraph style refuses none; the
Snek style's refusals are the limits docs/runtime.md lists. The counts per category are
printed (docs/runtime.md "Staged-program corpus").
"""
import collections
import importlib.util
import sys

import numpy as np
import pytest

import stagd
from stagd.runtime import StagingError, tree

import _stagecorpus

# what the Snek style cannot stage (docs/runtime.md "Snek style on staged values")
SNEK_LIMITS = ("cannot be staged in the Snek style", "inside a staged loop (Snek style)",
               "returns in one branch only")


def _normal(v):
    if isinstance(v, stagd.Tensor):
        v = v.numpy()
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    return v


def difference(got, want, path="result"):
    """None when got (staged) and want (plain) agree, else what differs."""
    if isinstance(want, BaseException) or isinstance(got, BaseException):
        if type(got) is type(want) and str(got) == str(want):
            return None
        return f"{path}: {type(got).__name__}({got}) for {type(want).__name__}({want})"
    got, want = _normal(got), _normal(want)
    kw, kg = tree.kind(want), tree.kind(got)
    if kw is not None or kg is not None:
        if kw != kg or type(got) is not type(want):
            return f"{path}: {type(got).__name__} for {type(want).__name__}"
        aw, cw = tree.children(want, kw)
        ag, cg = tree.children(got, kg)
        if aw != ag or len(cw) != len(cg):
            return f"{path}: structure {ag} for {aw}"
        for i, (g, w) in enumerate(zip(cg, cw)):
            d = difference(g, w, f"{path}[{i}]")
            if d:
                return d
        return None
    if want is None or got is None:
        return None if got is want else f"{path}: {got!r} for {want!r}"
    if isinstance(want, bool) or isinstance(got, bool):
        return None if bool(got) == bool(want) else f"{path}: {got!r} for {want!r}"
    g, w = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if g.shape != w.shape or not np.allclose(g, w, rtol=1e-12, atol=1e-12):
        return f"{path}: {got!r} for {want!r}"
    return None


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "stagecorpus_programs.py"
    path.write_text(_stagecorpus.module_text())
    spec = importlib.util.spec_from_file_location("stagecorpus_programs", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["stagecorpus_programs"] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop("stagecorpus_programs", None)


def _plain(fn, args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 — compared with the staged program's
        return e


def run_style(mod, style, client):
    """{category: Counter(passed / refused / wrong)}, [wrong findings], [refusals]."""
    counts = collections.defaultdict(collections.Counter)
    wrong, refused = [], []
    for cat, name, _ in _stagecorpus.programs():
        fn = getattr(mod, name)
        f = stagd.function(fn, static_argnames=("flag",), client=client, style=style)
        outcome = "passed"
        for args in _stagecorpus.arguments():
            want = _plain(fn, args)
            try:
                got = f(*args)
            except (StagingError, NotImplementedError) as e:
                outcome = "refused"
                refused.append((name, str(e).splitlines()[0]))
                break
            except Exception as e:  # noqa: BLE001 — the program's own exception
                got = e
            d = difference(got, want)
            if d:
                outcome = "wrong"
                wrong.append(f"{style} {name}{tuple(a.tolist() if hasattr(a, 'tolist') else a for a in args)}: {d}")
                break
        counts[cat.split("/")[0]][outcome] += 1
    return counts, wrong, refused


def test_corpus_size():
    progs = _stagecorpus.programs()
    assert len(progs) >= 300, len(progs)
    assert len({n for _, n, _ in progs}) == len(progs)
    forms = {c.split("/")[0] for c, _, _ in progs}
    assert set(_stagecorpus.FORMS) <= forms


@pytest.mark.parametrize("style", ["autograph", "snek"])
def test_corpus_stages_with_pythons_meaning(corpus, style, default_client, capsys):
    counts, wrong, refused = run_style(corpus, style, default_client)
    with capsys.disabled():
        total = collections.Counter()
        print(f"\nstaged-program corpus, {style} style (passed / refused / wrong):")
        for cat in sorted(counts):
            c = counts[cat]
            total.update(c)
            print(f"  {cat:12s} {c['passed']:4d} {c['refused']:4d} {c['wrong']:4d}")
        print(f"  {'TOTAL':12s} {total['passed']:4d} {total['refused']:4d} {total['wrong']:4d}")
        for name, msg in refused[:40]:
            print(f"  refused {name}: {msg}")
    assert not wrong, "\n".join(wrong[:30])
    if style == "autograph":
        assert not refused, refused[:10]
    else:
        bad = [(n, m) for n, m in refused if not any(k in m for k in SNEK_LIMITS)]
        assert not bad, bad[:10]
