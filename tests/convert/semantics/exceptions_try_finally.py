# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: try/except/else/finally, raise and re-raise, custom
exception classes, exceptions raised inside converted if/while/for, and handlers that
contain control flow."""


class AppError(Exception):
    pass


class DetailError(AppError):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


def safe_div(a, b):
    try:
        r = a / b
    except ZeroDivisionError:
        r = None
    return r


def try_else_finally(log, x):
    try:
        v = int(x)
    except ValueError:
        log.append('bad')
        v = -1
    else:
        log.append('ok')
    finally:
        log.append('done')
    return v


def raise_custom(n):
    if n < 0:
        raise DetailError(n, 'negative: %d' % n)
    if n == 0:
        raise AppError('zero')
    return n


def catch_base_class(n):
    try:
        return raise_custom(n)
    except AppError as e:
        return type(e).__name__ + ':' + str(e)


def reraise(x):
    try:
        return [1, 2][x]
    except IndexError:
        print('reraising')
        raise


def raise_from(x):
    try:
        return {'a': 1}[x]
    except KeyError as e:
        raise ValueError('no key ' + repr(x)) from e


def raise_in_while(n):
    i = 0
    while True:
        i += 1
        if i > n:
            raise StopIteration('stopped at %d' % i)
        if i == 5:
            return i


def raise_in_for_in_if(xs, strict):
    out = []
    for x in xs:
        if strict:
            if x < 0:
                raise ValueError(x)
        out.append(abs(x))
    return out


def except_in_loop_continue(xs):
    good = []
    for x in xs:
        try:
            v = int(x)
        except (TypeError, ValueError):
            continue
        good.append(v)
    return good


def except_in_loop_break(xs):
    n = 0
    for x in xs:
        try:
            n += 10 // x
        except ZeroDivisionError:
            break
    return n


def finally_runs_on_break(xs, log):
    for x in xs:
        try:
            if x == 'b':
                break
            log.append(x)
        finally:
            log.append('f' + x)
    return log


def finally_runs_on_continue(xs, log):
    for x in xs:
        try:
            if x % 2:
                continue
            log.append(x)
        finally:
            log.append(-x)
    return sum(log)


def nested_try(x):
    try:
        try:
            if x == 1:
                raise KeyError('k')
            if x == 2:
                raise ValueError('v')
            return 'none'
        except KeyError:
            return 'inner key'
        finally:
            print('inner finally', x)
    except ValueError as e:
        return 'outer ' + str(e)


def exception_var_cleared(x):
    e = 'before'
    try:
        raise ValueError(x)
    except ValueError as e:
        msg = str(e)
    try:
        return e
    except NameError:
        return 'cleared ' + msg


def handler_with_if(x):
    try:
        return 100 // x
    except ZeroDivisionError:
        if x == 0:
            return 'zero'
        return 'impossible'
    except TypeError:
        return None


def exception_in_condition(xs):
    count = 0
    for x in xs:
        if x.startswith('a'):
            count += 1
    return count


def exception_in_while_test(d):
    n = 0
    while d['k'] > n:
        n += 1
    return n


def assert_in_loop(xs):
    for x in xs:
        assert x >= 0, 'negative %r' % x
    return len(xs)


def assert_no_message(x):
    assert x
    return 'ok'


def try_finally_state(xs):
    total = 0
    try:
        for x in xs:
            total += x
    finally:
        print('total so far', total)
    return total


def raise_non_exception(x):
    if x:
        raise x
    return 'nothing'


def catch_all_returns_type(f, *args):
    try:
        f(*args)
    except Exception as e:
        return type(e).__name__
    return 'no error'


CASES = {
    'safe_div': [(1, 2), (1, 0), ('a', 1)],
    'try_else_finally': [([], '12'), ([], 'x'), ([], None)],
    'raise_custom': [(3,), (0,), (-2,)],
    'catch_base_class': [(3,), (0,), (-2,), ('a',)],
    'reraise': [(1,), (5,), ('a',)],
    'raise_from': [('a',), ('b',)],
    'raise_in_while': [(3,), (10,), ('a',)],
    'raise_in_for_in_if': [([1, -2], True), ([1, -2], False), ([], True)],
    'except_in_loop_continue': [(['1', 'x', None, 2.5],), ([],)],
    'except_in_loop_break': [([1, 2, 0, 5],), ([3],), (['a'],)],
    'finally_runs_on_break': [(['a', 'b', 'c'], []), ([], []), ([1], [])],
    'finally_runs_on_continue': [([1, 2, 3, 4], []), ([], [])],
    'nested_try': [(0,), (1,), (2,)],
    'exception_var_cleared': [('m',)],
    'handler_with_if': [(5,), (0,), ('a',)],
    'exception_in_condition': [(['ab', 'b', 'ac'],), (['a', 1],), ([],)],
    'exception_in_while_test': [({'k': 3},), ({},), ({'k': 'x'},)],
    'assert_in_loop': [([1, 2],), ([1, -1],), ([],)],
    'assert_no_message': [(1,), (0,)],
    'try_finally_state': [([1, 2, 3],), ([1, 'a'],)],
    'raise_non_exception': [(0,), (5,)],
    'catch_all_returns_type': [(int, 'x'), (len, 5), (len, 'ab')],
}
