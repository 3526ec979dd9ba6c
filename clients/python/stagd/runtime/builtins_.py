# SPDX-License-Identifier: Apache-2.0
# Builtins, lists, item access and converted_call on plain values (exactly Python's);
# on staged values they emit graph primitives (docs/runtime.md "Staging").
import builtins

from .directives import StagedList
from .staged import Staged, apply, check_plain, is_staged, staged_set_item


class StagedRange:
    """range(...) with a staged bound; for_stmt turns it into a while over an index."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def print_(*args, **kwargs):
    if is_staged(*args):
        apply("print", *args)
        return None
    return builtins.print(*args, **kwargs)


def len_(x):
    if isinstance(x, Staged):
        return apply("len", x)
    return builtins.len(x)


def range_(*args):
    if is_staged(*args):
        a = list(args)
        if len(a) == 1:
            return StagedRange(0, a[0], 1)
        return StagedRange(a[0], a[1], a[2] if len(a) > 2 else 1)
    return builtins.range(*args)


def enumerate_(*args, **kwargs):
    return builtins.enumerate(*args, **kwargs)


def zip_(*args, **kwargs):
    return builtins.zip(*args, **kwargs)


def int_(*args, **kwargs):
    if len(args) == 1 and isinstance(args[0], Staged) and not kwargs:
        return apply("cast", args[0], Staged("int64"))
    return builtins.int(*args, **kwargs)


def float_(*args):
    if len(args) == 1 and isinstance(args[0], Staged):
        return apply("cast", args[0], Staged("float64"))
    return builtins.float(*args)


def bool_(*args):
    if len(args) == 1 and isinstance(args[0], Staged):
        return apply("!=", args[0], 0)
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
    return builtins.isinstance(obj, cls)


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
