# Functional control flow (AutoGraph style): if/while/for, ternary, lazy and/or, assert,
# and the single exit of a converted function (ret).
# Plain values: Python's semantics. Staged values: functional S-expression forms.
from . import sexpr as _sx
from .builtins_ import StagedRange
from .directives import check_loop_options
from .errors import Undefined
from .staged import Staged, apply, check_plain, emit


def _same(a, b):
    return a is b or (type(a) is type(b) and not isinstance(a, Staged) and _sx.liftable(a)
                      and a == b)


def _branch(fn, init, set_state, get_state):
    """Runs fn under a fresh builder from state `init`; (builder, state after)."""
    b = _sx.push()
    try:
        if set_state is not None:
            set_state(init)
        fn()
        out = get_state() if get_state is not None else ()
    finally:
        _sx.pop(b)
    return b, out


def _is_placeholder(v):
    return v is None or isinstance(v, Undefined)


def _is_undefined(v):
    return isinstance(v, Undefined)


def _liftable_leaves(v):
    return all(_sx.liftable(e) for e in v) if isinstance(v, tuple) else _sx.liftable(v)


def _placeholder_like(v):
    """The value of retval__ (or of a name) on a path that did not set it: 0, or a tuple
    of 0s shaped like the tuple the other path returns (read only where Python would
    have set it: where do_return__ is true)."""
    return tuple(0 for _ in v) if isinstance(v, tuple) else 0


def _staged_if(cond, body, orelse, get_state, set_state, names):
    init = tuple(get_state())
    b1, out1 = _branch(body, init, set_state, get_state)
    b2, out2 = _branch(orelse, init, set_state, get_state)
    differ = [i for i in range(len(init)) if not _same(out1[i], out2[i])]
    out1, out2 = list(out1), list(out2)
    final = list(out1)
    leaves = []  # (state index, tuple position or None, value in body, value in orelse)
    for i in differ:
        # A return in one branch only (retval__), or a variable bound in one branch only
        # (code after a staged return runs under `if not do_return__`): the other
        # branch carries a placeholder, read only where Python would have bound it.
        unset = _is_placeholder if names[i] == "retval__" else _is_undefined
        for this, other in ((out1, out2), (out2, out1)):
            if unset(this[i]) and _liftable_leaves(other[i]):
                this[i] = _placeholder_like(other[i])
            elif (names[i] == "retval__" and isinstance(other[i], tuple)
                  and not isinstance(this[i], tuple) and _sx.liftable(this[i])):
                # the placeholder of an enclosing staged loop (a parameter) before its
                # retry with a tuple placeholder (_staged_loop)
                this[i] = _placeholder_like(other[i])
        if isinstance(out1[i], Undefined) or isinstance(out2[i], Undefined):
            final[i] = Undefined(names[i], "it is bound in only one branch of a staged if")
            continue
        a, b = out1[i], out2[i]
        final[i] = a  # the template of the result (a placeholder filled in above)
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            leaves += [(i, j, a[j], b[j]) for j in range(len(a))]  # a returned tuple
        else:
            leaves.append((i, None, a, b))
    for i, j, a, b in leaves:
        if not (_sx.liftable(a) and _sx.liftable(b)):
            raise TypeError(f"stagd: {names[i]!r} is not a number or staged value in both "
                            f"branches of a staged if ({a!r} / {b!r})")
    t1 = b1.close(_sx.literal(tuple(a for _, _, a, _ in leaves)))
    t2 = b2.close(_sx.literal(tuple(b for _, _, _, b in leaves)))
    r = emit(f"(if {cond.sexpr} {t1} {t2})")
    set_state(_with_slots(tuple(final), [(i, j) for i, j, _, _ in leaves],
                          [apply("getitem", r, k) for k in range(len(leaves))]))


def _rebuild(template, staged):
    """A staged value of template's kind: a StagedList stays one through loops and ifs."""
    rebuild = getattr(template, "rebuild", None)
    return rebuild(staged) if rebuild is not None else staged


def _staged_loop(get_state, set_state, names, test, body, extra=(), max_iter=None):
    """(while (lambda (s…) C) (lambda (s…) (tuple …)) (tuple init…)) over the liftable
    state values plus `extra` (name, init) loop counters. test(extras) → cond value,
    body(extras) → new extras. max_iter (set_loop_options(maximum_iterations=N)) adds
    a counter that stops the loop after N iterations."""
    if max_iter is not None:
        n0, t0, b0 = len(extra), test, body
        extra = tuple(extra) + (("k", 0),)

        def test(ex):
            return apply("and", t0(ex[:n0]), apply("<", ex[n0], max_iter))

        def body(ex):
            return tuple(b0(ex[:n0])) + (apply("+", ex[n0], 1),)
    init = list(get_state())
    for i, n in enumerate(names):  # see _staged_if: a placeholder until a return sets it
        if n == "retval__" and _is_placeholder(init[i]):
            init[i] = 0
    try:
        return _loop_once(tuple(init), set_state, get_state, names, test, body, extra)
    except _TupleReturn as e:  # a tuple returned in the body: a tuple of placeholders
        init[e.index] = _placeholder_like(e.value)
        return _loop_once(tuple(init), set_state, get_state, names, test, body, extra)


class _TupleReturn(Exception):
    def __init__(self, index, value):
        super().__init__(index, value)
        self.index, self.value = index, value


def _leaf_slots(init):
    """(state index, tuple position or None) of each loop value: numbers and Staged, and
    the items of a tuple of them (a returned tuple)."""
    slots = []
    for i, v in enumerate(init):
        if isinstance(v, tuple) and v and _liftable_leaves(v):
            slots += [(i, j) for j in range(len(v))]
        elif _sx.liftable(v):
            slots.append((i, None))
    return slots


def _get_slot(state, slot):
    i, j = slot
    return state[i] if j is None else state[i][j]


def _with_slots(init, slots, values):
    """`init` with `values` at `slots` (each rebuilt to its template's kind, a
    StagedList staying one)."""
    st = list(init)
    parts = {}
    for (i, j), v in zip(slots, values):
        v = _rebuild(init[i] if j is None else init[i][j], v)
        if j is None:
            st[i] = v
        else:
            parts.setdefault(i, list(init[i]))[j] = v
    for i, p in parts.items():
        st[i] = tuple(p)
    return tuple(st)


def _loop_once(init, set_state, get_state, names, test, body, extra):
    slots = _leaf_slots(init)
    params = [_sx.fresh("s") for _ in slots] + [_sx.fresh(n) for n, _ in extra]
    nx = len(slots)
    used = {i for i, _ in slots}

    def start():
        set_state(_with_slots(init, slots, [Staged(p) for p in params[:nx]]))
        return [Staged(p) for p in params[nx:]]

    b = _sx.push()
    try:
        c = test(start())
        cond = b.close(_sx.literal(c))
    finally:
        _sx.pop(b)
    b = _sx.push()
    try:
        new_extra = body(start())
        out = get_state()
        for i, v in enumerate(out):
            if names[i] == "retval__" and isinstance(v, tuple) and not isinstance(init[i], tuple):
                raise _TupleReturn(i, v)
            if i not in used and not _same(v, init[i]):
                raise TypeError(f"stagd: staged loop changes {names[i]!r} to {v!r}, which "
                                "is not a number or staged value")
        res = b.close(_sx.literal(tuple(_get_slot(out, sl) for sl in slots) + tuple(new_extra)))
    finally:
        _sx.pop(b)
    ps = " ".join(params)
    inits = _sx.literal(tuple(_get_slot(init, sl) for sl in slots) + tuple(v for _, v in extra))
    r = emit(f"(while (lambda ({ps}) {cond}) (lambda ({ps}) {res}) {inits})")
    set_state(_with_slots(init, slots, [apply("getitem", r, k) for k in range(nx)]))


def _probe(fn):
    """Calls fn under a scratch builder (discarded) when staging; plain otherwise."""
    if not _sx._stack:
        return fn()
    b = _sx.push()
    try:
        return fn()
    finally:
        _sx.pop(b)


def if_stmt(cond, body, orelse, get_state, set_state, names, nouts):
    if isinstance(cond, Staged):
        return _staged_if(cond, body, orelse, get_state, set_state, names)
    if cond:
        body()
    else:
        orelse()


def elif_stmt(cond, body, elifs, orelse, get_state, set_state, names, nouts):
    """`if cond: body() elif test(): …` for elifs = ((test, body), …), else orelse():
    each test runs only after the ones before it were false, in a loop (a chain of any
    length needs no Python recursion). A staged test stages the rest of the chain as
    the else branch of a staged if, with the chain's state functions."""
    k = 0
    while not isinstance(cond, Staged):
        if cond:
            return body()
        if k == len(elifs):
            return orelse()
        test, body = elifs[k]
        k += 1
        cond = test()
    rest = orelse
    if k < len(elifs):
        def rest():
            test, then = elifs[k]
            return elif_stmt(test(), then, elifs[k + 1:], orelse, get_state, set_state, names,
                             nouts)
    return _staged_if(cond, body, rest, get_state, set_state, names)


def while_stmt(test, body, get_state, set_state, names, opts):
    check_loop_options(opts)
    while True:
        c = _probe(test)
        if isinstance(c, Staged):
            return _staged_loop(get_state, set_state, names, lambda ex: test(),
                                lambda ex: (body(), ())[1],
                                max_iter=opts.get("maximum_iterations"))
        if not c:
            break
        body()


def _staged_for(rng, extra_test, body, get_state, set_state, names, items=None, max_iter=None):
    """A while over an index; `items` (a staged tensor) gives body(items[i])."""
    start, stop, step = rng.start, rng.stop, rng.step
    if isinstance(step, Staged) or step == 0:
        raise TypeError("stagd: a staged range needs a plain, non-zero step")
    cmp = "<" if step > 0 else ">"

    def test(ex):
        c = apply(cmp, ex[0], stop)
        if extra_test is not None:
            e = extra_test()
            if isinstance(e, Staged) or not e:
                c = apply("and", c, e)
        return c

    def run(ex):
        body(ex[0] if items is None else apply("getitem", items, ex[0]))
        return (apply("+", ex[0], step),)

    _staged_loop(get_state, set_state, names, test, run, extra=(("i", start),), max_iter=max_iter)


def for_stmt(iterable, extra_test, body, get_state, set_state, names, opts):
    check_loop_options(opts)
    m = opts.get("maximum_iterations")
    if isinstance(iterable, StagedRange):
        return _staged_for(iterable, extra_test, body, get_state, set_state, names, max_iter=m)
    if isinstance(iterable, Staged):  # a staged tensor: iterate its first axis
        rng = StagedRange(0, apply("len", iterable), 1)
        return _staged_for(rng, extra_test, body, get_state, set_state, names, iterable, m)
    check_plain(iterable)
    if extra_test is None:
        for item in iterable:
            body(item)
        return
    # extra_test (the break flag) is checked before the next item is fetched, as
    # Python's `break` leaves a shared iterator positioned after the last item used.
    it = iter(iterable)
    while True:
        go = extra_test()
        if isinstance(go, Staged):
            # a break / return under a staged condition: the loop stays unrolled, each
            # further item's body under a staged if on the flag
            for item in it:
                go = extra_test()
                if isinstance(go, Staged):
                    _staged_if(go, lambda item=item: body(item), lambda: None, get_state,
                               set_state, names)
                elif go:
                    body(item)
                else:
                    return
            return
        if not go:
            return
        try:
            item = next(it)
        except StopIteration:
            return
        body(item)


def if_exp(cond, if_true, if_false, description=None):
    if isinstance(cond, Staged):
        arms = []
        for fn in (if_true, if_false):
            b = _sx.push()
            try:
                v = fn()
                arms.append(b.close(_sx.literal(v)))
            finally:
                _sx.pop(b)
        return emit(f"(if {cond.sexpr} {arms[0]} {arms[1]})")
    return if_true() if cond else if_false()


def _logic(prim, staged, value):
    out = staged[0]
    for s in staged[1:] + ([value] if value is not None else []):
        out = apply(prim, out, s)
    return out


def and_(*operands):
    value = None
    staged = []
    for op in operands:
        value = op()
        if isinstance(value, Staged):
            staged.append(value)
            continue
        if not value:
            return value
    if staged:  # staged operands: a logical (not short-circuit) `and`, a bool
        return _logic("and", staged, None if isinstance(value, Staged) else bool(value))
    return value


def or_(*operands):
    value = None
    staged = []
    for op in operands:
        value = op()
        if isinstance(value, Staged):
            staged.append(value)
            continue
        if value:
            if staged:
                return True  # a plain truthy operand decides a staged `or`
            return value
    if staged:
        return _logic("or", staged, None)
    return value


def not_(value):
    if isinstance(value, Staged):
        return apply("not", value)
    return not value


def assert_stmt(cond, message):
    if isinstance(cond, Staged):
        msg = message()
        emit(f"(assert {cond.sexpr}" + (f" {_sx.literal(str(msg))})" if msg is not None
                                        else ")"))
        return
    if not cond:
        msg = message()
        if msg is None:
            raise AssertionError
        raise AssertionError(msg)


def ret(retval, do_return):
    """Single exit of a converted function: None when nothing returned."""
    if isinstance(do_return, Staged):
        return retval  # staged: every path must return (see docs/runtime.md "Staging")
    if isinstance(do_return, Undefined) or not do_return or isinstance(retval, Undefined):
        return None
    return retval
