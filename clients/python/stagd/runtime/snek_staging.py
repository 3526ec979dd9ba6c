# SPDX-License-Identifier: Apache-2.0
# Staging of the Snek-style forms (if__ / while__ / for__ on staged values; docs/runtime.md
# "Snek style on staged values"). The Snek form has no get_state / set_state: the state
# of a construct is what its extracted functions can change, i.e. the cells of their
# closures (the function's variables they declare nonlocal or read) and the `var__`
# cells held there. Staging snapshots those, runs each branch / the loop body from the
# same values under its own builder, and merges what differs into graph control flow.
import dis
import types

from .builtins_ import StagedRange
from .control import _staged_for
from .errors import StagingError, Undefined
from .flow import staged_if as staged_if_
from .flow import staged_loop
from .snek_state import BreakLoop, ContinueLoop, NonLocalReturnValue, _Var
from .staged import apply

_EMPTY = object()  # an empty cell / unbound var__


class _CellSlot:
    def __init__(self, name, cell):
        self.name, self.cell = name, cell

    def get(self):
        try:
            return self.cell.cell_contents
        except ValueError:
            return _EMPTY

    def set(self, v):
        if v is _EMPTY:
            try:
                del self.cell.cell_contents
            except ValueError:
                pass
        else:
            self.cell.cell_contents = v


class _VarSlot:
    def __init__(self, name, var):
        self.name, self.var = name, var

    def get(self):
        return self.var.value if self.var.bound else _EMPTY

    def set(self, v):
        if v is _EMPTY:
            self.var.bound, self.var.value = False, None
        else:
            self.var.bound, self.var.value = True, v


def _slots(*fns):
    out, seen = [], set()
    for fn in fns:
        code = getattr(fn, "__code__", None)
        for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
            if id(cell) in seen:
                continue
            seen.add(id(cell))
            out.append(_CellSlot(name, cell))
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if isinstance(v, _Var) and id(v) not in seen:
                seen.add(id(v))
                out.append(_VarSlot(name, v))
    return out


def _get(slots):
    return tuple(s.get() for s in slots)


def _set(slots, values):
    for s, v in zip(slots, values):
        s.set(v)


def _no_jumps(what):
    return TypeError(f"stagd: {what} inside a staged loop (Snek style) cannot be staged; "
                     "convert with the AutoGraph style (the default)")


def staged_if(cond, then_fn, else_fn):
    """flow.staged_if over the closure cells (empty ones as Undefined) and the branch's
    return: a return in both branches re-raises NonLocalReturnValue with the merged
    value; in one branch only, the Snek form cannot continue (a TypeError)."""
    slots = _slots(then_fn, else_fn)
    names = tuple(s.name for s in slots) + ("do_return__", "retval__")
    ret = _Return()

    def get_state():
        return _get_defined(slots) + (ret.done, ret.value)

    def set_state(vals):
        _set_defined(slots, vals[:-2])
        ret.done, ret.value = vals[-2], vals[-1]

    def branch(fn):
        def run():
            try:
                fn()
            except NonLocalReturnValue as r:
                ret.done, ret.value = True, r.value
            except (BreakLoop, ContinueLoop) as e:
                what = "break" if isinstance(e, BreakLoop) else "continue"
                raise StagingError(f"stagd: {what} under a staged condition cannot be staged in "
                                   "the Snek style; convert with the AutoGraph style (the "
                                   "default)") from None
        return run
    staged_if_(cond, branch(then_fn), branch(else_fn), get_state, set_state, names)
    if ret.done is True:
        raise NonLocalReturnValue(ret.value)
    if ret.done is not False:
        raise StagingError("stagd: a staged if (Snek style) returns in one branch only; return "
                           "in both branches, or convert with the AutoGraph style (the default)")
    return None


class _Return:
    """Whether a Snek branch returned, and what (not a container staging tracks)."""
    __slots__ = ("done", "value")

    def __init__(self):
        self.done, self.value = False, None


def _get_defined(slots):
    """The slots' values, an empty cell / unbound var__ as Undefined (merge.py)."""
    return tuple(Undefined(s.name) if v is _EMPTY else v for s, v in zip(slots, _get(slots)))


def _set_defined(slots, values):
    _set(slots, [_EMPTY if type(v) is Undefined else v for v in values])


def _loop_state(fns):
    """(names, get_state, set_state) over the slots of the loop's functions; a slot
    unbound before the loop is Undefined there (a variable first bound in the body is
    MaybeUndefined after a staged loop: merge.py)."""
    stored = set()
    for fn in fns:
        stored |= _stored_cells(fn.__code__)
    slots = [s for s in _slots(*fns) if not isinstance(s, _CellSlot) or s.name in stored]
    return (tuple(s.name for s in slots), (lambda: _get_defined(slots)),
            (lambda vals: _set_defined(slots, vals)))


def _stored_cells(code):
    """The cell variables code (or code nested in it) assigns or deletes: the loop's
    state; a cell it only reads (a parameter of the function, say) stays as it is."""
    out = set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_DEREF", "DELETE_DEREF"):
            out.add(ins.argval)
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            out |= _stored_cells(k)
    return out


def _body(body_fn, *args):
    try:
        body_fn(*args)
    except ContinueLoop:
        raise _no_jumps("continue") from None
    except BreakLoop:
        raise _no_jumps("break") from None
    except NonLocalReturnValue:
        raise _no_jumps("return") from None


def staged_while(cond_fn, body_fn):
    names, get_state, set_state = _loop_state((cond_fn, body_fn))
    staged_loop(get_state, set_state, names, lambda ex: cond_fn(),
                lambda ex: (_body(body_fn), ())[1], (cond_fn, body_fn))


def staged_for(iterable, body_fn):
    names, get_state, set_state = _loop_state((body_fn,))
    if isinstance(iterable, StagedRange):
        _staged_for(iterable, None, lambda item: _body(body_fn, item), get_state, set_state, names)
    else:
        rng = StagedRange(0, apply("len", iterable), 1)
        _staged_for(rng, None, lambda item: _body(body_fn, item), get_state, set_state, names,
                    iterable)
