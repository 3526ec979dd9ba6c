# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: variables that may be undefined after a construct —
assigned only in some branches or only inside a loop that may not run — which must
raise UnboundLocalError (or NameError for globals) exactly when Python does, with the
same message."""


def assigned_in_if_only(x):
    if x:
        y = 'set'
    return y


def assigned_in_loop_only(xs):
    for x in xs:
        last = x
    return last


def loop_target_after_empty_loop(xs):
    for item in xs:
        pass
    return item


def assigned_in_while_only(n):
    while n > 0:
        seen = n
        n -= 1
    return seen


def assigned_in_try_only(x):
    try:
        v = 10 // x
    except ZeroDivisionError:
        pass
    return v


def deleted_variable(x):
    y = x
    if x:
        del y
    return y


def read_before_assign(x):
    if x > 0:
        print(z)
    z = x
    return z


def used_in_later_iteration(xs):
    out = []
    for i, x in enumerate(xs):
        if i > 0:
            out.append(prev + x)
        prev = x
    return out


def conditional_then_loop(flag, n):
    if flag:
        acc = 0
    for i in range(n):
        acc += i
    return n


def undefined_global_name(x):
    if x:
        return NOT_A_GLOBAL
    return 'fine'


def elif_chain_missing_else(x):
    if x == 1:
        name = 'one'
    elif x == 2:
        name = 'two'
    return name.upper()


def assigned_after_break(xs):
    for x in xs:
        if x < 0:
            break
        pos = x
    return pos


def with_target_maybe_undefined(flag):
    import io
    if flag:
        with io.StringIO('t') as f:
            text = f.read()
    return text


def undefined_in_nested_function(flag):
    if flag:
        v = 'outer'

    def inner():
        return v
    return inner()


def except_target_unbound_after(x):
    try:
        if x:
            raise ValueError('boom')
    except ValueError as err:
        pass
    return err


def maybe_defined_used_in_condition(n):
    for i in range(n):
        flag = i % 2 == 0
    if flag:
        return 'even last'
    return 'odd last'


def augassign_undefined(xs):
    for x in xs:
        total += x
    return 0


def both_branches_define(x):
    if x:
        r = 1
    else:
        r = 2
    return r



# Found by random differential testing (tests/convert/semantics/_convfuzz.py), minimized.

def del_unbound_in_loop(n):
    # `del` of an unbound local inside a converted loop: UnboundLocalError
    c = 0
    while c < n:
        c += 1
        del x


def del_twice_in_loop(n):
    x = 1
    c = 0
    while c < n:
        c += 1
        del x
    return c


def del_then_read_in_branch(a):
    x = 1
    del x
    if a:
        return x
    return 0


def del_on_one_path(a):
    x = 1
    if a:
        del x
    return x


def bound_only_after_break(a):
    # `acc` is bound only in code after the `break`: still a local (UnboundLocalError)
    n = 1
    c = 0
    while c < 3:
        c += 1
        if a:
            break
            acc = 1
    return (n, acc)


def comprehension_reads_unbound(xs):
    x = sum([1 for q in xs if q != z])
    for i in xs:
        z = i
    return x


def and_operand_reads_unbound(a):
    try:
        t = a and acc
    except ValueError:
        acc = 1
    return t


def walrus_in_or_operand(a):
    ok = a > 1 or (z := a) < 0
    if ok >= z:
        return z
    return 0


def assert_message_reads_unbound(n):
    # the message is evaluated only when the test fails, in the function's own scope
    if n > 0:
        note = 'positive'
    assert n > 5, note
    return n




def assert_message_reads_later_binding(n):
    # straight-line code: the name is bound only after the assert
    assert n > 0, late
    late = n
    return late



CASES = {
    'assigned_in_if_only': [(1,), (0,)],
    'assigned_in_loop_only': [([1, 2],), ([],)],
    'loop_target_after_empty_loop': [([1],), ([],)],
    'assigned_in_while_only': [(3,), (0,)],
    'assigned_in_try_only': [(2,), (0,)],
    'deleted_variable': [(0,), (1,)],
    'read_before_assign': [(0,), (1,)],
    'used_in_later_iteration': [([1, 2, 3],), ([],), ([1],)],
    'conditional_then_loop': [(True, 3), (False, 0), (False, 2)],
    'undefined_global_name': [(0,), (1,)],
    'elif_chain_missing_else': [(1,), (2,), (3,)],
    'assigned_after_break': [([1, 2, -1],), ([-1],), ([],)],
    'with_target_maybe_undefined': [(True,), (False,)],
    'undefined_in_nested_function': [(True,), (False,)],
    'except_target_unbound_after': [(1,), (0,)],
    'maybe_defined_used_in_condition': [(3,), (2,), (0,)],
    'augassign_undefined': [([],), ([1],)],
    'both_branches_define': [(1,), (0,)],
    'del_unbound_in_loop': [(1,), (0,)],
    'del_twice_in_loop': [(1,), (2,), (0,)],
    'del_then_read_in_branch': [(1,), (0,)],
    'del_on_one_path': [(1,), (0,)],
    'bound_only_after_break': [(1,), (0,)],
    'comprehension_reads_unbound': [([1, 2],), ([],)],
    'and_operand_reads_unbound': [(0,), (1,)],
    'walrus_in_or_operand': [(5,), (0,), (-1,)],
    'assert_message_reads_unbound': [(1,), (-1,), (6,)],
    'assert_message_reads_later_binding': [(1,), (0,)],
}
