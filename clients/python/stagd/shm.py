# SPDX-License-Identifier: Apache-2.0
"""shm.py — the client's side of the local data path (docs/client.md "The local data
path"): over the daemon's unix socket, a large tensor's bytes go through a file in the
daemon's private shared-memory directory instead of inside a protobuf message.

Put: the client writes the array into a new file `p-<random>` there and names it in the
request's Tensor.shm; the daemon reads it into the tensor's storage and removes it.
Fetch: the daemon writes the result into a file and names it in the reply; the client
reads it into a new NumPy array and removes it. One copy on each side, no message size
limit. The client removes a Put's file itself too when the call failed before the daemon
read it, so no file stays behind.

Staging: a fresh tmpfs page costs more than copying 4 KiB into it (allocation, zeroing),
so each client keeps one staging file `k-<random>` (Staging) that its Puts and Fetches
reuse, one transfer at a time: a Put writes the array into it (Tensor.shm_keep: the
daemon reads it and leaves it), a Fetch names it (FetchRequest.shm_into: the daemon
writes the result into it). A transfer that finds it busy (another thread's) takes a
file of its own as above."""
import contextlib
import mmap
import os
import threading

import numpy as np

MIN_BYTES = 256 << 10  # smaller tensors travel inside the messages

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_RW = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)  # Linux: the pages mapped at once, not one trap each
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _unlink(path):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


@contextlib.contextmanager
def put_file(directory, arr):
    """Writes C-contiguous `arr` into a new file of `directory`; yields its name; removes
    the file when the daemon has not (the call failed first)."""
    name = "p-" + os.urandom(12).hex()
    path = os.path.join(directory, name)
    fd = os.open(path, _CREATE, 0o600)
    try:
        try:
            view = memoryview(np.ascontiguousarray(arr).reshape(-1)).cast("B")
            done = 0
            while done < len(view):
                done += os.write(fd, view[done:])
        finally:
            os.close(fd)
        yield name
    finally:
        _unlink(path)


def take_file(directory, name, dtype, shape):
    """The array of `dtype` and `shape` the daemon wrote into `directory`/`name`; the file
    is removed. A name that is not a plain file name, or a file of another size, is an
    error (the file is removed all the same)."""
    if not name or os.sep in name or name.startswith("."):
        raise ValueError(f"stagd: the daemon named shm file {name!r}, not a file of its directory")
    path = os.path.join(directory, name)
    try:
        fd = os.open(path, _OPEN)
        try:
            out = np.empty(tuple(shape), dtype=dtype)
            size = os.fstat(fd).st_size
            if size != out.nbytes:
                raise ValueError(f"stagd: shm file {name!r} holds {size} bytes, the "
                                 f"{dtype}{list(shape)} result needs {out.nbytes}")
            view = memoryview(out.reshape(-1)).cast("B")
            with os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
                done = 0
                while done < len(view):
                    n = f.readinto(view[done:])
                    if not n:
                        raise ValueError(f"stagd: shm file {name!r} ended after {done} bytes")
                    done += n
            return out
        finally:
            os.close(fd)
    finally:
        _unlink(path)


_attach = threading.Lock()


def staging_of(client):
    """`client`'s staging file (made on first use; its close() removes it), or None
    when it does not take the local data path or its daemon takes no staging files."""
    st = client._staging
    if st is None and client.shm_dir() and client._shm_staging:
        with _attach:
            st = client._staging
            if st is None:
                st = client._staging = Staging(client.shm_dir())
    return st


class Staging:
    """A client's staging file in the daemon's directory, reused by one transfer at a
    time (claim/done) through a mapping kept between transfers (mapping 4 KiB pages of a
    file costs more than the copy: it is done when the file grows, not per transfer). It
    only grows, but is cut back when a transfer needs less than a quarter of it (and it
    holds over TRIM_BYTES), so it holds about the largest recent transfer. Recreated
    when gone (the daemon sweeps files older than its handle lease: a client that died;
    each use refreshes its time) and in a forked child (the parent keeps using its own).
    close() removes it."""

    TRIM_BYTES = 16 << 20

    def __init__(self, directory):
        self._dir = directory
        self._lock = threading.Lock()
        self._fd = self._pid = self.name = None
        self._map = self._bytes = None  # the mapping of the file's first len(self._bytes) bytes

    def claim(self, nbytes):
        """True with the file ready for a transfer of nbytes (held until done()); False
        when another transfer holds it or it cannot be made (take a file of your own)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            self._ready(nbytes)
            return True
        except OSError:
            self._drop()
            self._lock.release()
            return False

    def done(self):
        self._lock.release()

    def _ready(self, nbytes):
        if self._fd is not None and (self._pid != os.getpid() or os.fstat(self._fd).st_nlink == 0):
            self._drop(unlink=False)  # a forked child's copy, or removed under us
        if self._fd is None:
            name = "k-" + os.urandom(12).hex()
            self._fd = os.open(os.path.join(self._dir, name), _CREATE_RW, 0o600)
            self._pid, self.name = os.getpid(), name
        else:
            os.utime(self._fd)  # a fresh time: the daemon's sweep of stale files passes it by
        size = os.fstat(self._fd).st_size
        if size > self.TRIM_BYTES and nbytes < size // 4:
            self._unmap()
            os.ftruncate(self._fd, nbytes)

    def _mapped(self, nbytes):
        """The file's first nbytes, mapped (the file grown to hold them)."""
        size = os.fstat(self._fd).st_size
        if size < nbytes:
            os.ftruncate(self._fd, nbytes)
            size = nbytes
        if self._bytes is None or len(self._bytes) != size:
            self._unmap()
            self._map = mmap.mmap(self._fd, size, flags=mmap.MAP_SHARED | _POPULATE)
            self._bytes = np.frombuffer(self._map, dtype=np.uint8)
        return self._bytes[:nbytes]

    def write(self, arr):
        """Copies `arr` to the start of the claimed file; returns its name."""
        arr = np.ascontiguousarray(arr)
        np.copyto(self._mapped(arr.nbytes), arr.reshape(-1).view(np.uint8))
        return self.name

    def read(self, dtype, shape):
        """A new array of `dtype` and `shape` from the start of the claimed file (the
        daemon wrote a Fetch result into it)."""
        out = np.empty(tuple(shape), dtype=dtype)
        if os.fstat(self._fd).st_size < out.nbytes:
            raise ValueError(f"stagd: the staging file {self.name!r} holds fewer bytes than the "
                             f"{dtype}{list(shape)} result needs ({out.nbytes})")
        np.copyto(out.reshape(-1).view(np.uint8), self._mapped(out.nbytes))
        return out

    def _unmap(self):
        self._bytes = None
        if self._map is not None:
            self._map.close()
            self._map = None

    def _drop(self, unlink=True):
        self._unmap()
        if self._fd is not None:
            if unlink and self._pid == os.getpid():
                _unlink(os.path.join(self._dir, self.name))
            os.close(self._fd)
        self._fd = self._pid = self.name = None

    def close(self):
        with self._lock:
            self._drop()
