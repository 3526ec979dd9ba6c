# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: realistic functions that mix branches, loops, early
exits, try/except, nested functions and printing — the kind of code a user would
convert as a whole."""


def fizzbuzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append('FizzBuzz')
        elif i % 3 == 0:
            out.append('Fizz')
        elif i % 5 == 0:
            out.append('Buzz')
        else:
            out.append(str(i))
    return out


def tokenize(s):
    tokens = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch.isspace():
            i += 1
            continue
        if ch.isdigit():
            j = i
            while j < len(s) and s[j].isdigit():
                j += 1
            tokens.append(('num', int(s[i:j])))
            i = j
            continue
        if ch in '+-*/()':
            tokens.append(('op', ch))
            i += 1
            continue
        raise SyntaxError('bad character %r at %d' % (ch, i))
    return tokens


def evaluate_rpn(tokens):
    stack = []
    for t in tokens:
        if isinstance(t, int):
            stack.append(t)
            continue
        if len(stack) < 2:
            raise ValueError('stack underflow at %r' % t)
        b = stack.pop()
        a = stack.pop()
        if t == '+':
            stack.append(a + b)
        elif t == '-':
            stack.append(a - b)
        elif t == '*':
            stack.append(a * b)
        elif t == '/':
            if b == 0:
                return None
            stack.append(a // b)
        else:
            raise KeyError(t)
    if len(stack) != 1:
        return stack
    return stack[0]


def bubble_sort(xs):
    n = len(xs)
    swapped = True
    passes = 0
    while swapped:
        swapped = False
        for i in range(n - 1 - passes):
            if xs[i] > xs[i + 1]:
                xs[i], xs[i + 1] = xs[i + 1], xs[i]
                swapped = True
        passes += 1
    return passes


def word_frequencies(text):
    counts = {}
    for word in text.split():
        w = word.strip('.,!?').lower()
        if not w:
            continue
        counts[w] = counts.get(w, 0) + 1
    best = None
    for w, c in counts.items():
        if best is None or c > counts[best] or (c == counts[best] and w < best):
            best = w
    return counts, best


def matrix_multiply(a, b):
    if not a or len(a[0]) != len(b):
        raise ValueError('shape mismatch')
    rows, inner, cols = len(a), len(b), len(b[0])
    out = []
    for i in range(rows):
        row = []
        for j in range(cols):
            s = 0
            for k in range(inner):
                s += a[i][k] * b[k][j]
            row.append(s)
        out.append(row)
    return out


def run_state_machine(events):
    state = 'idle'
    trace = []
    for e in events:
        if state == 'idle':
            if e == 'start':
                state = 'running'
            elif e == 'stop':
                continue
            else:
                raise RuntimeError('bad event %s in %s' % (e, state))
        elif state == 'running':
            if e == 'pause':
                state = 'paused'
            elif e == 'stop':
                state = 'idle'
                trace.append('stopped')
                break
        elif state == 'paused':
            if e == 'start':
                state = 'running'
        trace.append(state)
    return state, trace


def binary_digits(n):
    if n == 0:
        return '0'
    digits = ''
    negative = n < 0
    if negative:
        n = -n
    while n:
        digits = str(n % 2) + digits
        n //= 2
    return '-' + digits if negative else digits


def running_average(xs):
    total = 0.0
    avgs = []
    for i, x in enumerate(xs, 1):
        try:
            total += x
        except TypeError:
            print('skipping', repr(x))
            continue
        avgs.append(total / i)
    return avgs


def collatz_table(n):
    table = {}
    for start in range(1, n + 1):
        k, steps = start, 0
        while k != 1:
            if k in table:
                steps += table[k]
                break
            k = k // 2 if k % 2 == 0 else 3 * k + 1
            steps += 1
        table[start] = steps
    return table


def validate_record(rec):
    errors = []
    for field in ('name', 'age'):
        if field not in rec:
            errors.append('missing ' + field)
    if 'age' in rec:
        age = rec['age']
        if not isinstance(age, int):
            errors.append('age not int')
        elif age < 0 or age > 150:
            errors.append('age out of range')
    if errors:
        return False, errors
    return True, []


def two_sum_dict(xs, target):
    seen = {}
    for i, x in enumerate(xs):
        need = target - x
        if need in seen:
            return seen[need], i
        seen[x] = i
    raise LookupError('no pair sums to %d' % target)


def run_length(s):
    if not s:
        return []
    out = []
    cur, n = s[0], 1
    for ch in s[1:]:
        if ch == cur:
            n += 1
        else:
            out.append((cur, n))
            cur, n = ch, 1
    out.append((cur, n))
    return out


def print_table(rows):
    for row in rows:
        line = ''
        for i, cell in enumerate(row):
            if i:
                line += ' | '
            line += str(cell).rjust(3)
        print(line)
    print('rows:', len(rows))


def nested_def_with_loops(n):
    def inner(k):
        acc = 0
        for i in range(k):
            if i % 2:
                continue
            acc += i
        return acc
    results = []
    i = 0
    while i < n:
        results.append(inner(i))
        i += 1
    return results


def grade(scores):
    out = {}
    for name, s in scores:
        if s is None:
            out[name] = 'absent'
            continue
        if s >= 90:
            g = 'A'
        elif s >= 75:
            g = 'B'
        elif s >= 50:
            g = 'C'
        else:
            g = 'F'
        out[name] = g
    return out


CASES = {
    'fizzbuzz': [(15,), (0,), ('a',)],
    'tokenize': [('12 + (3*4)',), ('',), ('1 $ 2',)],
    'evaluate_rpn': [([1, 2, '+', 4, '*'],), ([1, 0, '/'],), (['+'],), ([1, 2],), ([1, 2, '%'],), ([],)],
    'bubble_sort': [([5, 1, 4, 2, 8],), ([],), ([1, 2, 3],), ([1, 'a'],)],
    'word_frequencies': [('the cat and the hat. The end!',), ('',), ('a b b a',)],
    'matrix_multiply': [([[1, 2], [3, 4]], [[5, 6], [7, 8]]), ([[1, 2]], [[1]]), ([], [])],
    'run_state_machine': [(['start', 'pause', 'start', 'stop', 'start'],), (['stop', 'start'],), (['jump'],), ([],)],
    'binary_digits': [(10,), (0,), (-5,), (1.5,)],
    'running_average': [([1, 2, 'x', 3],), ([],)],
    'collatz_table': [(10,), (1,), (0,)],
    'validate_record': [({'name': 'a', 'age': 5},), ({'age': 'x'},), ({'name': 'b', 'age': 200},), ({},)],
    'two_sum_dict': [([2, 7, 11, 15], 9), ([1, 2], 10), ([], 0)],
    'run_length': [('aaabccdd',), ('',), ('x',)],
    'print_table': [([[1, 'ab'], [333, None]],), ([],)],
    'nested_def_with_loops': [(6,), (0,)],
    'grade': [([('a', 95), ('b', 80), ('c', None), ('d', 10)],), ([],), ([('x', 'y')],)],
}
