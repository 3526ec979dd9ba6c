# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: loops with break and continue, nested loops, loop
variables after the loop. Each function's inputs are in CASES at the bottom."""


def first_negative(xs):
    found = None
    for x in xs:
        if x < 0:
            found = x
            break
    return found


def sum_skip_odd(xs):
    total = 0
    for x in xs:
        if x % 2:
            continue
        total += x
    return total


def count_until_zero(xs):
    n = 0
    i = 0
    while i < len(xs):
        if xs[i] == 0:
            break
        n += 1
        i += 1
    return n, i


def nested_break_inner(rows):
    out = []
    for row in rows:
        for v in row:
            if v is None:
                break
            out.append(v)
        out.append('|')
    return out


def nested_continue_outer_flag(rows):
    kept = []
    for row in rows:
        bad = False
        for v in row:
            if v < 0:
                bad = True
                break
        if bad:
            continue
        kept.append(sum(row))
    return kept


def find_pair(xs, target):
    result = None
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] + xs[j] == target:
                result = (i, j)
                break
        if result is not None:
            break
    return result


def while_true_break(n):
    steps = 0
    while True:
        if n == 1:
            break
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def continue_in_while(n):
    i = 0
    acc = []
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        acc.append(i)
    return acc


def break_continue_mix(xs):
    out = []
    for x in xs:
        if x == 'skip':
            continue
        if x == 'stop':
            break
        out.append(x.upper())
    return out


def loop_var_after_break(xs):
    for x in xs:
        if x > 10:
            break
    return x


def loop_var_after_full_loop(n):
    for i in range(n):
        pass
    return i


def print_in_loop_with_continue(xs):
    for i, x in enumerate(xs):
        if not x:
            print('empty at', i)
            continue
        print(i, x)


def triple_nested(n):
    hits = 0
    for a in range(n):
        for b in range(n):
            if b > a:
                break
            for c in range(n):
                if c == b:
                    continue
                if a + b + c > n:
                    break
                hits += 1
    return hits


def break_from_while_in_for(xs):
    res = []
    for x in xs:
        k = x
        while k > 0:
            if k == 3:
                break
            k -= 1
        res.append(k)
    return res


def continue_after_mutation(xs):
    for i in range(len(xs)):
        xs[i] = xs[i] * 2
        if xs[i] > 5:
            continue
        xs[i] = -xs[i]
    return len(xs)


def raise_in_loop(xs):
    total = 0
    for x in xs:
        if x is None:
            raise ValueError('none in input at total %d' % total)
        total += x
    return total


def loop_over_dict(d):
    keys = []
    for k in d:
        if k.startswith('_'):
            continue
        keys.append(k)
        if len(keys) == 2:
            break
    return keys


def augmented_counter(s):
    vowels = 0
    others = 0
    for ch in s:
        if ch in 'aeiou':
            vowels += 1
            continue
        if ch == ' ':
            continue
        others += 1
    return vowels, others


CASES = {
    'first_negative': [([1, 2, -3, -4],), ([1, 2],), ([],), ([1, 'a'],)],
    'sum_skip_odd': [([1, 2, 3, 4],), ([],), ([5, 7],), ([2, None],)],
    'count_until_zero': [([3, 4, 0, 5],), ([],), ([1, 2],), ([0],)],
    'nested_break_inner': [([[1, 2, None, 3], [4]],), ([],), ([[None]],), ([[1], 5],)],
    'nested_continue_outer_flag': [([[1, 2], [3, -1], [4]],), ([[]],), ([[1, 'x']],)],
    'find_pair': [([1, 2, 3, 4], 7), ([1, 2], 10), ([], 0), ([1, 2, 3], 4)],
    'while_true_break': [(1,), (6,), (27,), (7,)],
    'continue_in_while': [(10,), (0,), (3,), ('a',)],
    'break_continue_mix': [(['a', 'skip', 'b', 'stop', 'c'],), ([],), (['x', 1],)],
    'loop_var_after_break': [([1, 20, 3],), ([1, 2],), ([],)],
    'loop_var_after_full_loop': [(3,), (1,), (0,)],
    'print_in_loop_with_continue': [(['a', '', 'b'],), ([],), ([0, 1, 2],)],
    'triple_nested': [(3,), (5,), (0,)],
    'break_from_while_in_for': [([5, 2, 3, 0],), ([],), ([1, 'a'],)],
    'continue_after_mutation': [([1, 2, 3, 4],), ([],), ([1, None],)],
    'raise_in_loop': [([1, 2, 3],), ([1, None, 3],), ([],)],
    'loop_over_dict': [({'a': 1, '_b': 2, 'c': 3, 'd': 4},), ({},), ({'_x': 1},)],
    'augmented_counter': [('hello world',), ('',), ('aeiou',), (None,)],
}
