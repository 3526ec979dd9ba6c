# SPDX-License-Identifier: Apache-2.0
# Functional control flow (AutoGraph style): if/while/for, ternary, lazy and/or, chained
# comparisons and membership, assert, and the single exit of a converted function (ret).
# Plain values: Python's semantics, on a fast path (no staging is going on: the
# statement itself). Staged values: runtime/flow.py's functional forms.
import operator

from . import facts
from . import sexpr as _sx
from . import flow
from . import speculation
from .builtins_ import StagedIter, StagedRange
from .directives import check_loop_options
from .errors import StagingError, Undefined
from .merge import is_bool, where_now
from .staged import Staged, apply, check_plain, emit


def _known(c):
    """A staged condition the current path knows, as a plain bool; else c."""
    if isinstance(c, Staged):
        k = facts.known(c)
        if k is not None:
            return k
    return c


def if_stmt(cond, body, orelse, get_state, set_state, names, nouts):
    if isinstance(cond, Staged):
        cond = _known(cond)
    if speculation._states:
        cond = speculation.decide("if", cond)
    if isinstance(cond, Staged):
        return flow.staged_if(cond, body, orelse, get_state, set_state, names)
    if cond:
        body()
    else:
        orelse()


def _probe(fn):
    """Calls fn under a scratch builder (discarded) when staging; plain otherwise."""
    if not _sx._stack:
        return fn()
    b = _sx.push()
    try:
        return fn()
    finally:
        _sx.pop(b)


def elif_stmt(cond, body, elifs, orelse, get_state, set_state, names, nouts):
    """`if cond: body() elif test(): …` for elifs = ((test, body), …), else orelse():
    each test runs only after the ones before it were false, in a loop (a chain of any
    length needs no Python recursion). A staged test stages the rest of the chain as
    the else branch of a staged if, with the chain's state functions."""
    k = 0
    while True:
        if isinstance(cond, Staged):
            cond = _known(cond)
        if speculation._states:
            cond = speculation.decide(f"elif{k}", cond)
        if isinstance(cond, Staged):
            break
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
    return flow.staged_if(cond, body, rest, get_state, set_state, names)


def while_stmt(test, body, get_state, set_state, names, opts):
    if opts:
        check_loop_options(opts)
    if not _sx._stack:  # nothing is being staged: Python's loop
        if speculation._states:  # (a profiled call: each test is a decision)
            while speculation.decide("while", test()):
                body()
            return
        while test():
            body()
        return
    while True:
        if speculation._states and isinstance(speculation.current(), speculation.Replay):
            # speculating: the test's bindings are the graph's (a resolved test is
            # kept, with its assumption); an unresolved one stages the loop as usual
            c = speculation.decide("while", _known(test()))
        else:
            c = _known(_probe(test))
        if isinstance(c, Staged):
            return flow.staged_loop(get_state, set_state, names, lambda ex: test(),
                                       lambda ex: (body(), ())[1], (test, body),
                                       max_iter=opts.get("maximum_iterations"),
                                       what="the staged while loop")
        if not c:
            break
        body()


def _staged_for(rng, extra_test, body, get_state, set_state, names, items=None, max_iter=None):
    """A while over an index; `items` (staged tensors, or StagedIter) give the body's
    item at each index."""
    start, stop, step = rng.start, rng.stop, rng.step
    if isinstance(step, Staged) or step == 0:
        raise StagingError(f"stagd: a staged range needs a plain, non-zero step "
                           f"({where_now('the staged for loop')})")
    cmp = "<" if step > 0 else ">"

    def test(ex):
        c = apply(cmp, ex[0], stop)
        _sx.bool_syms.add(c.sexpr)
        if extra_test is not None:
            e = _known(extra_test())
            if isinstance(e, Staged):
                c = flow.and_staged(c, e)
            elif not e:
                c = False
        return c

    def run(ex):
        if items is None:
            body(ex[0])
        elif isinstance(items, StagedIter):
            body(items.item(ex[0]))
        else:
            body(apply("getitem", items, ex[0]))
        return (apply("+", ex[0], step),)

    fns = (body,) if extra_test is None else (body, extra_test)
    flow.staged_loop(get_state, set_state, names, test, run, fns, extra=(("i", start),),
                        max_iter=max_iter, what="the staged for loop")


def for_stmt(iterable, extra_test, body, get_state, set_state, names, opts):
    if opts:
        check_loop_options(opts)
    if not _sx._stack:  # nothing is being staged: Python's loop
        if extra_test is None:
            for item in iterable:
                body(item)
            return
        # extra_test (the break flag) is checked before the next item is fetched, as
        # Python's `break` leaves a shared iterator positioned after the last item used.
        it = iter(iterable)
        while extra_test():
            for item in it:
                body(item)
                break
            else:
                return
        return
    m = opts.get("maximum_iterations")
    if isinstance(iterable, StagedRange):
        return _staged_for(iterable, extra_test, body, get_state, set_state, names, max_iter=m)
    if isinstance(iterable, StagedIter):
        n = iterable.static_length()
        if n is None:
            rng = StagedRange(0, iterable.length(), 1)
            return _staged_for(rng, extra_test, body, get_state, set_state, names, iterable, m)
        iterable = [iterable.item(i) for i in range(n)]
    elif isinstance(iterable, Staged):  # a staged tensor: iterate its first axis
        from .static import static_len
        n = static_len(iterable)
        if n is None:
            rng = StagedRange(0, apply("len", iterable), 1)
            return _staged_for(rng, extra_test, body, get_state, set_state, names, iterable, m)
        iterable = [apply("getitem", iterable, i) for i in range(n)]
    check_plain(iterable)
    if extra_test is None:
        for item in iterable:
            body(item)
        return
    it = iter(iterable)
    while True:
        go = _known(extra_test())
        if isinstance(go, Staged):
            # a break / return under a staged condition: the loop stays unrolled, each
            # further item's body under a staged if on the flag
            for item in it:
                go = _known(extra_test())
                if isinstance(go, Staged):
                    flow.staged_if(go, body, _nothing, get_state, set_state, names, arg=item)
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


def _nothing():
    pass


def if_exp(cond, if_true, if_false, description=None):
    if isinstance(cond, Staged):
        cond = _known(cond)
    if speculation._states:
        cond = speculation.decide("ifexp", cond)
    if not isinstance(cond, Staged):
        return if_true() if cond else if_false()
    return _lazy_if(cond, if_true, if_false)


def _arm(fn, cond, value):
    b = _sx.push()
    try:
        with facts.assuming(cond, value):
            try:
                v = fn()
                return b, v, None
            except StagingError:
                raise
            except Exception as e:  # noqa: BLE001 — this arm raises: staged as such
                return b, None, e
    finally:
        _sx.pop(b)


def _lazy_if(cond, then_fn, else_fn):
    """(if cond THEN ELSE), each arm staged under its own builder with what the path
    knows; an arm that raises becomes an assertion that the graph does not take it."""
    b1, v1, e1 = _arm(then_fn, cond, True)
    b2, v2, e2 = _arm(else_fn, cond, False)
    if e1 is not None or e2 is not None:
        if e1 is not None and e2 is not None:
            raise e1
        if flow.may_be_caught():
            raise StagingError(f"stagd: an operand of {where_now('a staged expression')} "
                               f"raises {type(e1 or e2).__name__} on one path only, inside a "
                               "try or with block that may catch it") from (e1 or e2)
        bad_b, bad_e, c = (b1, e1, cond) if e1 is not None else (b2, e2, apply("not", cond))
        emit(f"(if {c.sexpr} {bad_b.close(flow._assert_false(bad_e))} none)")
        good_b, good_v = (b2, v2) if e1 is not None else (b1, v1)
        _sx.current().bindings.extend(good_b.bindings)
        return good_v
    out = emit(f"(if {cond.sexpr} {flow.close_in(b1, v1)} {flow.close_in(b2, v2)})")
    if is_bool(v1) and is_bool(v2):
        _sx.bool_syms.add(out.sexpr)
    return out


def and_(*operands):
    """`a and b and …`: Python's value, each operand evaluated only where Python would —
    after a staged one, inside the true arm of `(if a REST a)`."""
    return _logic(operands, True)


def or_(*operands):
    """`a or b or …`, lazily as and_: `(if a a REST)` after a staged operand."""
    return _logic(operands, False)


def _logic(operands, is_and):
    value = None
    last = len(operands) - 1
    for k, op in enumerate(operands):
        value = op()
        if isinstance(value, Staged):
            kv = facts.known(value)
            if kv is None:
                if k == last:
                    return value
                return _lazy_logic(value, operands[k + 1:], is_and)
            if is_bool(value):
                value = kv
            if kv != is_and:  # decides: falsy for `and`, truthy for `or`
                return value
        elif bool(value) != is_and:
            return value
    return value


def _lazy_logic(v, rest, is_and):
    got = []

    def rest_fn():
        got.append(_logic(rest, is_and))
        return got[-1]
    keep = lambda: v  # noqa: E731
    out = _lazy_if(v, rest_fn, keep) if is_and else _lazy_if(v, keep, rest_fn)
    if isinstance(out, Staged):
        facts.derive(out, "and" if is_and else "or", v, *got[:1])
    return out


_CMP = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
        "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not}


def _compare(op, a, b):
    if op == "In":
        return in_(a, b)
    if op == "NotIn":
        return not_in_(a, b)
    out = _CMP[op](a, b)
    if isinstance(out, Staged):
        _sx.bool_syms.add(out.sexpr)
    return out


def compare_(left, *rest):
    """`a < b < c …` (the converter's `sg__.compare_(a, 'Lt', lambda: b, 'Lt', lambda:
    c)`): Python's chained comparison — each operand evaluated once, and only while the
    comparisons so far hold; after a staged one, inside the arm where it holds."""
    prev = left
    last = len(rest) // 2 - 1
    for k in range(last + 1):
        cur = rest[2 * k + 1]()
        r = _compare(rest[2 * k], prev, cur)
        if k == last:
            return r
        if isinstance(r, Staged):
            kv = facts.known(r)
            if kv is None:
                more, now = rest[2 * k + 2:], cur
                out = _lazy_if(r, lambda: compare_(now, *more), lambda: r)
                facts.derive(out, "and", r)
                return out
            if not kv:
                return facts.plain(r) if is_bool(r) else r
        elif not r:
            return r
        prev = cur
    return prev  # pragma: no cover — the converter writes at least two comparisons


def in_(a, b):
    """`a in b`: a staged tensor b gives NumPy's `(b == a).any()`; a staged a in a plain
    container compares it with each item (lazily, as `or`)."""
    if isinstance(b, Staged):
        eq = apply("==", b, a)
        out = apply(">", apply("sum", apply("cast", eq, Staged("int64"))), 0)
        _sx.bool_syms.add(out.sexpr)
        return out
    if isinstance(a, Staged):
        items = list(b.keys() if isinstance(b, dict) else b)
        if not items:
            return False
        out = _logic([(lambda x=x: True if x is a else _compare("Eq", a, x)) for x in items],
                     False)
        return out if isinstance(out, Staged) else bool(out)
    return a in b


def not_in_(a, b):
    if isinstance(a, Staged) or isinstance(b, Staged):
        return not_(in_(a, b))
    return a not in b


def not_(value):
    if isinstance(value, Staged):
        k = facts.known(value)
        if k is not None:
            return not k
        out = apply("not", value)
        facts.derive(out, "not", value)
        _sx.bool_syms.add(out.sexpr)
        return out
    return not value


def assert_stmt(cond, message):
    if isinstance(cond, Staged):
        cond = _known(cond)
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
        do_return = _known(do_return) if is_bool(do_return) else do_return
    if isinstance(do_return, Staged):
        # retval__ is None on the paths that did not return (merge.py), so it is the
        # result, except a returned container, whose items were merged one by one
        if isinstance(retval, tuple):
            if any(isinstance(x, Undefined) for x in retval):
                raise StagingError("stagd: internal: an undefined item in a returned tuple")
            return emit(f"(if {do_return.sexpr} {_sx.literal(retval)} none)")
        if retval is not None and not _sx.liftable(retval):
            raise StagingError(
                f"stagd: {where_now('the function')} returns {type(retval).__name__} on "
                "some staged paths and nothing (None) on others; return on every path")
        return retval
    if isinstance(do_return, Undefined) or not do_return or isinstance(retval, Undefined):
        return None
    return retval
