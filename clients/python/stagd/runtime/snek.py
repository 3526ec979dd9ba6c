# SPDX-License-Identifier: Apache-2.0
# Snek-style virtualized forms (Snek Figure 3): variables as cells, extracted branch and
# loop functions, non-local return/break/continue as exceptions (snek_state.py). On
# staged conditions / iterables they stage (snek_staging.py).
from .builtins_ import StagedRange
from .control import _probe
from .snek_state import BreakLoop, ContinueLoop
from .snek_staging import staged_for, staged_if, staged_while
from .staged import Staged, check_plain


def if__(cond, then_fn, else_fn):
    if isinstance(cond, Staged):
        return staged_if(cond, then_fn, else_fn)
    return then_fn() if cond else else_fn()


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
