# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: places where a conversion that implements return,
break or continue with flags or exceptions could be observed by user code — bare
`except:`, `except BaseException`, `except Exception`, context managers whose
`__exit__` sees the exception, `finally` blocks, and generators and sys.exc_info()."""

import sys


class Spy:
    """A context manager recording the exception type its __exit__ receives."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        self.log.append(et.__name__ if et else None)
        return False


class Swallow:
    """A context manager that suppresses every exception its body raises."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        self.log.append(et.__name__ if et else None)
        return True


def return_inside_bare_except(x):
    try:
        if x:
            return 'returned'
    except:  # noqa: E722
        return 'caught'
    return 'fell through'


def return_inside_base_exception_handler(xs):
    for x in xs:
        try:
            if x == 2:
                return 'two'
        except BaseException as e:
            return 'caught ' + type(e).__name__
    return 'none'


def break_inside_bare_except(xs):
    n = 0
    for x in xs:
        try:
            if x < 0:
                break
            n += x
        except:  # noqa: E722
            n = -1000
    return n


def continue_inside_except_exception(xs):
    out = []
    for x in xs:
        try:
            if x % 2:
                continue
            out.append(x)
        except Exception as e:
            out.append(type(e).__name__)
    return out


def return_through_spy(log, x):
    with Spy(log):
        if x:
            return 'inside'
    return 'outside'


def break_through_spy(log, xs):
    for x in xs:
        with Spy(log):
            if x:
                break
    return len(log)


def continue_through_spy(log, xs):
    total = 0
    for x in xs:
        with Spy(log):
            if x < 0:
                continue
            total += x
    return total


def return_through_swallow(log, x):
    with Swallow(log):
        if x:
            return 'inside'
        log.append('body end')
    return 'after with'


def break_through_swallow(log, xs):
    count = 0
    for x in xs:
        with Swallow(log):
            if x == 'b':
                break
            count += 1
    return count


def exc_info_inside_loop(xs):
    seen = []
    for x in xs:
        if x:
            seen.append(sys.exc_info()[0])
            continue
    return seen


def return_in_finally_loop(xs):
    for x in xs:
        try:
            pass
        finally:
            if x == 1:
                return 'from finally'
    return 'end'


def break_in_try_with_else(xs):
    log = []
    for x in xs:
        try:
            if x:
                break
        except ValueError:
            log.append('except')
        else:
            log.append('else %r' % x)
        finally:
            log.append('finally %r' % x)
    return log


def return_value_evaluated_before_finally(xs):
    try:
        return len(xs)
    finally:
        xs.append('finally')


def nested_return_in_lambda_call(xs):
    for x in xs:
        if (lambda v: v > 1)(x):
            return x
    return None


def generator_close_on_break(log):
    def gen():
        try:
            for i in range(5):
                yield i
        finally:
            log.append('closed')
    g = gen()
    for v in g:
        if v == 1:
            break
    g.close()
    return log


def raise_inside_loop_caught_outside(xs):
    try:
        for x in xs:
            if x is None:
                raise LookupError('none')
            if x == 0:
                return 'zero'
    except LookupError as e:
        return 'caught ' + str(e)
    return 'done'


def exception_context_preserved(x):
    try:
        try:
            raise KeyError(x)
        except KeyError:
            if x:
                raise ValueError('wrapped')
            return 'inner'
    except ValueError as e:
        return type(e.__context__).__name__



# Found by random differential testing (tests/convert/semantics/_convfuzz.py), minimized.

def finally_raise_cancels_break(xs):
    # the finally raises: the pending break is discarded, the loop goes on
    g = 0
    for t in range(3):
        try:
            g -= 2
            try:
                break
            finally:
                xs[5]
        except IndexError:
            pass
    return g


def finally_raise_cancels_return(xs):
    try:
        try:
            return 1
        finally:
            xs[5]
    except IndexError:
        pass
    return 2


def nested_def_return_in_with(a):
    # snek: a return inside `with` in a nested def must not be an exception the
    # manager can swallow
    log = []

    def g1(p):
        with Swallow(log):
            if p:
                return p - 1
    return g1(a), log

CASES = {
    'return_inside_bare_except': [(1,), (0,)],
    'return_inside_base_exception_handler': [([1, 2, 3],), ([],)],
    'break_inside_bare_except': [([1, 2, -1, 5],), ([],)],
    'continue_inside_except_exception': [([1, 2, 3, 4],), ([],)],
    'return_through_spy': [([], 1), ([], 0)],
    'break_through_spy': [([], [0, 0, 1, 0]), ([], [])],
    'continue_through_spy': [([], [1, -2, 3]), ([], [])],
    'return_through_swallow': [([], 1), ([], 0)],
    'break_through_swallow': [([], ['a', 'b', 'c']), ([], [])],
    'exc_info_inside_loop': [([1, 0, 1],), ([],)],
    'return_in_finally_loop': [([0, 1, 2],), ([],)],
    'break_in_try_with_else': [([0, 0, 1, 0],), ([],)],
    'return_value_evaluated_before_finally': [([1],), ([],)],
    'nested_return_in_lambda_call': [([0, 1, 5],), ([],)],
    'generator_close_on_break': [([],)],
    'raise_inside_loop_caught_outside': [([1, None],), ([1, 0, None],), ([],)],
    'exception_context_preserved': [(1,), (0,)],
    'finally_raise_cancels_break': [([1],), ([1, 2, 3, 4, 5, 6],)],
    'finally_raise_cancels_return': [([1],), ([1, 2, 3, 4, 5, 6],)],
    'nested_def_return_in_with': [(3,), (0,)],
}
