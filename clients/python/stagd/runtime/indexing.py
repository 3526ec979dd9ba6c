# SPDX-License-Identifier: Apache-2.0
# NumPy basic indexing (ints, slices, Ellipsis, None, tuples of them) lowered to graph
# primitives, for staged values (runtime/staged.py) and eager tensors (stagd/tensor.py):
# reading is one `slice` per sliced axis, `getitem`/`gather` per int
# (dropping the axis) and `stack` of one tensor per None (a new size-1 axis); writing is
# `slice_update`, nested one level per sliced axis (docs/runtime.md "Indexing").
# `apply(op, *args)` emits or runs one primitive; `shape` is the tensor's shape when it
# is known (eager), None while staging (the daemon then checks what NumPy checks). A
# staged index (an int known when the graph runs) is a sexpr.Symbolic.
from .errors import StagingError
from .sexpr import Symbolic

_ADVANCED = ("stagd: advanced indexing (a list, array, tensor or bool as an index) is not "
             "supported; use gather(x, indices, axis) to take items, where(mask, x, y) to "
             "select by a mask")


def _is_int(k):
    if isinstance(k, bool):
        return False
    if isinstance(k, (int, Symbolic)):
        return True
    try:
        import numpy as np
        return isinstance(k, np.integer)
    except ImportError:  # pragma: no cover
        return False


def _bound(b, what):
    if b is None or _is_int(b):
        return int(b) if b is not None and not isinstance(b, Symbolic) else b
    hook = getattr(type(b), "__index__", None)
    if hook is not None and not isinstance(b, (bool, float)):
        return int(b)
    raise TypeError(f"stagd: slice {what} must be an int, a staged int or None, got "
                    f"{type(b).__name__}")


def parse(key, shape=None):
    """(front, back): the key's entries before and after its Ellipsis (without one, all
    are in front), each ('int', i), ('slice', start, stop, step) or ('none',)."""
    items = key if isinstance(key, tuple) else (key,)
    front, back, seen = [], None, False
    for k in items:
        if k is Ellipsis:
            if seen:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen, back = True, []
            continue
        if k is None:
            e = ("none",)
        elif isinstance(k, slice):
            step = _bound(k.step, "step")
            if isinstance(step, int) and step == 0:
                raise ValueError("slice step cannot be zero")
            e = ("slice", _bound(k.start, "start"), _bound(k.stop, "stop"), step)
        elif _is_int(k):
            e = ("int", k if isinstance(k, Symbolic) else int(k))
        elif hasattr(type(k), "__index__") and getattr(k, "ndim", 0) == 0 \
                and "int" in str(getattr(k, "dtype", "")):
            e = ("int", int(k))  # a 0-d integer array or tensor is an int
        else:
            raise StagingError(f"{_ADVANCED}; got an index of type {type(k).__name__}")
        (back if seen else front).append(e)
    back = back or []
    indexed = sum(e[0] != "none" for e in front + back)
    if shape is not None and indexed > len(shape):
        raise IndexError(f"too many indices for tensor: tensor is {len(shape)}-dimensional, "
                         f"but {indexed} were indexed")
    return front, back


def _axes(front, back):
    """[(entry, axis)] for the entries that index an axis: front ones by position from
    the start, back ones from the end (negative), so neither needs the rank and
    dropping an axis on one side keeps the other side's numbers."""
    out, a = [], 0
    for e in front:
        if e[0] != "none":
            out.append((e, a))
            a += 1
    nb = sum(e[0] != "none" for e in back)
    for e in back:
        if e[0] != "none":
            out.append((e, -nb))
            nb -= 1
    return out


def _check_int(i, axis, shape):
    if shape is None or isinstance(i, Symbolic):
        return
    n = shape[axis]
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis % len(shape)} with size {n}")


def _full(e):
    return e[0] == "slice" and e[1] is None and e[2] is None and e[3] in (None, 1)


def read(apply, x, key, shape=None):
    """x[key] through primitives."""
    front, back = parse(key, shape)
    axes = _axes(front, back)
    nfront = sum(e[0] != "none" for e in front)
    # front right to left (dropping axis a keeps the axes before it), back left to right
    # (negative axes: dropping one keeps the axes after it)
    order = list(reversed(axes[:nfront])) + axes[nfront:]
    cur = x
    for e, a in order:
        if e[0] == "int":
            _check_int(e[1], a, shape)
            cur = apply("getitem", cur, e[1]) if a == 0 else apply("gather", cur, e[1], a)
        elif not _full(e):
            cur = apply("slice", cur, e[1], e[2], 1 if e[3] is None else e[3], a)
    # None: a size-1 axis at its place in the result (front from the start, back from
    # the end), inserted in order of position so earlier insertions hold
    pos = 0
    for e in front:
        if e[0] == "none":
            cur = apply("stack", cur, pos)
        if e[0] != "int":
            pos += 1
    after = 0
    for e in reversed(back):
        if e[0] == "none":
            cur = apply("stack", cur, -(after + 1))
        if e[0] != "int":
            after += 1
    return cur


def write(apply, x, key, value, shape=None, value_shape=None):
    """x with x[key] replaced by value (broadcast to x[key]): nested slice_updates."""
    front, back = parse(key, shape)
    axes = _axes(front, back)
    if shape is not None and value_shape is not None:
        _check_fits(read_shape(shape, key), value_shape)
    steps = []  # (start, stop, step, axis) of every axis the update narrows
    for e, a in axes:
        if e[0] == "int":
            _check_int(e[1], a, shape)
            i = e[1]
            if isinstance(i, Symbolic):  # floor mod: -1 -> n-1 (the read checks the range)
                i = i % apply("getitem", apply("shape", x), a)
                steps.append((i, i + 1, 1, a))
            else:
                steps.append((i, i + 1 if i != -1 else None, 1, a))
        elif not _full(e):
            steps.append((e[1], e[2], 1 if e[3] is None else e[3], a))
    if any(e[0] != "slice" for e, _ in axes) or any(e[0] == "none" for e in front + back):
        # value broadcast to x[key] (whose read checks int indices; a leading size-1
        # axis so that a 0-d item can be sliced), then given the size-1 axes of the
        # ints and without those of the Nones
        r = apply("stack", read(apply, x, key, shape), 0)  # 1-d at least: sliceable
        value = apply("slice_update", r, value, None, None, 1, 0)
        inner = x
        for s in steps:
            inner = apply("slice", inner, *s)
        value = apply("reshape", value, apply("shape", inner))
    if not steps:
        steps = [(None, None, 1, 0)]
    return _nest(apply, x, steps, value)


def _nest(apply, cur, steps, value):
    s = steps[0]
    if len(steps) > 1:
        value = _nest(apply, apply("slice", cur, *s), steps[1:], value)
    return apply("slice_update", cur, value, *s)


def read_shape(shape, key):
    """The shape of x[key] for x of this shape (NumPy's; the key already checked)."""
    import numpy as np
    return np.empty(shape, dtype=np.int8)[_plain_key(key)].shape


def _plain_key(key):
    items = key if isinstance(key, tuple) else (key,)
    return tuple(int(k) if _is_int(k) else k for k in items)


def _check_fits(target, vshape):
    import numpy as np
    try:
        np.broadcast_to(np.empty(vshape, dtype=np.int8), target)
    except ValueError:
        raise ValueError(f"could not broadcast input array from shape {tuple(vshape)} into "
                         f"shape {tuple(target)}") from None
