# SPDX-License-Identifier: Apache-2.0
# Asynchronous eager ops (docs/client.md "Asynchronous eager"): ops queued by the client
# and sent as EagerBatch calls give the synchronous results; the client's inferred
# dtypes and shapes are the daemon's; failures surface at the next sync point with the
# user's line, poison dependent ops and are never read as values; every sync point
# flushes; Variables keep their order; the queue bound (a full batch goes out without
# waiting, one in flight) and two threads.
import gc
import threading

import numpy as np
import pytest

import stagd
import stagd.eager_queue
from stagd.eager_infer import infer


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


@pytest.fixture
def sync_mode():
    stagd.set_eager_async(False)
    yield
    stagd.set_eager_async(True)


def queue(client):
    return stagd.eager_queue.queue_of(client)


# ------------------------------------------------ equal results, sync vs async

def mlp_steps():
    rng = np.random.default_rng(0)
    x = stagd.constant(rng.standard_normal((8, 6)).astype(np.float32))
    y = stagd.constant(rng.standard_normal((8, 3)).astype(np.float32))
    w1 = stagd.Variable(rng.standard_normal((6, 5)).astype(np.float32))
    w2 = stagd.Variable(rng.standard_normal((5, 3)).astype(np.float32))
    losses = []
    for _ in range(3):
        with stagd.GradientTape() as tape:
            h = stagd.tanh(x @ w1)
            d = h @ w2 - y
            loss = stagd.reduce_mean(d * d)
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(g1 * 0.1)
        w2.assign_sub(g2 * 0.1)
        losses.append(loss.numpy())
    return [np.array(losses), w1.numpy(), w2.numpy()]


def elementwise_program():
    a = stagd.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = stagd.constant(np.array([1.0, -2.0, 3.0, 0.5], dtype=np.float32))
    i = stagd.constant(np.arange(6, dtype=np.int32))
    c = stagd.exp(a * 0.1) - b / 2.0 + stagd.maximum(a, b) ** 2.0
    m = (c > 3.0)
    s = stagd.reduce_sum(c, 1) + stagd.reduce_mean(c)
    r = stagd.reshape(stagd.transpose(c), (2, -1))
    k = stagd.cast(i // 4 + i % 3 - 1, "float64") / 3
    return [c.numpy(), m.numpy(), s.numpy(), r.numpy(), k.numpy(), (i * 2 + 1).numpy(),
            stagd.sigmoid(i).numpy(), stagd.softmax(a, 1).numpy(), float(c[1, 2])]


def variable_program():
    v = stagd.Variable(np.zeros(3, np.float32))
    reads = []
    for k in range(4):
        reads.append(v.read_value())
        v.assign_add(np.float32(1.0))
        t = v.read_value() * 2.0
        v.assign(t)
    reads.append(v.read_value())
    return [r.numpy() for r in reads] + [v.numpy()]


@pytest.mark.parametrize("program", [mlp_steps, elementwise_program, variable_program])
def test_async_results_equal_sync_results(client, program):
    stagd.set_eager_async(False)
    try:
        want = program()
    finally:
        stagd.set_eager_async(True)
    before = queue(client).batches
    got = program()
    assert queue(client).batches > before  # it did run through EagerBatch
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype


def test_variable_updates_keep_their_order(client):
    v = stagd.Variable(0.0)
    seen = []
    for k in range(5):
        seen.append(v.read_value())
        v.assign_add(1.0)
    v.assign(v.read_value() * 10.0)
    assert len(queue(client).ops) > 0  # all still queued
    assert [float(s) for s in seen] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert float(v.numpy()) == 50.0


def test_assign_sub_is_one_op_with_the_bits_of_adding_the_negation(client):
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal(64).astype(np.float32)
    d = stagd.constant(rng.standard_normal(64).astype(np.float32))
    v, u = stagd.Variable(w0), stagd.Variable(w0)
    q = queue(client)
    n = len(q.ops)
    v.assign_sub(d * 0.1)
    assert len(q.ops) == n + 2  # the product and one assign_sub
    u.assign_add(-(d * 0.1))
    np.testing.assert_array_equal(v.numpy(), u.numpy())
    np.testing.assert_array_equal(v.numpy(), w0 - d.numpy() * np.float32(0.1))
    v.assign_sub(2)  # a number: converted to the variable's dtype
    np.testing.assert_array_equal(v.numpy(), u.numpy() - np.float32(2))
    client._version_facts()
    prims = client._primitives
    client._primitives = prims - {"assign_sub"}  # a daemon without it: neg and assign_add
    try:
        n = len(q.ops)
        v.assign_sub(d)
        assert len(q.ops) == n + 2
    finally:
        client._primitives = prims
    np.testing.assert_array_equal(v.numpy(), u.numpy() - np.float32(2) - d.numpy())


# ------------------------------------------------------------ shape inference

def _table():
    f32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    f64 = np.arange(3, dtype=np.float64)
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    i64 = np.arange(3, dtype=np.int64)
    col = np.ones((2, 1), np.float32)
    vec = np.ones(3, np.float32)
    m34 = np.ones((3, 4), np.float32)
    c = stagd.constant
    return [
        ("+", (c(f32), c(col))), ("-", (c(f32), 1)), ("*", (c(f32), 2.5)), ("/", (c(i32), c(i32))),
        ("/", (c(f32), 3)), ("//", (c(i32), 2)), ("%", (c(i64), 3)), ("**", (c(f32), 2.0)),
        ("+", (c(i32), 2.5)), ("maximum", (c(f32), c(vec))), ("minimum", (c(i64), c(i64))),
        ("<", (c(f32), c(col))), ("==", (c(i32), 3)), ("!=", (c(f64), 1.0)), (">=", (2, c(f32))),
        ("-", (1.0, c(i32))), ("neg", (c(i32),)), ("abs", (c(f64),)), ("relu", (c(f32),)),
        ("exp", (c(f32),)), ("log", (c(i32),)), ("tanh", (c(f64),)), ("sigmoid", (c(i64),)),
        ("matmul", (c(f32), c(m34))), ("matmul", (c(vec), c(m34))), ("matmul", (c(f32), c(vec))),
        ("matmul", (c(vec), c(vec))), ("sum", (c(f32),)), ("sum", (c(f32), 1)), ("mean", (c(f32), -2)),
        ("mean", (c(f64),)), ("softmax", (c(f32), 1)), ("transpose", (c(f32),)),
        ("reshape", (c(f32), (3, 2))), ("reshape", (c(f32), (-1,))), ("reshape", (c(i32), (1, -1, 2))),
        ("cast", (c(f32), "int64")), ("cast", (c(i32), "bool")), ("zeros", ((2, 5), "float64")),
        ("ones", ((0, 3), "int32")),
    ]


def test_client_inference_equals_the_daemon_on_a_table(client, sync_mode):
    for op, args in _table():
        got = infer(op, args)
        assert got is not None, (op, args)
        daemon = stagd.tensor.eager(op, *args)  # synchronous: the daemon's own metadata
        assert got == (daemon.dtype, daemon.shape), (op, [getattr(a, "shape", a) for a in args])


def test_what_the_client_cannot_infer_runs_synchronously(client):
    a = stagd.constant(np.ones((2, 3), np.float32))
    b = stagd.constant(np.ones((4,), np.float32))
    h = stagd.constant(np.ones((3,), np.float16))
    assert infer("+", (a, b)) is None  # does not broadcast
    assert infer("matmul", (a, a)) is None  # inner dims differ
    assert infer("reshape", (a, (4, -1))) is None
    assert infer("sum", (a, 2)) is None
    assert infer("*", (h, 2.0)) is None  # float16: not inferred
    for bad in (lambda: a + b, lambda: stagd.matmul(a, a), lambda: stagd.reshape(a, (4, -1))):
        stagd.set_eager_async(False)
        try:
            with pytest.raises(stagd.StagdError) as sync_err:
                bad()
        finally:
            stagd.set_eager_async(True)
        with pytest.raises(stagd.StagdError) as async_err:
            bad()  # raised at the op itself, as today
        assert type(async_err.value) is type(sync_err.value)
        assert async_err.value.details == sync_err.value.details
    assert (h * 2.0).shape == (3,)  # synchronous, answered by the daemon


# ------------------------------------------------------------------- failures

def test_failure_surfaces_at_the_next_sync_with_its_line(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--max-session-handle-bytes", "4096")
    c = stagd.Client(d.addr)
    prev = stagd._default_client
    stagd.set_default_client(c)
    try:
        small = stagd.zeros((4,))
        big = stagd.zeros((2000,)); line = _line()  # noqa: E702 (8000 bytes: over the limit)
        after = big + 1.0  # depends on the failed op
        fine = small + 1.0  # does not
        assert big.shape == (2000,) and after.dtype == "float32"  # no round trip, no error yet
        with pytest.raises(stagd.ResourceExhausted, match=rf"test_eager_async.py:{line}: .*session's handle memory limit"):
            fine.numpy()  # the next sync point raises the batch's failure ...
        np.testing.assert_array_equal(fine.numpy(), np.ones(4, np.float32))  # ... once
        for t in (big, after, after * 2.0):  # never readable, every time
            with pytest.raises(stagd.ResourceExhausted, match=rf"test_eager_async.py:{line}:"):
                t.numpy()
        with pytest.raises(stagd.ResourceExhausted):
            stagd.matmul(stagd.reshape(after, (1, 2000)), stagd.reshape(after, (2000, 1)))
            float(after)
        assert float(stagd.reduce_sum(small + 2.0)) == 8.0
    finally:
        stagd.set_default_client(prev)
        c.close()


def _line():
    import sys
    return sys._getframe(1).f_lineno


def test_failed_op_poisons_dependent_ops_in_the_same_batch(client):
    t = stagd.constant([1.0, 2.0])
    client.call("Release", {"ids": [t._id]})
    u = t * 3.0; line = _line()  # noqa: E702
    v = stagd.exp(u) + 1.0
    w = stagd.constant([5.0]) + 1.0
    assert len(queue(client).ops) == 4  # one batch
    with pytest.raises(stagd.NotFound, match=rf"test_eager_async.py:{line}: op '\*'"):
        client.sync()
    np.testing.assert_array_equal(w.numpy(), [6.0])
    with pytest.raises(stagd.NotFound, match=rf"test_eager_async.py:{line}:"):
        v.numpy()
    assert client.health() == "SERVING"


def test_failure_in_a_batch_in_flight_poisons_later_users(client):
    """A batch the bound sends is not waited for: its failure is known when the next
    batch goes out, whose ops that use a failed result fail with that op's error and
    line without running; the others run."""
    q = queue(client)
    t = stagd.constant([1.0, 2.0])
    k = stagd.constant([5.0])
    client.sync()
    client.call("Release", {"ids": [t._id]})
    u = t * 3.0; line = _line()  # noqa: E702
    for _ in range(q.bound - 1):  # fills the queue: the batch with u goes out
        k1 = k + 1.0
    assert q.inflight is not None and not q.ops  # sent, not waited for
    v = stagd.exp(u) + 1.0  # the next batch: uses u
    ok = k + 2.0
    with pytest.raises(stagd.NotFound, match=rf"test_eager_async.py:{line}: op '\*'"):
        client.sync()
    for bad in (u, v):
        with pytest.raises(stagd.NotFound, match=rf"test_eager_async.py:{line}:"):
            bad.numpy()
    np.testing.assert_array_equal(ok.numpy(), [7.0])
    np.testing.assert_array_equal(k1.numpy(), [6.0])
    assert client.health() == "SERVING"


def test_daemon_refuses_a_wrong_inferred_shape_and_a_reused_id(client):
    pb2 = client.pb2
    x = stagd.constant([1.0, 2.0])
    client.sync()
    arg = pb2.Value(handle=pb2.TensorHandle(id=x._id))
    wrong = pb2.EagerBatchOp(op="neg", args=[arg], result_id="cpu#" + "1" * 32, dtype=5, shape=[3])
    taken = pb2.EagerBatchOp(op="neg", args=[arg], result_id=x._id, dtype=5, shape=[2])
    bad_id = pb2.EagerBatchOp(op="neg", args=[arg], result_id="vulkan:0#" + "2" * 32, dtype=5, shape=[2])
    dep = pb2.EagerBatchOp(op="neg", args=[pb2.Value(handle=pb2.TensorHandle(id="cpu#" + "1" * 32))],
                           result_id="cpu#" + "3" * 32, dtype=5, shape=[2])
    reply = client.call("EagerBatch", pb2.EagerBatchRequest(ops=[wrong, taken, bad_id, dep]))
    assert reply.ran == 0
    errs = {e.index: e for e in reply.errors}
    assert errs[0].code == 13 and "client inferred" in errs[0].message
    assert errs[1].code == 6 and "already in use" in errs[1].message
    assert errs[2].code == 3 and "not DEVICE#HEX for device cpu" in errs[2].message
    assert errs[3].cause == 0 and "uses the result of op 0" in errs[3].message
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])  # the taken id still names x


def test_causes_among_many_failures_in_one_batch(client):
    """A full batch where half the ops fail: each later op names the first failed result
    among its arguments (directly, or inside a tuple) as its cause, and the ops that use
    none of them run (the daemon finds failed ids by hash)."""
    pb2 = client.pb2
    x = stagd.constant([1.0, 2.0])
    client.sync()
    hx = pb2.Value(handle=pb2.TensorHandle(id=x._id))
    rid = [f"cpu#{i + 1:016x}{7 * i + 3:016x}" for i in range(4096)]
    gone = pb2.Value(handle=pb2.TensorHandle(id="cpu#" + "9" * 32))  # never existed: fails
    h = lambda i: pb2.Value(handle=pb2.TensorHandle(id=rid[i]))  # noqa: E731
    ops = [pb2.EagerBatchOp(op="neg", args=[gone], result_id=rid[i], dtype=5, shape=[2])
           for i in range(2048)]
    for i in range(2048, 4096):
        if i % 3 == 0:  # runs: x only
            args = [hx, hx]
        elif i % 3 == 1:  # fails: its first failed argument is op (i * 7) % 2048's
            args = [hx, h((i * 7) % 2048), h(5)]
        else:  # fails through a tuple, and through an op that failed in turn
            args = [pb2.Value(tuple=pb2.Tuple(items=[hx, h(i - 1)])), hx]
        ops.append(pb2.EagerBatchOp(op="+", args=args, result_id=rid[i], dtype=5, shape=[2]))
    reply = client.call("EagerBatch", pb2.EagerBatchRequest(ops=ops, release_ids=rid))
    errs = {e.index: e for e in reply.errors}
    for i in range(2048):
        assert errs[i].cause == i and errs[i].code == 5  # NotFound
    want_ran = 0
    for i in range(2048, 4096):
        if i % 3 == 0:
            assert i not in errs
            want_ran += 1
        elif i % 3 == 1:
            assert errs[i].cause == (i * 7) % 2048, i
        else:
            j = i - 1  # op i - 1's cause: its own (the first half) or its argument's
            assert errs[i].cause == (j if j < 2048 else (j * 7) % 2048), i
    assert reply.ran == want_ran


# --------------------------------------- a sync point carries the queued ops

def _calls(client, method):
    return {m.method: m.calls for m in client.stats().methods}.get(method, 0)


@pytest.fixture
def calls_not_queued(client):
    """Staged function calls made as Execute (as with a daemon without queued calls;
    test_eager_calls.py tests them queued): what carries the queued ops."""
    client._version_facts()
    client._eager_calls = False
    yield
    client._eager_calls = True


def test_fetch_and_execute_carry_the_queued_ops(client, calls_not_queued):
    """`.numpy()` and a stagd.function call after queued ops are one call each: the ops
    travel as the call's eager_first (no EagerBatch call), and results are the same."""
    @stagd.function
    def f(t):
        return t * 2.0 + 1.0

    x = stagd.constant(np.arange(4, dtype=np.float32))
    f(x)  # staged before counting
    # (no garbage collection while counting: tensors an earlier test left in reference
    # cycles would be released by a batch of their own at the Stats call's sync)
    gc.collect()
    gc.disable()
    try:
        client.sync()
        b0, f0, e0 = _calls(client, "EagerBatch"), _calls(client, "Fetch"), _calls(client, "Execute")
        y = stagd.exp(x) - 1.0
        got = y.numpy()
        z = y * 3.0
        r = f(z)
        b1, f1, e1 = _calls(client, "EagerBatch"), _calls(client, "Fetch"), _calls(client, "Execute")
    finally:
        gc.enable()
    assert (b1 - b0, f1 - f0, e1 - e0) == (0, 1, 1)
    stagd.set_eager_async(False)
    try:  # the same, one call per op
        want_y = stagd.exp(x) - 1.0
        want = [want_y.numpy(), f(want_y * 3.0).numpy()]
    finally:
        stagd.set_eager_async(True)
    np.testing.assert_array_equal(got, want[0])
    np.testing.assert_array_equal(r.numpy(), want[1])
    np.testing.assert_allclose(got, np.expm1(np.arange(4)), rtol=2e-7)


def test_a_failed_carried_op_stops_the_call(client, calls_not_queued):
    """When a carried op fails the daemon does not run the call: a staged update of a
    Variable is not applied, and the op's error is raised with its line."""
    v = stagd.Variable(np.zeros(2, np.float32))

    @stagd.function
    def bump(t):
        v.assign_add(t)
        return v.read_value()

    bump(stagd.constant([1.0, 1.0]))
    t = stagd.constant([1.0, 2.0])
    client.sync()
    client.call("Release", {"ids": [t._id]})
    u = t * 3.0; line = _line()  # noqa: E702
    with pytest.raises(stagd.NotFound, match=rf"test_eager_async.py:{line}: op '\*'"):
        bump(u)
    np.testing.assert_array_equal(v.numpy(), [1.0, 1.0])  # bump did not run
    ok = stagd.constant([2.0, 2.0]) + 1.0
    np.testing.assert_array_equal(bump(ok).numpy(), [4.0, 4.0])


def test_a_carried_calls_own_failure_is_the_plain_calls(client, calls_not_queued):
    """The call's own error (after its ops ran) is raised as the plain call raises it:
    same class, same message (with the staged code's location), and the ops' results
    are there."""
    @stagd.function
    def pick(t, i):
        return t[i]

    x = stagd.constant([1.0, 2.0, 3.0])
    pick(x, 0)
    client.sync()
    with pytest.raises(stagd.IndexOutOfBounds) as plain:
        pick(x, 7)
    y = x + 1.0
    assert len(queue(client).ops) == 1
    with pytest.raises(stagd.IndexOutOfBounds) as carried:
        pick(y, 7)
    assert str(carried.value) == str(plain.value) and carried.value.code == plain.value.code
    assert carried.value.reason == plain.value.reason
    np.testing.assert_array_equal(y.numpy(), [2.0, 3.0, 4.0])  # the carried op ran
    gone = x + 5.0
    client.sync()
    client.call("Release", {"ids": [gone._id]})
    z = x * 2.0
    with pytest.raises(stagd.NotFound, match="was released"):
        client.call("Fetch", {"ids": [gone._id, z._id]})
    np.testing.assert_array_equal(z.numpy(), [2.0, 4.0, 6.0])


def test_an_older_daemon_gets_the_ops_first(fresh_daemon):
    """Without Version's eager_first (an older daemon would drop the field) the ops go
    as their own EagerBatch first. (A daemon and client of its own: the daemon's call
    count must not see another batch — one releasing tensors an earlier test left in
    reference cycles, which a garbage collection frees at any moment.)"""
    previous = stagd._default_client
    c = stagd.Client(fresh_daemon.addr)
    stagd.set_default_client(c)
    try:
        x = stagd.constant([1.0, 2.0])
        c.sync()
        c._version_facts()
        c._eager_first = False
        b0 = _calls(c, "EagerBatch")
        y = x + 1.0
        np.testing.assert_array_equal(y.numpy(), [2.0, 3.0])
        assert _calls(c, "EagerBatch") == b0 + 1
    finally:
        stagd.set_default_client(previous)
        c.close()


def test_eager_first_on_the_wire(client):
    """The daemon's side: ops run before the call; a failed op skips the call (FAILED_
    PRECONDITION "not run", the status OK so that both replies arrive); a batch over the
    limit is the call's error and runs nothing."""
    pb2 = client.pb2
    x = stagd.constant([1.0, 2.0])
    client.sync()
    assert client.call("Version").eager_first
    hx = pb2.Value(handle=pb2.TensorHandle(id=x._id))
    rid = "cpu#" + "4" * 32
    op = pb2.EagerBatchOp(op="neg", args=[hx], result_id=rid, dtype=5, shape=[2])
    r = client.call("Fetch", pb2.FetchRequest(ids=[rid], eager_first=pb2.EagerBatchRequest(ops=[op])))
    assert r.eager_first.ran == 1 and not r.HasField("failed")
    assert np.frombuffer(r.values[0].tensor.data, np.float32).tolist() == [-1.0, -2.0]
    bad = pb2.EagerBatchOp(op="neg", args=[pb2.Value(handle=pb2.TensorHandle(id="cpu#" + "5" * 32))],
                           result_id="cpu#" + "6" * 32, dtype=5, shape=[2])
    r = client.call("Fetch", pb2.FetchRequest(ids=[rid], eager_first=pb2.EagerBatchRequest(
        ops=[op, bad], release_ids=[rid])))
    assert r.eager_first.ran == 0 and [e.index for e in r.eager_first.errors] == [0, 1]  # rid in use
    assert r.failed.code == 9 and "not run: op 0" in r.failed.message and not r.values
    with pytest.raises(stagd.InvalidArgument, match="at most 4096"):
        client.call("Fetch", pb2.FetchRequest(ids=[x._id], eager_first=pb2.EagerBatchRequest(
            ops=[bad] * 4097)))
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


# ------------------------------------------------------------------ sync points

def test_every_sync_point_flushes(client, tmp_path):
    q = queue(client)
    x = stagd.constant([[1.5, 2.0], [3.0, 4.0]])
    v = stagd.Variable([1.0, 2.0])

    @stagd.function
    def double(t):
        return t * 2.0

    points = {
        "numpy": lambda t: t.numpy(), "bool": lambda t: bool(t[0, 0] > 0.0),
        "float": lambda t: float(t[0, 0]), "int": lambda t: int(stagd.cast(t[0, 0], "int32")),
        "item": lambda t: t[0, 0].item(), "repr": repr, "str": str,
        "function": lambda t: double(t), "variable fetch": lambda t: v.numpy(),
        "release": lambda t: stagd.flush_releases(client), "sync": lambda t: client.sync(),
    }
    for name, point in points.items():
        stagd.flush_releases(client)  # (64 released handles send a Release: a sync point)
        t = x + 1.0
        v.assign_add([1.0, 1.0])
        assert len(q.ops) >= 2, name
        point(t)
        assert not q.ops, name
    ckpt = stagd.Checkpoint(v=v)
    v.assign_add([1.0, 1.0])
    ckpt.save(str(tmp_path / "ck"))
    assert not q.ops
    np.testing.assert_array_equal(v.numpy(), [13.0, 14.0])


def test_session_end_runs_the_queued_ops(daemon):
    c = stagd.Client(daemon.addr)
    x = stagd.tensor._put_array(c, np.ones(2, np.float32), "cpu")
    y = x + 1.0
    assert len(stagd.eager_queue.queue_of(c).ops) == 1
    assert c.end_session() >= 2  # x and y, which existed
    assert not stagd.eager_queue.queue_of(c).ops
    c.close()


def test_more_ops_than_the_queue_bound(client):
    q = queue(client)
    before = q.batches
    x = stagd.constant(np.zeros(3, np.float32))
    n = q.bound * 3 + 7
    for _ in range(n):
        x = x + 1.0
    assert q.batches - before >= 3  # flushed by the bound, without a sync point
    np.testing.assert_array_equal(x.numpy(), np.full(3, n, np.float32))


def test_two_threads_share_one_client(client):
    v = stagd.Variable(0.0)
    out, errors = {}, []

    def work(k):
        try:
            t = stagd.constant(np.full(4, k, np.float32))
            for _ in range(300):
                t = t * 1.0 + 1.0
                v.assign_add(1.0)
            out[k] = t.numpy()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in (10, 20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    np.testing.assert_array_equal(out[10], np.full(4, 310, np.float32))
    np.testing.assert_array_equal(out[20], np.full(4, 320, np.float32))
    assert float(v.numpy()) == 600.0


def test_result_ids_are_distinct_and_not_shared_with_a_forked_child():
    """Ids come from random bytes drawn 4 KiB at a time: every one distinct, and a
    forked child draws its own (it would otherwise take the parent's next ids)."""
    import os
    new_id = stagd.eager_queue.new_id
    ids = [new_id("cpu") for _ in range(1000)]
    assert len(set(ids)) == len(ids) and all(i.startswith("cpu#") and len(i) == 36 for i in ids)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(w, new_id("cpu").encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    child = os.read(r, 100).decode()
    os.close(r)
    assert child != new_id("cpu") and child not in ids
