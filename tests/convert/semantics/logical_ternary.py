# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: lazy `and`/`or` with side effects (the right operand
must run only when needed, the deciding operand is the result), `not`, chained
comparisons, and conditional expressions whose untaken branch would raise."""

EVENTS = []


def note(v):
    EVENTS.append(v)
    return v


def and_returns_operand(a, b):
    return a and b


def or_returns_operand(a, b):
    return a or b


def lazy_and_side_effect(a, b):
    r = note(a) and note(b)
    return r, list(EVENTS)


def lazy_or_side_effect(a, b):
    r = note(a) or note(b)
    return r, list(EVENTS)


def chain_and_or(a, b, c):
    return note(a) and note(b) or note(c)


def guard_against_none(x):
    return x is not None and x > 3


def guard_index(xs, i):
    return 0 <= i < len(xs) and xs[i]


def default_with_or(x):
    name = x or 'anonymous'
    return name.title()


def not_values(x):
    return not x, not not x


def ternary_lazy(x):
    return 10 // x if x != 0 else 'inf'


def ternary_nested(n):
    return 'neg' if n < 0 else 'zero' if n == 0 else 'small' if n < 10 else 'big'


def ternary_side_effect(flag):
    v = note('yes') if flag else note('no')
    return v, list(EVENTS)


def and_in_if(xs):
    if xs and xs[0] > 0:
        return 'positive head'
    return 'other'


def or_in_while(xs):
    n = 0
    while not xs or xs[-1] != 0:
        if not xs:
            break
        xs.pop()
        n += 1
    return n


def chained_comparison(a, b, c):
    return a < b < c, a == b != c, a <= b >= c


def comparison_raises(a, b):
    return a < b


def logical_in_loop(xs):
    out = []
    for x in xs:
        out.append((x > 0 and 'p') or (x < 0 and 'n') or 'z')
    return out


def short_circuit_avoids_error(d):
    return 'k' in d and d['k'] > 0


def complex_condition(a, b, c):
    if (a or b) and not (b and c):
        return 1
    elif not a and (b or c):
        return 2
    return 3


def all_falsy_or(a, b, c):
    return a or b or c


def all_truthy_and(a, b, c):
    return a and b and c


def is_and_in(x, xs):
    return x is None or x in xs


def walrus_in_condition(xs):
    if (n := len(xs)) > 2 and (m := xs[0]) > 0:
        return n, m
    return n


def bool_of_objects(x):
    if x:
        return 'truthy %r' % (x,)
    return 'falsy %r' % (x,)



# Found by random differential testing (tests/convert/semantics/_convfuzz.py), minimized.

def walrus_in_chained_comparison(a):
    # `4 > abs(a) != (z := a)` binds z only when 4 > abs(a)
    if 4 > abs(a) != (z := a):
        pass
    else:
        return len([q for q in range(3) if z <= 1])

CASES = {
    'and_returns_operand': [(1, 2), (0, 2), ('', 'x'), ([], None)],
    'or_returns_operand': [(1, 2), (0, 2), ('', 0), (None, [])],
    'lazy_and_side_effect': [(0, 1), (1, 2), ('', 'x')],
    'lazy_or_side_effect': [(0, 1), (1, 2), ('', [])],
    'chain_and_or': [(1, 0, 3), (1, 2, 3), (0, 2, 3), (0, 0, 0)],
    'guard_against_none': [(None,), (5,), (1,), ('a',)],
    'guard_index': [([1, 2], 1), ([1], 5), ([], 0), ([0], 0), ([1], 'a')],
    'default_with_or': [('bob',), ('',), (None,), (5,)],
    'not_values': [(0,), (1,), ([],), ('x',)],
    'ternary_lazy': [(2,), (0,), ('a',)],
    'ternary_nested': [(-5,), (0,), (5,), (50,), (None,)],
    'ternary_side_effect': [(True,), (False,)],
    'and_in_if': [([1],), ([-1],), ([],), (['a'],)],
    'or_in_while': [([1, 0, 2, 3],), ([],), ([1, 2],)],
    'chained_comparison': [(1, 2, 3), (2, 2, 3), (3, 2, 1)],
    'comparison_raises': [(1, 2), (1, 'a'), ([1], [2])],
    'logical_in_loop': [([1, -1, 0],), ([],), (['a'],)],
    'short_circuit_avoids_error': [({},), ({'k': 1},), ({'k': 'x'},)],
    'complex_condition': [(1, 0, 0), (1, 1, 1), (0, 1, 0), (0, 0, 1), (0, 0, 0)],
    'all_falsy_or': [(0, '', []), (0, 'a', 1), (None, None, None)],
    'all_truthy_and': [(1, 'a', [1]), (1, 0, 2), (1, 2, 3)],
    'is_and_in': [(None, []), (1, [1]), (2, [1]), (1, None)],
    'walrus_in_condition': [([1, 2, 3],), ([0, 1, 2],), ([],), (None,)],
    'bool_of_objects': [(0,), ([0],), ('',), ({1: 2},)],
    'walrus_in_chained_comparison': [(4,), (0,), (9,)],
}
