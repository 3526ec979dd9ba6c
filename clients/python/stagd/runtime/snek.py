# Snek-style virtualized forms (Snek Figure 3): variables as cells, extracted branch and
# loop functions, non-local return/break/continue as exceptions. On staged conditions /
# iterables they stage (snek_staging.py).
from .staged import Staged, check_plain


class NonLocalReturnValue(Exception):
    def __init__(self, value):
        super().__init__()
        self.value = value


class BreakLoop(Exception):
    pass


class ContinueLoop(Exception):
    pass


class _Var:
    __slots__ = ("value", "bound")

    def __init__(self):
        self.bound = False
        self.value = None


def var__():
    return _Var()


def assign__(var, value):
    var.value = value
    var.bound = True


def read__(var, name="variable"):
    if not var.bound:
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                f"associated with a value")
    return var.value


def if__(cond, then_fn, else_fn):
    if isinstance(cond, Staged):
        from .snek_staging import staged_if
        return staged_if(cond, then_fn, else_fn)
    return then_fn() if cond else else_fn()


def while__(cond_fn, body_fn):
    from .control import _probe
    while True:
        c = _probe(cond_fn)
        if isinstance(c, Staged):
            from .snek_staging import staged_while
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
    from .builtins_ import StagedRange
    if isinstance(iterable, (Staged, StagedRange)):
        from .snek_staging import staged_for
        return staged_for(iterable, body_fn)
    check_plain(iterable)
    for item in iterable:
        try:
            body_fn(item)
        except ContinueLoop:
            continue
        except BreakLoop:
            return


def return__(value):
    raise NonLocalReturnValue(value)


def break__():
    raise BreakLoop()


def continue__():
    raise ContinueLoop()
