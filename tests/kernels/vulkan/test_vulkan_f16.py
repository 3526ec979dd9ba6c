#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""float16 elementwise ops on Vulkan without cast dispatches (binary_f16, unary_f16,
compare_f16: halves converted in software, float32 arithmetic, rounded to nearest
even): a chain of N float16 elementwise ops records N dispatches (the executor's
counters, gr_tool --stats), and its result is bit for bit the CPU backend's and NumPy's
on random halves (every bit pattern: subnormals, inf, nan) and on overflow-to-inf,
underflow and signed-zero cases, for even and odd sizes, broadcasting, Python scalars
and comparisons. relu is np.maximum(x, 0) bit for bit on both backends for every float
dtype.
float16 reductions (sum, mean, max, min, argmax) and softmax / log_softmax read and
write halves in one dispatch (reduce_f16, argmax_f16, softmax_f16): each equals, bit for
bit, the same op through the cast path (float32 kernel between casts, forced with
STAGD_VK_F16_CAST=1), with the subgroup variants and with the shared-memory ones
(STAGD_VK_NO_SUBGROUP=1), on random bit patterns (NaN, ±inf, subnormals), sums that
overflow float16 but not float32, empty axes, every axis of a 3-d tensor, long rows and
a keepdims reshape; max, min and argmax (exact) also equal the CPU backend bit for bit.
Usage: test_vulkan_f16.py PATH/TO/gr_tool [DEVICE]   (DEVICE defaults to vulkan:0)
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from json_values import dec, enc  # noqa: E402

TOOL = sys.argv[1]
DEVICE = sys.argv[2] if len(sys.argv) > 2 else "vulkan:0"
rng = np.random.default_rng(16)
warnings.simplefilter("ignore", RuntimeWarning)
failures = []


def run_all(cases, device, env=None):
    """Every case in one `gr_tool batch` process (one device initialisation), with env
    added to the environment: a (result, counters) pair per case."""
    frames = []
    for src, args in cases:
        s, a = src.encode(), json.dumps([enc(x) for x in args]).encode()
        frames.append(f"case {len(s)} {len(a)}\n".encode() + s + a)
    p = subprocess.run([TOOL, "batch", "--device", device, "--stats"], input=b"".join(frames),
                       capture_output=True, timeout=600, env={**os.environ, **(env or {})})
    lines = p.stdout.decode().splitlines()
    if p.returncode != 0 or len(lines) != len(cases):
        sys.exit(f"gr_tool batch failed on {device}: {p.stderr.decode()[-2000:]}")
    out = []
    for line, (src, _) in zip(lines, cases):
        r = json.loads(line)
        if r["rc"] != 0:
            sys.exit(f"gr_tool failed on {device} for {src}: {r['stderr']}")
        stats = next(l for l in r["stderr"].splitlines() if l.startswith("vk_stats "))[9:]
        out.append((dec(json.loads(r["stdout"])), json.loads(stats)))
    return out


def bits(a):
    """the bit patterns, NaNs made one pattern (the JSON results carry no NaN payload or
    sign); -0.0 and 0.0 stay apart"""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), a.dtype.type("nan"), a).view(f"uint{8 * a.dtype.itemsize}")
    return a


CASES = []


def case(name, src, args, numpy_fn, dispatches):
    CASES.append((name, src, args, numpy_fn, dispatches))


def judge(name, args, numpy_fn, dispatches, cpu, cpu_st, got, st):
    """bit for bit the CPU backend; NumPy's values (NumPy's relu of a negative is +0,
    the CPU backend's -0: equal values)"""
    want = np.asarray(numpy_fn(*args))
    for who, res, same in (("CPU backend", cpu, lambda g, w: bits(g) == bits(w)),
                           ("NumPy", want, lambda g, w: (g == w) | (np.isnan(g) & np.isnan(w)))):
        if got.dtype != res.dtype or got.shape != res.shape:
            failures.append(f"{name}: {DEVICE} gave {got.dtype}{got.shape}, the {who} "
                            f"{res.dtype}{res.shape}")
            continue
        bad = np.flatnonzero(~same(got, res))
        if len(bad):
            failures.append(f"{name}: {DEVICE} differs from the {who} at {len(bad)} elements, "
                            f"first {bad[:5]}: got {got.reshape(-1)[bad[:5]]}, want "
                            f"{res.reshape(-1)[bad[:5]]}")
    if cpu_st["requests"] != 0:
        failures.append(f"{name}: the cpu run used Vulkan: {cpu_st}")
    if st["cpu_fallbacks"] != 0 or st["submits"] != 1 or st["dispatches"] != dispatches:
        failures.append(f"{name}: expected {dispatches} dispatches in one submit and no CPU "
                        f"fallback, got {st}")


def halves(*shape):
    """random float16 bit patterns: every class of value (normal, subnormal, ±0, ±inf, nan)"""
    return rng.integers(0, 1 << 16, size=shape, dtype=np.uint16).view(np.float16)


def moderate(*shape):
    """halves of moderate size, so chains of products stay finite"""
    return (rng.standard_normal(shape) * 4).astype("float16")


SPECIAL = np.array([0.0, -0.0, 65504, -65504, 6e-8, -6e-8, 6.1e-5, np.inf, -np.inf, np.nan,
                    60000, 1e-4, 0.5, -1.5, 2049, 3e-3], dtype="float16")
SPECIAL_B = np.array([-0.0, 0.0, 2, 65504, 0.5, 1e-7, 6.1e-5, np.inf, 1.0, 2.0,
                      60000, -1e-4, 3.0, 0.0, 2.0, 7e-3], dtype="float16")

# a chain of 11 correctly rounded float32 ops (so bit identity is the contract): 11 dispatches
CHAIN = ("(def f (a b) (relu (neg (abs (maximum (minimum (- (* a b) (/ a b)) (+ a b)) "
         "(sqrt (abs a)))))))")


def chain_np(a, b):
    return np.maximum(-np.abs(np.maximum(np.minimum(a * b - a / b, a + b), np.sqrt(np.abs(a)))), 0)


case("chain of 11 ops on random bit patterns", CHAIN, [halves(1001), halves(1001)], chain_np, 11)
case("chain, overflow to inf, subnormals, signed zeros", CHAIN, [SPECIAL, SPECIAL_B], chain_np, 11)
case("chain, moderate values, even size", CHAIN, [moderate(64, 32), moderate(64, 32)], chain_np, 11)
case("products overflow to inf, sums underflow to subnormals",
     "(def f (a b) (- (* a b) (* (* a 1e-3) b)))",
     [np.array([300, -300, 1e4, 6e-5, 6.1e-5, 255.9], "float16"),
      np.array([300, 300, -7, 6e-5, -6.0e-5, 256.1], "float16")],
     lambda a, b: a * b - (a * np.float16(1e-3)) * b, 4)
# broadcasting in every direction, one odd dimension: each half of a word from different rows
case("broadcast (3,1,5) x (4,1)", "(def f (a b) (* (+ a b) (- a b)))",
     [moderate(3, 1, 5), moderate(4, 1)], lambda a, b: (a + b) * (a - b), 3)
case("0-d and one element", "(def f (a b) (/ a b))", [np.array(3.0, "float16"),
                                                      np.array([7.0], "float16")],
     lambda a, b: a / b, 1)
# a Python float is rounded to float16 first (NumPy 1.24's weak scalars): 0.1 is 0.0999755859375
case("python scalars", "(def f (a) (- (* a 0.1) 3))", [moderate(7)],
     lambda a: a * np.float16(0.1) - np.float16(3), 2)
case("squares, reciprocals, floor division and modulo",
     "(def f (a b) (+ (// a b) (% (* a a) b)))", [moderate(33), moderate(33)],
     lambda a, b: a // b + (a * a) % b, 4)
# comparisons read halves directly: compare_f16 then where (bit copies), 2 dispatches each
case("compare and where", "(def f (a b) (where (> a b) a (where (== a b) b (neg b))))",
     [halves(257), np.concatenate([halves(200), np.zeros(57, "float16")])],
     lambda a, b: np.where(a > b, a, np.where(a == b, b, -b)), 5)
case("not", "(def f (a) (where (not a) a (neg a)))", [SPECIAL],
     lambda a: np.where(np.logical_not(a), a, -a), 3)
# mixed float16 and float32 still promote to float32 on the device: one cast, one add
case("float16 + float32 promotes", "(def f (a b) (+ a b))",
     [moderate(5), moderate(5).astype("float32")], lambda a, b: a + b, 2)
# a float16 reduction is one dispatch too (reduce_f16): small integers sum exactly
case("sum of squares", "(def f (a) (sum (* a a) 0))",
     [rng.integers(-9, 10, size=(4, 3)).astype("float16")], lambda a: np.sum(a * a, axis=0), 2)

# relu is np.maximum(x, 0) on both backends and every float dtype: NaN and -0 kept, -inf → 0
for dt in ["float16", "float32", "float64"]:
    case(f"relu {dt} of -inf, -0, NaN", "(def f (a) (relu a))",
         [np.array([-np.inf, -1, -0.0, 0.0, np.nan, 2, np.inf, -1e-7], dt)],
         lambda a: np.maximum(a, np.zeros((), a.dtype)), 1)

jobs = [(src, args) for _, src, args, _, _ in CASES]
for c, cpu, dev in zip(CASES, run_all(jobs, "cpu"), run_all(jobs, DEVICE)):
    name, _, args, numpy_fn, dispatches = c
    judge(name, args, numpy_fn, dispatches, *cpu, *dev)

# ---------------------------------------------------------------- reductions, softmax
RED = []  # (name, src, args, exact: equal to the CPU backend too, dispatches, check)


def red(name, src, args, exact=False, dispatches=1, check=None):
    RED.append((name, src, args, exact, dispatches, check))


CAST = {"STAGD_VK_F16_CAST": "1"}
SHARED = {"STAGD_VK_NO_SUBGROUP": "1"}
R3 = halves(5, 6, 7)  # odd sizes: the two halves of an output word come from two workgroups
for op in ["sum", "mean", "max", "min", "argmax"]:
    exact = op in ("max", "min", "argmax")
    for axis in ["", " 0", " 1", " 2", " -1"]:
        red(f"{op}{axis or ' (all)'} of random bit patterns", f"(def f (a) ({op} a{axis}))", [R3],
            exact)
    red(f"{op} of specials", f"(def f (a) ({op} a 0))", [np.stack([SPECIAL, SPECIAL_B])], exact)
    # rows longer than a workgroup (256), finite values: real float32 accumulation
    red(f"{op} of long rows", f"(def f (a) ({op} a 1))", [moderate(3, 1000)], exact)
    red(f"{op} of long columns", f"(def f (a) ({op} a 0))", [moderate(700, 3)], exact)
for op in ["softmax", "log_softmax"]:
    for axis in [" 0", " 1", " 2", ""]:
        red(f"{op}{axis or ' (last)'} of random bit patterns", f"(def f (a) ({op} a{axis}))", [R3])
    red(f"{op} of moderate values", f"(def f (a) ({op} a 1))", [moderate(4, 9, 3)])
    red(f"{op} of long rows", f"(def f (a) ({op} a))", [moderate(3, 1001)])
    red(f"{op} of specials", f"(def f (a) ({op} a))", [np.stack([SPECIAL, SPECIAL_B])])
    red(f"{op} along an empty axis", f"(def f (a) ({op} a 1))", [halves(3, 0, 2)], dispatches=0)
# float32 accumulation: the sum overflows float16 (inf), the mean does not (30000)
BIG = np.full((3, 8), 30000, "float16")
red("sum overflowing float16", "(def f (a) (sum a 1))", [BIG],
    check=lambda r: bool(np.all(np.isposinf(r))))
red("mean of values whose sum overflows float16", "(def f (a) (mean a 1))", [BIG],
    check=lambda r: bool(np.all(r == 30000)))
# empty axes: sum 0 and mean NaN (a fill); no output elements: nothing to dispatch
red("sum along an empty axis", "(def f (a) (sum a 1))", [halves(3, 0, 5)],
    check=lambda r: r.shape == (3, 5) and bool(np.all(bits(r) == 0)))
red("mean along an empty axis", "(def f (a) (mean a 1))", [halves(3, 0, 5)],
    check=lambda r: r.shape == (3, 5) and bool(np.all(np.isnan(r))))
red("sum of an empty tensor", "(def f (a) (sum a))", [halves(0, 4)],
    check=lambda r: r.shape == () and bits(r) == 0)
red("max without output elements", "(def f (a) (max a 1))", [halves(0, 4)], dispatches=0)
# keepdims is a reshape of the result: metadata only, still one dispatch
red("keepdims (a reshape)", "(def f (a) (reshape (max a 1) (tuple 5 1 7)))", [R3], True)
red("a reduction inside a chain", "(def f (a) (softmax (+ (sum (* a a) 1) 1)))",
    [moderate(4, 33, 2)], dispatches=4)


def red_check():
    jobs = [(src, args) for _, src, args, _, _, _ in RED]
    cpu = run_all(jobs, "cpu")
    for variant, env in (("subgroup", {}), ("shared-memory", SHARED)):
        direct, cast = run_all(jobs, DEVICE, env), run_all(jobs, DEVICE, {**env, **CAST})
        for (name, _, _, exact, nd, check), c, d, k in zip(RED, cpu, direct, cast):
            name = f"{name} ({variant})"
            # the CPU backend keeps the first of tied ±0 (a workgroup's tree does not
            # know which came first): equal values there, bit for bit otherwise
            refs = [("the cast path", k[0], bits)] + (
                [("the CPU backend", c[0], lambda v: np.where(v == 0, 0, bits(v)))]
                if exact else [])
            got, st = d
            for who, want, key in refs:
                if got.dtype != want.dtype or got.shape != want.shape:
                    failures.append(f"{name}: got {got.dtype}{got.shape}, {who} "
                                    f"{want.dtype}{want.shape}")
                    continue
                bad = np.flatnonzero(key(got) != key(want))
                if len(bad):
                    failures.append(f"{name}: differs from {who} at {len(bad)} elements, first "
                                    f"{bad[:5]}: got {got.reshape(-1)[bad[:5]]}, want "
                                    f"{want.reshape(-1)[bad[:5]]}")
            if check and not check(got):
                failures.append(f"{name}: unexpected result {got}")
            if st["cpu_fallbacks"] != 0 or st["dispatches"] != nd or st["submits"] != (nd > 0):
                failures.append(f"{name}: expected {nd} dispatches (one submit), no CPU "
                                f"fallback, got {st}")
            if k[1]["dispatches"] <= nd and nd > 0 and "empty" not in name:
                failures.append(f"{name}: the cast path took {k[1]['dispatches']} dispatches "
                                f"(not the cast path?)")


def variants_differ():
    """STAGD_VK_NO_SUBGROUP really selects the other variant: a float32 sum of a long
    row rounds differently through subgroupAdd and through the shared-memory tree (where
    the device has subgroup arithmetic at all, which the executor logs)"""
    x = (np.random.default_rng(3).standard_normal((4, 3000)) * 100).astype("float32")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump([enc(x)], f)
        f.flush()
        outs = [subprocess.run([TOOL, "run", "-", "--args", "@" + f.name, "--device", DEVICE],
                               input=b"(def f (a) (sum a 1))", capture_output=True, timeout=120,
                               env={**os.environ, **env}) for env in ({}, SHARED)]
    if any(p.returncode for p in outs):
        failures.append(f"variant check failed: {outs[0].stderr[-500:]} {outs[1].stderr[-500:]}")
    elif b"subgroup arithmetic: subgroup reductions" in outs[0].stderr:
        if outs[0].stdout == outs[1].stdout:
            failures.append("STAGD_VK_NO_SUBGROUP=1 gave the subgroup variant's float32 sums")


red_check()
variants_differ()
print(f"{'FAIL' if failures else 'ok'}: float16 elementwise, reduction and softmax kernels on "
      f"{DEVICE}")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
