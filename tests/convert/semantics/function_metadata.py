# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: what a converted function must keep (docs/runtime.md,
"Module shape") — name, qualified name, docstring, defaults, keyword defaults,
annotations, signature — observed from inside and outside converted code, plus
builtins shadowed at module level (the live-values analysis must not treat them as the
builtins) and `match` statements."""

import inspect


def documented(a, b=2, *rest, key='k', **opts) -> int:
    """Adds things.

    Second paragraph."""
    if rest:
        return a + b + len(rest)
    return a + b


def metadata_of(name):
    f = globals()[name]
    return (f.__name__, f.__qualname__, f.__doc__, f.__defaults__, f.__kwdefaults__,
            f.__annotations__, str(inspect.signature(f)), f.__module__ == __name__)


def self_reference(n):
    if n > 0:
        return self_reference.__name__ + str(n)
    return self_reference(n + 1)


def nested_metadata(x):
    def inner(y: int = 3) -> str:
        """inner doc"""
        if y:
            return str(y)
        return ''
    return inner.__qualname__, inner.__doc__, inner.__defaults__, inner.__annotations__, inner(x)


def abs(x):
    return 'module abs of %r' % (x,)


def uses_shadowed_abs(xs):
    out = []
    for x in xs:
        out.append(abs(x))
    return out


len = lambda v: 'module len'  # noqa: E731


def uses_shadowed_len(xs):
    if len(xs) == 'module len':
        return 'shadowed'
    return 'builtin'


def rebinds_print_later(x):
    r = []
    for i in range(x):
        r.append(print(i))
    return r


print = lambda *a, **k: ('fake print', a)  # noqa: E731


def match_literal(cmd):
    match cmd:
        case 'go':
            return 1
        case 'stop' | 'halt':
            return 0
        case _:
            return -1


def match_structure(p):
    match p:
        case (0, 0):
            return 'origin'
        case (x, 0) if x > 0:
            return 'pos x %d' % x
        case [x, y, *rest]:
            return 'seq %r %r %d' % (x, y, len(rest))
        case {'kind': k, **others}:
            return 'map %s %d' % (k, len(others))
        case str() as s:
            return 'str ' + s
        case _:
            return 'other'


def match_in_loop(items):
    counts = {'int': 0, 'str': 0, 'other': 0}
    for it in items:
        match it:
            case int():
                counts['int'] += 1
            case str():
                counts['str'] += 1
                if it == 'stop':
                    break
            case _:
                counts['other'] += 1
                continue
    return counts


def match_class_pattern(v):
    class Point:
        __match_args__ = ('x', 'y')

        def __init__(self, x, y):
            self.x, self.y = x, y
    match Point(*v):
        case Point(0, y):
            return 'on y axis at %r' % y
        case Point(x=x, y=0):
            return 'on x axis at %r' % x
        case Point():
            return 'elsewhere'


def default_is_shared_object(x, _cache={}):
    if x in _cache:
        return 'hit', _cache[x]
    _cache[x] = len(_cache)
    return 'miss', _cache[x]


def twice_default_shared(x):
    default_is_shared_object(x)
    return default_is_shared_object(x)


CASES = {
    'documented': [(1,), (1, 2, 3, 4), {'args': (1,), 'kwargs': {'key': 'z', 'q': 1}}, ()],
    'metadata_of': [('documented',), ('self_reference',), ('uses_shadowed_abs',), ('match_literal',)],
    'self_reference': [(2,), (-1,)],
    'nested_metadata': [(5,), (0,)],
    'abs': [(-1,)],
    'uses_shadowed_abs': [([-1, 2],), ([],)],
    'uses_shadowed_len': [([1],), ([],)],
    'rebinds_print_later': [(2,), (0,)],
    'match_literal': [('go',), ('halt',), ('x',), (None,)],
    'match_structure': [((0, 0),), ((3, 0),), ((-3, 0),), ([1, 2, 3, 4],), ({'kind': 'a', 'b': 1},), ('s',),
                        (5,)],
    'match_in_loop': [([1, 'a', 2.5, 'stop', 3],), ([],)],
    'match_class_pattern': [((0, 5),), ((5, 0),), ((1, 1),), ((1,),)],
    'default_is_shared_object': [('a',)],
    'twice_default_shared': [('a',), ('b',)],
}
