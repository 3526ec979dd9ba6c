# SPDX-License-Identifier: Apache-2.0
# Snek-style virtualized forms (Snek Figure 3): variables as cells, extracted branch and
# loop functions, non-local return/break/continue as exceptions (snek_state.py). On
# staged conditions / iterables they stage (snek_staging.py).
import functools

from .builtins_ import StagedRange
from .control import _probe
from .snek_state import BreakLoop, ContinueLoop
from .snek_staging import staged_for, staged_if, staged_while
from .staged import Staged, check_plain


def if__(cond, then_fn, else_fn):
    if isinstance(cond, Staged):
        return staged_if(cond, then_fn, else_fn)
    return then_fn() if cond else else_fn()


def elif__(cond, then_fn, elifs, else_fn):
    """`if cond: then_fn() elif test(): …` for elifs = ((test, then), …), else
    else_fn(), in a loop (see control.elif_stmt). A staged test stages the rest of the
    chain as its else branch; the rest's functions give the cells it may change."""
    k = 0
    while not isinstance(cond, Staged):
        if cond:
            return then_fn()
        if k == len(elifs):
            return else_fn()
        test, then_fn = elifs[k]
        k += 1
        cond = test()
    if k == len(elifs):
        return staged_if(cond, then_fn, else_fn)
    rest = elifs[k:]
    more = [fn for pair in rest for fn in pair] + [else_fn]
    # a partial has no closure of its own: the cells come from `more`
    return staged_if(cond, then_fn, functools.partial(_elif_rest, rest, else_fn), more)


def _elif_rest(rest, else_fn):
    test, then = rest[0]
    return elif__(test(), then, rest[1:], else_fn)


def while__(cond_fn, body_fn):
    while True:
        c = _probe(cond_fn)
        if isinstance(c, Staged):
            return staged_while(cond_fn, body_fn)
        if not c:
            return
        try:
            body_fn()
        except ContinueLoop:
            continue
        except BreakLoop:
            return


def for__(iterable, body_fn):
    if isinstance(iterable, (Staged, StagedRange)):
        return staged_for(iterable, body_fn)
    check_plain(iterable)
    for item in iterable:
        try:
            body_fn(item)
        except ContinueLoop:
            continue
        except BreakLoop:
            return
