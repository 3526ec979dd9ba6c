# SPDX-License-Identifier: Apache-2.0
# JANUS speculative mode, stagd.function(fn, speculative=True) (docs/client.md
# "Speculative mode"): the first calls run imperatively and are profiled, then a graph
# that assumes what they did runs, with an `assume` node per assumption; a failed one
# leaves every Variable as it was and the call runs imperatively. Every call's answer
# is compared with the same function run imperatively (eager tensors, no stagd.function)
# — bit for bit — while the assumption flips, loops change trip count and Variables
# are updated before an assumption fails.
import numpy as np
import pytest

import stagd
from stagd import speculative as spec


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


def eager(fn, *args):
    """fn run imperatively on eager tensors: the answer speculation must give."""
    out = fn(*[stagd.constant(a) if isinstance(a, np.ndarray) else a for a in args])
    return out.numpy() if hasattr(out, "numpy") else out


def same(got, want):
    got = got.numpy() if hasattr(got, "numpy") else got
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def clip(w, g):
    """One SGD step with gradient clipping by float(norm): a Python branch on a tensor."""
    norm = stagd.sqrt(stagd.reduce_sum(g * g))
    if float(norm) > 1.0:
        g = g * (1.0 / norm)
    return w - 0.5 * g


W = np.array([1.0, -2.0, 3.0], np.float32)
SMALL = np.array([0.1, 0.2, -0.3], np.float32)  # norm < 1: not clipped
BIG = np.array([3.0, -4.0, 12.0], np.float32)  # norm 13: clipped


def test_clipping_speculates_then_falls_back_when_the_branch_flips():
    f = stagd.function(clip, speculative=True)
    plan = [SMALL] * 5 + [BIG] * 5 + [SMALL] * 5  # stable, flip, stable again, flip back
    for k, g in enumerate(plan):
        same(f(W, g * (1 + k / 16)), eager(clip, W, g * (1 + k / 16)))
    st = f.stats
    # 3 profiled, 2 speculative; 1 fallback + 2 profiled, 2 speculative; again
    assert st["fallbacks"] == 2, st
    assert st["speculations"] == 3 and st["speculative"] == 6, st
    assert st["profiled"] == 3 + 3 + 3, st
    shown = f.assumptions(W, SMALL)
    assert len(shown) == 1 and shown[0].startswith("if taken false at ") \
        and "test_speculative.py:" in shown[0], shown


def test_an_assumption_that_flips_on_every_call_ends_in_the_plain_graph():
    f = stagd.function(clip, speculative=True)
    for k in range(spec.UNSTABLE_AFTER + 4):
        g = BIG if k % 2 else SMALL
        same(f(W, g), eager(clip, W, g))
    st = f.stats
    assert st["speculations"] == 0 and st["fallbacks"] == 0, st
    assert st["profiled"] == spec.UNSTABLE_AFTER, st  # then the guarded generic graph
    assert st["traces"] == 1, st


def halve(x):
    """A while loop whose trip count depends on a tensor's value."""
    n = 0
    while float(stagd.reduce_sum(x)) > 1.0:
        x = x * 0.5
        n += 1
    return x, n


def test_a_loop_unrolled_to_its_profiled_trip_count_falls_back_when_it_changes():
    f = stagd.function(halve, speculative=True)
    for scale in [3.0, 3.5, 2.5, 3.9, 3.1, 7.0, 0.5, 3.0]:  # 2 trips, …, 3 trips, 0 trips
        x = np.array([scale, 0.0], np.float32)
        got, n = f(x)
        want, n_want = halve(stagd.constant(x))
        same(got, want.numpy())
        assert n == n_want
    assert f.stats["speculative"] == 2 and f.stats["fallbacks"] == 1, f.stats
    assert f.stats["profiled"] == 6, f.stats  # 3, then 3 after the fallback (7.0, 0.5, 3.0)


def test_a_stable_int_is_specialized_and_checked():
    def repeat(x, n):
        y = x
        for _ in range(int(n)):  # unrolled to the profiled count, with an assume
            y = y * 2.0 + 1.0
        return y

    f = stagd.function(repeat, speculative=True)
    x = np.array([1.0, 2.0], np.float32)
    for n in [3, 3, 3, 3, 3, 4, 2]:
        same(f(x, np.array(n, np.int64)), eager(repeat, x, np.array(n, np.int64)))
    assert f.stats["speculative"] == 2 and f.stats["fallbacks"] == 1, f.stats


@pytest.mark.parametrize("dev", ["cpu", "vulkan:0"])
def test_state_updated_before_a_failed_assumption_is_updated_once(dev):
    with stagd.device(dev):
        state_then_decision()


def state_then_decision():
    COUNT = stagd.Variable(0.0)
    TOTAL = stagd.Variable(np.zeros(2, np.float32))

    def step(x):
        """Updates state, then decides on a tensor: the fallback must not update twice."""
        COUNT.assign_add(1.0)
        TOTAL.assign_add(x)
        if float(stagd.reduce_sum(x)) > 0.0:
            return x * 2.0
        return x * -1.0

    f = stagd.function(step, speculative=True)
    xs = [np.array([1.0, 2.0], np.float32)] * 4 + [np.array([-5.0, 1.0], np.float32)]
    total = np.zeros(2, np.float32)
    for k, x in enumerate(xs):
        want = x * 2.0 if x.sum() > 0 else x * -1.0
        same(f(x), want)
        total += x
        assert COUNT.numpy() == k + 1  # a torn call would count the failed graph's +1
        same(TOTAL.numpy(), total)
    assert f.stats["speculative"] == 1 and f.stats["fallbacks"] == 1, f.stats


def test_a_branch_in_an_unrolled_loop_is_one_assumption_per_iteration():
    def positive_rows(xs):
        s = xs[0] * 0.0
        for x in xs:  # three rows: unrolled
            if float(stagd.reduce_sum(x)) > 0.0:
                s = s + x
        return s

    f = stagd.function(positive_rows, speculative=True)
    rows = np.array([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.5]], np.float32)
    for _ in range(spec.PROFILE_CALLS + 2):
        same(f(rows), eager(positive_rows, rows))
    # the sums were the same in every profile: constants (the ifs on them are plain)
    assert [a.split(" at ")[0] for a in f.assumptions(rows)] == \
        ["float() == 3.0", "float() == -2.0", "float() == 1.0"], f.assumptions(rows)
    assert f.stats["speculative"] == 2, f.stats
    flipped = rows * np.array([[1.0], [-1.0], [1.0]], np.float32)
    same(f(flipped), eager(positive_rows, flipped))
    assert f.stats["fallbacks"] == 1, f.stats


def test_speculative_takes_no_input_signature():
    with pytest.raises(ValueError, match="input_signature"):
        stagd.function(clip, speculative=True, input_signature=[stagd.TensorSpec((3,))] * 2)
    with pytest.raises(ValueError, match="not speculative"):
        stagd.function(clip).assumptions(W, SMALL)


def test_a_function_that_assigns_python_state_runs_imperatively():
    import types
    box = types.SimpleNamespace(n=0)

    def bump(x):
        box.n = box.n + 1  # a graph would make this write once, when tracing
        return x * float(box.n)

    with pytest.warns(UserWarning, match="assigns Python state"):
        f = stagd.function(bump, speculative=True)
    x = np.array([1.0, 2.0], np.float32)
    for k in range(1, 6):
        same(f(x), x * k)
    assert box.n == 5 and f.stats["profiled"] == 5 and f.stats["traces"] == 0, f.stats


def test_a_decision_inside_a_staged_loop_uses_the_plain_graph():
    def positive_sum(xs):
        s = xs[0] * 0.0
        for x in xs:  # once the row count is relaxed to ?, a staged loop…
            if float(stagd.reduce_sum(x)) > 0.0:  # …around a profiled decision
                s = s + x
        return s

    f = stagd.function(positive_sum, speculative=True)
    rows = np.array([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.5], [2.0, -1.0]], np.float32)
    for n in [3, 4, 4, 4, 4, 4]:  # (3, 2), then (?, 2): profiled 3 times, then traced
        same(f(rows[:n]), eager(positive_sum, rows[:n]))
    st = f.stats
    assert st["speculations"] == 0 and st["profiled"] == 4 and st["traces"] == 1, st


def pick(x):
    s = float(stagd.reduce_sum(x))
    if s > 10.0:
        y = x * 3.0
    elif s > 0.0:
        y = x * 2.0
    else:
        y = x
    return y if s < 5.0 else -y


def test_elif_chains_and_conditional_expressions_are_assumed():
    f = stagd.function(pick, speculative=True)
    base = np.array([1.0, 0.5], np.float32)
    for k in [1.0, 1.1, 1.2, 1.3, 1.4, 10.0, -1.0, 3.0]:  # 4 and 5 speculative; 10.0 flips
        same(f(base * k), eager(pick, base * k))
        if k == 1.4:
            assert [a.split(" at ")[0] for a in f.assumptions(base)] == [
                "elif0 taken false", "elif1 taken true", "ifexp taken true"]
    assert f.stats["speculative"] == 2 and f.stats["fallbacks"] == 1, f.stats


BIAS = None  # a global tensor the next test rebinds


def test_the_stale_answer_cases_in_speculative_mode():
    """Issue 22's stale answers, with speculation: a config attribute that flips, an
    attribute whose type changes, a global list that grows, a rebound global tensor and
    a rebound closure variable. Each phase runs long enough to be profiled and
    speculated; every call equals the imperative answer."""
    global BIAS
    import types
    cfg = types.SimpleNamespace(use_relu=True, scale=2)
    sizes = [1, 2]
    k = stagd.constant(np.float32(2.0))
    BIAS = stagd.constant(np.float32(1.0))

    def step(x):
        y = stagd.relu(x) * cfg.scale if cfg.use_relu else x * cfg.scale
        for s in sizes:
            y = y + x * s
        return y * k + BIAS

    f = stagd.function(step, speculative=True)
    x = np.array([-1.0, 2.0, -3.0], np.float32)

    def phase():
        for _ in range(5):  # 3 profiled calls, then speculative ones
            same(f(x), eager(step, x))

    phase()
    cfg.use_relu = False  # the old graph would serve the ReLU result
    phase()
    cfg.scale = 2.5  # int → float
    phase()
    sizes.append(3)  # the list grows
    phase()
    BIAS = stagd.constant(np.float32(10.0))  # a rebound global tensor
    phase()
    k = stagd.constant(np.float32(-4.0))  # a rebound closure variable
    phase()
    k = 0.5  # now a Python number
    phase()
    st = f.stats  # each change failed a guard of the speculative graph and was profiled anew
    assert st["guard_failures"] == 6 and st["speculations"] == 7, st
    assert st["profiled"] == 21 and st["speculative"] == 14 and st["fallbacks"] == 0, st


def clip_item(w, g):
    """clip with the norm read by .item() instead of float()."""
    norm = stagd.sqrt(stagd.reduce_sum(g * g))
    if norm.item() > 1.0:
        g = g * (1.0 / norm)
    return w - 0.5 * g


def test_item_is_a_profiled_fact_and_falls_back_when_the_branch_flips():
    f = stagd.function(clip_item, speculative=True)
    plan = [SMALL] * 5 + [BIG] * 5
    for k, g in enumerate(plan):
        same(f(W, g * (1 + k / 16)), eager(clip_item, W, g * (1 + k / 16)))
    st = f.stats
    assert st["fallbacks"] == 1 and st["speculations"] == 2 and st["speculative"] == 4, st
    shown = f.assumptions(W, BIG)
    assert len(shown) == 1 and shown[0].startswith("if taken true at "), shown


def count_down(x, n):
    """A trip count read with .item() from an int tensor; a stable one is specialized."""
    for _ in range(n.item()):
        x = x * 0.5 + 1.0
    return x


def test_a_stable_item_is_specialized_and_checked():
    f = stagd.function(count_down, speculative=True)
    x = np.array([4.0, -2.0], np.float32)
    for k, n in enumerate([2, 2, 2, 2, 2, 5, 0]):
        same(f(x, np.array([n], np.int32)), eager(count_down, x, np.array([n], np.int32)))
        if k == 4:
            shown = f.assumptions(x, np.array([2], np.int32))
            assert len(shown) == 1 and shown[0].startswith("item() == 2 at "), shown
    st = f.stats
    assert st["speculative"] == 2 and st["fallbacks"] == 1, st


def item_values(f32, i64, b):
    """item() of each dtype in arithmetic, where float64 vs float32 would show."""
    return f32.item() / 3.0, i64.item() * 3, b.item()


def test_item_in_a_plain_trace_equals_numpy():
    f = stagd.function(item_values)
    args = (np.array([0.1], np.float32), np.array(7, np.int64), np.array([True]))
    got = f(*args)
    want = tuple(a.item() for a in args)
    want = (want[0] / 3.0, want[1] * 3, want[2])
    for g, w in zip(got, want):
        g = g.numpy() if hasattr(g, "numpy") else g
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.asarray(g) == w, (g, w)


def test_item_of_more_than_one_element_is_a_located_error():
    f = stagd.function(lambda x: x.item() + 1.0)
    with pytest.raises(Exception, match="size 1"):
        f(np.array([1.0, 2.0], np.float32))
