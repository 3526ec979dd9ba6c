# SPDX-License-Identifier: Apache-2.0
# Device-resident eager tensors on vulkan:0 (Mesa lavapipe on machines without a GPU;
# docs/client.md "Device-resident tensors"): the Stats RPC's transfer counters prove
# that Put uploads once, eager ops and staged calls on resident handles copy nothing,
# Fetch downloads once; concurrent readers, variables, the handle limit counting device
# bytes, and a device allocation failure that leaves the daemon serving.
import gc
import threading

import numpy as np
import pytest

import stagd

DEV = "vulkan:0"


@pytest.fixture(scope="module", autouse=True)
def client(default_client):
    return default_client


class Traffic:
    """Host <-> device copies since construction (Stats deltas)."""

    FIELDS = ("device_uploads", "device_downloads", "device_upload_bytes", "device_download_bytes")

    def __init__(self, client):
        self.c = client
        self.start = self._now()

    def _now(self):
        s = self.c.stats()
        return {f: getattr(s, f) for f in self.FIELDS}

    def __call__(self):
        now = self._now()
        return {f[len("device_"):]: now[f] - self.start[f] for f in self.FIELDS}


def resident_bytes(client):
    gc.collect()
    stagd.flush_releases()
    return client.stats().resident_bytes


def serving(client):
    assert client.health() == "SERVING"
    with stagd.device(DEV):
        assert (stagd.constant(2.0) * stagd.constant(21.0)).numpy() == 42.0


def chain(a, b, np_mode=False):
    """Ten elementwise ops on two tensors, no Python numbers (those are uploads)."""
    tanh, exp, relu = (np.tanh, np.exp, lambda x: np.maximum(x, 0)) if np_mode else \
        (stagd.tanh, stagd.exp, stagd.relu)
    x = a * b
    x = x + a
    x = tanh(x)
    x = x - b
    x = relu(x)
    x = x * x
    x = x + b
    x = exp(x)
    x = x / b
    return x * a


def test_eager_chain_uploads_each_input_once_and_downloads_once(client):
    a_np = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b_np = np.linspace(0.5, 3, 12, dtype=np.float32).reshape(3, 4)
    before = resident_bytes(client)
    t = Traffic(client)
    with stagd.device(DEV):
        a, b = stagd.constant(a_np), stagd.constant(b_np)
        assert t() == {"uploads": 2, "downloads": 0, "upload_bytes": 96, "download_bytes": 0}
        x = chain(a, b)
        assert x.device == DEV and x.shape == (3, 4)
        assert t() == {"uploads": 2, "downloads": 0, "upload_bytes": 96, "download_bytes": 0}
        np.testing.assert_allclose(x.numpy(), chain(a_np, b_np, True), rtol=1e-5, atol=1e-6)
        assert t() == {"uploads": 2, "downloads": 1, "upload_bytes": 96, "download_bytes": 48}
        # the daemon caches the host copy: a second Fetch (not the client's cache) is free
        again = client.call("Fetch", {"ids": [x._id]}).values[0].tensor
        assert np.frombuffer(again.data, np.float32).tolist() == x.numpy().ravel().tolist()
        # Put's source is the host copy of an uploaded tensor: fetching it is free too
        np.testing.assert_array_equal(a.numpy(), a_np)
        assert t()["downloads"] == 1
        assert client.stats().resident_bytes >= before + 3 * 48
    del a, b, x
    assert resident_bytes(client) == before  # released handles free their device memory


def test_staged_call_on_resident_handles_uploads_nothing(client):
    f = stagd.function(step)
    a_np = np.arange(6, dtype=np.float32).reshape(2, 3)
    with stagd.device(DEV):
        a, w = stagd.constant(a_np), stagd.constant(np.full((3, 3), 0.5, np.float32))
        f(a, w)  # the first call traces and stages
        t = Traffic(client)
        r = f(a, w)
        assert r.device == DEV
        assert t() == {"uploads": 0, "downloads": 0, "upload_bytes": 0, "download_bytes": 0}
        r2 = f(r, w)  # a staged result feeds the next call without a copy
        assert t()["uploads"] == 0 and t()["downloads"] == 0
        want = step(step(a_np, np.full((3, 3), 0.5, np.float32), True), np.full((3, 3), 0.5, np.float32), True)
        np.testing.assert_allclose(r2.numpy(), want, rtol=1e-5)
        assert t()["downloads"] == 1
    # the same resident handles as arguments of a CPU call: host copies, same result
    with stagd.device("cpu"):
        np.testing.assert_allclose(f(r, w).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose((a + 1.0).numpy(), a_np + 1.0)


def test_staged_tuple_results_stay_on_the_device(client):
    """A staged call returning a tuple: its tensors are resident handles (tuples own
    device tensors; nothing is read back until the items are fetched)."""
    f = stagd.function(pair)
    a_np = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    w_np = np.full((3, 3), 0.25, np.float32)
    with stagd.device(DEV):
        a, w = stagd.constant(a_np), stagd.constant(w_np)
        f(a, w)  # the first call traces and stages
        t = Traffic(client)
        r1, r2 = f(a, w)
        assert r1.device == DEV and r2.device == DEV
        assert t() == {"uploads": 0, "downloads": 0, "upload_bytes": 0, "download_bytes": 0}
        w1, w2 = pair(a_np, w_np, True)
        np.testing.assert_allclose(r1.numpy(), w1, rtol=1e-5)
        np.testing.assert_allclose(r2.numpy(), w2, rtol=1e-5)
        assert t()["downloads"] == 2


def pair(x, w, np_mode=False):
    y = np.tanh(x @ w) if np_mode else stagd.tanh(stagd.matmul(x, w))
    return y + x, y * y


def step(x, w, np_mode=False):
    if np_mode:
        return np.tanh(x @ w) + x
    return stagd.tanh(stagd.matmul(x, w)) + x


def test_concurrent_reads_of_one_resident_tensor_from_threads(client):
    with stagd.device(DEV):
        base = stagd.constant(np.arange(64, dtype=np.float32).reshape(8, 8))
        x = stagd.tanh(base / stagd.constant(np.float32(16.0)))  # on the device, no host copy yet
    want = np.tanh(np.arange(64, dtype=np.float32).reshape(8, 8) / 16.0)
    t = Traffic(client)
    errors, results = [], []

    def reader(i):
        try:
            c = client  # one session (another session may not read its handles), many threads
            for _ in range(5):
                got = c.call("Fetch", {"ids": [x._id]}).values[0].tensor
                results.append(np.frombuffer(got.data, np.float32).reshape(8, 8))
                op = c.call("EagerOp", c.pb2.EagerOpRequest(
                    op="mul", device=DEV, args=[c.pb2.Value(handle=c.pb2.TensorHandle(id=x._id))] * 2))
                sq = c.call("Fetch", {"ids": [op.result.handle.id]}).values[0].tensor
                results.append(np.sqrt(np.frombuffer(sq.data, np.float32).reshape(8, 8)))
                c.call("Release", {"ids": [op.result.handle.id]})
        except Exception as e:  # noqa: BLE001 — reported below
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert len(results) == 80
    for r in results:
        np.testing.assert_allclose(np.abs(r), np.abs(want), rtol=1e-5, atol=1e-6)
    # x was downloaded once however many threads fetched it; each product once
    assert t()["uploads"] == 0 and t()["downloads"] == 1 + 40


def test_variables_on_vulkan_hold_resident_tensors(client):
    with stagd.device(DEV):
        v = stagd.Variable(np.zeros(4, np.float32))
        a = stagd.constant(np.arange(4, dtype=np.float32))
        t = Traffic(client)
        v.assign(a)
        v.assign_add(a)
        v.assign_add(a)
        v.assign_sub(a)  # (one assign_sub op, on the device)
        r = v.read_value()
        assert r.device == DEV and t()["uploads"] == 0 and t()["downloads"] == 0
        np.testing.assert_array_equal(v.numpy(), 2 * np.arange(4))
        assert t()["downloads"] == 1
        # assignments from threads while others read: every read sees a whole value
        vals = [stagd.constant(np.full(4, float(i), np.float32)) for i in range(4)]
        errors, seen = [], []

        def writer(i):
            try:
                for _ in range(10):
                    v.assign(vals[i])
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def reader():
            try:
                for _ in range(10):  # the variable's own session, from other threads
                    got = client.call("Fetch", {"ids": [v._id]}).values[0].tensor
                    seen.append(np.frombuffer(got.data, np.float32).copy())
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
        threads += [threading.Thread(target=reader) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors
        whole = [2 * np.arange(4)] + [np.full(4, float(i)) for i in range(4)]
        for s in seen:
            assert any(np.array_equal(s, w) for w in whole), s
        assert v.numpy()[0] in (0.0, 1.0, 2.0, 3.0)


def test_handle_limit_counts_device_bytes_and_refuses_before_upload(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--max-handle-bytes", "4096")
    with stagd.Client(d.addr) as c:
        def put(arr):
            return c.call("Put", c.pb2.PutRequest(value=stagd.tensor._np_value(c.pb2, arr),
                                                  device=DEV)).result.handle.id
        first = put(np.ones(600, np.float32))  # 2400 bytes
        t = Traffic(c)
        with pytest.raises(stagd.ResourceExhausted, match=r"vulkan:0 would exceed the handle memory limit of 4096"):
            put(np.ones(600, np.float32))
        assert t()["uploads"] == 0  # refused before any device memory was taken
        c.call("Release", {"ids": [first]})
        put(np.ones(600, np.float32))
        assert t()["uploads"] == 1
        assert c.health() == "SERVING"


def test_handles_on_vulkan_count_device_bytes(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--max-handle-bytes", "4096")
    with stagd.Client(d.addr) as c:
        def put(arr):
            return c.call("Put", c.pb2.PutRequest(value=stagd.tensor._np_value(c.pb2, arr),
                                                  device=DEV)).result.handle.id
        put(np.array([True, False, True]))  # 3 host bytes, one 32-bit word on the device
        assert c.call("Release", {"ids": []}).live_bytes == 4
        x = put(np.ones(1000, np.float32))
        assert c.stats().resident_bytes == 4004
        req = c.pb2.EagerOpRequest(op="add", device=DEV, args=[c.pb2.Value(handle=c.pb2.TensorHandle(id=x))] * 2)
        with pytest.raises(stagd.ResourceExhausted, match=r"a 4000-byte tensor on vulkan:0 would exceed"):
            c.call("EagerOp", req)
        assert c.stats().resident_bytes == 4004  # the refused result's device memory went back
        assert c.health() == "SERVING"


def test_device_allocation_failure_names_the_device_and_the_daemon_keeps_serving(client):
    with stagd.device(DEV):
        # 256 MiB: more than lavapipe's largest buffer (128 MiB); a real GPU's
        # out-of-memory takes the same path (RESOURCE_EXHAUSTED from the allocator)
        with pytest.raises(stagd.ResourceExhausted, match=r"op 'zeros': vulkan:0: buffer of 268435456 bytes exceeds"):
            stagd.zeros((1 << 26,))
    serving(client)


def test_host_handles_mode_copies_at_every_op(start_daemon):
    # --host-handles: the comparison mode (handles hold host copies); same results,
    # an upload per tensor argument and a download per result at every op
    d = start_daemon("--listen", "127.0.0.1:0", "--host-handles")
    a_np = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b_np = np.linspace(0.5, 3, 12, dtype=np.float32).reshape(3, 4)
    with stagd.Client(d.addr) as c:
        previous = stagd._default_client
        stagd.set_default_client(c)
        try:
            t = Traffic(c)
            with stagd.device(DEV):
                a, b = stagd.constant(a_np), stagd.constant(b_np)
                assert t()["uploads"] == 0
                x = chain(a, b)
                np.testing.assert_allclose(x.numpy(), chain(a_np, b_np, True), rtol=1e-5, atol=1e-6)
            # 10 ops: 7 binary ones upload 2 tensors (x * x one), 3 unary ones 1 (no upload cache
            # across requests); each result comes back
            assert t()["uploads"] == 16 and t()["downloads"] == 10
            assert c.stats().resident_bytes == 0
        finally:
            stagd.set_default_client(previous)
