# Builtins, lists, item access and converted_call on plain values (exactly Python's).
import builtins

from .staged import check_plain


def print_(*args, **kwargs):
    check_plain(*args)
    return builtins.print(*args, **kwargs)


def len_(x):
    check_plain(x)
    return builtins.len(x)


def range_(*args):
    check_plain(*args)
    return builtins.range(*args)


def enumerate_(*args, **kwargs):
    return builtins.enumerate(*args, **kwargs)


def zip_(*args, **kwargs):
    return builtins.zip(*args, **kwargs)


def int_(*args, **kwargs):
    check_plain(*args)
    return builtins.int(*args, **kwargs)


def float_(*args):
    check_plain(*args)
    return builtins.float(*args)


def bool_(*args):
    check_plain(*args)
    return builtins.bool(*args)


def abs_(x):
    check_plain(x)
    return builtins.abs(x)


def min_(*args, **kwargs):
    check_plain(*args)
    return builtins.min(*args, **kwargs)


def max_(*args, **kwargs):
    check_plain(*args)
    return builtins.max(*args, **kwargs)


def sum_(*args, **kwargs):
    check_plain(*args)
    return builtins.sum(*args, **kwargs)


def isinstance_(obj, cls):
    return builtins.isinstance(obj, cls)


def new_list(items):
    return list(items)


def list_append(lst, value):
    lst.append(value)
    return lst


def list_pop(lst, index):
    value = lst.pop() if index is None else lst.pop(index)
    return lst, value


def get_item(obj, key):
    check_plain(obj, key)
    return obj[key]


def set_item(obj, key, value):
    check_plain(obj, key)
    obj[key] = value
    return obj


def converted_call(fn, args, kwargs):
    check_plain(*args, *kwargs.values())
    return fn(*args, **kwargs)
