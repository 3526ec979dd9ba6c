# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: loop corner cases — iterators partly consumed and
reused after a break, loops that grow the list they iterate, range evaluated once,
while-conditions with side effects, unusual loop targets (attributes, subscripts,
starred tuples), del in loops, loops inside nested functions that change nonlocals."""


class Obj:
    pass


def iterator_after_break(xs):
    it = iter(xs)
    for x in it:
        if x == 2:
            break
    return list(it)


def iterator_shared_by_loops(xs):
    it = iter(xs)
    firsts = []
    for x in it:
        firsts.append(x)
        if len(firsts) == 2:
            break
    rest = []
    for y in it:
        rest.append(y)
    return firsts, rest


def loop_grows_list(xs):
    for x in xs:
        if x < 3:
            xs.append(x + 10)
    return xs


def range_evaluated_once(n):
    count = 0
    for i in range(n):
        n = 0
        count += 1
    return count, n


def while_condition_side_effects(xs):
    calls = []

    def more():
        calls.append(len(xs))
        return len(xs) > 0
    while more():
        xs.pop()
    return calls


def attribute_loop_target(xs):
    o = Obj()
    o.total = 0
    for o.cur in xs:
        o.total += o.cur
    return o.cur, o.total


def subscript_loop_target(xs):
    d = {}
    seen = []
    for d['k'] in xs:
        seen.append(d['k'] * 2)
    return d, seen


def starred_loop_target(rows):
    out = []
    for first, *rest in rows:
        out.append((first, len(rest)))
    return out


def del_in_loop(n):
    acc = []
    for i in range(n):
        tmp = i * 2
        acc.append(tmp)
        del tmp
    return acc


def nested_fn_loop_nonlocal(xs):
    best = None

    def scan():
        nonlocal best
        for x in xs:
            if best is None or x > best:
                best = x
            if x == 99:
                return 'stopped'
        return 'done'
    r = scan()
    return r, best


def loop_var_shadows_param(x, xs):
    for x in xs:
        pass
    return x


def loop_over_dict_items_mutating_values(d):
    for k, v in d.items():
        d[k] = v * 2 if isinstance(v, int) else v
    return d


def dict_changed_during_iteration(d):
    for k in d:
        d[k + '!'] = 1
    return d


def while_with_complex_state(n):
    a, b, steps = 0, 1, []
    while b < n:
        a, b = b, a + b
        steps.append((a, b))
    return steps


def for_over_generator_with_break(n):
    produced = []

    def gen():
        for i in range(n):
            produced.append(i)
            yield i
    for v in gen():
        if v == 2:
            break
    return produced


def loop_continue_in_finally(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                raise ValueError
            out.append(10 // x)
        except ValueError:
            out.append('zero')
        finally:
            if x < 0:
                continue
        out.append('.')
    return out


def nested_while_shared_counter(n):
    i = 0
    pairs = 0
    while i < n:
        j = i
        while j < n:
            j += 1
            if (i + j) % 3 == 0:
                continue
            pairs += 1
        i += 1
    return pairs, i, j


def zip_unequal_stops(a, b):
    ia = iter(a)
    out = []
    for x, y in zip(ia, b):
        out.append(x + y)
    return out, list(ia)


def enumerate_modify_target(xs):
    for i, x in enumerate(xs):
        i = i * 100
        x = -x
    return i, x


CASES = {
    'iterator_after_break': [([1, 2, 3, 4],), ([1],), ([],)],
    'iterator_shared_by_loops': [([1, 2, 3, 4],), ([1],)],
    'loop_grows_list': [([1, 2, 5],), ([],)],
    'range_evaluated_once': [(4,), (0,)],
    'while_condition_side_effects': [([1, 2, 3],), ([],)],
    'attribute_loop_target': [([1, 2, 3],), ([],)],
    'subscript_loop_target': [([1, 2],), ([],)],
    'starred_loop_target': [([[1, 2, 3], [4]],), ([[]],)],
    'del_in_loop': [(3,), (0,)],
    'nested_fn_loop_nonlocal': [([3, 7, 1],), ([5, 99, 100],), ([],)],
    'loop_var_shadows_param': [(0, [1, 2]), (0, [])],
    'loop_over_dict_items_mutating_values': [({'a': 1, 'b': 'x'},), ({},)],
    'dict_changed_during_iteration': [({'a': 1},), ({},)],
    'while_with_complex_state': [(20,), (1,)],
    'for_over_generator_with_break': [(5,), (1,)],
    'loop_continue_in_finally': [([1, 0, -1, 2],), ([],)],
    'nested_while_shared_counter': [(4,), (0,)],
    'zip_unequal_stops': [([1, 2, 3], [10, 20]), ([1], [])],
    'enumerate_modify_target': [([1, 2],), ([],)],
}
