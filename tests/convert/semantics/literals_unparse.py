# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: converted functions are re-emitted as source, so their
literals and expressions must survive the round trip — f-strings with conversions and
format specs, escapes, raw/bytes strings, numeric forms, operator precedence, slices
and tuple subscripts, starred expressions, conditional lambdas."""


class Key:
    """Records the key it is subscripted with."""

    def __getitem__(self, k):
        return k


def fstrings(x, w):
    if x:
        s = f'{x!r:>{w}}|{x!s}|{x!a}|{{literal}}|{x=}'
    else:
        s = f"empty {'nested' + f'{w:03d}'}"
    return s


def string_escapes(n):
    out = []
    for i in range(n):
        out.append('tab\there\nnew "dq" \'sq\' \\ \x00 \u00e9 \N{GREEK SMALL LETTER ALPHA}'[i::7])
    return out


def raw_and_bytes(flag):
    if flag:
        return r'\d+\.\w', b'\x00\xffab', rb'\n'
    return '''triple
quoted''', """also
"triple" """


def numbers(k):
    vals = [1_000_000, 0x_ff, 0o17, 0b1010, 1e308 * 10, 2.5e-3, 1j * k, 10 ** 30 + k, 0.1 + 0.2]
    if k > 0:
        return vals
    return [repr(v) for v in vals]


def precedence(a, b):
    if a:
        r = (-a ** 2, (-a) ** 2, a ** -b, not a == b, (a + b) * (a - b), a - (b - a), a // b % 3)
    else:
        r = (a or b and not a, (a or b) and a, ~a & b | a ^ b, a << 2 >> 1)
    return r


def comparison_forms(a, b):
    while a < b:
        a += 1
        if a is not None and a not in (b,) and not a is b:
            continue
    return a, a is b, a in [b], (a < b) == (b > a)


def tuple_subscripts(n):
    k = Key()
    out = []
    for i in range(n):
        out.append((k[i, ::2], k[1:2, ...], k[::-1], k[i:], k[:, None], k[()]))
    return out


def starred_exprs(xs, d):
    if xs:
        a = [*xs, *reversed(xs)]
        b = {**d, 'extra': len(xs)}
        c = (*xs,)
        return a, b, c, {*xs}
    return [*[]], {**{}}


def lambda_and_ternary(x):
    f = (lambda v: v + 1) if x else lambda v: v - 1
    g = lambda: (yield_ := x) if x else None
    return f(10), g()


def walrus_and_slices(xs):
    if (n := len(xs)) > 3:
        return xs[n // 2:], xs[:-(n - 1)], xs[-1::-2]
    return n


def unicode_names(s):
    café = s.upper()
    if café:
        naïve = café + 'ü'
        return naïve
    return 'leer'


def implicit_concat(flag):
    if flag:
        msg = ('a' 'b'
               "c" f'{flag}')
    else:
        msg = 'x' \
            'y'
    return msg


def conditional_import_and_attr(flag):
    if flag:
        import math as m
        return m.floor(2.7), m.pi > 3
    from os import path as p
    return p.join('a', 'b')


def dict_set_display(n):
    d = {}
    s = set()
    for i in range(n):
        d[i if i % 2 else -i] = {i, -i} if i else frozenset()
        s |= {i % 3}
    return d, sorted(s)


def globals_named_like_converter(x):
    retval = x
    do_return = not x
    itr = [retval]
    state = {'vals': itr}
    if x:
        return retval, do_return, itr, state
    return None


def ellipsis_and_none(x):
    if x is ...:
        return 'ellipsis'
    elif x is None:
        return None
    return ..., x


CASES = {
    'fstrings': [('ab', 6), (0, 7), (3.5, 2), ('', 'x')],
    'string_escapes': [(3,), (0,)],
    'raw_and_bytes': [(True,), (False,)],
    'numbers': [(1,), (0,)],
    'precedence': [(2, 3), (0, 5), (3, 0), ('a', 'b')],
    'comparison_forms': [(1, 4), (5, 1), (1, 'a')],
    'tuple_subscripts': [(2,), (0,)],
    'starred_exprs': [([1, 2], {'k': 1}), ([], {}), (5, {})],
    'lambda_and_ternary': [(1,), (0,)],
    'walrus_and_slices': [([1, 2, 3, 4, 5],), ([1],), (None,)],
    'unicode_names': [('x',), ('',)],
    'implicit_concat': [(True,), (False,)],
    'conditional_import_and_attr': [(True,), (False,)],
    'dict_set_display': [(4,), (0,)],
    'globals_named_like_converter': [(1,), (0,)],
    'ellipsis_and_none': [(...,), (None,), (1,)],
}
