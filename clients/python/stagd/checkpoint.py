# SPDX-License-Identifier: Apache-2.0
"""checkpoint.py — `stagd.Checkpoint`: saves and restores Variables by object graph
(TF Eager §4.3). See docs/client.md "Checkpoints".

    ckpt = stagd.Checkpoint(model=net, step=step_var)
    ckpt.save("run/ckpt.npz")      # written to a temporary file, then renamed
    ckpt.restore("run/ckpt.npz")   # into the same or a freshly built object graph

The object graph is walked from the named roots through attributes (`vars(obj)`),
list/tuple items and dict string keys; each Variable is stored under the path of named
edges that first reaches it ("model/layers/0/w"). Restoring walks the new objects the
same way and assigns every Variable whose path is in the file, so matching depends
only on the objects' structure, not on creation order or names. The file is a NumPy
.npz archive; it is replaced atomically (os.replace), so a crash never leaves a torn
checkpoint.
"""
import io
import os
import tempfile

import numpy as np

from .tensor import Variable

MAX_DEPTH = 64


def _walk(name, obj, path, seen, out, depth):
    if depth > MAX_DEPTH:
        return
    if isinstance(obj, Variable):
        if id(obj) not in seen:
            seen.add(id(obj))
            out[path] = obj
        return
    if isinstance(obj, (str, bytes, int, float, bool, type(None), np.ndarray)):
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        items = [(str(k), v) for k, v in obj.items() if isinstance(k, (str, int))]
    elif isinstance(obj, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(obj)]
    elif hasattr(obj, "__dict__") and not isinstance(obj, type) and not callable(obj):
        items = [(k, v) for k, v in vars(obj).items() if not k.startswith("__")]
    elif hasattr(obj, "__dict__") and not isinstance(obj, type) and hasattr(obj, "__call__") \
            and not hasattr(obj, "__code__"):
        items = [(k, v) for k, v in vars(obj).items() if not k.startswith("__")]
    else:
        return
    for k, v in sorted(items, key=lambda kv: kv[0]):
        _walk(k, v, f"{path}/{k}" if path else k, seen, out, depth + 1)


def variables_by_path(roots):
    """{path: Variable} for the object graph under roots ({name: object})."""
    out, seen = {}, set()
    for name in sorted(roots):
        _walk(name, roots[name], name, seen, out, 0)
    return out


class Checkpoint:
    """Saves/restores the Variables reachable from the keyword roots."""

    def __init__(self, **roots):
        if not roots:
            raise ValueError("stagd.Checkpoint needs at least one named root object")
        self._roots = roots

    def variables(self):
        return variables_by_path(self._roots)

    def save(self, path):
        """Writes every reachable Variable's value to `path` atomically; returns path."""
        path = os.fspath(path)
        arrays = {p: np.asarray(v.numpy()) for p, v in self.variables().items()}
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".ckpt-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(buf.getvalue())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    def restore(self, path, strict=False):
        """Assigns the saved values to the matching Variables; returns the paths
        restored. strict=True: a Variable with no saved value, or a saved value with no
        Variable, is an error (KeyError naming the paths)."""
        path = os.fspath(path)
        with np.load(path) as data:
            saved = {k: data[k] for k in data.files}
        live = self.variables()
        missing = sorted(set(live) - set(saved))
        unused = sorted(set(saved) - set(live))
        if strict and (missing or unused):
            raise KeyError(f"stagd.Checkpoint.restore({path!r}): no saved value for "
                           f"{missing or 'none'}; no variable for {unused or 'none'}")
        done = []
        for p, var in live.items():
            if p not in saved:
                continue
            arr = saved[p]
            if tuple(arr.shape) != tuple(var.shape) or str(arr.dtype) != var.dtype:
                raise ValueError(f"stagd.Checkpoint.restore: {p}: saved {arr.dtype} "
                                 f"{tuple(arr.shape)} does not fit the variable's "
                                 f"{var.dtype} {tuple(var.shape)}")
            var.assign(arr)
            done.append(p)
        return done
