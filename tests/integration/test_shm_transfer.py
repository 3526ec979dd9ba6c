# SPDX-License-Identifier: Apache-2.0
# The local data path (docs/client.md "The local data path", docs/security.md "The
# shared-memory directory"): over the unix socket, Put and Fetch of tensors of 256 KiB
# and more go through files in the daemon's private directory. Round trips are
# bit-identical to the message path and to TCP for every dtype, empty and 0-d tensors,
# sizes around the threshold and 64 MB; bad file names (traversal, links, other files,
# wrong sizes, over TCP) are INVALID_ARGUMENT and the daemon keeps serving; no file stays
# in the directory but the clients' own staging files, reused by their transfers and
# removed when they close; an ended session's unread results are removed; the directory
# is swept at start-up, removed at exit, refused when others may enter it; --no-shm turns
# the path off.
import os
import pathlib
import stat
import threading

import harness
import numpy as np
import pytest

import stagd
from stagd import shm
from stagd.tensor import _fetch_array, _put_array, _wrap

DTYPES = ["bool", "int32", "int64", "float16", "float32", "float64"]


@pytest.fixture(scope="module")
def served(stagd_bin, tmp_path_factory):
    sock = tmp_path_factory.mktemp("shm") / "stagd.sock"
    d = harness.Daemon(["--listen", f"unix:{sock}", "--listen", "127.0.0.1:0", "--workers", "2"],
               expect_grpc=2)
    unix, tcp = d.grpc_addrs
    clients = {"shm": stagd.Client(unix), "msg": stagd.Client(unix, shm=False),
               "tcp": stagd.Client(tcp)}
    directory = clients["shm"].shm_dir()
    assert directory and clients["shm"].version().shm_dir == directory
    yield d, directory, clients
    for c in clients.values():
        c.close()
    assert d.terminate() == 0
    assert not harness.sanitizer_reports(d.log.text())
    assert not os.path.exists(directory), "the directory outlived the daemon"


def leftovers(directory, *clients):
    """The directory's entries other than these clients' staging files."""
    own = {shm.staging_of(c).name for c in clients if shm.staging_of(c) is not None}
    return sorted(set(os.listdir(directory)) - own)


@pytest.fixture
def shm_client(served):
    d, directory, clients = served
    yield clients["shm"], directory
    assert leftovers(directory, clients["shm"]) == [], "a file stayed in the shared-memory directory"
    assert d.proc.poll() is None


def sample(dtype, shape, rng):
    n = int(np.prod(shape))
    if dtype == "bool":
        return (rng.random(n) < 0.5).reshape(shape)
    if dtype in ("int32", "int64"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True).reshape(shape)
    raw = rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)  # every bit pattern: NaN payloads, -0, subnormals


def round_trip(client, arr):
    t = _put_array(client, arr, "cpu")
    assert t.shape == arr.shape and t.dtype == str(arr.dtype)
    back = _fetch_array(client, t._id, t.dtype, t.shape, "cpu")
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert back.tobytes() == arr.tobytes()
    return back


@pytest.fixture
def counted(monkeypatch):
    """How many Puts and Fetches took the files (a file of their own or the client's
    staging file)."""
    n = {"put": 0, "take": 0}

    def counting(fn, key):
        def counted_fn(*a):
            n[key] += 1
            return fn(*a)
        return counted_fn

    monkeypatch.setattr(shm, "put_file", counting(shm.put_file, "put"))
    monkeypatch.setattr(shm, "take_file", counting(shm.take_file, "take"))
    monkeypatch.setattr(shm.Staging, "write", counting(shm.Staging.write, "put"))
    monkeypatch.setattr(shm.Staging, "read", counting(shm.Staging.read, "take"))
    return n


def test_directory_told_only_to_unix_clients(served, shm_client):
    _, directory, clients = served
    # by default in memory when the machine has it ($XDG_RUNTIME_DIR or /dev/shm)
    if not os.environ.get("XDG_RUNTIME_DIR") and os.access("/dev/shm", os.W_OK):
        assert directory.startswith(f"/dev/shm/stagd-{os.geteuid()}-")
    assert clients["shm"].shm_dir() == directory
    assert clients["msg"].shm_dir() == ""
    assert clients["tcp"].version().shm_dir == ""  # not even told over TCP
    assert clients["shm"].version().shm_staging and not clients["tcp"].version().shm_staging
    st = os.stat(directory)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_bit_identical_on_every_path(served, shm_client, counted, dtype):
    _, _, clients = served
    rng = np.random.default_rng(DTYPES.index(dtype))
    item = np.dtype(dtype).itemsize
    at = shm.MIN_BYTES // item
    shapes = [(), (0,), (3, 0, 2), (at - 1,), (at,), (at + 1,), (2, at // 2 + 3)]
    for shape in shapes:
        arr = sample(dtype, shape, rng)
        got = {name: round_trip(c, arr).tobytes() for name, c in clients.items()}
        assert got["shm"] == got["msg"] == got["tcp"]
    # the path was taken by exactly the three sizes at or above the threshold (shm client)
    assert counted == {"put": 3, "take": 3}


def test_64_megabytes(shm_client, counted):
    client, _ = shm_client
    arr = np.random.default_rng(1).standard_normal(16 << 20).astype(np.float32)  # 64 MiB
    t = _put_array(client, arr, "cpu")
    assert np.array_equal((t + t).numpy(), arr + arr)  # an op on it, fetched through shm
    assert t.numpy().tobytes() == arr.tobytes()
    assert counted == {"put": 1, "take": 2}


def put_named(client, name, nbytes=1 << 20, dtype=5):
    pb2 = client.pb2
    t = pb2.Tensor(dtype=dtype, shape=[nbytes // 4], shm=name)
    return client.call("Put", pb2.PutRequest(value=pb2.Value(tensor=t)))


@pytest.fixture
def secret(shm_client):
    """A file outside the directory, on its file system (a hard link can reach it)."""
    _, directory = shm_client
    path = pathlib.Path(os.path.dirname(directory)) / f"stagd-test-secret-{os.getpid()}"
    path.write_bytes(b"\0" * (1 << 20))
    yield path
    path.unlink()


def test_bad_names_and_files_refused(served, shm_client, secret):
    client, directory = shm_client
    for name in ["../secret", f"..{os.sep}..{os.sep}etc{os.sep}passwd", str(secret), ".", "..", "a b",
                 "x" * 60, "no-such-file"]:
        with pytest.raises(stagd.InvalidArgument, match="shm"):
            put_named(client, name)
    os.symlink(secret, os.path.join(directory, "p-link"))  # a link out of the directory
    os.mkdir(os.path.join(directory, "p-dir"))
    os.mkfifo(os.path.join(directory, "p-fifo"))
    os.link(secret, os.path.join(directory, "p-hard"))  # a second name of another file
    with open(os.path.join(directory, "p-short"), "wb") as f:
        f.write(b"\0" * 1000)
    for name, why in [("p-link", "link"), ("p-dir", ""), ("p-fifo", "regular"), ("p-hard", "one link"),
                      ("p-short", "1000 bytes")]:
        with pytest.raises(stagd.InvalidArgument, match=why):
            put_named(client, name)
    with open(os.path.join(directory, "p-huge"), "wb") as f:
        f.write(b"\0" * 1000)
    with pytest.raises(stagd.InvalidArgument, match="1000 bytes"):  # checked before allocating
        put_named(client, "p-huge", nbytes=1 << 30)
    assert secret.read_bytes() == b"\0" * (1 << 20)  # the target is untouched
    assert leftovers(directory, client) == []  # each refused entry was removed
    assert client.is_serving()
    round_trip(client, np.arange(1 << 18, dtype=np.float32))  # and it still serves the path


def test_shm_names_over_tcp_refused(served, shm_client):
    _, directory, clients = served
    with open(os.path.join(directory, "p-tcp"), "wb") as f:
        f.write(b"\0" * (1 << 20))
    with pytest.raises(stagd.InvalidArgument, match="unix socket"):
        put_named(clients["tcp"], "p-tcp")
    assert os.path.exists(os.path.join(directory, "p-tcp"))  # a TCP caller touches nothing
    os.unlink(os.path.join(directory, "p-tcp"))
    t = _put_array(clients["tcp"], np.ones(1 << 18, np.float32), "cpu")
    reply = clients["tcp"].call("Fetch", {"ids": [t._id], "shm_min_bytes": 1})
    assert not reply.values[0].tensor.shm and len(reply.values[0].tensor.data) == 1 << 20


def test_unread_results_removed_with_the_session(served, shm_client):
    _, directory, _ = served
    c = stagd.Client(served[2]["shm"].addr)
    t = _put_array(c, np.ones(1 << 18, np.float32), "cpu")
    reply = c.call("Fetch", {"ids": [t._id], "shm_min_bytes": 1})  # never read
    name = reply.values[0].tensor.shm
    assert name and os.path.getsize(os.path.join(directory, name)) == 1 << 20
    c.close()  # ends the session
    assert leftovers(directory, served[2]["shm"]) == []


def test_unread_results_charged_to_the_session(start_daemon, tmp_path):
    d = start_daemon("--listen", f"unix:{tmp_path}/s.sock", "--max-session-handle-bytes", str(3 << 20))
    c = stagd.Client(d.addr)
    directory = c.shm_dir()
    t = _put_array(c, np.ones(1 << 18, np.float32), "cpu")  # 1 MiB
    for _ in range(3):
        c.call("Fetch", {"ids": [t._id], "shm_min_bytes": 1})  # left unread: 3 MiB waiting
    with pytest.raises(stagd.ResourceExhausted, match="max-session-handle-bytes"):
        c.call("Fetch", {"ids": [t._id], "shm_min_bytes": 1})
    c.close()
    assert os.listdir(directory) == []


def test_directory_swept_at_start_and_checked(start_daemon, tmp_path):
    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    (own / "f-left-by-a-crash").write_bytes(b"x")
    d = start_daemon("--listen", f"unix:{tmp_path}/a.sock", "--shm-dir", str(own))
    assert os.listdir(own) == []
    c = stagd.Client(d.addr)
    assert c.shm_dir() == str(own)
    round_trip(c, np.arange(1 << 17, dtype=np.int64))
    c.close()
    assert d.terminate() == 0
    assert not own.exists()

    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o755)
    with pytest.raises(AssertionError, match="0700"):
        start_daemon("--listen", f"unix:{tmp_path}/b.sock", "--shm-dir", str(open_dir))


def test_no_shm_turns_it_off(start_daemon, tmp_path, counted):
    d = start_daemon("--listen", f"unix:{tmp_path}/s.sock", "--no-shm")
    c = stagd.Client(d.addr)
    assert c.shm_dir() == "" and c.version().shm_dir == ""
    round_trip(c, np.arange(1 << 18, dtype=np.float32))
    assert counted == {"put": 0, "take": 0}
    with pytest.raises(stagd.InvalidArgument, match="no-shm"):
        put_named(c, "p-x")
    c.close()


def test_second_daemon_on_the_socket_sweeps_nothing(served, shm_client, start_daemon):
    d, directory, _ = served
    keep = os.path.join(directory, "p-in-flight")
    with open(keep, "wb") as f:
        f.write(b"x")
    sock = d.addr[len("unix:"):]
    with pytest.raises(AssertionError, match="already serving"):
        start_daemon("--listen", f"unix:{sock}")
    assert os.path.exists(keep)  # the serving daemon's transfer is untouched
    os.unlink(keep)


def test_failed_fetch_leaves_no_file(served, shm_client):
    client, directory = shm_client
    t = _put_array(client, np.ones(1 << 18, np.float32), "cpu")
    with pytest.raises(stagd.NotFound):
        client.call("Fetch", {"ids": [t._id, "cpu#" + "0" * 32], "shm_min_bytes": 1})
    assert leftovers(directory, client) == []  # the first result's file went with the reply


def test_large_arguments_and_variables_take_the_path(start_daemon, tmp_path, counted):
    # a message limit far below the arrays: only the files can carry them
    d = start_daemon("--listen", f"unix:{tmp_path}/s.sock", "--max-message-bytes", str(128 << 10))
    c = stagd.Client(d.addr)
    previous = stagd._default_client
    stagd.set_default_client(c)
    try:
        a = np.arange(1 << 18, dtype=np.float32)  # 1 MiB
        t = stagd.constant(a)
        assert np.array_equal((t + a).numpy(), a + a)  # an eager op's ndarray operand

        @stagd.function
        def twice(x):
            return x * 2.0

        assert np.array_equal(twice(a).numpy(), a * 2)  # a staged call's argument
        v = stagd.Variable(a)
        assert np.array_equal(v.numpy(), a)
        assert counted["put"] >= 4 and counted["take"] >= 3
    finally:
        stagd.set_default_client(previous)
        c.close()


def test_transfers_reuse_the_staging_file(start_daemon, tmp_path, counted):
    d = start_daemon("--listen", f"unix:{tmp_path}/s.sock")
    c = stagd.Client(d.addr)
    directory = c.shm_dir()
    rng = np.random.default_rng(7)
    names = set()
    for n in [1 << 18, 1 << 22, 1 << 20, (1 << 18) + 3]:  # growing and shrinking
        round_trip(c, rng.standard_normal(n).astype(np.float32))
        names.add(shm.staging_of(c).name)
        assert os.listdir(directory) == [shm.staging_of(c).name]  # no file of a transfer's own
    assert len(names) == 1 and counted == {"put": 4, "take": 4}
    path = os.path.join(directory, names.pop())
    assert os.path.getsize(path) == 16 << 20  # the largest transfer: it does not shrink...
    round_trip(c, rng.standard_normal(1 << 23).astype(np.float32))
    assert os.path.getsize(path) == 32 << 20
    round_trip(c, rng.standard_normal(1 << 18).astype(np.float32))
    assert os.path.getsize(path) == 1 << 20  # ...but past 16 MiB, to one under a quarter
    c.close()
    assert os.listdir(directory) == []  # removed with its client


def test_staging_file_removed_under_the_client(start_daemon, tmp_path):
    """The daemon sweeps files older than the handle lease (a client that died): a client
    that was idle that long makes a new staging file."""
    d = start_daemon("--listen", f"unix:{tmp_path}/s.sock")
    c = stagd.Client(d.addr)
    directory = c.shm_dir()
    arr = np.arange(1 << 18, dtype=np.float32)
    round_trip(c, arr)
    first = shm.staging_of(c).name
    os.unlink(os.path.join(directory, first))
    round_trip(c, arr * 2)
    assert shm.staging_of(c).name != first and os.listdir(directory) == [shm.staging_of(c).name]
    c.close()
    assert os.listdir(directory) == []


def test_concurrent_transfers_stay_apart(served, shm_client):
    """Threads of one client: one transfer at a time holds the staging file, the others
    take files of their own; every round trip is its own bytes."""
    client, _ = shm_client
    errors = []

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(6):
                round_trip(client, rng.standard_normal(int(rng.integers(1 << 16, 1 << 20))).astype(np.float32))
        except Exception as e:  # noqa: BLE001 — reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_staging_names_checked(served, shm_client, secret):
    """shm_keep and shm_into reach only the client's own plain staging files: other names,
    links, second names of other files are refused (Put) or passed over (Fetch: the
    result goes to a new file), and nothing outside the directory is read or written."""
    client, directory = shm_client
    pb2 = client.pb2

    def put_kept(name, nbytes=1 << 20):
        t = pb2.Tensor(dtype=5, shape=[nbytes // 4], shm=name, shm_keep=True)
        return client.call("Put", pb2.PutRequest(value=pb2.Value(tensor=t)))

    with open(os.path.join(directory, "p-not-staging"), "wb") as f:
        f.write(b"\0" * (1 << 20))
    with pytest.raises(stagd.InvalidArgument, match="staging"):
        put_kept("p-not-staging")
    os.unlink(os.path.join(directory, "p-not-staging"))
    with open(os.path.join(directory, "k-short"), "wb") as f:
        f.write(b"\0" * 1000)
    with pytest.raises(stagd.InvalidArgument, match="1000 bytes"):
        put_kept("k-short")
    assert os.path.getsize(os.path.join(directory, "k-short")) == 1000  # a client's: left
    with open(os.path.join(directory, "k-long"), "wb") as f:
        f.write(np.arange(1 << 19, dtype=np.float32).tobytes())  # 2 MiB
    h = _wrap(put_kept("k-long").result, client)  # its first MiB
    assert np.array_equal(h.numpy(), np.arange(1 << 18, dtype=np.float32))
    os.symlink(secret, os.path.join(directory, "k-link"))
    os.link(secret, os.path.join(directory, "k-hard"))
    with pytest.raises(stagd.InvalidArgument, match="link"):
        put_kept("k-link")
    with pytest.raises(stagd.InvalidArgument, match="one link"):
        put_kept("k-hard")
    os.symlink(secret, os.path.join(directory, "k-link"))
    os.link(secret, os.path.join(directory, "k-hard"))
    t = _put_array(client, np.full(1 << 18, 7, np.float32), "cpu")
    for into in ["k-link", "k-hard", "k-missing", "p-x", "../k-x", str(secret), "k-short/.."]:
        v = client.call("Fetch", {"ids": [t._id], "shm_min_bytes": 1, "shm_into": into}).values[0].tensor
        assert v.shm and not v.shm_keep and v.shm.startswith("f-")  # a new file instead
        got = shm.take_file(directory, v.shm, "float32", v.shape)
        assert np.array_equal(got, np.full(1 << 18, 7, np.float32))
    v = client.call("Fetch", {"ids": [t._id], "shm_min_bytes": 1, "shm_into": "k-short"}).values[0].tensor
    assert v.shm == "k-short" and v.shm_keep  # a plain staging file: grown to hold it
    with open(os.path.join(directory, "k-short"), "rb") as f:
        assert np.array_equal(np.frombuffer(f.read(), np.float32), np.full(1 << 18, 7, np.float32))
    assert secret.read_bytes() == b"\0" * (1 << 20)  # the target is untouched
    for name in ["k-short", "k-long", "k-link", "k-hard"]:
        os.unlink(os.path.join(directory, name))
    assert client.is_serving()


def test_without_staging_files_a_client_uses_files_of_its_own(served, shm_client, counted):
    """A daemon that does not say shm_staging (an older one) gets a new file per
    transfer, as before: the client's staging file stays unused."""
    _, directory, clients = served
    c = stagd.Client(clients["shm"].addr)
    assert c.version().shm_staging
    c._version_facts()
    c._shm_staging = False  # as an older daemon's Version reply leaves it
    round_trip(c, np.arange(1 << 18, dtype=np.float32))
    assert shm.staging_of(c) is None and counted == {"put": 1, "take": 1}
    c.close()
    assert leftovers(directory, clients["shm"]) == []


def test_staging_over_tcp_ignored(served, shm_client):
    _, directory, clients = served
    t = _put_array(clients["tcp"], np.ones(1 << 18, np.float32), "cpu")
    reply = clients["tcp"].call("Fetch", {"ids": [t._id], "shm_min_bytes": 1, "shm_into": "k-x"})
    v = reply.values[0].tensor
    assert not v.shm and not v.shm_keep and len(v.data) == 1 << 20
    assert not os.path.exists(os.path.join(directory, "k-x"))


def test_staging_in_a_forked_child(tmp_path, monkeypatch):
    """A forked child makes its own staging file and leaves its parent's in place."""
    st = shm.Staging(str(tmp_path))
    assert st.claim(1 << 20)
    st.write(np.ones(1 << 18, np.float32))
    st.done()
    parent = st.name
    monkeypatch.setattr(shm.os, "getpid", lambda: -1)
    assert st.claim(1 << 20)
    st.done()
    assert st.name != parent and sorted(os.listdir(tmp_path)) == sorted([parent, st.name])
    st.close()
    assert os.listdir(tmp_path) == [parent]
