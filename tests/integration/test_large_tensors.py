# SPDX-License-Identifier: Apache-2.0
# Tensors larger than one request (docs/client.md "Large tensors"): the client puts them
# in pieces joined in the daemon and fetches them as slices, for constants, op and
# staged-call arguments and variables, on the CPU and on vulkan:0; the pieces do not
# outlive the call; a daemon whose limit is below the smallest piece answers with a
# clear error and keeps serving. The daemons here take --max-message-bytes small enough
# that a few megabytes need dozens of pieces (more than one concat can join).
import gc

import numpy as np
import pytest

import stagd

SMALL_LIMIT = 128 << 10  # pieces of 64 KiB


@pytest.fixture(scope="module")
def small_client(stagd_bin):
    d = stagd.daemon.start(args=["--max-message-bytes", str(SMALL_LIMIT), "--workers", "2"])
    c = stagd.Client(d.addr, shm=False)  # the pieces, not the local data path (test_shm_transfer.py)
    previous = stagd._default_client
    stagd.set_default_client(c)
    yield c
    stagd.set_default_client(previous)
    c.close()
    d.stop()


def live_handles(client):
    gc.collect()
    stagd.flush_releases(client)
    return client.call("Release", {"ids": []}).live_handles


def arrays(rng):
    yield rng.normal(size=(64, 50, 300)).astype(np.float32)  # 3.84 MB: 59 pieces
    yield rng.integers(-2**40, 2**40, size=(700, 300), dtype=np.int64)
    yield rng.random(size=(1, 400_000)) < 0.5  # bool, one long row
    yield rng.normal(size=(1000, 300)).astype(np.float16)


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_constants_and_results_in_pieces(small_client, device):
    rng = np.random.default_rng(7)
    before = live_handles(small_client)
    with stagd.device(device):
        for a in arrays(rng):
            assert a.nbytes > SMALL_LIMIT
            t = stagd.constant(a)
            assert t.shape == a.shape and t.dtype == str(a.dtype)
            back = t.numpy()
            assert back.dtype == a.dtype and back.shape == a.shape
            assert np.array_equal(back, a)
            if a.dtype != np.bool_:  # an op's result is fetched in pieces too
                assert np.array_equal((t + t).numpy(), a + a)
            del t, back
    assert live_handles(small_client) == before  # no piece, join or slice left behind


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_staged_and_eager_arguments_in_pieces(small_client, device):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(600, 500)).astype(np.float32)
    b = rng.normal(size=(600, 500)).astype(np.float32)

    @stagd.function
    def combine(x, w):
        return x * 2.0 - w  # exact in float32: the test is about the transport

    with stagd.device(device):
        got = combine(a, b).numpy()  # both arguments are larger than a request
        assert np.array_equal(got, a * np.float32(2.0) - b)
        t = stagd.constant(a)
        assert np.array_equal((t * a).numpy(), a * a)  # an eager op's ndarray operand


def test_variables_in_pieces(small_client):
    rng = np.random.default_rng(5)
    init = rng.normal(size=(300, 400)).astype(np.float32)
    v = stagd.Variable(init)
    assert np.array_equal(v.numpy(), init)
    new = rng.normal(size=(300, 400)).astype(np.float32)
    v.assign(new)
    assert np.array_equal(v.numpy(), new)
    v.assign_add(new)
    assert np.array_equal(v.numpy(), new + new)


def test_limit_below_a_piece_is_a_clear_error(stagd_bin):
    d = stagd.daemon.start(args=["--max-message-bytes", "1024"])
    c = stagd.Client(d.addr, shm=False)  # messages only: the limit applies
    try:
        stagd.set_default_client(c)
        with pytest.raises(stagd.ResourceExhausted) as e:
            stagd.constant(np.ones(100_000, np.float32))
        assert str(e.value) == ("RESOURCE_EXHAUSTED: a 400000-byte tensor is sent in pieces of 65536 bytes, but this "
                                "daemon accepts requests of at most 1024 bytes (--max-message-bytes)")
        with pytest.raises(stagd.ResourceExhausted) as e:  # one message over the limit (framed transport)
            stagd.constant(np.ones(1000, np.float32))
        assert str(e.value) == "RESOURCE_EXHAUSTED: request of 4020 bytes exceeds the limit of 1024 bytes (max-message-bytes)"
        g = stagd.Client(d.addr, shm=False, frames=False)  # over gRPC, gRPC's own check says it
        stagd.set_default_client(g)
        with pytest.raises(stagd.ResourceExhausted) as e:
            stagd.constant(np.ones(1000, np.float32))
        assert "larger than max" in str(e.value)
        g.close()
        assert c.health() == "SERVING"
        stagd.set_default_client(c)
        assert (stagd.constant(2.0) * 21.0).numpy() == 42.0  # small requests still served
    finally:
        c.close()
        d.stop()


def test_default_daemon_round_trips_a_16_megabyte_tensor(default_client):
    """The client used to refuse replies over 4 MiB: a 2000x2000 float32 (16 MB, one
    message under the default 64 MiB limit) could be put but not fetched."""
    stagd.set_default_client(default_client)
    a = np.arange(4_000_000, dtype=np.float32).reshape(2000, 2000)
    t = stagd.constant(a)
    assert np.array_equal(t.numpy(), a)
    assert np.array_equal((t * 2.0).numpy(), a * 2)
