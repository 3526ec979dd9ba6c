# SPDX-License-Identifier: Apache-2.0
"""guards.py — JANUS guards of stagd.function (docs/client.md "Guards"): the Python
facts a trace depended on beyond its arguments' key, checked before a cached trace runs,
so that no call is served by a trace of a world that has changed.

A trace depends on the globals and closure variables its function reads, and on the
attribute chains it reads from them (`cfg.use_relu`, `model.layers`). `reads(code)`
finds them in the function's bytecode (its nested functions and lambdas included):
every LOAD_GLOBAL / LOAD_DEREF and the LOAD_ATTR / LOAD_METHOD chain after it.
`record` turns each into a guard: where to find the value now, and what it was:

* by value — None, bools, numbers (with their type: 1 and 1.0 differ), strings, bytes,
  and tuples, lists, dicts and sets of such (so a list that grows or changes in place
  fails its guard); NumPy arrays by dtype, shape and contents;
* by identity — everything else (modules, functions, classes, tensors, Variables,
  objects); the guard keeps the object alive, so its id cannot be reused.

A global or attribute whose value is a function of the user's code (a callee the
trace called) adds the guards of what that function reads, in its own module, and so
on down its callees. `Guards.holds()` runs them all as one generated function; a stale
trace is never run. Limits: a guard does not see changes inside an object compared by
identity other than the attribute chains the functions read.
"""
import builtins
import dis
import types

from .runtime import calls
from .signature import _Ref as _Same  # an object inside a container: equal only to itself

_MISSING = object()
_VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes)
_LIMIT = 10000  # leaves of a container compared by value; bigger: by identity and length


class _TooBig(Exception):
    pass


def _value_form(v, budget, top=True):
    """A comparable form of v's value; raises TypeError when v itself is not a value
    (objects inside containers compare by identity)."""
    t = type(v)
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if t in _VALUE_TYPES:
        return (t, v)
    if t in (tuple, list):
        return (t, tuple(_value_form(x, budget, False) for x in v))
    if t in (set, frozenset):
        return (t, frozenset(_value_form(x, budget, False) for x in v))
    if t is dict:
        return (t, tuple((_value_form(k, budget, False), _value_form(x, budget, False))
                         for k, x in v.items()))
    np = _numpy()
    if np is not None and t is np.ndarray:
        budget[0] -= v.size
        return (t, str(v.dtype), v.shape, v.tobytes())
    if np is not None and isinstance(v, np.generic):
        return (t, v.item())
    if not top:
        return _Same(v)
    raise TypeError


def _numpy():
    import sys
    return sys.modules.get("numpy")


def fact(v):
    """("scalar", type, v) for a number, string or None; ("=", form) for another value,
    ("is", v) for an object, ("len", v, n) for a container too big to compare by
    value."""
    if type(v) in _VALUE_TYPES and v == v:  # (a NaN compares by its form)
        return ("scalar", type(v), v)
    try:
        return ("=", _value_form(v, [_LIMIT]))
    except TypeError:
        return ("is", v)
    except _TooBig:
        return ("len", v, len(v))


def holds(f, v):
    kind = f[0]
    if kind == "scalar":
        return type(v) is f[1] and v == f[2]
    if kind == "is":
        return v is f[1]
    if kind == "len":
        return v is f[1] and len(v) == f[2]
    try:
        return _value_form(v, [_LIMIT]) == f[1]
    except (TypeError, _TooBig):
        return False


_LOADS = {"LOAD_GLOBAL": "global", "LOAD_NAME": "global", "LOAD_DEREF": "closure",
          "LOAD_CLASSDEREF": "closure"}
_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")


def reads(code):
    """{(kind, name, chain)}: each global / closure name code reads, with each attribute
    chain read from it (chain () is the name itself), nested code objects included; and
    ("arg", PARAM, chain) for each attribute chain read from a parameter of code."""
    out, todo, seen = set(), [code], set()
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        root, chain = None, ()
        for ins in dis.get_instructions(c):
            if c is code and ins.opname == "LOAD_FAST" and ins.argval in params:
                if root is not None:
                    out.add((root[0], root[1], chain))
                root, chain = ("arg", ins.argval), ()
            elif ins.opname in _LOADS:
                if root is not None:
                    out.add((root[0], root[1], chain))
                name = ins.argval
                if ins.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and name not in c.co_freevars:
                    root = None  # a cell of this function itself: a local
                    continue
                root, chain = (_LOADS[ins.opname], name), ()
                out.add((root[0], root[1], ()))
            elif root is not None and ins.opname in _ATTRS:
                if ins.opname == "LOAD_METHOD" or (ins.opname == "LOAD_ATTR" and ins.arg is not None
                                                   and ins.arg & 1 and _is_312()):
                    out.add((root[0], root[1], chain))  # a method: guard its object
                    root = None
                    continue
                chain = chain + (ins.argval,)
            else:
                if root is not None:
                    out.add((root[0], root[1], chain))
                root = None
        if root is not None:
            out.add((root[0], root[1], chain))
    return out


def _is_312():
    import sys
    return sys.version_info >= (3, 12)


class Guard:
    __slots__ = ("kind", "name", "chain", "where", "fact", "owner")

    def __init__(self, kind, name, chain, where, f):
        self.kind, self.name, self.chain, self.where, self.fact = kind, name, chain, where, f
        self.owner = None  # the callee that reads it (None: the traced function)

    def current(self):
        if self.kind == "object":
            v = self.where
        elif self.kind == "call":
            try:
                return self.name(self.where)
            except Exception:  # noqa: BLE001 — a conversion that fails now: changed
                return _MISSING
        elif self.kind == "global":
            v = self.where.get(self.name, _MISSING)
            if v is _MISSING:
                v = getattr(builtins, self.name, _MISSING)
        else:
            try:
                v = self.where.cell_contents
            except ValueError:
                return _MISSING
        for a in self.chain:
            if v is _MISSING:
                break
            v = getattr(v, a, _MISSING)
        return v

    def __repr__(self):
        if self.kind == "call":
            path = f"{self.name.__name__}(<{type(self.where).__name__} at {id(self.where):#x}>)"
        elif self.kind == "object":
            path = ".".join((f"<{type(self.where).__name__} at {id(self.where):#x}>",) + self.chain)
        else:
            path = ".".join((self.name,) + self.chain)
        if self.owner:
            path += f" (read by {self.owner})"
        f = self.fact
        if f[0] in ("=", "scalar"):
            shown = repr(self.current()) if holds(f, self.current()) else "(changed)"
            return f"{self.kind} {path} == {shown}"
        if f[0] == "len":
            return f"{self.kind} {path} is <{type(f[1]).__name__} at {id(f[1]):#x}> of length {f[2]}"
        return f"{self.kind} {path} is <{type(f[1]).__name__} at {id(f[1]):#x}>"


_CALLEES = 64  # functions (the traced one, its callees, theirs…) whose reads are guarded


def _user_function(v):
    """A Python function of the user's code (not stagd's, NumPy's or a library's)."""
    if isinstance(v, types.MethodType):
        v = v.__func__
    if not isinstance(v, types.FunctionType):
        return None
    if (v.__module__ or "").split(".")[0] in ("stagd", "numpy", "torch"):
        return None
    path = v.__code__.co_filename
    if path.startswith("<") or "-packages/" in path or path.startswith(calls._library_dirs()):
        return None
    return v


def _keyed_by_identity(v):
    """An argument the trace key holds by identity (an object with Python's default
    equality), whose attributes the key does not see."""
    t = type(v)
    return (getattr(t, "__eq__", None) is object.__eq__ and hasattr(v, "__dict__")
            and not isinstance(v, (type, types.ModuleType, types.FunctionType,
                                   types.MethodType))
            and t.__module__.split(".")[0] not in ("stagd", "numpy"))


def record(fn, names, args=None, calls=(), _seen=None):
    """The guards of a trace of fn that read `names` (reads(fn.__code__)), with the values
    they have now. A chain whose value is a bound method guards its function and object.
    A value that is a function of the user's code (a callee) adds the guards of what
    that function reads, in its own module (each function once, at most _CALLEES)."""
    seen = {fn.__code__} if _seen is None else _seen
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    out = []
    for kind, name, chain in sorted(names, key=lambda r: (r[0], r[1], r[2])):
        if kind == "arg":  # an attribute chain of an argument keyed by identity
            v = (args or {}).get(name, _MISSING)
            if not chain or v is _MISSING or not _keyed_by_identity(v):
                continue
            kind, where = "object", v
        elif kind == "closure":
            if name not in cells:
                continue
            where = cells[name]
        else:
            where = fn.__globals__
        g = Guard(kind, name, chain, where, None)
        v = g.current()
        if isinstance(v, types.MethodType):  # a new bound method at each access
            g.chain = chain[:-1]
            v = g.current()
        g.fact = fact(v)
        out.append(g)
        callee = _user_function(v)
        if callee is not None and callee.__code__ not in seen and len(seen) < _CALLEES:
            seen.add(callee.__code__)
            for c in record(callee, reads(callee.__code__), _seen=seen):
                c.owner = c.owner or callee.__qualname__
                out.append(c)
    for conv, obj, v in calls:  # float(obj) / int(obj) / bool(obj) of a plain object
        g = Guard("call", conv, (), obj, fact(v))
        out.append(g)
    # one guard per (where, name, chain)
    uniq = {}
    for g in out:
        uniq.setdefault((g.kind, id(g.where), g.name, g.chain), g)
    return Guards(uniq.values())


class Guards(list):
    """A trace's guards, with `holds()`: all of them compiled into one generated
    function — straight-line code, one local per value read (a root read once for all
    the chains read from it), `is` / type-and-`==` tests inline — built at the first
    check (bench/guard_bench.py)."""

    _holds = None

    def holds(self):
        fn = self._holds
        if fn is None:
            fn = self._holds = _compile(self)
        return fn()


_FLAT = 16  # a list, tuple or dict of at most this many scalars is compared inline


def _scalar_forms(forms):
    """The (type, value) pairs of value forms that are all scalars (no NaN), or None."""
    out = []
    for x in forms:
        if not (type(x) is tuple and len(x) == 2 and x[0] in _VALUE_TYPES and x[1] == x[1]):
            return None
        out.append(x)
    return out


def _flat_test(v, f, const):
    """The inline test of the recorded value f (a fact) when it is a small flat list,
    tuple or dict of scalars — what its value form compares: the container's type, its
    items in order, and each item's type — or None for anything else."""
    if f[0] != "=" or type(f[1]) is not tuple or len(f[1]) != 2:
        return None
    t, forms = f[1]
    if t not in (list, tuple, dict) or type(forms) is not tuple or len(forms) > _FLAT:
        return None
    if t is dict:
        if not all(type(kv) is tuple and len(kv) == 2 for kv in forms):
            return None
        keys, vals = _scalar_forms([k for k, _ in forms]), _scalar_forms([x for _, x in forms])
        if keys is None or vals is None:
            return None
        now = {k: x for (_, k), (_, x) in zip(keys, vals)}
        return (f"type({v}) is not dict or {v} != {const(now)} or "
                f"tuple({v}) != {const(tuple(k for _, k in keys))} or "
                f"tuple(map(type, {v})) != {const(tuple(kt for kt, _ in keys))} or "
                f"tuple(map(type, {v}.values())) != {const(tuple(xt for xt, _ in vals))}")
    items = _scalar_forms(forms)
    if items is None:
        return None
    return (f"type({v}) is not {const(t)} or {v} != {const(t(x for _, x in items))} or "
            f"tuple(map(type, {v})) != {const(tuple(xt for xt, _ in items))}")


def _compile(gs):
    consts = {"_M": _MISSING, "_holds": holds, "_bd": builtins.__dict__}
    lines, local = [], {}

    def const(v):
        name = f"_k{len(consts)}"
        consts[name] = v
        return name

    def value(g, depth):
        key = (g.kind, id(g.where), id(g.name), g.chain[:depth])
        var = local.get(key)
        if var is not None:
            return var
        var = local[key] = f"v{len(local)}"
        if depth:
            lines.append(f"{var} = getattr({value(g, depth - 1)}, {g.chain[depth - 1]!r}, _M)")
        elif g.kind == "object":
            lines.append(f"{var} = {const(g.where)}")
        elif g.kind == "call":
            lines.append(f"{var} = {const(g.name)}({const(g.where)})")
        elif g.kind == "global":
            w = const(g.where)
            lines.append(f"{var} = {w}.get({g.name!r}, _M)")
            lines.append(f"if {var} is _M: {var} = _bd.get({g.name!r}, _M)")
        else:
            lines.append(f"{var} = {const(g.where)}.cell_contents")
        return var

    for g in gs:
        v = value(g, len(g.chain))
        f = g.fact
        if f[0] == "is":
            test = f"{v} is not {const(f[1])}"
        elif f[0] == "scalar":
            test = f"type({v}) is not {const(f[1])} or {v} != {const(f[2])}"
        elif f[0] == "len":
            test = f"{v} is not {const(f[1])} or len({v}) != {f[2]}"
        else:
            test = _flat_test(v, f, const) or f"not _holds({const(f)}, {v})"
        lines.append(f"if {test}: return False")
    body = "\n".join("        " + ln for ln in lines + ["return True"])
    params = ", ".join(f"{k}={k}" for k in consts)  # constants as locals: fast loads
    src = (f"def check({params}):\n    try:\n{body}\n"  # an empty cell, a failing float()
           "    except Exception:\n        return False\n")
    exec(compile(src, "<stagd guards>", "exec"), consts)  # noqa: S102 — our own text
    return consts["check"]


def check(guards):
    """True when every guard holds now (a trace's Guards: their compiled check)."""
    if isinstance(guards, Guards):
        return guards.holds()
    for g in guards:
        if g.kind == "global" and not g.chain:
            v = g.where.get(g.name, _MISSING)
            if v is _MISSING:
                v = g.current()
        else:
            v = g.current()
        f = g.fact
        kind = f[0]
        if kind == "is":
            if v is not f[1]:
                return False
        elif kind == "scalar":
            if type(v) is not f[1] or v != f[2]:
                return False
        elif not holds(f, v):
            return False
    return True


def failing(guards):
    """The first guard that does not hold now, or None."""
    for g in guards:
        if not holds(g.fact, g.current()):
            return g
    return None


def refresh(ns, fn, names, copied):
    """Before a trace: the converted function's namespace (a copy of fn's globals made
    when it was converted) gets the current value of each global and closure variable
    the function reads, except names the converted module defines itself (`copied`: the
    names copied from fn's globals)."""
    g = fn.__globals__
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for kind, name, chain in names:
        if chain:
            continue
        if kind == "closure" and name in cells:
            try:
                ns[name] = cells[name].cell_contents
            except ValueError:
                pass
        elif kind == "global" and name in copied:
            if name in g:
                ns[name] = g[name]
            else:
                ns.pop(name, None)
