# SPDX-License-Identifier: Apache-2.0
# Staged `if` and loops (AutoGraph style; docs/runtime.md "Staging"): the branches of
# an `if` on a staged condition both run, each under its own builder and from the same
# state — variables, and the contents of the containers they can reach (world.py) —
# and what they leave is merged (merge.py) into `(if c ARM1 ARM2)`; a loop whose test
# is staged runs its body once on parameters standing for its state and becomes
# `(while COND BODY INIT)`. Path facts (facts.py) make conditions known inside a branch
# plain. An exception raised while staging one branch becomes an assertion that the
# graph does not take that branch, unless a handler in the traced code could catch it.
import dis
import os
import sys

from . import facts
from . import sexpr as _sx
from . import tree
from .merge import (MaybeT, Merger, MaybeUndefined, Node, Slot, emit_pairs,
                    fill, is_bool, liftable, none_like, placeholder_like, same, where_now)
from .errors import StagingError, Undefined
from .staged import Staged, apply, emit
from .world import World

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ------------------------------------------------------------ exceptions in branches

_handlers = {}  # code object → exception table entries (start, end)


def _covered(frame):
    code = frame.f_code
    entries = _handlers.get(code)
    if entries is None:
        try:
            entries = [(e.start, e.end) for e in dis.Bytecode(code).exception_entries]
        except Exception:  # noqa: BLE001 — an unusual code object: assume a handler
            entries = [(0, 1 << 30)]
        _handlers[code] = entries
    return any(s <= frame.f_lasti < e for s, e in entries)


def may_be_caught():
    """Whether code between here and the trace being built (a try, a with) could catch
    an exception raised here: the frames of the user's code, not the package's."""
    f = sys._getframe(1)
    while f is not None:
        fname = f.f_code.co_filename
        if fname.startswith(_PACKAGE):
            if f.f_code.co_name == "_trace" and fname.endswith("function.py"):
                return False
        elif _covered(f):
            return True
        f = f.f_back
    return False


def _raise_message(exc):
    from .errors import original_locations
    locs = original_locations(exc)
    at = f" (raised at {locs[-1][0]}:{locs[-1][1]})" if locs else ""
    return f"{type(exc).__name__}: {exc}{at}" + _sx.raise_tag(exc)


def _assert_false(exc):
    return f"(assert false {_sx.literal(_raise_message(exc))})"


def checks_raise(builder):
    """Whether builder's bindings check a staged `raise` (or a read of a variable bound
    on some paths): an assertion that makes the graph raise a Python exception."""
    return any("[stagd-raise " in expr for _, expr in builder.bindings)


def raise_after_checks(builder, exc):
    """exc, raised while tracing on every path from here, after the checks of
    checks_raise: the graph makes them, then fails with exc (Python raises whichever
    comes first). Returns the trace's result expression."""
    builder.emit(_assert_false(exc))
    return "none"


# ------------------------------------------------------------------ staged if

class _Run:
    __slots__ = ("builder", "out", "exc", "changed", "grown")


def _run(fn, arg, init, set_state, get_state, cond, value, world, where):
    r = _Run()
    r.exc, r.out, r.changed, r.grown = None, None, {}, {}
    b = r.builder = _sx.push()
    _sx.constructs.append(where)
    try:
        with facts.assuming(cond, value):
            if set_state is not None:
                set_state(init)
            try:
                fn() if arg is _NOARG else fn(arg)
                r.out = tuple(facts.plain(v) if is_bool(v) else v for v in get_state())
            except (StagingError, NotImplementedError, RecursionError):
                raise
            except Exception as e:  # noqa: BLE001 — staged as "this path raises"
                r.exc = e
            if world is not None:
                r.changed = world.changed()
                r.grown = _grown_lists(world, r.changed)  # typed while the arm is open
    finally:
        _sx.constructs.pop()
        _sx.pop(b)
    if world is not None:
        world.restore()
    return r


def _grown_lists(world, changed):
    """id → the static (dtype, dims) of the items a branch appended to a list."""
    from .static import tensor_type
    out = {}
    for i, now in changed.items():
        snap = world.snap[i]
        if world.kind[i] == "list" and len(now) > len(snap):
            out[i] = [tensor_type(x) if isinstance(x, Staged) else None
                      for x in now[len(snap):]]
    return out


def _lists_as_tensor_lists(r1, r2, world, init, names, where):
    """A list, held by a state variable, to which one path appends more items than the
    other: both paths' lists become tensor lists (StagedList) of the items' dtype and
    shape, which the staged if merges (AutoGraph's TensorList); the list itself is left
    as it was."""
    from .directives import StagedList
    for i in set(r1.grown) | set(r2.grown):
        c1 = r1.changed.get(i, world.snap[i])
        c2 = r2.changed.get(i, world.snap[i])
        if len(c1) == len(c2):
            continue
        idx = [k for k, v in enumerate(init) if v is world.objs[i]]
        types = [t for t in r1.grown.get(i, []) + r2.grown.get(i, [])]
        snap = world.snap[i]
        ok = idx and all(a is b for a, b in zip(snap, c1)) and \
            all(a is b for a, b in zip(snap, c2)) and types and types[0] is not None and \
            None not in types[0][1] and all(t == types[0] for t in types)
        if not ok:
            continue  # _merge_contents reports the lengths
        dtype, dims = types[0]
        for r, c in ((r1, c1), (r2, c2)):
            out = list(r.out)
            for k in idx:
                out[k] = StagedList(dtype, dims, items=list(c), inferred=True)
            r.out = tuple(out)
            r.changed.pop(i, None)


_NOARG = object()


def staged_if(cond, body, orelse, get_state, set_state, names, arg=_NOARG):
    """Both branches from the same state, merged into `(if cond ARM1 ARM2)`."""
    where = where_now("the staged if")
    init = tuple(get_state())
    world = World(init, (body, orelse))
    r1 = _run(body, arg, init, set_state, get_state, cond, True, world, where)
    r2 = _run(orelse, _NOARG, init, set_state, get_state, cond, False, world, where)
    if r1.exc is not None or r2.exc is not None:
        return _if_raising(cond, r1, r2, init, set_state, world, where)
    _lists_as_tensor_lists(r1, r2, world, init, names, where)
    m = Merger(where, (r1.changed, r2.changed), (r1.builder, r2.builder))
    try:
        state_t = [m.merge(a, b, n) for a, b, n in zip(r1.out, r2.out, names)]
        obj_t = {i: _merge_contents(m, world, i, r1.changed.get(i), r2.changed.get(i),
                                    names, init)
                 for i in list(r1.changed) + [i for i in r2.changed if i not in r1.changed]}
    except StagingError:
        set_state(init)
        raise
    t1 = close_in(r1.builder, tuple(a for a, _ in m.pairs))
    t2 = close_in(r2.builder, tuple(b for _, b in m.pairs))
    values = emit_pairs(m.pairs, f"(if {cond.sexpr} {t1} {t2})")
    set_state(tuple(fill(t, values) for t in state_t))
    for i, t in obj_t.items():
        world.put(i, _fill_contents(world.kind[i], t, values))


def close_in(b, value):
    """b closed around value, whose text is made with b current (a StagedList binds its
    stack where it is written: in the arm it was built in)."""
    _sx._stack.append(b)
    try:
        text = _sx.literal(value)
    finally:
        _sx._stack.pop()
    return b.close(text)


def _if_raising(cond, r1, r2, init, set_state, world, where):
    set_state(init)
    if r1.exc is not None and r2.exc is not None:
        e1, e2 = r1.exc, r2.exc
        if type(e1) is type(e2) and e1.args == e2.args:
            raise e1
        raise StagingError(f"stagd: both branches of {where} raise ({type(e1).__name__}: {e1} / "
                           f"{type(e2).__name__}: {e2}); which one depends on a staged "
                           "condition") from e1
    bad, good, taken = (r1, r2, True) if r1.exc is not None else (r2, r1, False)
    if may_be_caught():
        raise StagingError(
            f"stagd: {type(bad.exc).__name__}: {bad.exc} is raised on one path of {where}, "
            "inside a try or with block of the staged code that may catch it; whether it "
            "is raised depends on a staged value, so Python cannot catch it while staging "
            "(move the try out of the staged function, or test the condition with plain "
            "values)") from bad.exc
    arm = bad.builder.close(_assert_false(bad.exc))
    c = cond if taken else apply("not", cond)
    _sx.current().emit(f"(if {c.sexpr} {arm} none)")
    cur = _sx.current()
    for name, expr in good.builder.bindings:  # the other path runs on: its effects follow
        cur.bindings.append((name, expr))
    set_state(good.out)
    for i, contents in good.changed.items():
        world.put(i, contents)


def _obj_name(world, i, names, init):
    target = world.objs[i]
    for n, v in zip(names, init):
        if v is target:
            return n
        for k, x in (enumerate(v) if isinstance(v, (list, tuple)) else
                     v.items() if isinstance(v, dict) else
                     vars(v).items() if hasattr(v, "__dict__") and not isinstance(v, type)
                     else ()):
            if x is target:
                return f"{n}.{k}" if isinstance(k, str) and not isinstance(v, dict) else f"{n}[{k!r}]"
    return f"a {type(target).__name__} it reaches"


def _tensor_list_hint(c1, c2):
    """What to do when a list grows by staged values on one path only: it becomes a
    tensor list when their dtype and shape are known while staging (docs/runtime.md
    "Containers")."""
    if any(isinstance(v, Staged) for v in list(c1) + list(c2)):
        return (" (a local list grown by staged tensors becomes a tensor list when their "
                "dtype and shape are known while staging; declare it with "
                "stagd.set_element_type(l, dtype, shape))")
    return ""


def _merge_contents(m, world, i, c1, c2, names, init):
    k = world.kind[i]
    c1 = world.snap[i] if c1 is None else c1
    c2 = world.snap[i] if c2 is None else c2
    what = _obj_name(world, i, names, init)
    if k in ("set", "array"):
        raise StagingError(f"stagd: {m.where} changes {what} (a {k}) in place on one path; "
                           f"a {'NumPy array' if k == 'array' else k} cannot be modified under "
                           "a staged condition (use a staged tensor, or a list or dict)")
    if k == "list":
        if len(c1) != len(c2):
            raise StagingError(f"stagd: {what} has {len(c1)} items on one path of {m.where} "
                               f"and {len(c2)} on the other; a list must keep its length "
                               "across a staged if" + _tensor_list_hint(c1, c2))
        return [m.merge(x, y, f"{what}[{j}]") for j, (x, y) in enumerate(zip(c1, c2))]
    keys1, keys2 = [a for a, _ in c1], [a for a, _ in c2]
    if set(keys1) != set(keys2):
        only = sorted(map(repr, set(keys1) ^ set(keys2)))
        raise StagingError(f"stagd: {m.where} sets {', '.join(only)} of {what} on one path "
                           "only; set it before the if or on both paths")
    d2 = dict(c2)
    sep = "." if k == "attrs" else ""
    return [(a, m.merge(v, d2[a], f"{what}{sep}{a}" if sep else f"{what}[{a!r}]"))
            for a, v in c1]


def _fill_contents(kind, t, values):
    if kind == "list":
        return [fill(x, values) for x in t]
    return [(a, fill(x, values)) for a, x in t]


# ------------------------------------------------------------------ staged loops

class _Widen(Exception):
    pass


class _Layout:
    """How a loop's state becomes the variables of `(while …)`: a template per state
    value and per tracked container the body changes, and the initial leaf values."""

    def __init__(self, init, names, where, world):
        self.init, self.names, self.where, self.world = init, names, where, world
        self.struct = set()  # paths of containers rebuilt structurally (new objects)
        self.maybe = {}  # state index → structure of the value (first bound in the body)
        self.retval = {}  # state index → structure of a container returned in the body
        self.lists = {}  # state index → (dtype, shape): a list inferred as a tensor list
        self.nonbool = set()  # slot paths not assumed bool
        self.invariant = set()  # slot paths the body leaves as they are: not loop variables
        self.params = []  # the loop's parameter symbols (of the attempt being staged)
        self.objs = {}  # id → contents structure (tracked containers the body changes)

    def build(self):
        self.leaves, self.paths = [], []
        self.state_t = [self._state(i, v) for i, v in enumerate(self.init)]
        self.obj_t = {}
        for i in self.objs:
            snap = self.world.snap[i]
            if self.world.kind[i] == "list":
                self.obj_t[i] = [self._lay(x, ("obj", i, j)) for j, x in enumerate(snap)]
            else:
                self.obj_t[i] = [(a, self._lay(x, ("obj", i, a))) for a, x in snap]

    def _state(self, i, v):
        if i in self.lists:
            from .directives import StagedList
            dtype, shape = self.lists[i]
            return self._lay(StagedList(dtype, shape, items=list(v), inferred=True), (i,))
        if i in self.maybe and isinstance(v, Undefined) and not isinstance(v, MaybeUndefined):
            return MaybeT(self.names[i], self._lay(self.maybe[i], (i, "v")),
                          self._lay(False, (i, "f")), self.where)
        if i in self.retval and v is None:
            return self._lay(self.retval[i], (i,), retval=True)
        return self._lay(v, (i,))

    def _lay(self, v, path, retval=False):
        if retval and v is None:  # an item of the returned value: a loop variable
            self.leaves.append(v)
            self.paths.append(path)
            return Slot(len(self.leaves) - 1)
        if isinstance(v, MaybeUndefined):
            return MaybeT(v.name, self._lay(v.value, path + ("v",)),
                          self._lay(v.flag, path + ("f",)), v.where)
        if isinstance(v, Undefined) or (v is None and path == (self.names.index("retval__"),)
                                        if "retval__" in self.names else False):
            return v  # kept until the body shows what it becomes (_extract widens)
        if liftable(v) and not isinstance(v, (str, bytes)):
            if path in self.invariant:
                return v  # the body does not change it (a value read in a Snek loop)
            self.leaves.append(v)
            self.paths.append(path)
            return Slot(len(self.leaves) - 1, v if hasattr(v, "rebuild") else None)
        k = tree.kind(v)
        if k is not None and (id(v) not in self.world.objs or path in self.struct):
            aux, kids = tree.children(v, k)
            return Node(k, aux, [self._lay(c, path + (j,), retval) for j, c in enumerate(kids)])
        return v  # an object kept as it is (its contents, if they change: self.objs)


def _extract(t, v, out, lay, i, path):
    """Appends to out the leaves of value v for template t (the body's results), or
    raises _Widen after recording what the layout must learn."""
    if isinstance(t, Slot):
        if isinstance(v, Undefined):
            raise StagingError(f"stagd: {_what(lay, i, path)} is deleted in {lay.where}, "
                               "which staging cannot express")
        if not (liftable(v) or _opaque(v)) or isinstance(v, (str, bytes)):
            raise StagingError(f"stagd: {_what(lay, i, path)} becomes {v!r} in {lay.where}; "
                               "a staged loop can carry numbers, tensors, None and "
                               "containers of them")
        p = lay.paths[t.k]
        if is_bool(lay.leaves[t.k]) and p not in lay.nonbool and not is_bool(v):
            lay.nonbool.add(p)
            raise _Widen()
        if not hasattr(v, "rebuild") and getattr(v, "sexpr", None) == lay.params[t.k]:
            lay.unchanged.add(p)  # the parameter itself: the value is loop-invariant
        out[t.k] = v
        return
    if isinstance(t, Node):
        k = tree.kind(v)
        if k == t.kind:
            aux, kids = tree.children(v, k)
            if aux == t.aux and len(kids) == len(t.kids):
                for j, (tc, vc) in enumerate(zip(t.kids, kids)):
                    _extract(tc, vc, out, lay, i, path + (j,))
                return
        raise StagingError(f"stagd: {_what(lay, i, path)} changes its structure in {lay.where} "
                           f"(from {tree.describe(_td(t))} to {_describe(v)}); a staged loop "
                           "must keep the structure of its state")
    if isinstance(t, MaybeT):
        if isinstance(v, MaybeUndefined):
            val, flag = v.value, v.flag
        elif isinstance(v, Undefined):
            val, flag = placeholder_like(_shape_of(t.value)), False
        else:
            val, flag = v, True
        _extract(t.value, val, out, lay, i, path + ("v",))
        _extract(t.flag, flag, out, lay, i, path + ("f",))
        return
    # a value kept as it is: it must not change
    if t is v or same(t, v):
        return
    if len(path) == 1 and isinstance(t, Undefined) and not isinstance(t, MaybeUndefined):
        lay.maybe[i] = placeholder_like(v)  # first bound in the body (the body's scope)
        raise _Widen()
    if len(path) == 1 and isinstance(t, list) and getattr(v, "item_dtype", None) is not None \
            and i not in lay.lists:
        lay.lists[i] = (v.item_dtype, v.item_shape)  # became a tensor list in the body
        raise _Widen()
    if len(path) == 1 and lay.names[i] == "retval__" and t is None:
        lay.retval[i] = none_like(v)  # what the body returns: a value, or a container's
        raise _Widen()                # items, each None until a return sets it
    if tree.kind(t) is not None and tree.kind(v) == tree.kind(t) and path not in lay.struct:
        lay.struct.add(path)  # rebound to a new container of the same kind
        raise _Widen()
    if len(path) == 1 and t is None and liftable(v):
        raise StagingError(f"stagd: internal: None kept for {lay.names[i]!r}")  # pragma: no cover
    raise StagingError(f"stagd: {_what(lay, i, path)} changes from {_short(t)} to {_short(v)} in "
                       f"{lay.where}; a staged loop can carry numbers, tensors, None and "
                       "containers of them")


def _what(lay, i, path):
    if i is not None:
        return repr(lay.names[i]) + "".join(f"[{p!r}]" for p in path[1:] if p not in ("v", "f"))
    return f"{_obj_name(lay.world, path[1], lay.names, lay.init)}[{path[2]!r}]"


def _opaque(v):
    leaves, td = tree.flatten(v, is_leaf=lambda x: isinstance(x, _sx.Symbolic))
    return tree.only_tuples(td) and all(liftable(x) for x in leaves)


def _shape_of(t):
    if isinstance(t, Node):
        return tree.build(t.kind, t.aux, [_shape_of(c) for c in t.kids])
    return None


def _td(t):
    if isinstance(t, Node):
        return (t.kind, t.aux, tuple(_td(c) for c in t.kids))
    return tree.LEAF


def _describe(v):
    k = tree.kind(v)
    if k is None:
        return _short(v)
    return tree.describe(tree.flatten(v)[1])


def _short(v):
    r = repr(v)
    return r if len(r) <= 50 else r[:47] + "..."


def _learn_objects(lay, changed, world):
    """Containers the body changed that the layout does not carry yet."""
    new = False
    for i, now in changed.items():
        if i in lay.objs:
            continue
        k = world.kind[i]
        snap = world.snap[i]
        what = _obj_name(world, i, lay.names, lay.init)
        if k in ("set", "array"):
            raise StagingError(f"stagd: {lay.where} changes {what} (a "
                               f"{'NumPy array' if k == 'array' else k}) in place; it cannot "
                               "be modified in a staged loop (use a staged tensor, a list or "
                               "a dict)")
        if k == "list" and len(now) != len(snap):
            _tensor_list(lay, i, snap, now, world, what)
            new = True
            continue
        if k != "list" and [a for a, _ in now] != [a for a, _ in snap]:
            added = sorted(map(repr, {a for a, _ in now} ^ {a for a, _ in snap}))
            raise StagingError(f"stagd: {lay.where} adds or removes {', '.join(added)} of "
                               f"{what}; a staged loop must keep the keys of a dict "
                               "(and the attributes of an object) it changes")
        lay.objs[i] = True
        new = True
    if new:
        raise _Widen()


def _tensor_list(lay, i, snap, now, world, what):
    """A list that grows in a staged loop: a tensor list (AutoGraph's TensorList) when it
    is a state variable and the items added are staged tensors of one dtype and shape."""
    idx = next((k for k, v in enumerate(lay.init) if v is world.objs[i]), None)
    grow = len(now) > len(snap) and all(a is b for a, b in zip(snap, now))
    added = now[len(snap):] if grow else []
    if idx is None or not grow or not all(isinstance(a, Staged) for a in added):
        raise StagingError(
            f"stagd: {what} changes its length in {lay.where}; a list that grows in a "
            "staged loop must be a local variable to which staged tensors are appended "
            "(or declared with stagd.set_element_type(l, dtype, shape))")
    from .static import tensor_type
    types = [tensor_type(a) for a in added]
    first = types[0]
    if first is None or None in first[1] or any(t != first for t in types):
        raise StagingError(
            f"stagd: {what} grows in {lay.where} by staged values whose dtype and shape "
            f"are not known while staging ({', '.join(map(_type_text, types))}); declare "
            "its items with stagd.set_element_type(l, dtype, shape)")
    if not all(isinstance(x, Staged) or liftable(x) for x in snap):
        raise StagingError(f"stagd: {what} holds items that are not tensors or numbers; it "
                           f"cannot grow in {lay.where}")
    lay.lists[idx] = first


def _type_text(t):
    if t is None:
        return "unknown"
    return f"{t[0]}[{','.join('?' if d is None else str(d) for d in t[1])}]"


def staged_loop(get_state, set_state, names, test, body, fns, extra=(), max_iter=None,
                what="the staged loop"):
    """(while (lambda (s…) COND) (lambda (s…) (tuple …)) (tuple init…)) over the state's
    leaves and the extra (name, init) counters; test(extras) → condition, body(extras)
    → new extras."""
    where = where_now(what)
    if max_iter is not None:
        n0, t0, b0 = len(extra), test, body
        extra = tuple(extra) + (("k", 0),)

        def test(ex):
            return and_staged(t0(ex[:n0]), apply("<", ex[n0], max_iter))

        def body(ex):
            return tuple(b0(ex[:n0])) + (apply("+", ex[n0], 1),)
    init = tuple(get_state())
    world = World(init, fns)
    lay = _Layout(init, names, where, world)
    for _ in range(12):
        lay.build()
        try:
            return _loop_once(lay, world, get_state, set_state, test, body, extra)
        except _Widen:
            world.restore()
            set_state(init)
        except BaseException:
            world.restore()
            set_state(init)
            raise
    raise StagingError(f"stagd: cannot find a fixed layout for the state of {where}")


def and_staged(a, b):
    out = apply("and", a, b)
    facts.derive(out, "and", a, b)
    _sx.bool_syms.add(out.sexpr)
    return out


def _loop_once(lay, world, get_state, set_state, test, body, extra):
    nx = len(lay.leaves)
    params = [_sx.fresh("s") for _ in range(nx)] + [_sx.fresh(n) for n, _ in extra]
    lay.params, lay.unchanged = params, set()
    for p, v, path in zip(params, lay.leaves, lay.paths):
        if is_bool(v) and path not in lay.nonbool:
            _sx.bool_syms.add(p)

    def start():
        vals = [Staged(p) for p in params[:nx]]
        set_state(tuple(fill(t, vals) for t in lay.state_t))
        for i, t in lay.obj_t.items():
            world.put(i, _fill_contents(world.kind[i], t, vals))
        return [Staged(p) for p in params[nx:]]

    b = _sx.push()
    b.bound = dict(zip(params, list(lay.leaves) + [v for _, v in extra]))
    _sx.constructs.append(lay.where)
    try:
        c = test(start())
        cond = b.close(_sx.literal(c))
    finally:
        _sx.constructs.pop()
        _sx.pop(b)
    b = _sx.push()
    b.bound = dict(zip(params, list(lay.leaves) + [v for _, v in extra]))
    _sx.constructs.append(lay.where)
    exc = None
    try:
        with facts.assuming(c, True):
            try:
                new_extra = body(start())
                out_state = get_state()
            except (_Widen, StagingError):
                raise
            except Exception as e:  # noqa: BLE001 — the loop must not run: staged as such
                exc = e
            if exc is None:
                out = [None] * nx
                for i, (t, v) in enumerate(zip(lay.state_t, out_state)):
                    _extract(t, v, out, lay, i, (i,))
                if lay.unchanged:  # stage again without the invariant values as variables
                    lay.invariant |= lay.unchanged
                    raise _Widen()
                changed = world.changed()
                _learn_objects(lay, {i: v for i, v in changed.items() if i not in lay.objs},
                               world)
                for i, t in lay.obj_t.items():
                    now = world.current(i)
                    if len(now) != len(t) or (world.kind[i] != "list" and
                                              [a for a, _ in now] != [a for a, _ in t]):
                        raise StagingError(f"stagd: {lay.where} changes the length or keys "
                                           f"of {_obj_name(world, i, lay.names, lay.init)}")
                    for j, (tt, vv) in enumerate(zip(t, now)):
                        if world.kind[i] == "list":
                            _extract(tt, vv, out, lay, None, ("obj", i, j))
                        else:
                            _extract(tt[1], vv[1], out, lay, None, ("obj", i, tt[0]))
                res = b.close(_sx.literal(tuple(out) + tuple(new_extra)))
    finally:
        _sx.constructs.pop()
        _sx.pop(b)
    world.restore()
    set_state(lay.init)
    if exc is not None:
        return _loop_raising(exc, test, extra, lay)
    ps = " ".join(params)
    inits = _sx.literal(tuple(lay.leaves) + tuple(v for _, v in extra))
    r = emit(f"(while (lambda ({ps}) {cond}) (lambda ({ps}) {res}) {inits})")
    values = [apply("getitem", r, k) for k in range(nx)]
    for p, v, path in zip(values, lay.leaves, lay.paths):
        if is_bool(v) and path not in lay.nonbool:
            _sx.bool_syms.add(p.sexpr)
    set_state(tuple(fill(t, values) for t in lay.state_t))
    for i, t in lay.obj_t.items():
        world.put(i, _fill_contents(world.kind[i], t, values))


def _loop_raising(exc, test, extra, lay):
    """The body raises whenever it runs: the graph asserts that the loop does not run
    (Python raises at its first iteration) and the state stays as it was."""
    if may_be_caught():
        raise StagingError(
            f"stagd: {type(exc).__name__}: {exc} is raised in the body of {lay.where}, inside "
            "a try or with block of the staged code that may catch it; whether the body runs "
            "depends on a staged value, so Python cannot catch it while staging") from exc
    c0 = test([v for _, v in extra])
    msg = _raise_message(exc)
    if isinstance(c0, Staged):
        emit(f"(assert {apply('not', c0).sexpr} {_sx.literal(msg)})")
    elif c0:
        raise exc
