# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: lambdas, default arguments (including mutable defaults),
*args, **kwargs, keyword-only and positional-only parameters, argument unpacking at
call sites, and errors from wrong calls."""


def apply_twice(f, x):
    return f(f(x))


def lambda_in_loop(xs):
    ops = [lambda v: v + 1, lambda v: v * 2, lambda v: -v]
    out = []
    for x in xs:
        for op in ops:
            x = op(x)
        out.append(x)
    return out


def sort_with_lambda(pairs):
    return sorted(pairs, key=lambda p: (p[1], -p[0]))


def lambda_conditional(x):
    f = (lambda v: v * 10) if x > 0 else (lambda v: v - 10)
    return f(x)


def defaults(a, b=2, c='c'):
    return a, b, c


def mutable_default(x, acc=[]):
    acc.append(x)
    return len(acc)


def none_default(x, acc=None):
    if acc is None:
        acc = []
    acc.append(x)
    return acc


def varargs_sum(*args):
    total = 0
    for a in args:
        if a is None:
            continue
        total += a
    return total


def kwargs_keys(**kwargs):
    keys = []
    for k, v in kwargs.items():
        if v:
            keys.append(k)
    return keys


def mixed_signature(a, b=1, *args, c, d=4, **kw):
    return a, b, args, c, d, sorted(kw.items())


def keyword_only(x, *, scale=2, offset=0):
    if scale == 0:
        raise ValueError('scale must not be zero')
    return x * scale + offset


def positional_only(a, b, /, c=3):
    return a - b + c


def forward_args(*args, **kwargs):
    return mixed_signature(*args, **kwargs)


def unpack_call(xs, d):
    return defaults(*xs, **d)


def default_evaluated_once(n):
    def f(x, seen=[]):
        seen.append(x)
        return list(seen)
    r = None
    for i in range(n):
        r = f(i)
    return r


def lambda_default_capture(n):
    fs = [lambda k=i: k * k for i in range(n)]
    return [f() for f in fs]


def lambda_closure_nonlocal(n):
    total = 0

    def add(v):
        nonlocal total
        total += v
    list(map(lambda v: add(v), range(n)))
    return total


def varargs_star_in_middle(first, *rest):
    if not rest:
        return first
    return first + max(rest)


def kwargs_override(**kw):
    base = {'a': 1, 'b': 2}
    base.update(kw)
    return base


def call_with_bad_kwargs(x):
    return defaults(x, d=1)


def lambda_immediately_invoked(x):
    return (lambda a, b=3: a * b)(x)


def nested_lambdas(x):
    adder = lambda a: lambda b: a + b
    return adder(x)(x)


def filter_map_lambdas(xs):
    return list(map(lambda v: v * v, filter(lambda v: v % 2, xs)))


def annotated(a: int, b: 'str' = 'x') -> tuple:
    if a:
        return (a, b)
    return (b, a)


CASES = {
    'apply_twice': [(abs, -3), (str, 5), (len, 5)],
    'lambda_in_loop': [([1, 2, 3],), ([],), (['a'],)],
    'sort_with_lambda': [([(1, 2), (3, 1), (2, 2)],), ([],), ([(1,)],)],
    'lambda_conditional': [(3,), (-3,), (0,)],
    'defaults': [(1,), (1, 5), (1, 5, 'z'), {'args': (1,), 'kwargs': {'c': 9}}, ()],
    'mutable_default': [(1,), ('a',)],
    'none_default': [(1,), (1, [0]), (1, 'ab')],
    'varargs_sum': [(), (1, 2, None, 3), (1, 'a')],
    'kwargs_keys': [{'kwargs': {'a': 1, 'b': 0, 'c': 'x'}}, ()],
    'mixed_signature': [{'args': (1, 2, 3, 4), 'kwargs': {'c': 5, 'z': 6}}, {'args': (1,), 'kwargs': {'c': 0}},
                        (1, 2)],
    'keyword_only': [(3,), {'args': (3,), 'kwargs': {'scale': 0}}, {'args': (3,), 'kwargs': {'offset': 1}},
                     (3, 4)],
    'positional_only': [(5, 2), (5, 2, 0), {'args': (5,), 'kwargs': {'b': 2}}],
    'forward_args': [{'args': (1, 2), 'kwargs': {'c': 3}}, (1,)],
    'unpack_call': [([1, 2], {'c': 3}), ([], {}), ([1], {'q': 1})],
    'default_evaluated_once': [(3,), (0,)],
    'lambda_default_capture': [(4,), (0,)],
    'lambda_closure_nonlocal': [(5,), (0,)],
    'varargs_star_in_middle': [(1,), (1, 5, 3), ('a', 'b')],
    'kwargs_override': [{'kwargs': {'b': 5, 'c': 6}}, ()],
    'call_with_bad_kwargs': [(1,)],
    'lambda_immediately_invoked': [(2,), ('ab',)],
    'nested_lambdas': [(2,), ('s',), (None,)],
    'filter_map_lambdas': [([1, 2, 3, 4, 5],), ([],), (['a'],)],
    'annotated': [(1,), (0, 'y')],
}
