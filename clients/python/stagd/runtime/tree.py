# SPDX-License-Identifier: Apache-2.0
# Nested Python structures (TF's `nest`, JAX's pytrees): tuples, lists, dicts,
# namedtuples and dataclass instances are flattened to their leaves and rebuilt around
# new ones. Staged control flow carries containers as state this way, and
# stagd.function passes them as arguments and returns them (docs/runtime.md
# "Containers").
import dataclasses

LEAF = ("leaf",)


def kind(v):
    """The node kind of v ('tuple', 'list', 'dict', 'namedtuple', 'dataclass'), or None
    for a leaf. Only these exact types are nodes (a dict subclass is a leaf)."""
    t = type(v)
    if t is tuple:
        return "tuple"
    if t is list:
        return "list"
    if t is dict:
        return "dict"
    if isinstance(v, tuple) and hasattr(t, "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(t) and not isinstance(v, type):
        return "dataclass"
    return None


def children(v, k=None):
    """(aux, child values) of node v: aux is what rebuilding needs besides the children
    (dict keys, the class, the dataclass field names)."""
    k = k or kind(v)
    if k in ("tuple", "list"):
        return None, list(v)
    if k == "dict":
        return tuple(v), list(v.values())
    if k == "namedtuple":
        return type(v), list(v)
    names = tuple(f.name for f in dataclasses.fields(v))
    return (type(v), names), [getattr(v, n) for n in names]


def build(k, aux, values):
    """The node of kind k with these children."""
    if k == "tuple":
        return tuple(values)
    if k == "list":
        return list(values)
    if k == "dict":
        return dict(zip(aux, values))
    if k == "namedtuple":
        return aux(*values)
    cls, names = aux
    obj = cls.__new__(cls)
    for n, v in zip(names, values):
        object.__setattr__(obj, n, v)  # frozen dataclasses too
    return obj


def flatten(v, is_leaf=None):
    """(leaves, treedef) of v; is_leaf(x) may stop the descent at a node. treedef is a
    hashable nested tuple: LEAF or (kind, aux, (child treedefs…))."""
    leaves = []

    def walk(x):
        k = None if is_leaf is not None and is_leaf(x) else kind(x)
        if k is None:
            leaves.append(x)
            return LEAF
        aux, kids = children(x, k)
        return (k, aux, tuple(walk(c) for c in kids))
    return leaves, walk(v)


def unflatten(treedef, leaves):
    it = iter(leaves)

    def make(td):
        if td is LEAF or td == LEAF:
            return next(it)
        k, aux, kids = td
        return build(k, aux, [make(c) for c in kids])
    return make(treedef)


def leaf_count(treedef):
    if treedef == LEAF:
        return 1
    return sum(leaf_count(c) for c in treedef[2])


def only_tuples(treedef):
    """Whether treedef is made of tuples and leaves only (a value the S-expression
    literal writes as it is)."""
    return treedef == LEAF or (treedef[0] == "tuple" and all(only_tuples(c) for c in treedef[2]))


def describe(treedef):
    """A short text of a structure for error messages: tuple(2), dict('a', 'b'), …"""
    if treedef == LEAF:
        return "a value"
    k, aux, kids = treedef
    if k == "dict":
        return "dict(" + ", ".join(repr(a) for a in aux) + ")"
    if k == "namedtuple":
        return f"{aux.__name__}({len(kids)})"
    if k == "dataclass":
        return f"{aux[0].__name__}({', '.join(aux[1])})"
    return f"{k}({len(kids)})"
