# SPDX-License-Identifier: Apache-2.0
# The mutable Python objects a staged branch or loop body can reach (AutoGraph keeps
# such state functional; Python code mutates in place): lists, dicts, sets, small NumPy
# arrays and the attribute dicts of user objects, found from the construct's state
# values, the closure cells of its functions and the globals their code names.
# Staging runs both branches of an `if` (and a loop body once), so each branch must
# start from the objects as they were and its changes must be merged, not applied
# twice: World snapshots them, tells what a branch changed, and puts them back
# (docs/runtime.md "Containers").
import types

from . import sexpr as _sx

MAX_OBJECTS = 20000  # objects tracked per construct (beyond: not tracked)
MAX_ARRAY = 1 << 16  # elements of a NumPy array snapshotted (larger: not tracked)

_SKIP_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
               types.MethodType, types.CodeType, types.GeneratorType, property,
               staticmethod, classmethod, str, bytes, int, float, complex, bool,
               type(None), range, slice)


def _numpy():
    try:
        import numpy as np
        return np
    except ImportError:  # pragma: no cover
        return None


def _user_object(o):
    """An instance whose attribute dict staging tracks: not the package's own objects
    (tensors, variables, staged values), NumPy's or the standard types."""
    d = getattr(o, "__dict__", None)
    if not isinstance(d, dict) or isinstance(o, _SKIP_TYPES):
        return False
    mod = (type(o).__module__ or "").split(".")[0]
    return mod not in ("builtins", "stagd", "numpy", "grpc", "google", "threading",
                       "weakref", "collections", "typing", "abc", "io", "_io")


class World:
    """The containers reachable from `roots` (values) and from the closures and globals
    of `fns` (functions), with their contents at creation."""

    def __init__(self, roots, fns=()):
        self.objs = {}  # id → object
        self.kind = {}  # id → 'list' | 'dict' | 'set' | 'attrs' | 'array'
        self.snap = {}  # id → contents at creation
        np = _numpy()
        self._ndarray = np.ndarray if np is not None else ()
        stack = list(roots)
        seen = set()
        for fn in fns:
            stack += _reachable_from_code(fn)
        while stack and len(self.objs) < MAX_OBJECTS:
            o = stack.pop()
            if id(o) in seen or isinstance(o, _SKIP_TYPES) or isinstance(o, _sx.Symbolic):
                continue
            seen.add(id(o))
            k = self._kind(o)
            if k is None:
                if isinstance(o, tuple):  # immutable, but may hold mutable things
                    stack.extend(o)
                continue
            self.objs[id(o)] = o
            self.kind[id(o)] = k
            c = self.contents(o, k)
            self.snap[id(o)] = c
            if k == "list":
                stack.extend(c)
            elif k in ("dict", "attrs"):
                stack.extend(v for _, v in c)

    def _kind(self, o):
        if isinstance(o, list):
            return "list"
        if isinstance(o, dict):
            return "dict"
        if isinstance(o, (set,)):
            return "set"
        if isinstance(o, self._ndarray):
            return "array" if o.size <= MAX_ARRAY and o.dtype != object else None
        if _user_object(o):
            return "attrs"
        return None

    @staticmethod
    def contents(o, k):
        if k == "list":
            return list(o)
        if k == "dict":
            return list(o.items())
        if k == "attrs":
            return list(vars(o).items())
        if k == "set":
            return set(o)
        return o.copy()  # array

    def current(self, i):
        return self.contents(self.objs[i], self.kind[i])

    def changed(self):
        """{id: contents now} of the objects whose contents differ from the snapshot."""
        out = {}
        for i, o in self.objs.items():
            k = self.kind[i]
            now = self.contents(o, k)
            if not _same_contents(k, self.snap[i], now):
                out[i] = now
        return out

    def restore(self, only=None):
        for i in (only if only is not None else self.objs):
            self.put(i, self.snap[i])

    def put(self, i, contents):
        o, k = self.objs[i], self.kind[i]
        if k == "list":
            o[:] = contents
        elif k == "dict":
            o.clear()
            o.update(contents)
        elif k == "attrs":
            d = vars(o)
            d.clear()
            d.update(contents)
        elif k == "set":
            o.clear()
            o.update(contents)
        else:
            o[...] = contents


def _same_item(a, b):
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, _sx.Symbolic):
        return False
    try:
        return bool(a == b) if isinstance(a, (int, float, complex, str, bytes, bool,
                                              type(None))) else False
    except Exception:  # noqa: BLE001
        return False


def _same_contents(k, a, b):
    if k == "array":
        return a.shape == b.shape and bool((a == b).all())
    if k == "set":
        return a == b
    if len(a) != len(b):
        return False
    if k == "list":
        return all(_same_item(x, y) for x, y in zip(a, b))
    return all(ka == kb and _same_item(va, vb) for (ka, va), (kb, vb) in zip(a, b))


def _reachable_from_code(fn, depth=0):
    """The values of fn's closure cells and of the globals its code (nested code
    included) names; a function in a cell (a wrapper around the user's body) is
    followed too."""
    out = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if isinstance(v, types.FunctionType):
            if depth < 3:
                out += _reachable_from_code(v, depth + 1)
        else:
            out.append(v)
    g = getattr(fn, "__globals__", None)
    code = getattr(fn, "__code__", None)
    if g is None or code is None:
        return out
    stack, names = [code], set()
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for n in names:
        v = g.get(n)
        if v is not None and not isinstance(v, _SKIP_TYPES):
            out.append(v)
    return out
