# SPDX-License-Identifier: Apache-2.0
# All-or-nothing Variable updates (JANUS §4.3; docs/graph.md "Variables: all or
# nothing"), through the Python client against a real daemon, on the CPU and on
# vulkan:0 (lavapipe without a GPU): a staged call that fails after updating
# Variables — an index out of range, a failed assertion, a deadline — leaves every
# Variable as it was; a call that succeeds publishes all of its updates; concurrent
# calls never see half of another call's updates and lose no increment; a call the
# client cancels mid-loop changes nothing (issue 24 D4).
import re
import threading
import time

import grpc
import numpy as np
import pytest

import stagd


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


DEVICES = ["cpu", "vulkan:0"]
CANCELLED_EXECUTE = re.compile(r"Execute.*CANCELLED|CANCELLED.*Execute")


@pytest.mark.parametrize("dev", DEVICES)
def test_a_failing_step_leaves_every_variable_as_it_was(dev, client):
    """The issue's case: two assign_adds, then an index out of range."""
    with stagd.device(dev):
        total = stagd.Variable(np.zeros(3, np.float32))
        steps = stagd.Variable(0.0)

        @stagd.function
        def step(x, i):
            total.assign_add(x)
            steps.assign_add(1.0)
            return x[i]

        x = stagd.constant(np.array([1.0, 2.0, 3.0], np.float32))
        assert float(step(x, stagd.constant(2))) == 3.0
        assert total.numpy().tolist() == [1.0, 2.0, 3.0] and float(steps.numpy()) == 1.0
        with pytest.raises(stagd.StagdError, match="out of|bounds|range"):
            step(x, stagd.constant(7))
            client.sync()  # (on the CPU the call is queued: its failure comes at a sync point)
        assert total.numpy().tolist() == [1.0, 2.0, 3.0]
        assert float(steps.numpy()) == 1.0
        assert float(step(x, stagd.constant(0))) == 1.0  # and the next call commits again
        assert total.numpy().tolist() == [2.0, 4.0, 6.0] and float(steps.numpy()) == 2.0


@pytest.mark.parametrize("dev", DEVICES)
def test_a_failed_assertion_after_updates_changes_nothing(dev):
    with stagd.device(dev):
        w = stagd.Variable(np.ones((2, 2), np.float32))
        seen = stagd.Variable(0.0)

        @stagd.function
        def guarded(g):
            w.assign(w.read_value() - g)
            seen.assign_add(1.0)
            assert stagd.reduce_sum(w.read_value()) > 0.0, "w is no longer positive"
            return w.read_value()

        np.testing.assert_array_equal(guarded(np.full((2, 2), 0.5, np.float32)).numpy(), 0.5)
        with pytest.raises(stagd.AssertionFailed, match="w is no longer positive"):
            guarded(np.full((2, 2), 5.0, np.float32))
        np.testing.assert_array_equal(w.numpy(), 0.5)
        assert float(seen.numpy()) == 1.0


def _spinner(v):
    """A staged loop that adds one to v per iteration, run once for 3 (v: 5 → 8)."""
    @stagd.function
    def spin(n):
        i = stagd.constant(0)
        while i < n:
            v.assign_add(1.0)
            i += 1
        return i

    assert int(spin(stagd.constant(3))) == 3 and float(v.numpy()) == 8.0
    return spin


@pytest.mark.parametrize("dev", DEVICES)
def test_a_deadline_in_a_loop_that_assigns_changes_nothing(client, dev):
    with stagd.device(dev):
        v = stagd.Variable(np.float32(5.0))
        spin = _spinner(v)
        before = client.timeout
        client.timeout = 0.5  # the call's gRPC deadline, which the daemon's executor checks
        try:
            with pytest.raises(stagd.DeadlineExceeded):
                spin(stagd.constant(10**12))
        finally:
            client.timeout = before
        assert float(v.numpy()) == 8.0


@pytest.mark.parametrize("dev", DEVICES)
def test_concurrent_calls_see_whole_updates_and_lose_none(dev):
    """Movers take one from b and give it to a; checkers read a + b. No checker sees
    half a move, and every move lands."""
    with stagd.device(dev):
        a = stagd.Variable(np.full(8, 10.0, np.float32))
        b = stagd.Variable(np.full(8, 20.0, np.float32))

        @stagd.function
        def move():
            a.assign_add(np.ones(8, np.float32))
            b.assign_add(-np.ones(8, np.float32))

        @stagd.function
        def total():
            return a.read_value() + b.read_value()

        move()
        np.testing.assert_array_equal(total().numpy(), 30.0)
        errors, torn = [], []

        def worker(k):
            try:
                for _ in range(40):
                    if k % 2 == 0:
                        move()
                    else:
                        s = total().numpy()
                        if not (s == 30.0).all():
                            torn.append(s)
            except Exception as e:  # noqa: BLE001 — reported by the assertion below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert not torn, torn[:3]
        np.testing.assert_array_equal(a.numpy(), 11.0 + 80)
        np.testing.assert_array_equal(b.numpy(), 19.0 - 80)


def _cancelling_execute(client, after_s):
    """Makes client's Execute calls cancel themselves after after_s seconds."""
    plain = client.call

    def call(name, request=None, timeout=None):
        if name != "Execute":
            return plain(name, request, timeout)
        path, req_cls, reply_cls = client._methods[name]
        stub = client._channel.unary_unary(path, request_serializer=req_cls.SerializeToString,
                                           response_deserializer=reply_cls.FromString)
        fut = stub.future(request, metadata=client._metadata)
        time.sleep(after_s)
        fut.cancel()
        try:
            return fut.result()
        except grpc.FutureCancelledError:
            raise stagd.StagdError("cancelled", None) from None
    return call


@pytest.mark.parametrize("dev", DEVICES)
def test_all_or_nothing_under_cancellation(client, daemon, dev):
    """Issue 22/24: a looping call the client cancels leaves its Variable as it was."""
    with stagd.device(dev):
        v = stagd.Variable(np.float32(5.0))
        spin = _spinner(v)
        cancelled_before = len(daemon.log.wait_for(CANCELLED_EXECUTE, 0))
        plain = client.call
        client.call = _cancelling_execute(client, 0.5)
        try:
            with pytest.raises(stagd.StagdError):
                spin(stagd.constant(10**12))
        finally:
            client.call = plain
        assert len(daemon.log.wait_for(CANCELLED_EXECUTE, 10, cancelled_before + 1)) > cancelled_before
        assert float(v.numpy()) == 8.0  # none of the cancelled call's updates
        assert int(spin(stagd.constant(2))) == 2 and float(v.numpy()) == 10.0
