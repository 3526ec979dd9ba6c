# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: mutation of arguments (lists, dicts, sets, objects),
of module globals, aliasing, in-place operators, and rebinding versus mutating."""

STATE = {'count': 0, 'items': []}
TOTALS = [0, 0]


class Rec:
    def __init__(self):
        self.tags = []
        self.n = 0


def double_in_place(xs):
    for i in range(len(xs)):
        xs[i] *= 2


def rebind_does_not_mutate(xs):
    xs = xs + [99]
    return xs


def extend_vs_concat(xs, ys):
    if len(ys) > 1:
        xs += ys
    else:
        xs = xs + ys
    return xs


def dict_update_in_loop(d, keys):
    for k in keys:
        if k in d:
            d[k] += 1
        else:
            d[k] = 1
    return len(d)


def remove_negatives(xs):
    i = 0
    while i < len(xs):
        if xs[i] < 0:
            del xs[i]
        else:
            i += 1
    return xs


def set_mutation(s, xs):
    for x in xs:
        if x in s:
            s.discard(x)
        else:
            s.add(x)
    return len(s)


def object_mutation(r, tags):
    for t in tags:
        if t:
            r.tags.append(t)
            r.n += 1
    return r.n


def global_state_update(item):
    STATE['count'] += 1
    if item is not None:
        STATE['items'].append(item)
    return STATE['count']


def global_list_index(i, v):
    TOTALS[i] += v
    return TOTALS


def alias_mutation(xs):
    ys = xs
    ys.append('alias')
    zs = list(xs)
    zs.append('copy')
    return len(xs), len(zs)


def nested_mutation(grid):
    for row in grid:
        for j in range(len(row)):
            if row[j] is None:
                row[j] = 0
    return grid


def swap_elements(xs, i, j):
    xs[i], xs[j] = xs[j], xs[i]
    return xs


def mutate_then_raise(xs):
    xs.append(1)
    if len(xs) > 2:
        raise OverflowError('too long: %d' % len(xs))
    xs.append(2)
    return xs


def pop_until(xs, stop):
    popped = []
    while xs:
        v = xs.pop()
        if v == stop:
            break
        popped.append(v)
    return popped


def clear_and_fill(d, n):
    d.clear()
    for i in range(n):
        d[i] = i * i
    return d


def sort_in_place(xs, reverse):
    if reverse:
        xs.sort(reverse=True)
    else:
        xs.sort()
    return None


def insert_sorted(xs, v):
    for i, x in enumerate(xs):
        if v < x:
            xs.insert(i, v)
            return i
    xs.append(v)
    return len(xs) - 1


def mutate_default_kwargs(x, **opts):
    opts['seen'] = True
    if x:
        opts['x'] = x
    return opts


def counter_in_dict_of_lists(pairs, d):
    for k, v in pairs:
        d.setdefault(k, []).append(v)
    return sorted(d)


def slice_assign_mutation(xs):
    xs[1:3] = ['a', 'b', 'c']
    return xs


def reverse_in_place(xs):
    i, j = 0, len(xs) - 1
    while i < j:
        xs[i], xs[j] = xs[j], xs[i]
        i += 1
        j -= 1


CASES = {
    'double_in_place': [([1, 2, 3],), ([],), (['a'],), ((1, 2),)],
    'rebind_does_not_mutate': [([1],), ([],)],
    'extend_vs_concat': [([1], [2, 3]), ([1], [2]), ([], [])],
    'dict_update_in_loop': [({'a': 1}, ['a', 'b', 'a']), ({}, []), ({'a': 'x'}, ['a'])],
    'remove_negatives': [([1, -2, -3, 4, -5],), ([],), ([1, 'a'],)],
    'set_mutation': [({1, 2}, [2, 3]), (set(), []), (frozenset(), [1])],
    'object_mutation': [(Rec(), ['a', '', 'b']), (Rec(), []), (None, ['a'])],
    'global_state_update': [('x',), (None,)],
    'global_list_index': [(0, 5), (1, -1), (2, 1)],
    'alias_mutation': [([1],), ([],)],
    'nested_mutation': [([[1, None], [None]],), ([],)],
    'swap_elements': [([1, 2, 3], 0, 2), ([1], 0, 0), ([1], 0, 5)],
    'mutate_then_raise': [([],), ([0],), ([0, 0],)],
    'pop_until': [([1, 2, 3, 4], 2), ([1, 2], 9), ([], 1)],
    'clear_and_fill': [({'a': 1}, 3), ({}, 0)],
    'sort_in_place': [([3, 1, 2], False), ([3, 1, 2], True), ([1, 'a'], False)],
    'insert_sorted': [([1, 3, 5], 4), ([1, 3], 9), ([], 1)],
    'mutate_default_kwargs': [(1,), {'args': (0,), 'kwargs': {'a': 2}}],
    'counter_in_dict_of_lists': [([('a', 1), ('b', 2), ('a', 3)], {}), ([], {'z': [0]})],
    'slice_assign_mutation': [([1, 2, 3, 4],), ([],)],
    'reverse_in_place': [([1, 2, 3, 4, 5],), ([],), ([1, 2],)],
}
