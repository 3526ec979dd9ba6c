# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: recursive functions — direct, mutual, tree walks,
recursion with accumulators, recursion inside loops, and recursion that raises."""


def factorial(n):
    if n < 0:
        raise ValueError('negative factorial')
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def power(x, n):
    if n == 0:
        return 1
    if n % 2 == 0:
        h = power(x, n // 2)
        return h * h
    return x * power(x, n - 1)


def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def gcd_rec(a, b):
    if b == 0:
        return a
    return gcd_rec(b, a % b)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def flatten(x):
    if not isinstance(x, list):
        return [x]
    out = []
    for item in x:
        out.extend(flatten(item))
    return out


def depth(x):
    if not isinstance(x, list):
        return 0
    best = 0
    for item in x:
        d = depth(item)
        if d > best:
            best = d
    return best + 1


def tree_sum(t):
    if t is None:
        return 0
    value, left, right = t
    return value + tree_sum(left) + tree_sum(right)


def tree_find(t, v):
    if t is None:
        return False
    value, left, right = t
    if value == v:
        return True
    if v < value:
        return tree_find(left, v)
    return tree_find(right, v)


def permutations(xs):
    if len(xs) <= 1:
        return [list(xs)]
    out = []
    for i in range(len(xs)):
        for rest in permutations(xs[:i] + xs[i + 1:]):
            out.append([xs[i]] + rest)
    return out


def hanoi(n, a, b, c, moves):
    if n == 0:
        return moves
    hanoi(n - 1, a, c, b, moves)
    moves.append((a, c))
    hanoi(n - 1, b, a, c, moves)
    return len(moves)


def binary_search(xs, v, lo=0, hi=None):
    if hi is None:
        hi = len(xs)
    if lo >= hi:
        return -1
    mid = (lo + hi) // 2
    if xs[mid] == v:
        return mid
    if xs[mid] < v:
        return binary_search(xs, v, mid + 1, hi)
    return binary_search(xs, v, lo, mid)


def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


def sum_digits(n):
    return n if n < 10 else n % 10 + sum_digits(n // 10)


def collect_paths(d, prefix, out):
    for k in sorted(d):
        v = d[k]
        if isinstance(v, dict):
            collect_paths(v, prefix + k + '/', out)
        else:
            out.append(prefix + k)
    return out


def count_down_print(n):
    if n < 0:
        return
    print(n)
    count_down_print(n - 1)


def fib_acc(n, a=0, b=1):
    if n == 0:
        return a
    return fib_acc(n - 1, b, a + b)


def merge_sort(xs):
    if len(xs) <= 1:
        return xs
    mid = len(xs) // 2
    left = merge_sort(xs[:mid])
    right = merge_sort(xs[mid:])
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


CASES = {
    'factorial': [(5,), (0,), (-1,), (10,)],
    'power': [(10, 2), (2, 10), (3, 0), (2.5, 3)],
    'gcd': [(12, 18), (7, 0), (0, 0)],
    'gcd_rec': [(12, 18), (17, 5), (1, 'a')],
    'is_even': [(10,), (7,), (0,)],
    'is_odd': [(10,), (7,)],
    'flatten': [([1, [2, [3, 4]], 5],), ([],), (3,)],
    'depth': [([1, [2, [3]]],), ([],), (5,)],
    'tree_sum': [((1, (2, None, None), (3, None, None)),), (None,), ((1, None),)],
    'tree_find': [((5, (3, None, None), (8, None, None)), 8), ((5, None, None), 1), (None, 1)],
    'permutations': [([1, 2, 3],), ([],), ('ab',)],
    'hanoi': [(3, 'a', 'b', 'c', []), (0, 'a', 'b', 'c', [])],
    'binary_search': [([1, 3, 5, 7, 9], 7), ([1, 3], 2), ([], 1)],
    'ackermann': [(2, 3), (1, 1), (0, 0)],
    'sum_digits': [(12345,), (7,), ('a',)],
    'collect_paths': [({'a': {'b': 1, 'c': {'d': 2}}, 'e': 3}, '', []), ({}, '/', [])],
    'count_down_print': [(3,), (-1,)],
    'fib_acc': [(10,), (0,), (30,)],
    'merge_sort': [([5, 2, 9, 1, 5, 6],), ([],), ([1, 'a'],)],
}
