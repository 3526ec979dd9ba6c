# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: list literals, append/pop (with and without index),
subscript loads and stores, slices (load, store, delete, steps, negative indices),
tuples and strings indexed in loops, and index errors."""


def build_with_append(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return out


def pop_all(xs):
    out = []
    while xs:
        out.append(xs.pop())
    return out


def pop_front(xs):
    first = xs.pop(0)
    return first, xs


def pop_empty(n):
    xs = []
    for i in range(n):
        xs.append(i)
    return xs.pop()


def stack_machine(program):
    stack = []
    for op in program:
        if op == '+':
            b = stack.pop()
            a = stack.pop()
            stack.append(a + b)
        elif op == '*':
            b = stack.pop()
            a = stack.pop()
            stack.append(a * b)
        elif op == 'dup':
            stack.append(stack[-1])
        else:
            stack.append(op)
    return stack


def subscript_assign(xs, i, v):
    xs[i] = v
    return xs


def subscript_assign_in_loop(n):
    xs = [0] * n
    for i in range(n):
        xs[i] = i * 3
        if i > 0:
            xs[i] += xs[i - 1]
    return xs


def dict_subscript(d, k):
    d[k] = d.get(k, 0) + 1
    return d[k]


def slice_reads(xs):
    return xs[1:], xs[:-1], xs[::2], xs[::-1], xs[1:4:2]


def slice_assign(xs, v):
    xs[:2] = v
    return xs


def slice_delete(xs):
    del xs[::2]
    return xs


def negative_index(xs):
    return xs[-1], xs[-2]


def index_error(xs, i):
    return xs[i]


def nested_subscripts(m, i, j):
    m[i][j] = m[j][i] + 1
    return m


def string_indexing(s):
    out = ''
    for i in range(len(s)):
        if i % 2 == 0:
            out += s[i]
        else:
            out += s[i].upper()
    return out


def list_of_lists_append(n):
    rows = []
    for i in range(n):
        row = []
        for j in range(i):
            row.append(j)
        rows.append(row)
    return rows


def list_multiplication_alias(n):
    grid = [[0] * 2] * n
    if n:
        grid[0][0] = 5
    return grid


def tuple_unpack_in_loop(pairs):
    firsts = []
    seconds = []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return firsts, seconds


def starred_unpack(xs):
    first, *middle, last = xs
    return first, middle, last


def list_methods(xs):
    ys = list(xs)
    ys.extend([7, 8])
    ys.insert(0, -1)
    ys.remove(7)
    return ys.index(8), ys.count(-1), ys


def copy_vs_alias(xs):
    a = xs
    b = xs[:]
    a.append(1)
    b.append(2)
    return xs, b


def subscript_attribute_target(n):
    class Holder:
        pass
    h = Holder()
    h.items = [0, 0, 0]
    for i in range(n):
        h.items[i % 3] += i
    return h.items


def pop_in_condition(xs):
    if xs and xs.pop() > 0:
        return 'popped positive', xs
    return 'no', xs


def tuple_item_assign(t):
    t[0] = 1
    return t


CASES = {
    'build_with_append': [(4,), (0,), ('a',)],
    'pop_all': [([1, 2, 3],), ([],)],
    'pop_front': [([1, 2],), ([],)],
    'pop_empty': [(3,), (0,)],
    'stack_machine': [([1, 2, '+', 3, '*'],), ([1, 'dup', '+'],), (['+'],), ([],)],
    'subscript_assign': [([1, 2, 3], 1, 'x'), ([1], 5, 0), ({}, 'k', 1)],
    'subscript_assign_in_loop': [(5,), (0,)],
    'dict_subscript': [({}, 'a'), ({'a': 4}, 'a'), ({'a': 'x'}, 'a')],
    'slice_reads': [([1, 2, 3, 4, 5],), ([],), ('hello',)],
    'slice_assign': [([1, 2, 3], [9]), ([], [1, 2]), ([1, 2], 5)],
    'slice_delete': [([1, 2, 3, 4, 5],), ([],)],
    'negative_index': [([1, 2, 3],), ([1],)],
    'index_error': [([1, 2], 1), ([1, 2], 2), ([1], 'a'), ({}, 'k')],
    'nested_subscripts': [([[1, 2], [3, 4]], 0, 1), ([[1]], 0, 1)],
    'string_indexing': [('abcdef',), ('',), (None,)],
    'list_of_lists_append': [(4,), (0,)],
    'list_multiplication_alias': [(3,), (0,)],
    'tuple_unpack_in_loop': [([(1, 2), (3, 4)],), ([],), ([(1,)],)],
    'starred_unpack': [([1, 2, 3, 4],), ([1, 2],), ([1],)],
    'list_methods': [([1, 2],), ([],)],
    'copy_vs_alias': [([0],), ([],)],
    'subscript_attribute_target': [(7,), (0,)],
    'pop_in_condition': [([1, 2],), ([1, -2],), ([],)],
    'tuple_item_assign': [((0, 1),), ([0],)],
}
