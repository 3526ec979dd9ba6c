# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: list/set/dict comprehensions, generator expressions and
generator functions (which the converter passes through), and their use inside
converted control flow."""


def squares(n):
    return [i * i for i in range(n)]


def evens_filtered(xs):
    return [x for x in xs if x % 2 == 0]


def nested_comprehension(n):
    return [(i, j) for i in range(n) for j in range(i) if (i + j) % 2]


def dict_comprehension(keys):
    return {k: len(k) for k in keys}


def set_comprehension_sorted(xs):
    return sorted({x % 5 for x in xs})


def genexpr_sum(n):
    return sum(i for i in range(n) if i % 3)


def comprehension_in_loop(rows):
    out = []
    for row in rows:
        if not row:
            continue
        out.append([v * 2 for v in row])
    return out


def comprehension_in_branch(xs, flag):
    if flag:
        r = [x + 1 for x in xs]
    else:
        r = {x: x for x in xs}
    return r


def gen_count(n):
    i = 0
    while i < n:
        yield i
        i += 1


def gen_with_return(xs):
    for x in xs:
        if x is None:
            return
        yield x * 10


def gen_consumer(n):
    total = 0
    for v in gen_count(n):
        if v == 3:
            continue
        total += v
    return total


def gen_raises(xs):
    for x in xs:
        yield 10 // x


def consume_gen_raises(xs):
    out = []
    for v in gen_raises(xs):
        out.append(v)
    return out


def gen_send_protocol():
    def acc():
        total = 0
        while True:
            v = yield total
            if v is None:
                break
            total += v
    g = acc()
    next(g)
    a = g.send(3)
    b = g.send(4)
    return a, b


def yield_from_chain(a, b):
    def chain():
        yield from a
        yield from b
    return list(chain())


def comprehension_scope(x):
    ys = [x for x in range(3)]
    return x, ys


def comprehension_closure_over_local(n):
    k = n * 2
    return [k + i for i in range(n)]


def any_all_with_gens(xs):
    if any(x < 0 for x in xs):
        return 'has negative'
    if all(x > 10 for x in xs):
        return 'all big'
    return 'mixed'


def zip_comprehension(a, b):
    return [x * y for x, y in zip(a, b)]


def walrus_in_comprehension(xs):
    return [y for x in xs if (y := x * 2) > 4]


def enumerate_gen(xs):
    return list((i, v) for i, v in enumerate(xs) if v)


def comprehension_error(xs):
    return [1 / x for x in xs]


def return_generator_object(n):
    return (i * 3 for i in range(n))


def max_with_key(words):
    if not words:
        return None
    return max(words, key=lambda w: (len(w), w))


CASES = {
    'squares': [(5,), (0,), (-1,), ('a',)],
    'evens_filtered': [([1, 2, 3, 4],), ([],), ([1, 'a'],)],
    'nested_comprehension': [(4,), (0,)],
    'dict_comprehension': [(['a', 'bb'],), ([],), ([1],)],
    'set_comprehension_sorted': [([1, 6, 11, 3],), ([],)],
    'genexpr_sum': [(10,), (0,)],
    'comprehension_in_loop': [([[1, 2], [], [3]],), ([],), ([[None]],)],
    'comprehension_in_branch': [([1, 2], True), ([1, 2], False), (None, True)],
    'gen_count': [(3,), (0,)],
    'gen_with_return': [([1, 2, None, 3],), ([],)],
    'gen_consumer': [(6,), (0,), ('a',)],
    'gen_raises': [([1, 2],), ([1, 0, 2],)],
    'consume_gen_raises': [([1, 2, 5],), ([5, 0],), ([],)],
    'gen_send_protocol': [()],
    'yield_from_chain': [([1, 2], (3,)), ([], []), ([1], None)],
    'comprehension_scope': [(7,), ('s',)],
    'comprehension_closure_over_local': [(3,), (0,)],
    'any_all_with_gens': [([1, -1],), ([11, 12],), ([5, 20],), ([],), ([1, 'a'],)],
    'zip_comprehension': [([1, 2, 3], [4, 5]), ([], []), ([1], ['a'])],
    'walrus_in_comprehension': [([1, 2, 3, 4],), ([],)],
    'enumerate_gen': [(['a', '', 'b'],), ([],)],
    'comprehension_error': [([1, 2],), ([1, 0],)],
    'return_generator_object': [(4,), (0,)],
    'max_with_key': [(['bb', 'a', 'cc'],), ([],), ([1, 'a'],)],
}
