# SPDX-License-Identifier: Apache-2.0
# JANUS guards and shape relaxation in stagd.function (docs/client.md "Guards" and
# "Shape relaxation"): a trace is never run after a Python fact it read has changed —
# a config attribute, a global list that grows, a rebound global or closure tensor, an
# attribute whose type changes — and batch sizes that vary share one relaxed trace.
# Every value is compared with the same function run by NumPy.
import types

import numpy as np
import pytest

import stagd


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


X = np.array([-1.0, 2.0, -3.0], np.float32)
cfg = types.SimpleNamespace(use_relu=True, scale=2)


@stagd.function
def act(x):
    if cfg.use_relu:
        return stagd.relu(x) * cfg.scale
    return x * cfg.scale


def act_np(x):
    return (np.maximum(x, 0) if cfg.use_relu else x) * cfg.scale


def test_a_config_attribute_flip_retraces_and_flipping_back_reuses():
    cfg.use_relu, cfg.scale = True, 2
    np.testing.assert_array_equal(act(X).numpy(), act_np(X))
    cfg.use_relu = False  # served the ReLU result before guards
    np.testing.assert_array_equal(act(X).numpy(), act_np(X))
    cfg.scale = 2.5  # int → float: a different fact
    np.testing.assert_allclose(act(X).numpy(), act_np(X))
    traces = act.trace_count
    cfg.use_relu, cfg.scale = True, 2
    np.testing.assert_array_equal(act(X).numpy(), act_np(X))
    assert act.trace_count == traces  # the first trace's guards hold again
    assert act.stats["guard_failures"] == 2  # the two calls no trace's guards fitted
    shown = act.guards(X)
    assert "global cfg.use_relu == True" in shown and "global cfg.scale == 2" in shown


SIZES = [1, 2]


@stagd.function
def weighted(x):
    s = x * 0.0
    for k in SIZES:
        s = s + x * k
    return s


def test_a_global_list_that_grows_or_changes_in_place_retraces():
    np.testing.assert_array_equal(weighted(X).numpy(), X * 3)
    SIZES.append(3)
    np.testing.assert_array_equal(weighted(X).numpy(), X * 6)
    SIZES[0] = 10
    np.testing.assert_array_equal(weighted(X).numpy(), X * 15)
    del SIZES[:]
    SIZES.extend([1, 2])


bias = None


@stagd.function
def add_bias(x):
    return x + bias


def test_a_rebound_global_tensor_retraces():
    global bias
    bias = stagd.constant(np.float32(1.0))
    np.testing.assert_array_equal(add_bias(X).numpy(), X + 1)
    bias = stagd.constant(np.float32(10.0))
    np.testing.assert_array_equal(add_bias(X).numpy(), X + 10)


def test_a_rebound_closure_variable_retraces():
    k = stagd.constant(np.float32(2.0))

    @stagd.function
    def times(x):
        return x * k

    np.testing.assert_array_equal(times(X).numpy(), X * 2)
    k = stagd.constant(np.float32(-4.0))
    np.testing.assert_array_equal(times(X).numpy(), X * -4)
    k = 0.5  # a Python number now
    np.testing.assert_array_equal(times(X).numpy(), X * 0.5)
    assert times.trace_count == 3


def test_shape_relaxation_one_trace_for_every_later_batch_size():
    w = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)

    def body(x):
        return stagd.tanh(stagd.matmul(x, w)) * x.shape[0] + stagd.reduce_sum(x) / len(x)

    f = stagd.function(body)
    for n in (4, 5, 6, 7, 8, 4, 5):
        x = np.arange(n * 8, dtype=np.float32).reshape(n, 8) / 50
        np.testing.assert_allclose(f(x).numpy(), np.tanh(x @ w) * n + x.sum() / n, rtol=1e-5)
    assert f.trace_count == 2  # (4, 8), then (?, 8) for all the others
    assert "(shape x)" in f.sexpr(np.zeros((9, 8), np.float32))  # the batch is staged
    g = stagd.function(body, relax_shapes=False)
    for n in (4, 5, 6):
        g(np.zeros((n, 8), np.float32))
    assert g.trace_count == 3
    h = stagd.function(body, input_signature=[stagd.TensorSpec((4, 8))])
    h(np.zeros((4, 8), np.float32))
    with pytest.raises(TypeError, match="does not match"):
        h(np.zeros((5, 8), np.float32))
    assert h.trace_count == 1


# -- what the guards of the first wave did not cover (each was a stale answer before)

HELPER_SCALE = 2.0
HELPER_TABLE = [1.0]


def helper(x):
    return x * HELPER_SCALE + deeper()


def deeper():
    return sum(HELPER_TABLE)


@stagd.function
def calls_helper(x):
    return helper(x) + 1.0


def test_globals_read_by_callees_are_guarded():
    global HELPER_SCALE
    np.testing.assert_array_equal(calls_helper(X).numpy(), X * 2.0 + 2.0)
    HELPER_SCALE = 3.0  # read by helper, not by calls_helper: served X*2+2 before
    np.testing.assert_array_equal(calls_helper(X).numpy(), X * 3.0 + 2.0)
    HELPER_TABLE.append(4.0)  # read two calls down
    np.testing.assert_array_equal(calls_helper(X).numpy(), X * 3.0 + 6.0)
    assert any("HELPER_SCALE (read by helper)" in g for g in calls_helper.guards(X))
    HELPER_SCALE = 2.0
    del HELPER_TABLE[1:]


class Schedule:
    """A learning-rate schedule: its float() is its own, from state the trace never sees."""

    def __init__(self):
        self.step = 0

    def __float__(self):
        return 0.1 / (1 + self.step)

    def __len__(self):
        return self.step


schedule = Schedule()


@stagd.function
def scheduled(x):
    lr = float(schedule)
    if schedule:  # __len__: nonzero after the first step
        return x * lr
    return x * lr * 10.0


def test_float_and_bool_of_plain_objects_are_guarded():
    schedule.step = 0
    np.testing.assert_allclose(scheduled(X).numpy(), X * np.float32(0.1) * 10, rtol=1e-6)
    schedule.step = 1  # the schedule object is the same: served step 0's graph before
    np.testing.assert_allclose(scheduled(X).numpy(), X * np.float32(0.05), rtol=1e-6)
    schedule.step = 3
    np.testing.assert_allclose(scheduled(X).numpy(), X * np.float32(0.025), rtol=1e-6)
    assert any(g.startswith("call float(<Schedule") for g in scheduled.guards(X))


class Config:
    def __init__(self, relu):
        self.relu = relu


@stagd.function
def configured(x, c):
    if c.relu:
        return stagd.relu(x)
    return x


def test_attributes_read_from_argument_objects_are_guarded():
    c = Config(True)
    np.testing.assert_array_equal(configured(X, c).numpy(), np.maximum(X, 0))
    c.relu = False  # the same object (keyed by identity): served the ReLU before
    np.testing.assert_array_equal(configured(X, c).numpy(), X)
    c.relu = True
    np.testing.assert_array_equal(configured(X, c).numpy(), np.maximum(X, 0))
    assert configured.trace_count == 2  # flipping back reuses the first trace


def test_compiled_guards_agree_with_the_facts():
    # a shared root read once for several chains, a builtin, an emptied closure cell
    ns = types.SimpleNamespace(a=1, b=(2, 3))

    def make():
        cell = 5

        def f():
            return ns.a, ns.b, len, cell
        return f, f.__closure__[0]

    f, cell = make()
    names = {("global", "ns", ("a",)), ("global", "ns", ("b",)), ("global", "len", ()),
             ("closure", "cell", ())}
    g = {"ns": ns}
    fn = types.FunctionType(f.__code__, g, "f", None, f.__closure__)
    from stagd import guards
    gs = guards.record(fn, names)
    assert gs.holds()
    ns.b = (2, 4)
    assert not gs.holds() and not guards.check(list(gs))
    ns.b = (2, 3)
    assert gs.holds()
    g["len"] = lambda s: 0  # a global now shadows the builtin
    assert not gs.holds()
    del g["len"]
    assert gs.holds()
    cell.cell_contents = 6
    assert not gs.holds()
    del cell.cell_contents
    assert not gs.holds()


def test_compiled_guards_compare_small_containers_by_value_and_type():
    from stagd import guards
    g = {"L": [1, 2.0, "a"], "D": {"x": 1, "y": 2}, "T": (True, None)}
    fn = types.FunctionType(compile("def f(): pass", "g", "exec").co_consts[0], g)
    gs = guards.record(fn, {("global", n, ()) for n in g})
    g["L"][0] = 5  # changed before the first check: the recorded values count
    assert not gs.holds()
    g["L"][0] = 1
    assert gs.holds()
    for name, other in [("L", [1.0, 2.0, "a"]), ("L", (1, 2.0, "a")), ("L", [1, 2.0]),
                        ("D", {"y": 2, "x": 1}), ("D", {"x": 1.0, "y": 2}),
                        ("D", {"x": True, "y": 2}), ("T", (1, None)), ("T", (True, 0))]:
        saved, g[name] = g[name], other  # most are == to the old value, none the same
        assert not gs.holds(), (name, other)
        g[name] = saved
        assert gs.holds()


# A Variable's value is state the graph reads when it runs, never a fact of the trace:
# float(v), int(v), v.item() and `if v` in converted code are staged reads, so an
# assign between calls is seen without retracing; reading it in plain Python while
# tracing (v.numpy(), np.asarray(v)) would bake a stale constant and is an error.
V_SCALE = None
V_FLAG = None
V_COUNT = None


def by_float(x):
    return x * float(V_SCALE)


def by_item(x):
    return x * V_SCALE.item()


def by_flag(x):
    if V_FLAG:
        return x + 100.0
    return x


def by_count(x):
    for _ in range(int(V_COUNT)):
        x = x * 2.0
    return x


def by_numpy(x):
    return x * V_SCALE.numpy()


def test_reads_of_a_variable_are_staged_not_baked():
    global V_SCALE, V_FLAG, V_COUNT
    V_SCALE = stagd.Variable(np.float32(1.5))
    V_FLAG = stagd.Variable(np.array(False))
    V_COUNT = stagd.Variable(np.int64(1))
    cases = [(by_float, V_SCALE, [np.float32(1.5), np.float32(-2.0)]),
             (by_item, V_SCALE, [np.float32(0.25), np.float32(3.0)]),
             (by_flag, V_FLAG, [np.array(False), np.array(True), np.array(False)]),
             (by_count, V_COUNT, [np.int64(1), np.int64(3), np.int64(0)])]
    for fn, var, values in cases:
        f = stagd.function(fn)
        for v in values:
            var.assign(v)
            want = fn(stagd.constant(X)).numpy()  # eager: Python's answer now
            np.testing.assert_array_equal(f(X).numpy(), want, err_msg=fn.__name__)
        assert f.stats["traces"] == 1, (fn.__name__, f.stats)


def test_an_eager_variable_converts_like_a_tensor():
    assert bool(stagd.Variable(np.array(False))) is False  # was True: any object is truthy
    assert int(stagd.Variable(np.int64(7))) == 7
    assert stagd.Variable(np.float32(2.5)).item() == 2.5
    v = stagd.Variable(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal((v == 2.0).numpy(), [False, True])
    np.testing.assert_array_equal((v >= 2.0).numpy(), [False, True])


def test_reading_a_variable_in_plain_python_while_tracing_is_an_error():
    global V_SCALE
    V_SCALE = stagd.Variable(np.float32(1.5))
    from stagd.runtime import StagingError
    with pytest.raises(StagingError, match="stale after the next assign") as e:
        stagd.function(by_numpy)(X)
    notes = getattr(e.value, "__notes__", [])  # located at the user's line
    assert any("test_guards.py:" in n for n in notes), notes
