# SPDX-License-Identifier: Apache-2.0
# Directives (AutoGraph §7.2; docs/runtime.md "Directives") and the staged lists they
# enable. In user code they are calls of `stagd.set_loop_options(...)` /
# `stagd.set_element_type(l, dtype, shape)`; the converter moves loop options into the
# loop's `opts` and rewrites set_element_type to `l = sg__.set_element_type(l, ...)`.
# Unconverted, both are plain calls that change nothing.
from . import sexpr as _sx
from .errors import StagingError
from .staged import Staged, apply, emit, staged_set_item

LOOP_OPTIONS = {
    "maximum_iterations": "staged loops stop after this many iterations (a plain int)",
    # accepted for AutoGraph compatibility; a stagd graph has no use for them
    "parallel_iterations": None,
    "swap_memory": None,
    "shape_invariants": None,
}

DTYPES = ("bool", "int32", "int64", "float16", "float32", "float64")


def check_loop_options(opts):
    for k in opts:
        if k not in LOOP_OPTIONS:
            raise TypeError(f"stagd.set_loop_options: unknown option {k!r} (known: "
                            f"{', '.join(sorted(LOOP_OPTIONS))})")
    m = opts.get("maximum_iterations")
    if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 0):
        raise TypeError("stagd.set_loop_options: maximum_iterations must be a non-negative "
                        f"int, got {m!r}")


def set_loop_options(**opts):
    """Options of the loop whose body starts with this call (honoured when the loop is
    staged). Outside converted code it only checks its arguments."""
    check_loop_options(opts)


class StagedList(Staged):
    """A list of tensors of one dtype and shape while staging (AutoGraph's TensorList):
    its value is the stacked tensor (first axis = the items). Appending returns a new
    StagedList (`l = sg__.list_append(l, x)`), so it can be the state of a staged loop."""

    def __init__(self, dtype, shape, items=None, acc=None, inferred=False):
        self.item_dtype, self.item_shape = dtype, tuple(shape)
        # inferred: a plain list staging made one of (not declared): stagd.function
        # returns it as the Python list of its items; declared, as the stacked tensor
        self.inferred = inferred
        self.items = list(items) if items is not None else None
        self.acc = acc  # Staged tensor of shape (n,) + shape once staged

    @property
    def sexpr(self):
        if self.acc is not None:
            return self.acc.sexpr
        if not self.items:
            dims = " ".join(["0"] + [str(d) for d in self.item_shape])
            return emit(f"(zeros (tuple {dims}) {self.item_dtype})").sexpr
        return emit("(stack" + "".join(" " + self._item(v) for v in self.items) + ")").sexpr

    def _item(self, v):
        return apply("cast", v, Staged(self.item_dtype)).sexpr

    def __repr__(self):
        held = self.acc if self.acc is not None else self.items
        return f"StagedList({self.item_dtype}, {self.item_shape}, {held!r})"

    def _like(self, items=None, acc=None):
        return StagedList(self.item_dtype, self.item_shape, items=items, acc=acc,
                          inferred=self.inferred)

    def rebuild(self, staged):
        """This list's type around another staged tensor (a loop parameter, a result)."""
        return self._like(acc=staged)

    def append(self, v):
        if self.acc is None:
            return self._like(items=self.items + [v])
        dims = " ".join(["1"] + [str(d) for d in self.item_shape])
        row = apply("reshape", Staged(self._item(v)), Staged(f"(tuple {dims})"))
        return self._like(acc=apply("concat", self.acc, row))

    def _index(self, index, what):
        if isinstance(index, bool) or not isinstance(index, int):
            raise StagingError(f"stagd: {what} of a staged list takes a plain int index, "
                            f"got {index!r}")
        return index

    def set_item(self, index, v):
        """`l[index] = v`: a new StagedList with that item replaced."""
        if self.acc is None:
            items = list(self.items)
            items[self._index(index, "l[i] = v")] = v
            return self._like(items=items)
        return self.rebuild(staged_set_item(self.acc, index, Staged(self._item(v))))

    def pop(self, index=None):
        """`l.pop(index)`: (the StagedList without the item, the item)."""
        i = -1 if index is None else self._index(index, "pop()")
        if self.acc is None:
            items = list(self.items)
            value = items.pop(i)
            return self._like(items=items), value
        value = apply("getitem", self.acc, i)
        n = apply("len", self.acc)
        at = i if i >= 0 else apply("+", n, i)  # the item's position from the start
        head = apply("slice", self.acc, 0, at)
        tail = apply("slice", self.acc, i + 1 if i >= 0 else apply("+", at, 1), n)
        return self.rebuild(apply("concat", head, tail)), value


def set_element_type(lst, dtype, shape=()):
    """Declares the dtype and shape of a list's items. While staging, a list so declared
    becomes a StagedList (it may then grow inside staged loops and is returned as the
    stacked tensor); otherwise the list itself comes back unchanged."""
    if dtype not in DTYPES:
        raise TypeError(f"stagd.set_element_type: dtype must be one of {', '.join(DTYPES)}, "
                        f"got {dtype!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
        raise TypeError(f"stagd.set_element_type: shape must be a tuple of non-negative ints, "
                        f"got {shape!r}")
    if not _sx._stack or isinstance(lst, StagedList) or not isinstance(lst, list):
        return lst
    return StagedList(dtype, shape, items=lst)
