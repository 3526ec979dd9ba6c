# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: item assignment `x[K] = v` and `x[K] op= v` with any
key (the converter's set_item rewrite, docs/converter.md "Item assignment"). Python
evaluates v, then x, then K, then calls __setitem__ (augmented: x, K, __getitem__, v,
the operator, __setitem__), each exactly once: keys and values with side effects that
print, keys and values that raise, a __getitem__ that raises, walrus in the key (and a
walrus or a nested function rebinding x itself), possibly unbound targets and values,
nested subscripts, slices with computed bounds, tuple and starred keys, inside
converted loops and ifs."""


def say(tag, v):
    print(tag, v)
    return v


class Box:
    """Logs every item access, so the order of __getitem__ / __setitem__ shows."""

    def __init__(self, n):
        self.items = list(range(n))

    def __getitem__(self, k):
        print('get', k)
        return self.items[k]

    def __setitem__(self, k, v):
        print('set', k, v)
        self.items[k] = v


def value_then_key(xs, i):
    xs[say('key', i + 1)] = say('value', 10)
    return xs


def key_raises(xs, i):
    xs[1 // i] = say('value', 3)
    return xs


def value_raises(xs, i):
    xs[say('key', 0)] = 1 // i
    return xs


def getitem_raises(xs, i):
    xs[say('key', i)] += say('value', 1)
    return xs


def aug_order(n, i):
    b = Box(n)
    b[say('key', i - 1)] += say('value', 5)
    b[say('k', 0):say('hi', i)] = say('v', [7])
    b[i % n] *= 2
    return b.items


def aug_value_raises(xs, i):
    b = Box(3)
    b[say('key', i)] -= 1 // (i - 1)
    return b.items


def walrus_key(xs, i):
    xs[(j := i - 1)] = say('v', j * 2)
    xs[(k := say('k', i))] += k
    return xs, j, k


def walrus_key_rebinds_value(xs, flag):
    # _convfuzz seed 5177: the value y is read before the key rebinds it
    y = 0
    xs[(y := flag)] = y
    return xs, y


def walrus_value_rebinds_key(xs, i):
    xs[i] = (i := i + 1)  # the key i is read after the value rebinds it
    return xs, i


def walrus_value_before_key(xs, i):
    xs[(j := i)] = j  # the value is read first: j is unbound
    return xs


def walrus_rebinds_target(xs, i):
    xs[(xs := [0, 0, 0])[i]] = 5  # sets the old list's item; xs is the new one
    return xs


def walrus_value_rebinds_target(xs, i):
    xs[i] = len(xs := [5, 6, 7])
    return xs


def nonlocal_rebinds_target(i):
    xs = [1, 2, 3]

    def swap():
        nonlocal xs
        xs = [7, 8, 9]
        return i

    xs[1] = swap()  # the value first: the new list gets the item
    zs = xs
    xs[swap()] = 0
    ys = xs
    xs[0] += swap()
    return xs, ys, zs


def maybe_unbound_target(flag, i):
    if flag:
        ys = [1, 2, 3]
    ys[say('key', i)] = say('value', 4)
    return ys


def maybe_unbound_target_aug(flag, i):
    if flag:
        ys = [1, 2, 3]
    ys[say('key', i)] += say('value', 4)
    return ys


def maybe_unbound_simple_key(flag, i):
    if flag:
        zs = [1, 2, 3]
    zs[i] = say('value', 1)  # value first, then the UnboundLocalError
    return zs


def maybe_unbound_key_name(flag, xs):
    if flag:
        k = 1
    xs[k] = say('value', 2)
    xs[k] += say('more', 3)
    return xs


def nested_subscripts(i, j):
    g = [[0, 1, 2], [3, 4, 5]]
    g[say('row', i)][say('col', j)] = say('value', 9)
    g[i - 1][j + 1] += say('more', 1)
    g[i][1:j + 2] = [say('s', 8)]
    return g


def computed_slices(xs, i):
    xs[i - 1:i + 1] = [say('v', 7)]
    xs[:len(xs) - i] += [0]
    xs[::i] = [say('w', 1)] * len(xs[::i])
    return xs


def tuple_and_starred_keys(i):
    d = {}
    d[i, i + 1] = 'pair'
    d[(say('a', i), say('b', -i))] = 'said'
    t = (1, 2)
    d[*t, i * 2] = 'starred'
    d[i, i + 1] += '!'
    return d


def dict_counts(words):
    counts = {}
    for w in words:
        counts[w.lower()] = counts.get(w.lower(), 0) + 1
        if len(w) > 3:
            counts[w[:3]] = len(w)
    return counts


def loop_updates(n):
    xs = [0] * 4
    k = 0
    while k < n:
        xs[k % 4] += k
        xs[(k + 1) % 4] = xs[k % 4] - 1
        k += 1
    for i in range(n):
        if i % 2:
            xs[i % 4 - 1] *= 2
        else:
            xs[-(i % 4)] -= 1
    return xs


def nested_def_fill(n):
    def fill(k):
        out = [0] * k
        for j in range(k):
            out[k - 1 - j] += j * 2
            out[say('at', j // 2)] = out[j] + 1
        return out
    return fill(n)


def reverse_in_place(xs):
    n = len(xs)
    for i in range(n // 2):
        xs[i], xs[n - 1 - i] = xs[n - 1 - i], xs[i]
        xs[n - 1 - i] = xs[n - 1 - i] + 0
    return xs


CASES = {
    'value_then_key': [([1, 2, 3], 0), ([1, 2, 3], 1), ([1, 2, 3], 5), ([1], 'a')],
    'key_raises': [([1, 2, 3], 1), ([1, 2, 3], 0), ([1, 2, 3], 'a')],
    'value_raises': [([1, 2], 1), ([1, 2], 0), ([], 1)],
    'getitem_raises': [([1, 2, 3], 1), ([1, 2, 3], 7), ({}, 'k'), ({'k': 1}, 'k')],
    'aug_order': [(3, 1), (4, 2), (2, 5), (3, 'a')],
    'aug_value_raises': [([], 0), ([], 1), ([], 2)],
    'walrus_key': [([1, 2, 3], 1), ([1, 2, 3], 9), ([1, 2, 3], 'a')],
    'walrus_key_rebinds_value': [([1, 2, 3], True), ([1, 2, 3], False), ([], True)],
    'walrus_value_rebinds_key': [([1, 2, 3], 0), ([1, 2, 3], 1), ([1, 2, 3], 2)],
    'walrus_value_before_key': [([1, 2], 0)],
    'walrus_rebinds_target': [([1, 2, 3], 1), ([1], 1), ([1, 2, 3], 7)],
    'walrus_value_rebinds_target': [([1, 2, 3], 1), ([1], 4)],
    'nonlocal_rebinds_target': [(1,), (2,), (5,)],
    'maybe_unbound_target': [(True, 1), (False, 1), (True, 9)],
    'maybe_unbound_target_aug': [(True, 1), (False, 1), (True, 9)],
    'maybe_unbound_simple_key': [(True, 1), (False, 1)],
    'maybe_unbound_key_name': [(True, [1, 2]), (False, [1, 2])],
    'nested_subscripts': [(1, 0), (0, 1), (2, 0), (1, 5), (0, 'a')],
    'computed_slices': [([1, 2, 3, 4], 1), ([1, 2, 3, 4], 2), ([1, 2, 3], 0), ([], 3)],
    'tuple_and_starred_keys': [(1,), (0,), ('a',)],
    'dict_counts': [(['Apple', 'apple', 'Pear', 'fig'],), ([],), ([1],)],
    'loop_updates': [(0,), (3,), (9,)],
    'nested_def_fill': [(0,), (3,), (-1,), ('a',)],
    'reverse_in_place': [([1, 2, 3, 4, 5],), ([],), ([1, 'a'],)],
}
