# SPDX-License-Identifier: Apache-2.0
# Merging what the two branches of a staged `if` leave behind, and laying out the state
# of a staged loop (docs/runtime.md "Staging"). Values are compared structurally:
# containers (tuples, lists, dicts, namedtuples, dataclasses; runtime/tree.py) of the
# same structure merge item by item, numbers / staged values / None are leaves that
# become outputs of the staged `if` (or variables of the `while`), a variable bound on
# one path only becomes a MaybeUndefined that checks, where it is read, that it was
# bound (Python raises UnboundLocalError there). Anything else must be the same object
# on both paths, or staging fails with an error naming the variable and the construct.
from . import sexpr as _sx
from . import tree
from .errors import StagingError, Undefined
from .staged import Staged, apply


class MaybeUndefined(Undefined):
    """A variable bound on some paths only: `value` on the paths that bound it, `flag`
    the staged bool telling whether this path did. Reading it (sg__.ld) stages an
    assertion of the flag: Python's UnboundLocalError, raised when the graph runs on a
    path that left it unbound."""
    __slots__ = ("value", "flag", "where")

    def __init__(self, name, value, flag, where):
        super().__init__(name, f"it is bound only on some paths of {where}")
        self.value, self.flag, self.where = value, flag, where

    def staged_read(self, free=False):
        text = (f"cannot access local variable '{self.name}' where it is not associated "
                "with a value")
        note = f"stagd: '{self.name}' is bound only on some paths of {self.where}"
        if self.flag is not True:
            exc = UnboundLocalError(text)
            exc.add_note(note)
            if self.flag is False:
                raise exc
            msg = f"UnboundLocalError: {text} ({note[7:]})" + _sx.raise_tag(exc)
            _sx.current().emit(f"(assert {self.flag.sexpr} {_sx.literal(msg)})")
        return self.value

    def __repr__(self):
        return f"MaybeUndefined({self.name!r})"


def where_now(what):
    """'the staged if at FILE:LINE' for the construct being staged."""
    loc = _sx._user_location()
    return f"{what} at {loc[0]}:{loc[1]}" if loc else what


# ------------------------------------------------------------------ templates

class Slot:
    """A leaf of a template: the k-th output of the staged construct (a StagedList
    `like` stays one: its rebuild)."""
    __slots__ = ("k", "like")

    def __init__(self, k, like=None):
        self.k, self.like = k, like


class Node:
    """A container of a template, rebuilt (a new object) when the template is filled."""
    __slots__ = ("kind", "aux", "kids")

    def __init__(self, kind, aux, kids):
        self.kind, self.aux, self.kids = kind, aux, kids


class MaybeT:
    __slots__ = ("name", "value", "flag", "where")

    def __init__(self, name, value, flag, where):
        self.name, self.value, self.flag, self.where = name, value, flag, where


def fill(t, values):
    """The value of template t with values[k] at each Slot k."""
    if isinstance(t, Slot):
        rebuild = getattr(t.like, "rebuild", None)
        return values[t.k] if rebuild is None else rebuild(values[t.k])
    if isinstance(t, Node):
        return tree.build(t.kind, t.aux, [fill(c, values) for c in t.kids])
    if isinstance(t, MaybeT):
        flag = fill(t.flag, values)
        if flag is True:
            return fill(t.value, values)
        return MaybeUndefined(t.name, fill(t.value, values), flag, t.where)
    return t


def liftable(v):
    return v is None or _sx.liftable(v)


def is_bool(v):
    # (a StagedList is no bool; its .sexpr would bind its stack where it is asked for)
    return isinstance(v, bool) or (isinstance(v, _sx.Symbolic) and not hasattr(v, "rebuild")
                                   and v.sexpr in _sx.bool_syms)


def none_like(v, contents=None):
    """v's structure with None at every leaf (the value a path that did not bind a
    variable carries; never read there)."""
    k = tree.kind(v)
    if k is None:
        if isinstance(v, MaybeUndefined):
            return none_like(v.value)
        return None
    aux, kids = tree.children(v, k)
    return tree.build(k, aux, [none_like(c) for c in kids])


def placeholder_like(v, scope=None):
    """v's structure with, at each leaf, a zero of the leaf's type (the value a path that
    did not bind a variable carries, read only where its flag says it is bound): the
    daemon's inference then types the merged value as the leaf's type. None where the
    type is unknown. scope: the builder the leaves were bound in (a branch's, closed)."""
    k = tree.kind(v)
    if k is not None:
        aux, kids = tree.children(v, k)
        return tree.build(k, aux, [placeholder_like(c, scope) for c in kids])
    if isinstance(v, MaybeUndefined):
        return placeholder_like(v.value, scope)
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return type(v)(0)
    if not isinstance(v, _sx.Symbolic) or hasattr(v, "rebuild"):
        return None
    from .static import type_of
    pushed = scope is not None and (not _sx._stack or _sx._stack[-1] is not scope)
    if pushed:
        _sx._stack.append(scope)
    try:
        t = type_of(v)
    finally:
        if pushed:
            _sx._stack.pop()
    if t is not None and t[0] == "scalar":  # a Python number of that kind
        return {"bool": False, "int": 0}.get(t[1], 0.0)
    if t is None or t[0] != "tensor" or t[2] is None or None in t[2]:
        return None
    return Staged(f"(zeros (tuple {' '.join(map(str, t[2]))}) {t[1]})")


def same(a, b):
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, _sx.Symbolic):
        return False
    if isinstance(a, (bool, int, float, str, bytes, complex)) or a is None:
        return a == b or (a != a and b != b)
    return False


class Merger:
    """Merges the values of two paths into a template; the differing leaves are the
    pairs (value on path 1, value on path 2) the construct must output."""

    def __init__(self, where, contents=(None, None), scopes=(None, None)):
        self.where = where
        self.pairs = []
        # per path, id → contents of a tracked container at the end of that path
        self.contents = contents
        self.scopes = scopes  # per path, the builder its staged values were bound in

    def _slot(self, a, b):
        self.pairs.append((a, b))
        return Slot(len(self.pairs) - 1, a if hasattr(a, "rebuild") else b)

    def _node(self, v, side):
        """(kind, aux, children) of v at the end of path `side`, or None for a leaf."""
        k = tree.kind(v)
        if k is None:
            return None
        got = self.contents[side].get(id(v)) if self.contents[side] else None
        if got is not None:  # a tracked container: as it was at the end of that path
            if k == "list":
                return k, None, list(got)
            if k == "dict":
                return k, tuple(x for x, _ in got), [y for _, y in got]
            if k == "dataclass":
                aux, _ = tree.children(v, k)
                d = dict(got)
                return k, aux, [d.get(n) for n in aux[1]]
        aux, kids = tree.children(v, k)
        return k, aux, kids

    def merge(self, a, b, name):
        if same(a, b):
            return a
        ua, ub = isinstance(a, Undefined), isinstance(b, Undefined)
        if ua or ub:
            return self._merge_maybe(a, b, name)
        na, nb = self._node(a, 0), self._node(b, 1)
        if na is not None and nb is not None:
            if na[0] == nb[0] and na[1] == nb[1] and len(na[2]) == len(nb[2]):
                return Node(na[0], na[1], [self.merge(x, y, f"{name}[{i}]" if na[0] != "dict"
                                                      else f"{name}[{na[1][i]!r}]")
                                           for i, (x, y) in enumerate(zip(na[2], nb[2]))])
        if name == "retval__" and (a is None or b is None):
            # a return on one path only: the other returns None (Python falls off the
            # end); a returned tuple keeps its items, `ret` gives None where no path
            # returned (do_return__ false)
            if a is None and nb is not None:
                return self.merge(none_like(b), b, name)
            if b is None and na is not None:
                return self.merge(a, none_like(a), name)
        if liftable(a) and liftable(b):
            return self._slot(a, b)
        if (na is None or _literal_tree(a)) and (nb is None or _literal_tree(b)) \
                and liftable_tree(a) and liftable_tree(b):
            return self._slot(a, b)  # e.g. None on one path, a tuple on the other
        raise StagingError(
            f"stagd: {name!r} is {_show(a)} on one path and {_show(b)} on the other of "
            f"{self.where}; staged control flow can only merge numbers, tensors, None and "
            "containers of them with the same structure")

    def _merge_maybe(self, a, b, name):
        if isinstance(a, Undefined) and isinstance(b, Undefined) and \
                not isinstance(a, MaybeUndefined) and not isinstance(b, MaybeUndefined):
            return a
        va, fa = _value_flag(a, b, self.scopes[1])
        vb, fb = _value_flag(b, a, self.scopes[0])
        value = self.merge(va, vb, name)
        flag = self.merge(fa, fb, name + " (bound)") if not (fa is True and fb is True) else True
        where = getattr(a, "where", None) or getattr(b, "where", None) or self.where
        return MaybeT(name, value, flag, where)


def _value_flag(v, other, other_scope):
    if isinstance(v, MaybeUndefined):
        return v.value, v.flag
    if isinstance(v, Undefined):
        return placeholder_like(other, other_scope), False
    return v, True


def _literal_tree(v):
    _, td = tree.flatten(v, is_leaf=lambda x: isinstance(x, _sx.Symbolic))
    return tree.only_tuples(td)


def liftable_tree(v):
    leaves, _ = tree.flatten(v, is_leaf=lambda x: isinstance(x, _sx.Symbolic))
    return all(liftable(x) for x in leaves)


def _show(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def emit_pairs(pairs, head):
    """Binds the construct whose two arms give the pairs (head(arm texts) → expression
    text) and returns the staged value of each slot."""
    r = Staged(_sx.current().emit(head))
    out = [apply("getitem", r, k) for k in range(len(pairs))]
    for (a, b), v in zip(pairs, out):
        if is_bool(a) and is_bool(b):
            _sx.bool_syms.add(v.sexpr)
    return out
