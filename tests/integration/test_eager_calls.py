# SPDX-License-Identifier: Apache-2.0
# Queued calls of staged graphs (docs/client.md "Asynchronous eager", EagerBatchOp.call):
# a GradientTape's gradient goes in the eager queue with the step's ops, so a training
# step sends nothing until a value is needed. Gradients equal the synchronous ones bit for
# bit; the daemon checks every result against the dtype and shape the client declared and
# stores all of them or none; a graph the daemon dropped is staged again from the
# program sent along; failures are located at the user's line and stop the updates that
# use them; a daemon without queued calls gets an Execute.
import numpy as np
import pytest

import stagd
import stagd.eager_queue
from stagd import _wire


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


def _calls(client, method):
    return {m.method: m.calls for m in client.stats().methods}.get(method, 0)


def _line():
    import sys
    return sys._getframe(1).f_lineno


def _mlp(steps, sync_each=False):
    """SGD steps of a small MLP (tape gradients, Variable updates): the weights after."""
    rng = np.random.default_rng(1)
    x = stagd.constant(rng.standard_normal((8, 6)).astype(np.float32))
    y = stagd.constant(rng.standard_normal((8, 3)).astype(np.float32))
    params = [stagd.Variable(rng.standard_normal((6, 5)).astype(np.float32)),
              stagd.Variable(np.zeros(5, np.float32)),
              stagd.Variable(rng.standard_normal((5, 3)).astype(np.float32))]
    for _ in range(steps):
        w1, b1, w2 = params
        with stagd.GradientTape() as tape:
            d = stagd.tanh(x @ w1 + b1) @ w2 - y
            loss = stagd.reduce_mean(d * d)
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(g * 0.05)
        if sync_each:
            loss.numpy()
    return [p.numpy() for p in params]


def test_training_steps_send_no_call_until_a_value_is_needed(client):
    _mlp(1)  # stages the gradient
    e0, b0 = _calls(client, "Execute"), _calls(client, "EagerBatch")
    got = _mlp(20)  # 20 steps: no Execute; the ops go in EagerBatch calls of 256
    assert _calls(client, "Execute") == e0
    assert _calls(client, "EagerBatch") - b0 <= 5
    stagd.set_eager_async(False)
    try:
        want = _mlp(20)  # one EagerOp per op, an Execute per gradient
    finally:
        stagd.set_eager_async(True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(_mlp(5, sync_each=True), _mlp(5)):
        np.testing.assert_array_equal(g, w)


def _grads(f, sources):
    with stagd.GradientTape(persistent=True) as t:
        y = f()
    return [None if g is None else (g.shape, g.dtype, g.numpy()) for g in t.gradient(y, sources)]


def test_gradients_of_every_kind_equal_the_synchronous_ones(client):
    """Tuples, a gradient the optimizer folds to a number (a 0-d source), a source the
    target does not depend on, float64, a broadcast bias, grad of grad."""
    x = stagd.Variable(np.arange(3, dtype=np.float32))
    s = stagd.Variable(np.float32(2.0))
    d = stagd.Variable(np.array([[0.5, -1.0]], np.float64))
    b = stagd.Variable(np.ones(2, np.float64))
    cases = [
        (lambda: stagd.reduce_sum(x * 3.0), [x, s]),
        (lambda: s * 5.0 + stagd.reduce_sum(x), [x, s]),
        (lambda: s * s, [s]),
        (lambda: stagd.reduce_sum(stagd.tanh(d + b) * d), [d, b]),
        (lambda: stagd.reduce_mean(x) * s, [s, x]),
    ]
    for f, src in cases:
        got = _grads(f, src)
        stagd.set_eager_async(False)
        try:
            want = _grads(f, src)
        finally:
            stagd.set_eager_async(True)
        assert [g and g[:2] for g in got] == [w and w[:2] for w in want]
        for g, w in zip(got, want):
            if w is not None:
                np.testing.assert_array_equal(g[2], w[2])
    v = stagd.Variable(np.float32(1.5))
    with stagd.GradientTape() as outer:
        with stagd.GradientTape() as inner:
            y = v * v * v
        dy = inner.gradient(y, v)  # queued, and recorded on the outer tape
    assert float(outer.gradient(dy, v)) == 6 * 1.5


def test_a_failed_call_is_raised_at_its_line_and_stops_the_updates(client, monkeypatch):
    """A call whose declared result is wrong fails at the daemon (nothing stored): the
    next sync raises it with the line of tape.gradient, its results are never read, and
    the updates that use them are not applied."""
    w = stagd.Variable(np.ones((2, 2), np.float32))
    x = stagd.constant(np.eye(2, dtype=np.float32))
    with stagd.GradientTape() as tape:
        loss = stagd.reduce_sum(x @ w)
    real = _wire.batch_call  # the call's encoding, declaring a float32 (3,) result
    monkeypatch.setattr(_wire, "batch_call",
                        lambda args, dev, head, results: real(args, dev, head, [(results[0][0], 5, (3,))]))
    g = tape.gradient(loss, w); line = _line()  # noqa: E702
    monkeypatch.undo()
    w.assign_sub(g * 0.5)
    later = stagd.constant([1.0]) + 1.0  # does not use g: runs
    with pytest.raises(stagd.Internal, match=rf"test_eager_calls.py:{line}: call result 0: the client inferred a "
                       r"float32 tensor of shape \(3,\), the graph returned a float32 tensor of shape \(2, 2\)"):
        client.sync()
    np.testing.assert_array_equal(w.numpy(), np.ones((2, 2), np.float32))  # not applied
    np.testing.assert_array_equal(later.numpy(), [2.0])
    for t in (g, g * 2.0):
        with pytest.raises(stagd.Internal, match=rf"test_eager_calls.py:{line}:"):
            t.numpy()


def test_a_call_on_a_failed_ops_result_fails_with_it(client):
    t = stagd.constant([1.0, 2.0])
    client.sync()
    client.call("Release", {"ids": [t._id]})
    w = stagd.Variable(np.ones(2, np.float32))
    with stagd.GradientTape() as tape:
        u = t * 3.0; line = _line()  # noqa: E702
        loss = stagd.reduce_sum(u * w)
    g = tape.gradient(loss, w)
    w.assign_sub(g)
    with pytest.raises(stagd.NotFound, match=rf"test_eager_calls.py:{line}: op '\*'"):
        g.numpy()
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])


def test_an_older_daemon_gets_an_execute(client):
    w = stagd.Variable(np.full(3, 2.0, np.float32))

    def grad():
        with stagd.GradientTape() as tape:
            loss = stagd.reduce_sum(w * w)
        return tape.gradient(loss, w)

    want = grad().numpy()
    client._version_facts()
    client._eager_calls = False  # as a daemon without EagerBatchOp.call says
    try:
        e0 = _calls(client, "Execute")
        got = grad()
        assert _calls(client, "Execute") == e0 + 1
    finally:
        client._eager_calls = True
    np.testing.assert_array_equal(got.numpy(), want)


def test_a_graph_the_daemon_dropped_is_staged_again(client):
    """The daemon keeps the 1024 most recent graphs: after 1024 others, the tape's graph
    id is stale in the client; the queued call stages the program it carries."""
    w = stagd.Variable(np.array([1.0, -2.0], np.float32))

    def grad():
        with stagd.GradientTape() as tape:
            loss = stagd.reduce_sum(stagd.tanh(w) * w)
        return tape.gradient(loss, w).numpy()

    want = grad()
    for k in range(1030):
        client.call("Stage", {"sexpr": f"(def f{k} (x) (+ x {k}))", "entry": f"f{k}"})
    np.testing.assert_array_equal(grad(), want)


# ------------------------------------------------------------------ the wire

def _stage(client, text, entry):
    return client.call("Stage", {"sexpr": text, "entry": entry}).graph_id


def _op(pb2, args, graph_id="", sexpr="", entry="", results=(), **kw):
    return pb2.EagerBatchOp(args=args, call=pb2.EagerCall(
        graph_id=graph_id, sexpr=sexpr, entry=entry,
        results=[pb2.TensorHandle(id=i, dtype=d, shape=s) for i, d, s in results]), **kw)


def _ids(n):
    return [stagd.eager_queue.new_id("cpu") for _ in range(n)]


def _fetch(client, ids):
    r = client.call("Fetch", {"ids": ids})
    return [np.frombuffer(v.tensor.data, np.float32).reshape(tuple(v.tensor.shape)) for v in r.values]


def test_the_daemon_checks_and_stores_all_results_or_none(client, pb2):
    prog = "(def pair (x) (tuple (* x 2.0) (neg x)))"
    gid = _stage(client, prog, "pair")
    x = stagd.constant([1.0, 3.0])
    client.sync()
    hx = pb2.Value(handle=pb2.TensorHandle(id=x._id))
    ok = _ids(2)
    r = client.call("EagerBatch", pb2.EagerBatchRequest(ops=[_op(pb2, [hx], gid, results=[
        (ok[0], 5, [2]), (ok[1], 5, [2])])]))
    assert r.ran == 1 and not r.errors
    a, b = _fetch(client, ok)
    assert a.tolist() == [2.0, 6.0] and b.tolist() == [-1.0, -3.0]
    bad = _ids(2)
    for results, code, text in [
            ([(bad[0], 5, [2]), (bad[1], 6, [2])], 13, "call result 1: the client inferred a float64 tensor of shape (2,), the graph returned a float32"),
            ([(bad[0], 5, [2]), (bad[1], 5, [3])], 13, "call result 1: the client inferred"),
            ([(bad[0], 5, [2])], 13, "the call declared 1 results"),
            ([], 3, "declares 0 results")]:
        r = client.call("EagerBatch", pb2.EagerBatchRequest(ops=[_op(pb2, [hx], gid, results=results)]))
        assert r.ran == 0 and r.errors[0].code == code and text in r.errors[0].message, r
        with pytest.raises(stagd.NotFound):  # the first result, correct, was not stored either
            client.call("Fetch", {"ids": [bad[0]]})
    hb = pb2.Value(handle=pb2.TensorHandle(id=bad[1]))
    r = client.call("EagerBatch", pb2.EagerBatchRequest(ops=[
        _op(pb2, [hx], gid, results=[(bad[0], 5, [2]), (bad[1], 6, [2])]),
        pb2.EagerBatchOp(op="neg", args=[hb], result_id=_ids(1)[0], dtype=5, shape=[2]),
        _op(pb2, [hb], gid, results=[(_ids(1)[0], 5, [2]), (_ids(1)[0], 5, [2])]),
        _op(pb2, [hx], gid, results=[(i, 5, [2]) for i in _ids(2)])]))  # does not use them: runs
    assert r.ran == 1 and [(e.index, e.cause) for e in r.errors] == [(0, 0), (1, 0), (2, 0)]
    assert "op 'neg' uses the result of op 0" in r.errors[1].message
    assert "op 'call' uses the result of op 0" in r.errors[2].message


def test_a_number_result_fills_the_declared_shape(client, pb2):
    gid = _stage(client, "(def k (x) 2.5)", "k")
    ids = _ids(2)
    zero = stagd.constant([0.0])
    h = pb2.Value(handle=pb2.TensorHandle(id=zero._id))
    client.sync()
    r = client.call("EagerBatch", pb2.EagerBatchRequest(ops=[
        _op(pb2, [h], gid, results=[(ids[0], 5, [2, 3])]), _op(pb2, [h], gid, results=[(ids[1], 6, [])])]))
    assert r.ran == 2, r
    got = client.call("Fetch", {"ids": ids}).values
    assert np.frombuffer(got[0].tensor.data, np.float32).tolist() == [2.5] * 6
    assert list(got[0].tensor.shape) == [2, 3]
    assert got[1].tensor.dtype == 6 and np.frombuffer(got[1].tensor.data, np.float64).tolist() == [2.5]


def test_a_call_stages_the_program_it_carries(client, pb2, fresh_daemon):
    """A graph id this daemon never staged, with its program: staged and run; a program
    that stages under another id, or a call with neither, is refused."""
    prog, entry = "(def sq (x) (* x x))", "sq"
    gid = _stage(client, prog, entry)  # the id from the module's daemon
    other = stagd.Client(fresh_daemon.addr)
    try:
        x = other.call("Put", pb2.PutRequest(value=pb2.Value(tensor=pb2.Tensor(
            dtype=5, shape=[2], data=np.float32([3, 4]).tobytes()))))
        hx = pb2.Value(handle=pb2.TensorHandle(id=x.result.handle.id))
        out = _ids(1)
        with pytest.raises(stagd.NotFound, match="no staged graph"):
            other.call("Execute", {"graph_id": gid})
        r = other.call("EagerBatch", pb2.EagerBatchRequest(ops=[
            _op(pb2, [hx], gid, prog, entry, results=[(out[0], 5, [2])])]))
        assert r.ran == 1, r
        assert _fetch(other, out)[0].tolist() == [9.0, 16.0]
        cases = [(_op(pb2, [hx], "g" + "1" * 16, prog, entry, results=[(_ids(1)[0], 5, [2])]),
                  3, f"the call's sexpr stages as graph '{gid}', not its graph_id"),
                 (_op(pb2, [hx], "g" + "0" * 16, results=[(_ids(1)[0], 5, [2])]), 5, "no staged graph"),
                 (_op(pb2, [hx], results=[(_ids(1)[0], 5, [2])]), 3, "needs a graph_id"),
                 (_op(pb2, [hx], gid, results=[(_ids(1)[0], 5, [2])], op="neg"), 3, "names no op")]
        for op, code, text in cases:
            r = other.call("EagerBatch", pb2.EagerBatchRequest(ops=[op]))
            assert r.ran == 0 and r.errors[0].code == code and text in r.errors[0].message, r
        assert other.call("Version").eager_calls
    finally:
        other.close()


def test_call_bytes_equal_protobufs(pb2):
    head = _wire.call_head("g0123", "(def f (x) x)", "f")
    rid = "cpu#" + "a" * 32
    got = _wire.batch_call([_wire.arg_of_handle(rid), _wire.arg_of_scalar(2.5)], "cpu", head,
                           [(rid, 5, (2, 300)), (rid, 0, ())])
    want = pb2.EagerBatchRequest(ops=[pb2.EagerBatchOp(
        args=[pb2.Value(handle=pb2.TensorHandle(id=rid)), pb2.Value(float_value=2.5)], device="cpu",
        call=pb2.EagerCall(graph_id="g0123", sexpr="(def f (x) x)", entry="f", results=[
            pb2.TensorHandle(id=rid, dtype=5, shape=[2, 300]), pb2.TensorHandle(id=rid)]))])
    assert got == want.SerializeToString()


# ------------------------------------------------------- queued stagd.function calls

def _training_fn():
    rng = np.random.default_rng(4)
    x = stagd.constant(rng.standard_normal((8, 6)).astype(np.float32))
    w = stagd.Variable(rng.standard_normal((6, 3)).astype(np.float32))

    @stagd.function
    def step(x):
        with stagd.GradientTape() as tape:
            h = x @ w
            loss = stagd.reduce_mean(h * h)
        w.assign_sub(tape.gradient(loss, w) * 0.1)
        return loss, h

    return step, x, w


def test_function_calls_after_the_first_are_queued(client):
    step, x, w = _training_fn()
    e0 = _calls(client, "Execute")
    first = step(x)
    assert _calls(client, "Execute") == e0 + 1  # the first call learns the results' kind
    outs = [step(x) for _ in range(20)]
    assert type(outs[0][0]).__name__ == "_LazyTensor"  # dtype and shape not known yet
    assert _calls(client, "Execute") == e0 + 1  # (Stats is a sync point: now they are)
    got = [float(o[0]) for o in outs], outs[-1][1].numpy(), w.numpy()
    assert type(outs[0][0]) is stagd.Tensor and outs[0][0].shape == () and outs[0][1].shape == (8, 3)
    stagd.set_eager_async(False)
    try:
        step2, x2, w2 = _training_fn()
        step2(x2)
        outs2 = [step2(x2) for _ in range(20)]
        want = [float(o[0]) for o in outs2], outs2[-1][1].numpy(), w2.numpy()
    finally:
        stagd.set_eager_async(True)
    assert got[0] == want[0] and first[0].dtype == outs[0][0].dtype == "float32"
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])
    lazy = step(x)[1]
    assert (lazy * 2.0).shape == (8, 3)  # an op on it first learns its shape (a sync)
    assert type(lazy) is stagd.Tensor


def test_a_queued_calls_failure_is_raised_as_the_synchronous_call_raises_it(client):
    @stagd.function
    def check(x):
        if stagd.reduce_sum(x) > 100.0:
            raise ValueError("too big")
        return x * 2.0

    small, big = stagd.constant([1.0, 2.0]), stagd.constant([100.0, 2.0])
    check(small)  # learns
    stagd.set_eager_async(False)
    try:
        with pytest.raises(ValueError) as sync_err:
            check(big)
    finally:
        stagd.set_eager_async(True)
    r = check(big)  # queued: raised at the next sync
    ok = check(small)
    with pytest.raises(ValueError) as async_err:
        client.sync()
    assert str(async_err.value) == str(sync_err.value) == "too big"
    assert async_err.value.__notes__ == sync_err.value.__notes__
    assert ok.numpy().tolist() == [2.0, 4.0]
    for read in (lambda: r.numpy(), lambda: r + 1.0, lambda: r.shape):
        with pytest.raises(ValueError, match="too big"):
            read()


def test_what_is_not_queued(client, capsys):
    """A function that prints (its output would have nowhere to go), returns a number
    or a Variable, is called under a tape or on another device: an Execute each call."""
    @stagd.function
    def shows(x):
        print("x is", x)
        return x + 1.0

    @stagd.function
    def number(x):
        return 3

    @stagd.function
    def plain(x):
        return x * 3.0

    x = stagd.constant([1.0, 2.0])
    for f in (shows, number):
        f(x)
        e0 = _calls(client, "Execute")
        f(x)
        f(x)
        assert _calls(client, "Execute") == e0 + 2, f
    assert capsys.readouterr().out.count("x is [1. 2.]") == 3
    plain(x)
    e0 = _calls(client, "Execute")
    with stagd.GradientTape() as tape:
        tape.watch(x)
        y = stagd.reduce_sum(plain(x))  # recorded on the tape: a call now
    assert _calls(client, "Execute") == e0 + 1
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 3.0]
    plain(x)
    assert _calls(client, "Execute") == e0 + 1  # queued again


def test_lazy_results_of_a_failed_call_are_never_read(client):
    @stagd.function
    def halve(x):
        return x / 2.0

    x = stagd.constant([2.0, 4.0])
    halve(x)
    client.sync()
    client.call("Release", {"ids": [x._id]})
    r = halve(x); line = _line()  # noqa: E702
    with pytest.raises(stagd.NotFound, match=rf"test_eager_calls.py:{line}:"):
        r.shape
    with pytest.raises(stagd.NotFound, match=rf"test_eager_calls.py:{line}:"):
        r.numpy()


def test_execute_says_when_inference_proves_the_result_tensors(client, pb2):
    """ExecuteReply.result_tensors: what lets the client queue later calls. Variables are
    typed by their values, and an assign that could change a variable's type, a result
    that may be a number, or a number itself, say no."""
    x = stagd.constant([1.0, 2.0, 3.0])
    hx = pb2.Value(handle=pb2.TensorHandle(id=x._id))
    cases = [
        ("(def f (v x) (* x 2.0))", True),
        ("(def f (v x) (tuple x (* (read v) x)))", True),
        ("(def f (v x) (begin (assign_add v x) (assign_sub v 1.0) (read v)))", True),
        ("(def f (v x) (begin (assign v (* x 2.0)) (read v)))", True),
        ("(def f (v x) (if (> (sum x) 0.0) x 1.0))", False),
        ("(def f (v x) (begin (assign v (ones (tuple 5) \"float32\")) (* (read v) 1.0)))", False),
        ("(def f (v x) (begin (assign_add v (cast x \"float64\")) (read v)))", False),
        ("(def f (v x) (+ 1 2))", False),
        ("(def f (v x) v)", False),
        ("(def f (v x) (begin (assign_add v 2) (read v)))", True, np.int32),
        ("(def f (v x) (begin (assign_add v 1.5) (read v)))", False, np.int32),  # becomes float
    ]
    for text, want, *dtype in cases:
        v = stagd.Variable(np.ones(3, *dtype or [np.float32]))  # a fresh one each: some change its type
        client.sync()
        hv = pb2.Value(handle=pb2.TensorHandle(id=v._id))
        gid = _stage(client, text, "f")
        r = client.call("Execute", pb2.ExecuteRequest(graph_id=gid, args=[hv, hx], return_handles=True))
        assert r.result_tensors is want, text
