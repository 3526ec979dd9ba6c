# SPDX-License-Identifier: Apache-2.0
"""guard_bench.py — the per-call cost of stagd.function's guards (clients/python/stagd/
guards.py; issue target < 2 µs for 10 guards: they are compiled into one generated
function, Guards.holds), beside the cost of the argument key the
call computes anyway (signature.arg_part of one tensor argument) as the baseline.
Needs no daemon. Run: PYTHONPATH=clients/python /usr/bin/python3 bench/guard_bench.py"""
import timeit
import types

import numpy as np

from stagd import guards, signature

cfg = types.SimpleNamespace(use_relu=True, scale=2.0, layers=[1, 2, 3], name="m", depth=4)
G = {"cfg": cfg, "np": np, "K": 3, "EPS": 1e-5, "MODE": "train", "TABLE": (1, 2, 3)}
names = {("global", "cfg", ()), ("global", "cfg", ("use_relu",)), ("global", "cfg", ("scale",)),
         ("global", "cfg", ("layers",)), ("global", "cfg", ("name",)), ("global", "cfg", ("depth",)),
         ("global", "np", ()), ("global", "K", ()), ("global", "EPS", ()), ("global", "MODE", ())}
fn = types.FunctionType(compile("def f(x): pass", "g", "exec").co_consts[0], G)
gs = guards.record(fn, names)
assert len(gs) == 10 and guards.check(gs)
x = np.zeros((32, 64), np.float32)
n = 100000
t_guards = min(timeit.repeat(gs.holds, number=n, repeat=5)) / n
t_loop = min(timeit.repeat(lambda: guards.check(list(gs)), number=n // 4, repeat=5)) / (n // 4)
t_key = min(timeit.repeat(lambda: signature.arg_part(x, False), number=n, repeat=5)) / n
print(f"10 guards checked (compiled, what a call runs): {t_guards * 1e6:.2f} us per call "
      "(target < 2 us)")
print(f"the same 10 as a loop over the list (before): {t_loop * 1e6:.2f} us; "
      f"compiled is {t_loop / t_guards:.2f}x faster")
print(f"baseline, the key of one tensor argument: {t_key * 1e6:.2f} us; ratio {t_guards / t_key:.2f}x")
