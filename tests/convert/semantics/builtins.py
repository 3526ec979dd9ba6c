# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: calls of the builtins the converter rewrites (print,
len, range, enumerate, zip, int, float, bool, abs, min, max, sum, isinstance) with all
their argument forms and errors, and shadowed builtins that must NOT be rewritten."""


def use_len(x):
    return len(x)


def use_range_forms(a, b, c):
    return list(range(a)), list(range(a, b)), list(range(a, b, c))


def use_enumerate_start(xs, start):
    out = []
    for i, x in enumerate(xs, start):
        out.append((i, x))
    return out


def use_zip_strict(a, b):
    return list(zip(a, b, strict=True))


def use_zip_three(a, b, c):
    total = 0
    for x, y, z in zip(a, b, c):
        total += x * y * z
    return total


def use_int(x):
    return int(x)


def use_int_base(s, base):
    return int(s, base)


def use_float(x):
    return float(x)


def use_bool(x):
    return bool(x), type(bool(x)).__name__


def use_abs(x):
    return abs(x)


def use_min_max(xs):
    return min(xs), max(xs)


def use_min_max_args(a, b, c):
    return min(a, b, c), max(a, b, c)


def use_min_default(xs):
    return min(xs, default='empty'), max(xs, key=lambda v: -v, default=None)


def use_sum_start(xs, start):
    return sum(xs, start)


def use_isinstance(x):
    if isinstance(x, bool):
        return 'bool'
    if isinstance(x, (int, float)):
        return 'number'
    if isinstance(x, str):
        return 'str'
    return 'other'


def isinstance_bad_type(x):
    return isinstance(x, 5)


def print_forms(a, b):
    print(a, b)
    print(a, b, sep='-')
    print(a, end='!')
    print()
    print(*[a, b], sep='')


def shadowed_len(xs):
    def len(v):
        return 'mine'
    return len(xs)


def shadowed_by_param(print, x):
    return print(x)


def shadowed_range_local(n):
    range = lambda k: [k, k]
    out = []
    for i in range(n):
        out.append(i)
    return out


def builtins_in_loop(rows):
    widths = []
    for row in rows:
        if len(row) == 0:
            continue
        widths.append(max(len(str(c)) for c in row))
    return widths


def nested_builtin_calls(xs):
    return abs(min(xs)) + int(float(max(xs)))


def sorted_reversed(xs):
    return sorted(xs), list(reversed(xs)), sorted(xs, reverse=True)


def divmod_round(a, b):
    return divmod(a, b), round(a / b, 2)


def str_repr_format(x):
    return str(x), repr(x), format(x, '>5') if isinstance(x, str) else format(x, '05d')


def map_builtin(xs):
    return list(map(int, xs))


def range_float_error(x):
    for i in range(x):
        pass
    return x


CASES = {
    'use_len': [([1, 2],), ('abc',), (5,), ({},)],
    'use_range_forms': [(1, 5, 2), (5, 1, -1), (0, 0, 1), (1, 2, 0)],
    'use_enumerate_start': [(['a', 'b'], 1), ([], 0), (['a'], 'x')],
    'use_zip_strict': [([1, 2], [3, 4]), ([1], [1, 2])],
    'use_zip_three': [([1, 2], [3, 4], [5, 6, 7]), ([], [], [])],
    'use_int': [('42',), (3.9,), (True,), ('x',), (None,)],
    'use_int_base': [('ff', 16), ('101', 2), ('9', 8)],
    'use_float': [('1.5',), (2,), ('inf',), ('x',)],
    'use_bool': [(0,), ('a',), ([],)],
    'use_abs': [(-3,), (2.5,), (True,), ('a',)],
    'use_min_max': [([3, 1, 2],), ('hello',), ([],)],
    'use_min_max_args': [(3, 1, 2), ('b', 'a', 'c'), (1, 'a', 2)],
    'use_min_default': [([],), ([1, 2],)],
    'use_sum_start': [([1, 2], 10), ([[1], [2]], []), ([1.5], 0), (['a'], '')],
    'use_isinstance': [(True,), (1,), (1.5,), ('s',), (None,)],
    'isinstance_bad_type': [(1,)],
    'print_forms': [(1, 'x'), ([1], None)],
    'shadowed_len': [([1, 2],)],
    'shadowed_by_param': [(len, 'abc'), (str, 5)],
    'shadowed_range_local': [(3,), (0,)],
    'builtins_in_loop': [([[1, 22], [], ['abc']],), ([],)],
    'nested_builtin_calls': [([-3, 2, 7],), ([],)],
    'sorted_reversed': [([3, 1, 2],), ([],), ([1, 'a'],)],
    'divmod_round': [(7, 2), (-7, 2), (1, 0)],
    'str_repr_format': [('ab',), (42,), (1.5,)],
    'map_builtin': [(['1', '2'],), (['x'],)],
    'range_float_error': [(2,), (2.0,)],
}
