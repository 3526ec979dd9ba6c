# SPDX-License-Identifier: Apache-2.0
"""signature.py — how stagd.function sees its arguments and results (docs/client.md
"Staged functions").

* The trace cache key: per argument, tensors by (dtype, shape), Python numbers as
  dynamic scalars, Variables by (dtype, shape) (passed by reference), containers
  (tuples, lists, dicts, namedtuples, dataclasses: runtime/tree.py) by their structure
  and the key of each leaf, everything else by value: a value is frozen into a hashable
  form (lists into tuples of their items, arrays into their bytes) so that a new object
  equal to an old one finds its trace and a changed one does not; an object that can
  be neither hashed nor frozen is kept alive in the key and compared by identity (an
  `id()` alone could be reused by a new object and find a stale trace).
* Parameters: every dynamic leaf of an argument becomes a parameter of the def
  (`x` for a leaf argument, `x$p0`, `x$p1`, … for the leaves of a container).
* Results: a result that holds other containers than tuples is returned as the tuple
  of its leaves and rebuilt around the values the graph returns (ResultTree).
"""
from .runtime import sexpr as _sx
from .runtime import tree
from .runtime.staged import Staged


class _Ref:
    """An object in a trace key compared by identity; holding it keeps its id unique."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Ref) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return f"<{type(self.obj).__name__} at {id(self.obj):#x}>"


_SCALARS = (type(None), bool, int, float, complex, str, bytes)


def freeze(v, depth=0):
    """A hashable value equal for equal arguments (see the module comment)."""
    t = type(v)
    if t in _SCALARS:
        return (t, v)
    if depth > 50:
        return _Ref(v)
    k = tree.kind(v)
    if k is not None:
        aux, kids = tree.children(v, k)
        return (k, aux, tuple(freeze(c, depth + 1) for c in kids))
    if t in (set, frozenset):
        return (t, frozenset(freeze(c, depth + 1) for c in v))
    np = _numpy()
    if np is not None:
        if isinstance(v, np.ndarray):
            return ("ndarray", str(v.dtype), v.shape, v.tobytes())
        if isinstance(v, np.generic):
            return (t, v.item())
    try:
        hash(v)
    except TypeError:
        return _Ref(v)
    return (t, v)


def _numpy():
    try:
        import numpy as np
        return np
    except ImportError:  # pragma: no cover
        return None


def leaf_part(a):
    """The key part of a dynamic leaf, or None when `a` is not one."""
    from .tensor import Tensor, Variable
    if isinstance(a, Staged):
        return ("staged",)
    if isinstance(a, Tensor):
        return ("tensor", a.dtype, tuple(a.shape))
    if isinstance(a, Variable):
        return ("variable", a.dtype, tuple(a.shape))
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return ("scalar", type(a).__name__)
    np = _numpy()
    if np is not None and isinstance(a, np.ndarray):
        return ("tensor", str(a.dtype), a.shape)
    return None


def arg_part(a, static):
    """The key part of one argument."""
    if static:
        return ("static", freeze(a))
    p = leaf_part(a)
    if p is not None:
        return p
    if tree.kind(a) is not None:
        leaves, td = tree.flatten(a)
        parts = tuple(leaf_part(x) or ("static", freeze(x)) for x in leaves)
        if any(q[0] != "static" for q in parts):
            return ("tree", td, parts)
    return ("static", freeze(a))


def spec_part(spec):
    """The key part an input_signature entry gives its argument: a TensorSpec's tensor
    part, or a scalar part for a spec without a shape (stagd.export's ScalarSpec)."""
    if not hasattr(spec, "shape"):
        return ("scalar", spec.dtype)
    return ("tensor", spec.dtype, None if spec.shape is None else tuple(spec.shape))


def relax(parts, dims):
    """JANUS's shape relaxation: the parts with each tensor dimension that has been seen
    with two different sizes (for the same argument leaf, dtype and rank) made unknown
    (None), so one trace serves every later size: (4, 8) then (5, 8) → (None, 8).
    `dims` is the function's memory of the sizes seen, updated here."""
    def leaf(path, q):
        if q[0] != "tensor" or q[2] is None:
            return q
        shape = q[2]
        seen = dims.setdefault((path, q[1], len(shape)), list(shape))
        for d, n in enumerate(shape):
            if seen[d] is not None and seen[d] != n:
                seen[d] = None
        if None not in seen:
            return q
        return ("tensor", q[1], tuple(None if s is None else n for s, n in zip(seen, shape)))

    out = []
    for k, p in enumerate(parts):
        if p[0] == "tree":
            p = ("tree", p[1], tuple(leaf((k, j), q) for j, q in enumerate(p[2])))
        else:
            p = leaf((k,), p)
        out.append(p)
    return out


def is_dynamic(part):
    return part[0] != "static"


def dynamic_leaves(a, part):
    """The values of an argument's parameters, in parameter order."""
    if part[0] == "static":
        return []
    if part[0] != "tree":
        return [a]
    leaves, _ = tree.flatten(a)
    return [x for x, q in zip(leaves, part[2]) if q[0] != "static"]


def staged_argument(name, a, part, bind_variable):
    """(the value the trace gets for this argument, its parameter names): Staged
    symbols for tensors and numbers; a Variable itself, its symbol bound to the
    parameter by bind_variable(var, symbol), so `v.assign*` / `read_value` stage on it."""
    if part[0] == "static":
        return a, []

    def leaf(x, sym, q):
        if q[0] == "variable":
            bind_variable(x, sym)
            return x
        s = Staged(sym)
        if q[0] == "scalar":  # the Python number it stands for: isinstance(s, int) holds
            s.py_type = float if q[1] == "float" else int if q[1] in ("int", "bool") else type(x)
        return s
    if part[0] != "tree":
        return leaf(a, name, part), [name]
    leaves, td = tree.flatten(a)
    names, out = [], []
    for x, q in zip(leaves, part[2]):
        if q[0] == "static":
            out.append(x)
            continue
        sym = f"{name}$p{len(names)}"
        names.append(sym)
        out.append(leaf(x, sym, q))
    return tree.unflatten(td, out), names


def probe_type(sym, part, spec=None):
    """The parameter as the daemon's inference may know it (runtime/static.py): a tensor
    `(NAME DTYPE (DIMS))` (a TensorSpec's None dimensions as `?`), a Python number as a
    0-d tensor of its kind; None when nothing is known."""
    kind = part[0]
    if kind in ("tensor", "variable"):
        dims = part[2] if spec is None or spec.shape is None else spec.shape
        dims = tuple("?" if d is None else d for d in dims)  # unknown: relaxed or a spec's
        if spec is not None and spec.shape is None:
            return None
        text = f"({part[1]} ({' '.join(str(d) for d in dims)}))"
        return ("variable " if kind == "variable" else "") + text
    if kind == "scalar":
        return "(float64 ())" if part[1] == "float" else "(int64 ())"
    return None


class ResultTree:
    """A result holding containers other than tuples: its structure, which leaves the
    graph returns (as one tuple) and the others (kept as they were at trace time)."""

    def __init__(self, treedef, in_graph, statics, lists=()):
        self.treedef = treedef
        self.in_graph = in_graph  # per leaf: whether the graph returns it
        self.statics = statics  # per leaf not in the graph: its value
        self.lists = set(lists)  # leaves that were lists of tensors (StagedList)

    def rebuild(self, graph_values):
        it, st = iter(graph_values), iter(self.statics)
        leaves = [next(it) if g else next(st) for g in self.in_graph]
        for k in self.lists:  # the stacked tensor back into the list of its items
            leaves[k] = list(leaves[k])
        return tree.unflatten(self.treedef, leaves)


def _graph_leaf(v):
    try:
        _sx.literal(v)
        return True
    except TypeError:
        return False


def result_form(result):
    """(the S-expression of the result, ResultTree or None): tuples of values stay the
    literal they are; other containers become the tuple of their leaves."""
    leaves, td = tree.flatten(result, is_leaf=lambda x: isinstance(x, _sx.Symbolic))
    lists = [k for k, x in enumerate(leaves) if getattr(x, "inferred", False)]
    if tree.only_tuples(td) and all(_graph_leaf(x) for x in leaves) and not lists:
        return _sx.literal(result), None
    in_graph = [_graph_leaf(x) for x in leaves]
    expr = _sx.literal(tuple(x for x, g in zip(leaves, in_graph) if g))
    return expr, ResultTree(td, in_graph, [x for x, g in zip(leaves, in_graph) if not g],
                            lists)
