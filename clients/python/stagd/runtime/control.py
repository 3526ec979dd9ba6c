# Functional control flow (AutoGraph style): if/while/for, ternary, lazy and/or, assert.
from .staged import check_plain


def if_stmt(cond, body, orelse, get_state, set_state, names, nouts):
    check_plain(cond)
    if cond:
        body()
    else:
        orelse()


def while_stmt(test, body, get_state, set_state, names, opts):
    while True:
        c = test()
        check_plain(c)
        if not c:
            break
        body()


def for_stmt(iterable, extra_test, body, get_state, set_state, names, opts):
    check_plain(iterable)
    if extra_test is None:
        for item in iterable:
            body(item)
        return
    # extra_test (the break flag) is checked before the next item is fetched, as
    # Python's `break` leaves a shared iterator positioned after the last item used.
    it = iter(iterable)
    while extra_test():
        try:
            item = next(it)
        except StopIteration:
            return
        body(item)


def if_exp(cond, if_true, if_false, description=None):
    check_plain(cond)
    return if_true() if cond else if_false()


def and_(*operands):
    value = None
    for op in operands:
        value = op()
        check_plain(value)
        if not value:
            return value
    return value


def or_(*operands):
    value = None
    for op in operands:
        value = op()
        check_plain(value)
        if value:
            return value
    return value


def not_(value):
    check_plain(value)
    return not value


def assert_stmt(cond, message):
    check_plain(cond)
    if not cond:
        msg = message()
        if msg is None:
            raise AssertionError
        raise AssertionError(msg)
