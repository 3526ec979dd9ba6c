# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: with statements — context managers that log, suppress
or re-raise, several managers in one with, with inside loops and branches, and
break/continue/return inside with blocks."""

import contextlib


class Tracker:
    """Appends enter/exit events to a shared list; suppresses exceptions when told to."""

    def __init__(self, log, name, suppress=False):
        self.log = log
        self.name = name
        self.suppress = suppress

    def __enter__(self):
        self.log.append('enter ' + self.name)
        return self.name.upper()

    def __exit__(self, et, ev, tb):
        self.log.append('exit %s %s' % (self.name, et.__name__ if et else '-'))
        return self.suppress


@contextlib.contextmanager
def tag(log, name):
    log.append('<' + name + '>')
    try:
        yield len(log)
    finally:
        log.append('</' + name + '>')


def simple_with(log):
    with Tracker(log, 'a') as v:
        log.append('body ' + v)
    return v


def with_suppress(log, x):
    with Tracker(log, 's', suppress=True):
        if x:
            raise ValueError(x)
        log.append('no raise')
    return 'after'


def with_no_suppress(log, x):
    with Tracker(log, 'n'):
        if x:
            raise KeyError(x)
    return 'after'


def two_managers(log):
    with Tracker(log, 'a') as a, Tracker(log, 'b') as b:
        log.append(a + b)
    return len(log)


def with_in_loop_break(log, xs):
    for x in xs:
        with Tracker(log, str(x)):
            if x == 2:
                break
            log.append('did %d' % x)
    return log[-1]


def with_in_loop_continue(log, xs):
    n = 0
    for x in xs:
        with Tracker(log, str(x)):
            if x % 2:
                continue
            n += x
    return n


def with_in_branch(log, flag):
    if flag:
        with Tracker(log, 'yes') as v:
            r = v * 2
    else:
        r = 'none'
    return r


def generator_cm(log, n):
    with tag(log, 'x') as depth:
        total = 0
        for i in range(n):
            total += i * depth
    return total


def generator_cm_raise(log, x):
    with tag(log, 'y'):
        return 10 // x


def nested_with_return(log, x):
    with tag(log, 'outer'):
        with tag(log, 'inner'):
            if x:
                return 'inside'
        log.append('between')
    return 'outside'


def suppress_in_loop(log, xs):
    out = []
    for x in xs:
        with contextlib.suppress(ZeroDivisionError):
            out.append(10 // x)
    return out


def with_open_stringio(text):
    import io
    lines = []
    with io.StringIO(text) as f:
        for line in f:
            if line.strip() == 'stop':
                break
            lines.append(line.rstrip('\n'))
    return lines


def with_redirect_stdout(x):
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print('hidden', x)
    print('shown', len(buf.getvalue()))
    return buf.getvalue()


def with_var_used_after(log):
    with Tracker(log, 'q') as name:
        pass
    return name + '!'


def with_target_tuple(log):
    with Tracker(log, 'ab') as (first, second):
        pass
    return first, second



class ExitRaises:
    """A manager whose __exit__ raises: Python discards a pending break / continue /
    return leaving its body."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        self.log.append('exit')
        raise KeyError('exit')


def exit_raises_cancels_break(log, xs):
    for x in xs:
        try:
            with ExitRaises(log):
                log.append(x)
                if x > 1:
                    break
                continue
        except KeyError:
            log.append('caught')
    else:
        log.append('else')
    return log


def exit_raises_cancels_return(log, n):
    try:
        with ExitRaises(log):
            if n > 0:
                return n
    except KeyError:
        log.append('caught')
    return -1



CASES = {
    'simple_with': [([],)],
    'with_suppress': [([], 0), ([], 1)],
    'with_no_suppress': [([], 0), ([], 'k')],
    'two_managers': [([],), ([1],)],
    'with_in_loop_break': [([], [1, 2, 3]), ([], [5]), ([], [])],
    'with_in_loop_continue': [([], [1, 2, 3, 4]), ([], []), ([], ['a'])],
    'with_in_branch': [([], True), ([], False)],
    'generator_cm': [([], 4), ([1, 2], 3), ([], 'a')],
    'generator_cm_raise': [([], 5), ([], 0)],
    'nested_with_return': [([], True), ([], False)],
    'suppress_in_loop': [([], [1, 0, 5]), ([], []), ([], ['a'])],
    'with_open_stringio': [('a\nb\nstop\nc\n',), ('',), ('x',)],
    'with_redirect_stdout': [(1,), ('s',)],
    'with_var_used_after': [([],)],
    'with_target_tuple': [([],)],
    'exit_raises_cancels_break': [([], [1, 2, 3]), ([], []), ([], [5])],
    'exit_raises_cancels_return': [([], 1), ([], 0)],
}
