# SPDX-License-Identifier: Apache-2.0
"""shm.py — the client's side of the local data path (docs/client.md "The local data
path"): over the daemon's unix socket, a large tensor's bytes go through a file in the
daemon's private shared-memory directory instead of inside a protobuf message.

Put: the client writes the array into a new file `p-<random>` there and names it in the
request's Tensor.shm; the daemon reads it into the tensor's storage and removes it.
Fetch: the daemon writes the result into a file and names it in the reply; the client
reads it into a new NumPy array and removes it. One copy on each side, no message size
limit. The client removes a Put's file itself too when the call failed before the daemon
read it, so no file stays behind."""
import contextlib
import os

import numpy as np

MIN_BYTES = 256 << 10  # smaller tensors travel inside the messages

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
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
