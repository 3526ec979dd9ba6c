# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: nested functions, closures, nonlocal and global
declarations, and functions that rebind or mutate module globals."""

COUNTER = 0
LOG = []
CONFIG = {'scale': 2, 'name': 'cfg'}
MODE = 'a'


def make_adder(n):
    def add(x):
        return x + n
    return add(1), add(10)


def counter_closure(steps):
    count = 0

    def bump(k):
        nonlocal count
        count += k
        return count
    seen = []
    for s in steps:
        seen.append(bump(s))
    return count, seen


def bump_global(k):
    global COUNTER
    for _ in range(k):
        COUNTER += 1
    return COUNTER


def append_log(msg):
    if msg:
        LOG.append(msg)
    else:
        LOG.append('<empty>')
    return len(LOG)


def rebind_global_in_branch(x):
    global MODE
    if x > 0:
        MODE = 'pos'
    elif x < 0:
        MODE = 'neg'
    return MODE


def read_global_config(key):
    if key in CONFIG:
        return CONFIG[key] * 2
    return CONFIG['missing']


def mutate_global_dict(key, value):
    CONFIG[key] = value
    total = 0
    for k in CONFIG:
        if isinstance(CONFIG[k], int):
            total += CONFIG[k]
    return total


def closure_over_loop_var(n):
    fns = []
    for i in range(n):
        def f(i=i):
            return i * i
        fns.append(f)
    return [f() for f in fns]


def late_binding(n):
    fns = []
    for i in range(n):
        fns.append(lambda: i)
    return [f() for f in fns]


def nonlocal_in_loop_body(xs):
    total = 0
    last = None

    def visit(x):
        nonlocal total, last
        if x is None:
            return False
        total += x
        last = x
        return True
    for x in xs:
        if not visit(x):
            break
    return total, last


def two_level_nonlocal(n):
    a = 0

    def outer():
        b = 0

        def inner():
            nonlocal a, b
            a += 1
            b += 2
        for _ in range(n):
            inner()
        return b
    r = outer()
    return a, r


def global_and_local_same_name(x):
    COUNTER = x * 3
    return COUNTER


def global_declared_but_unassigned():
    global NEVER_SET
    return NEVER_SET


def set_new_global(v):
    global FRESH
    if v:
        FRESH = v
    return FRESH


def closure_mutates_list(xs):
    acc = []

    def push(v):
        acc.append(v)
        if len(acc) > 3:
            acc.pop(0)
    for x in xs:
        push(x)
    return acc


def counter_factory_calls(n):
    def make():
        c = [0]

        def inc():
            c[0] += 1
            return c[0]
        return inc
    a = make()
    b = make()
    for _ in range(n):
        a()
    return a(), b()


def closure_reads_later_binding():
    def get():
        return value
    value = 'late'
    return get()


def closure_unbound_free():
    def get():
        return value
    r = get()
    value = 1
    return r


def nonlocal_conditional(flag):
    x = 'init'

    def change():
        nonlocal x
        if flag:
            x = 'changed'
    change()
    return x


def recursion_through_closure(n):
    def fact(k):
        if k <= 1:
            return 1
        return k * fact(k - 1)
    return fact(n)


def global_list_rebind(xs):
    global LOG
    LOG = [x for x in xs if x]
    return LOG



# Found by random differential testing (tests/convert/semantics/_convfuzz.py), minimized.

def deleted_then_nonlocal_augassign(a):
    # `y += p` in the nested def reads an unbound free variable: NameError
    y = 1
    del y

    def g1(p):
        nonlocal y
        y += p
    return g1(a)


def maybe_bound_nonlocal_augassign(c):
    if c:
        y = 1

    def g():
        nonlocal y
        y += 1
        return y
    return g()


def del_nonlocal_maybe_unbound(n):
    if n > 0:
        y = n
    def drop():
        nonlocal y
        del y
        return 'dropped'
    r = drop()
    if n > 1:
        return y
    return r



CASES = {
    'make_adder': [(1,), (0.5,), ('a',)],
    'counter_closure': [([1, 2, 3],), ([],), ([1, 'a'],)],
    'bump_global': [(3,), (0,), ('x',)],
    'append_log': [('hi',), ('',), (None,)],
    'rebind_global_in_branch': [(1,), (-1,), (0,), (None,)],
    'read_global_config': [('scale',), ('name',), ('nope',)],
    'mutate_global_dict': [('k', 5), ('scale', 'x'), ('z', 1.5)],
    'closure_over_loop_var': [(4,), (0,)],
    'late_binding': [(3,), (0,)],
    'nonlocal_in_loop_body': [([1, 2, None, 4],), ([],), ([1, 'x'],)],
    'two_level_nonlocal': [(3,), (0,)],
    'global_and_local_same_name': [(2,), ('ab',)],
    'global_declared_but_unassigned': [()],
    'set_new_global': [(5,), (0,)],
    'closure_mutates_list': [([1, 2, 3, 4, 5],), ([],), ([1],)],
    'counter_factory_calls': [(3,), (0,)],
    'closure_reads_later_binding': [()],
    'closure_unbound_free': [()],
    'nonlocal_conditional': [(True,), (False,)],
    'recursion_through_closure': [(5,), (0,), (1.5,)],
    'global_list_rebind': [([0, 1, 2, '', 'a'],), ([],)],
    'deleted_then_nonlocal_augassign': [(1,), (0,)],
    'maybe_bound_nonlocal_augassign': [(1,), (0,)],
    'del_nonlocal_maybe_unbound': [(1,), (2,), (0,)],
}
