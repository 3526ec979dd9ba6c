# SPDX-License-Identifier: Apache-2.0
# Builtins, lists, item access and converted_call on plain values (exactly Python's);
# on staged values they emit graph primitives (docs/runtime.md "Staging").
import builtins

from . import sexpr as _sx
from . import speculation
from .directives import StagedList
from .staged import Staged, apply, check_plain, is_staged, staged_set_item


class StagedRange:
    """range(...) with a staged bound; for_stmt turns it into a while over an index."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


class StagedIter:
    """enumerate(x) / zip(x, …) over staged tensors whose length staging does not know:
    for_stmt makes it a staged loop over an index i, the body getting item(i)."""

    def __init__(self, kind, seqs, start=0):
        self.kind, self.seqs, self.start = kind, list(seqs), start

    def _lens(self):
        from .static import static_len
        return [static_len(s) if isinstance(s, Staged) else builtins.len(s)
                for s in self.seqs]

    def static_length(self):
        lens = self._lens()
        return None if None in lens else builtins.min(lens, default=0)

    def length(self):
        n = None
        for s, k in zip(self.seqs, self._lens()):
            v = k if k is not None else apply("len", s)
            n = v if n is None else apply("minimum", n, v)
        return n

    def item(self, i):
        got = [apply("getitem", s, i) if isinstance(s, Staged) else s[i] for s in self.seqs]
        if self.kind == "enumerate":
            return (i + self.start if self.start else i, got[0])
        return tuple(got)


def _staged_leaves(args):
    from . import tree
    return builtins.any(isinstance(x, Staged) for a in args
                        for x in tree.flatten(a, is_leaf=lambda v: isinstance(v, Staged))[0])


def print_(*args, **kwargs):
    if is_staged(*args) or (_sx._stack and _staged_leaves(args)):
        from . import tree
        if builtins.any(tree.kind(a) is not None for a in args):
            _print_structured(args, kwargs.get("sep"))
            return None
        apply("print", *args)
        return None
    return builtins.print(*args, **kwargs)


def _print_structured(args, sep):
    """print() of containers holding staged values: Python's text around the leaves,
    which the graph prints between markers (sexpr.print_template / fill_printed)."""
    pieces = []
    for i, a in enumerate(args):
        if i:
            pieces.append(" " if sep is None else str(sep))
        _pieces(a, True, pieces)
    template, leaves = [], []
    for p in pieces:
        if isinstance(p, str):
            if template and isinstance(template[-1], str):
                template[-1] += p
            else:
                template.append(p)
        else:
            template.append(None)
            leaves.append(p)
    mark, sep_, end = _sx.print_template(template)
    parts = [mark]
    for leaf in leaves:
        parts += [sep_, leaf]
    apply("print", *parts, end)


def _pieces(v, top, out):
    """Appends to out the text print() gives v (repr inside containers), a staged
    leaf as itself."""
    import dataclasses
    from . import tree
    if isinstance(v, _sx.Symbolic):
        out.append(v)
        return
    k = tree.kind(v)
    if k is None:
        out.append(str(v) if top else repr(v))
        return

    def seq(open_, items, close, names=None):
        out.append(open_)
        for j, item in enumerate(items):
            if j:
                out.append(", ")
            if names is not None:
                out.append(names[j])
            _pieces(item, False, out)
        if k == "tuple" and len(items) == 1:
            out.append(",")
        out.append(close)
    if k == "tuple":
        seq("(", list(v), ")")
    elif k == "list":
        seq("[", list(v), "]")
    elif k == "dict":
        seq("{", list(v.values()), "}", [repr(key) + ": " for key in v])
    elif k == "namedtuple":
        seq(type(v).__name__ + "(", list(v), ")", [f + "=" for f in v._fields])
    else:  # a dataclass: its generated __repr__
        fs = [f for f in dataclasses.fields(v) if f.repr]
        seq(type(v).__qualname__ + "(", [getattr(v, f.name) for f in fs], ")",
            [f.name + "=" for f in fs])


def len_(x):
    if isinstance(x, Staged):
        from .static import static_len
        n = static_len(x)
        return n if n is not None else apply("len", x)
    return builtins.len(x)


def range_(*args):
    if is_staged(*args):
        a = list(args)
        if len(a) == 1:
            return StagedRange(0, a[0], 1)
        return StagedRange(a[0], a[1], a[2] if len(a) > 2 else 1)
    return builtins.range(*args)


def _unknown_length(seqs):
    from .static import static_len
    return builtins.any(isinstance(s, Staged) and static_len(s) is None for s in seqs)


def enumerate_(*args, **kwargs):
    if args and isinstance(args[0], Staged) and _unknown_length(args[:1]):
        start = args[1] if len(args) > 1 else kwargs.get("start", 0)
        return StagedIter("enumerate", args[:1], start)
    return builtins.enumerate(*args, **kwargs)


def zip_(*args, **kwargs):
    if not kwargs and _sx._stack and _unknown_length(args):
        return StagedIter("zip", args)
    return builtins.zip(*args, **kwargs)


def _staged_int(x):
    return apply("cast", x, Staged("int64"))


def _staged_float(x):
    return apply("cast", x, Staged("float64"))


def _staged_bool(x):
    return apply("!=", x, 0)


# while a speculative function runs, a tensor's float() / int() / bool() is a profiled
# fact (runtime/speculation.py)
def int_(*args, **kwargs):
    if len(args) == 1 and not kwargs:
        if speculation._states:
            return speculation.scalar("int", args[0], builtins.int, _staged_int)
        if isinstance(args[0], Staged):
            return _staged_int(args[0])
    return builtins.int(*args, **kwargs)


def float_(*args):
    if len(args) == 1:
        if speculation._states:
            return speculation.scalar("float", args[0], builtins.float, _staged_float)
        if isinstance(args[0], Staged):
            return _staged_float(args[0])
    return builtins.float(*args)


def bool_(*args):
    if len(args) == 1:
        if speculation._states:
            return speculation.scalar("bool", args[0], builtins.bool, _staged_bool)
        if isinstance(args[0], Staged):
            return _staged_bool(args[0])
    return builtins.bool(*args)


def abs_(x):
    if isinstance(x, Staged):
        return apply("abs", x)
    return builtins.abs(x)


def _fold(prim, args):
    out = args[0]
    for a in args[1:]:
        out = apply(prim, out, a)
    return out


def min_(*args, **kwargs):
    if is_staged(*args) and not kwargs:
        return apply("min", args[0]) if len(args) == 1 else _fold("minimum", args)
    return builtins.min(*args, **kwargs)


def max_(*args, **kwargs):
    if is_staged(*args) and not kwargs:
        return apply("max", args[0]) if len(args) == 1 else _fold("maximum", args)
    return builtins.max(*args, **kwargs)


def sum_(*args, **kwargs):
    if len(args) == 1 and isinstance(args[0], Staged) and not kwargs:
        return apply("sum", args[0])
    return builtins.sum(*args, **kwargs)


def isinstance_(obj, cls):
    """isinstance; a staged parameter that stands for a Python number (a Python int or
    float argument, or one inside a container argument) is an instance of its type, as
    the number is in Python (a recursion over a tree of ints must stop at its leaves)."""
    if builtins.isinstance(obj, cls):
        return True
    t = getattr(obj, "py_type", None) if builtins.isinstance(obj, Staged) else None
    return t is not None and builtins.issubclass(t, cls)


def new_list(items):
    return list(items)


def list_append(lst, value):
    if isinstance(lst, StagedList):
        return lst.append(value)
    lst.append(value)
    return lst


def list_pop(lst, index):
    if isinstance(lst, StagedList):
        return lst.pop(index)
    value = lst.pop() if index is None else lst.pop(index)
    return lst, value


def get_item(obj, key):
    if isinstance(obj, Staged):
        return obj[key]
    check_plain(key)
    return obj[key]


def set_item(obj, key, value):
    if isinstance(obj, StagedList):
        return obj.set_item(key, value)
    if isinstance(obj, Staged):
        return staged_set_item(obj, key, value)
    check_plain(obj, key)
    obj[key] = value
    return obj


def slice_(start, stop, step):
    """`a:b:c` in an item assignment's key (the converter's form of a slice)."""
    return slice(start, stop, step)


_IOPS = {"Add": "iadd", "Sub": "isub", "Mult": "imul", "MatMult": "imatmul", "Div": "itruediv",
         "Mod": "imod", "Pow": "ipow", "LShift": "ilshift", "RShift": "irshift", "BitOr": "ior",
         "BitXor": "ixor", "BitAnd": "iand", "FloorDiv": "ifloordiv"}


def aug_item(op, current, value):
    """`x[k] op= value`: Python's in-place operator on the item (the converter then
    assigns the result back with set_item), e.g. aug_item('Add', x[k], v) is x[k] += v."""
    import operator
    return getattr(operator, _IOPS[op])(current, value)
