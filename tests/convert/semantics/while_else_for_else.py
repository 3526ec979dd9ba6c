# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: `else` clauses on `for` and `while` (run only when the
loop was not broken), nested loops with else, and else clauses that return, raise or
print."""


def is_prime(n):
    if n < 2:
        return False
    for d in range(2, n):
        if n % d == 0:
            break
    else:
        return True
    return False


def primes_below(n):
    out = []
    for k in range(2, n):
        for d in out:
            if k % d == 0:
                break
        else:
            out.append(k)
    return out


def while_else_no_break(n):
    i = 0
    while i < n:
        i += 1
    else:
        i = -i
    return i


def while_else_with_break(xs, stop):
    i = 0
    while i < len(xs):
        if xs[i] == stop:
            break
        i += 1
    else:
        return 'exhausted'
    return 'stopped at %d' % i


def for_else_empty(xs):
    for x in xs:
        print('item', x)
    else:
        print('else ran')
    return 'end'


def for_else_continue(xs):
    skipped = 0
    for x in xs:
        if x < 0:
            skipped += 1
            continue
    else:
        skipped *= 10
    return skipped


def nested_for_else(grid, v):
    for r, row in enumerate(grid):
        for c, x in enumerate(row):
            if x == v:
                break
        else:
            continue
        return r, c
    else:
        return None


def for_else_raise(xs, key):
    for x in xs:
        if x == key:
            break
    else:
        raise LookupError('missing %r' % (key,))
    return x


def while_else_return_inside(n):
    while n > 0:
        n -= 2
        if n == 3:
            return 'three'
    else:
        return 'done %d' % n


def for_else_state(xs):
    total = 0
    for x in xs:
        total += x
        if total > 10:
            break
    else:
        total = -total
    return total


def while_false_else():
    while False:
        return 'never'
    else:
        return 'else'


def for_else_inner_while(xs):
    log = []
    for x in xs:
        k = x
        while k > 0:
            if k == 2:
                log.append('two')
                break
            k -= 1
        else:
            log.append('zero from %d' % x)
    else:
        log.append('outer else')
    return log


def search_with_flag_and_else(words, letter):
    found = []
    for w in words:
        for ch in w:
            if ch == letter:
                found.append(w)
                break
        else:
            if len(w) > 3:
                found.append('-' + w)
    return found


def while_else_exception(xs):
    i = 0
    while i < 3:
        i += 1
        xs[i] = i
    else:
        xs.append('ok')
    return xs


def for_over_string_else(s):
    count = 0
    for ch in s:
        if ch.isdigit():
            count += 1
        if ch == '!':
            break
    else:
        count += 100
    return count



def for_else_in_match_case(xs, mode):
    # the loop `else` sits in a match case inside another loop
    for x in xs:
        match mode:
            case 0:
                break
            case _:
                for y in xs:
                    if y == x + 10:
                        break
                else:
                    return ('else', x)
    return 'after'



CASES = {
    'is_prime': [(2,), (9,), (13,), (1,), ('a',)],
    'primes_below': [(20,), (0,), (3,)],
    'while_else_no_break': [(3,), (0,), ('a',)],
    'while_else_with_break': [([1, 2, 3], 2), ([1, 2], 5), ([], 1)],
    'for_else_empty': [([],), ([1, 2],)],
    'for_else_continue': [([1, -1, -2],), ([],), (['a'],)],
    'nested_for_else': [([[1, 2], [3, 4]], 3), ([[1]], 5), ([], 1)],
    'for_else_raise': [([1, 2], 2), ([1, 2], 3), ([], 'k')],
    'while_else_return_inside': [(5,), (4,), (0,), (9,)],
    'for_else_state': [([1, 2, 3],), ([5, 6, 7],), ([],)],
    'while_false_else': [()],
    'for_else_inner_while': [([3, 1, 0],), ([],), ([2],)],
    'search_with_flag_and_else': [(['abc', 'defg', 'xy', 'hijkl'], 'a'), ([], 'x')],
    'while_else_exception': [([0, 0, 0, 0],), ([0, 0],)],
    'for_over_string_else': [('a1b2',), ('1!2',), ('',), (5,)],
    'for_else_in_match_case': [([1, 2], 1), ([1], 0), ([], 1), ([1, 11], 1)],
}
