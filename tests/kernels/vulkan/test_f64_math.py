#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""float64 transcendentals on the device (kernels/shaders/f64_math.glsl) against NumPy,
in ulps: exp, log, tanh, sigmoid, sin, cos, pow and softmax over wide argument ranges
and the special values (NaN, ±inf, 0, overflow, underflow, negative bases).

Each op runs once through gr_tool on a Vulkan device on thousands of values; the test
fails when the largest error exceeds ULP_LIMIT units in the last place of NumPy's result
(or when a special value differs), and prints the largest error of each op.
Usage: test_f64_math.py PATH/TO/gr_tool vulkan:0
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOL, DEVICE = sys.argv[1], sys.argv[2]
ULP_LIMIT = 4
rng = np.random.default_rng(7)
failures = []


def run(src, args):
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump([{"dtype": "float64", "shape": list(a.shape), "data": [
            repr(float(v)) if not np.isfinite(v) else float(v) for v in a.ravel()]}
            for a in args], f)
    try:
        p = subprocess.run([TOOL, "run", "-", "--args", "@" + path, "--device", DEVICE,
                            "--stats"], input=src, capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        raise SystemExit(f"gr_tool failed on {src}: {p.stderr}")
    out = json.loads(p.stdout)
    stats = next((json.loads(line.split(" ", 1)[1]) for line in p.stderr.splitlines()
                  if line.startswith("vk_stats ")), None)
    if stats is None:
        raise SystemExit(f"gr_tool printed no vk_stats for {src}: {p.stderr}")
    data = [float(d) if isinstance(d, str) else d for d in out["data"]]
    return np.array(data, dtype=np.float64).reshape(out["shape"]), stats


def ulps(got, want, scale=None):
    """|got - want| in units of the last place of want — or of `scale`, the magnitude of
    the operands, for results that cancel (log_softmax near 0) — and 0 where both are
    the same special value."""
    same_special = (np.isnan(got) & np.isnan(want)) | ((got == want) & ~np.isfinite(want))
    ref = want if scale is None else np.maximum(np.abs(want), scale)
    spacing = np.spacing(np.abs(np.where(np.isfinite(ref), ref, 1.0)))
    err = np.abs(got - want) / np.maximum(spacing, np.finfo(np.float64).tiny)
    err = np.where(same_special, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def check(name, src, args, want, limit=ULP_LIMIT, scale=None):
    got, stats = run(src, args)
    e = ulps(got, want, scale)
    e = e / (np.broadcast_to(limit, e.shape) / ULP_LIMIT)  # in units of the limit
    worst = int(np.argmax(e))
    print(f"{name}: {got.size} values, max error {e.flat[worst]:.2f} ulp (of {ULP_LIMIT} allowed, "
          f"scaled per value where the bound grows)")
    if stats["cpu_fallbacks"]:
        failures.append(f"{name}: ran on the CPU ({stats})")
    if e.flat[worst] > ULP_LIMIT:
        at = tuple(a.ravel()[worst % a.size] for a in args)
        failures.append(f"{name}: {e.flat[worst]:.1f} ulp at {at}: got {got.flat[worst]!r}, "
                        f"NumPy {want.flat[worst]!r}")


def spread(lo, hi, n):
    return np.concatenate([rng.uniform(lo, hi, n), np.linspace(lo, hi, n)])


specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 1.0, -1.0])
with np.errstate(all="ignore"):
    x = np.concatenate([spread(-745.5, 709.9, 3000), spread(-1, 1, 2000),
                        spread(-1e-8, 1e-8, 200), specials])
    check("exp", "(def f (a) (exp a))", [x], np.exp(x))
    pos = np.concatenate([np.exp(spread(-700, 700, 3000)), spread(0.5, 2.0, 2000),
                          np.abs(specials), [-1.0, -np.inf, 2.2250738585072014e-308]])
    check("log", "(def f (a) (log a))", [pos], np.log(pos))
    t = np.concatenate([spread(-30, 30, 3000), spread(-0.5, 0.5, 2000),
                        spread(-1e-6, 1e-6, 200), specials])
    check("tanh", "(def f (a) (tanh a))", [t], np.tanh(t))
    check("sigmoid", "(def f (a) (sigmoid a))", [t], 1 / (1 + np.exp(-t)))
    s = np.concatenate([spread(-1e5, 1e5, 3000), spread(-10, 10, 3000),
                        spread(-1e-6, 1e-6, 200), specials])
    check("sin", "(def f (a) (sin a))", [s], np.sin(s))
    check("cos", "(def f (a) (cos a))", [s], np.cos(s))
    base = np.concatenate([np.exp(rng.uniform(-20, 20, 3000)), rng.uniform(-8, 8, 1000),
                           np.repeat(specials, len(specials))])
    expo = np.concatenate([rng.uniform(-15, 15, 3000), rng.integers(-9, 10, 1000),
                           np.tile(specials, len(specials))])
    # pow goes through exp(y log x): exp turns log's last-place rounding into a relative
    # error of |y ln x| ulps (docs/vulkan.md), so the bound grows with it
    bound = ULP_LIMIT + np.nan_to_num(np.abs(expo * np.log(np.abs(base))), posinf=0.0)
    check("**", "(def f (a b) (** a b))", [base, expo], np.power(base, expo), limit=bound)
    rows = rng.normal(0, 30, (64, 50))
    sm = np.exp(rows - rows.max(1, keepdims=True))
    # softmax sums 50 rounded terms in another order than NumPy: a few more ulps
    check("softmax", "(def f (a) (softmax a))", [rows], sm / sm.sum(1, keepdims=True),
          limit=16)
    lsm = rows - rows.max(1, keepdims=True)
    check("log_softmax", "(def f (a) (log_softmax a))", [rows],
          lsm - np.log(np.exp(lsm).sum(1, keepdims=True)), limit=16, scale=np.abs(rows))

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("f64 math: all within", ULP_LIMIT, "ulp")
