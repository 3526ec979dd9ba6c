# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: returns anywhere — inside if/elif chains, loops, nested
loops, while/else, try/finally and with blocks, and functions that fall off the end."""


class Box:
    """A context manager that records enter/exit in a log list."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append('enter')
        return self

    def __exit__(self, et, ev, tb):
        self.log.append('exit' if et is None else 'exit-' + et.__name__)
        return False


def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


def classify(n):
    if n < 0:
        return 'negative'
    if n == 0:
        return 'zero'
    if n % 2 == 0:
        if n > 100:
            return 'big even'
        return 'even'
    return 'odd'


def index_of(xs, v):
    for i, x in enumerate(xs):
        if x == v:
            return i
    return -1


def index_of_nested(grid, v):
    for r, row in enumerate(grid):
        for c, x in enumerate(row):
            if x == v:
                return r, c
    return None


def return_in_while(n):
    i = 0
    while i < n:
        if i * i > n:
            return i
        i += 1
    return -i


def return_in_while_else(xs):
    i = 0
    while i < len(xs):
        if xs[i] == 'x':
            return 'found at %d' % i
        i += 1
    else:
        return 'not found after %d' % i


def implicit_none(x):
    if x:
        return x * 2


def return_nothing(x):
    if x > 1:
        return
    print('small', x)


def return_in_try_finally(log, x):
    try:
        log.append('try')
        if x:
            return 'early'
        log.append('after')
    finally:
        log.append('finally')
    return 'late'


def finally_overrides(x):
    try:
        return x
    finally:
        if x == 2:
            return 'override'


def return_in_with(log, x):
    with Box(log):
        if x > 0:
            return 'pos'
        log.append('body')
    return 'nonpos'


def return_in_except(x):
    try:
        return 10 // x
    except ZeroDivisionError:
        return 'div0'
    except TypeError as e:
        return 'type: ' + str(e)


def return_from_loop_with_finally(xs, log):
    for x in xs:
        try:
            if x == 3:
                return x
        finally:
            log.append(x)
    return None


def return_after_loop_state(xs):
    best = None
    for x in xs:
        if best is None or x > best:
            best = x
        if best > 50:
            return best, 'capped'
    return best, 'full'


def return_expression_side_effect(xs):
    for x in xs:
        if x < 0:
            return xs.pop()
    return xs.pop(0)


def nested_function_return(n):
    def helper(k):
        for i in range(k):
            if i == 2:
                return 'two'
        return 'less'
    return helper(n) + '/' + helper(n - 1)


def return_tuple_unpack(p):
    a, b = p
    if a > b:
        return b, a
    return a, b


def return_in_for_else(xs):
    for x in xs:
        if x is None:
            break
    else:
        return 'clean'
    return 'had none'


def many_returns(a, b, c):
    if a:
        if b:
            return 1
        elif c:
            return 2
        else:
            for i in range(3):
                if i == c:
                    return 3
            return 4
    while b:
        b -= 1
        if b == c:
            return 5
    return 6


def return_raises_late(x):
    if x == 0:
        return 'zero'
    if x == 1:
        raise KeyError('one')
    return 1 / (x - 2)


def return_in_deep_loop(n):
    for a in range(n):
        for b in range(n):
            for c in range(n):
                if a * b * c == 8:
                    return (a, b, c)
    return ()


CASES = {
    'sign': [(5,), (-2,), (0,), ('a',)],
    'classify': [(-1,), (0,), (4,), (102,), (7,), (None,)],
    'index_of': [([1, 2, 3], 2), ([], 1), ([1, 1], 1), (None, 1)],
    'index_of_nested': [([[1, 2], [3, 4]], 4), ([[1]], 9), ([], 0), ([[1], 2], 5)],
    'return_in_while': [(10,), (0,), (1,), ('x',)],
    'return_in_while_else': [(['a', 'x'],), (['a'],), ([],), (None,)],
    'implicit_none': [(3,), (0,), ('',), ('ab',)],
    'return_nothing': [(5,), (0,), (None,)],
    'return_in_try_finally': [([], True), ([], False), (None, True)],
    'finally_overrides': [(1,), (2,), (None,)],
    'return_in_with': [([], 1), ([], -1), ([], 'a')],
    'return_in_except': [(2,), (0,), ('a',), (None,)],
    'return_from_loop_with_finally': [([1, 2, 3, 4], []), ([], []), ([1], None)],
    'return_after_loop_state': [([3, 9, 2],), ([10, 60, 1],), ([],), ([1, 'a'],)],
    'return_expression_side_effect': [([1, -2, 3],), ([1, 2],), ([],)],
    'nested_function_return': [(5,), (2,), (0,), ('a',)],
    'return_tuple_unpack': [((1, 2),), ((3, 1),), ((1,),), (None,)],
    'return_in_for_else': [([1, 2],), ([1, None],), ([],)],
    'many_returns': [(1, 1, 0), (1, 0, 1), (1, 0, 0), (1, 0, 5), (0, 4, 2), (0, 2, 7), (0, 0, 0)],
    'return_raises_late': [(0,), (1,), (2,), (4,)],
    'return_in_deep_loop': [(5,), (2,), (0,)],
}
