# Staging of the Snek-style forms (if__ / while__ / for__ on staged values; docs/runtime.md
# "Snek style on staged values"). The Snek form has no get_state / set_state: the state
# of a construct is what its extracted functions can change, i.e. the cells of their
# closures (the function's variables they declare nonlocal or read) and the `var__`
# cells held there. Staging snapshots those, runs each branch / the loop body from the
# same values under its own builder, and merges what differs into graph control flow.
from . import sexpr as _sx
from .builtins_ import StagedRange
from .control import _rebuild, _same, _staged_for, _staged_loop
from .errors import Undefined
from .snek_state import BreakLoop, ContinueLoop, NonLocalReturnValue, _Var
from .staged import apply, emit

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


def staged_if(cond, then_fn, else_fn, more=()):
    """`more`: further functions whose cells the branches may change (the rest of an
    elif chain that else_fn runs)."""
    slots = _slots(then_fn, else_fn, *more)
    names = tuple(s.name for s in slots)
    init = _get(slots)
    none = object()

    def run(fn):
        b = _sx.push()
        ret = none
        try:
            _set(slots, init)
            try:
                fn()
            except NonLocalReturnValue as r:
                ret = r.value
            out = _get(slots)
        finally:
            _sx.pop(b)
        return b, out, ret

    b1, out1, r1 = run(then_fn)
    b2, out2, r2 = run(else_fn)
    if (r1 is none) != (r2 is none):
        _set(slots, init)
        raise TypeError("stagd: a staged if (Snek style) returns in one branch only; return "
                        "in both branches, or convert with the AutoGraph style (the default)")
    differ = [i for i in range(len(init)) if not _same(out1[i], out2[i])]
    for i in differ:
        if not (_sx.liftable(out1[i]) and _sx.liftable(out2[i])):
            _set(slots, init)
            raise TypeError(f"stagd: {names[i]!r} is not a number or staged value in both "
                            f"branches of a staged if ({out1[i]!r} / {out2[i]!r})")
    returns = r1 is not none
    v1 = tuple(out1[i] for i in differ) + ((r1,) if returns else ())
    v2 = tuple(out2[i] for i in differ) + ((r2,) if returns else ())
    t1, t2 = b1.close(_sx.literal(v1)), b2.close(_sx.literal(v2))
    r = emit(f"(if {cond.sexpr} {t1} {t2})")
    final = list(out1)
    for k, i in enumerate(differ):
        final[i] = _rebuild(out1[i], apply("getitem", r, k))
    _set(slots, final)
    if returns:
        raise NonLocalReturnValue(_rebuild(r1, apply("getitem", r, len(differ))))
    return None


def _loop_state(fns):
    """(slots, names, get_state, set_state, restore_temps) over the slots that hold a
    value before the loop; slots unbound or Undefined then are the loop's temporaries
    (a for target, a variable first assigned in the body) and are restored after it."""
    slots = _slots(*fns)
    init = _get(slots)
    keep = [s for s, v in zip(slots, init) if v is not _EMPTY and not isinstance(v, Undefined)]
    temps = [(s, v) for s, v in zip(slots, init) if v is _EMPTY or isinstance(v, Undefined)]

    def restore():
        for s, v in temps:
            s.set(v)
    return tuple(s.name for s in keep), (lambda: _get(keep)), (lambda vals: _set(keep, vals)), restore


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
    names, get_state, set_state, restore = _loop_state((cond_fn, body_fn))
    try:
        _staged_loop(get_state, set_state, names, lambda ex: cond_fn(),
                     lambda ex: (_body(body_fn), ())[1])
    finally:
        restore()


def staged_for(iterable, body_fn):
    names, get_state, set_state, restore = _loop_state((body_fn,))
    try:
        if isinstance(iterable, StagedRange):
            _staged_for(iterable, None, lambda item: _body(body_fn, item), get_state, set_state, names)
        else:
            rng = StagedRange(0, apply("len", iterable), 1)
            _staged_for(rng, None, lambda item: _body(body_fn, item), get_state, set_state, names,
                        iterable)
    finally:
        restore()
