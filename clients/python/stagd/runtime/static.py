# SPDX-License-Identifier: Apache-2.0
# What staging can know of a staged value before the graph runs: its dtype and shape,
# as the daemon's inference computes them (docs/runtime.md "Static types"). A probe is
# the part of the program being staged that the value depends on, as a def whose
# parameters carry the types of the trace's arguments (a loop's state: its initial
# value's dtype and rank, every dimension unknown, since a loop may change it), staged
# with the dumps of the Stage RPC; the value's type is read from the dump. A value whose
# type the daemon does not know (or when no daemon is at hand: the LSP helper) is
# unknown, and callers fall back to staged operations (`(len x)`, a staged loop).
import re

from . import sexpr as _sx
from .calls import tracing_client

_cache = {}  # target expression text → parsed type
_sx.on_new_staging.append(_cache.clear)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s()]+')
_PROBE = "stagd$probe"


def type_of(v):
    """The type of staged v: ('tensor', dtype, dims or None) with None for an unknown
    dimension, ('scalar', 'int'|'float'|'bool', value or None), ('tuple', [types]),
    ('none',), or None when unknown."""
    item = getattr(v, "item_dtype", None)
    if item is not None:  # a StagedList: the stacked tensor of its items
        return ("tensor", item, (None,) + tuple(v.item_shape))
    if not isinstance(v, _sx.Symbolic) or not _sx._stack:
        return None
    target = v.sexpr
    if target in _cache:
        return _cache[target]
    try:
        t = _probe(target, 0)
    except RecursionError:  # pragma: no cover — a deep chain of loop parameters
        t = None
    _cache[target] = t
    return t


def _param_type(sym, depth):
    """How symbol sym (a trace's parameter, or bound by a loop / staged def) enters the
    probe: a typed parameter text, or None (an untyped parameter)."""
    for b in _sx._stack:
        if sym in b.param_types:
            return b.param_types[sym]
    for b in _sx._stack:
        if sym in b.bound:
            return _relaxed(b.bound[sym], depth)
    return None


def _relaxed(init, depth):
    if isinstance(init, bool):
        return "(bool ())"
    if isinstance(init, int):
        return "(int64 ())"
    if isinstance(init, float):
        return "(float64 ())"
    t = None
    if isinstance(init, _sx.Symbolic) and depth < 8:
        t = _cache.get(init.sexpr) if init.sexpr in _cache else _probe(init.sexpr, depth + 1)
        _cache[init.sexpr] = t
    if t is None:
        return None
    if t[0] == "tensor" and t[2] is not None:
        return f"({t[1]} ({' '.join('?' for _ in t[2])}))"
    if t[0] == "scalar":
        return {"int": "(int64 ())", "float": "(float64 ())", "bool": "(bool ())"}[t[1]]
    return None


def _probe(target, depth):
    stack = list(_sx._stack)
    bindings = {}
    order = []
    for b in stack:
        for name, expr in b.bindings:
            bindings[name] = expr
            order.append(name)
    needed, seen, free = [], set(), []
    todo = [t for t in _TOKEN.findall(target)]
    while todo:
        tok = todo.pop()
        if tok in seen or tok.startswith('"'):
            continue
        seen.add(tok)
        if tok in bindings:
            needed.append(tok)
            todo.extend(_TOKEN.findall(bindings[tok]))
        elif "$" in tok or _is_param(tok, stack):
            free.append(tok)
    params, pre = [], []
    for sym in free:
        if not _is_param(sym, stack):
            continue  # a def name, a primitive, …: the daemon resolves it
        t = _param_type(sym, depth)
        if t is None:
            params.append(sym)
        elif t.startswith("variable "):
            dt = t[len("variable "):]
            m = re.match(r"\((\S+) \(([^)]*)\)\)", dt)
            if not m or "?" in m.group(2):
                params.append(sym)
            else:
                pre.append((sym, f"(variable (zeros (tuple {m.group(2)}) {m.group(1)}))"))
        else:
            params.append(f"({sym} {t[1:-1]})")
    keep = set(needed)
    body = _sx.let_body(list(pre) + [(n, bindings[n]) for n in order if n in keep]
                        + [(_PROBE, f"(tuple {target})")], _PROBE)
    defs = []
    for b in stack:
        if b.probe_defs:
            defs += list(b.probe_defs.values())
    defs += list(_sx._defs)
    program = "\n".join(defs + [f"(def stagd_probe ({' '.join(params)}) {body})"])
    client = tracing_client.get()
    if client is None:
        return None
    try:
        reply = client.call("Stage", {"sexpr": program, "entry": "stagd_probe",
                                      "filename": "<stagd probe>", "dumps": [2],
                                      "no_optimize": True})
    except Exception:  # noqa: BLE001 — whatever the daemon says, the type stays unknown
        return None
    m = re.search(r"^\s*%" + re.escape(_PROBE) + r"\S* = .* : (.*?)\s+;", reply.dumps[0].text,
                  re.M)
    if not m:
        return None
    t = parse(m.group(1))
    return t[1][0] if t is not None and t[0] == "tuple" and len(t[1]) == 1 else None


def _is_param(sym, stack):
    return any(sym in b.param_types or sym in b.bound for b in stack)


def parse(text):
    """A type as the daemon prints it (graph/ir/aval.c) → the tuple form of type_of."""
    pos = [0]

    def item():
        s = text[pos[0]:]
        if s.startswith("("):
            pos[0] += 1
            items = []
            while text[pos[0]:pos[0] + 1] != ")":
                items.append(item())
                if text[pos[0]:pos[0] + 2] == ", ":
                    pos[0] += 2
            pos[0] += 1
            return ("tuple", items)
        m = re.match(r"(bool|int32|int64|float16|float32|float64)\[([^\]]*)\]", s)
        if m:
            pos[0] += m.end()
            dims = None if m.group(2) == "..." else tuple(
                None if d == "?" else int(d) for d in m.group(2).split(",") if d)
            return ("tensor", m.group(1), dims)
        m = re.match(r"(bool|int|float)(?:=([^,)]*))?", s)
        if m:
            pos[0] += m.end()
            return ("scalar", m.group(1), _const(m.group(1), m.group(2)))
        m = re.match(r"[a-z]+", s)
        pos[0] += m.end() if m else len(s)
        return ("none",) if m and m.group(0) == "none" else None
    try:
        return item()
    except (ValueError, IndexError):
        return None


def _const(kind, text):
    if text is None:
        return None
    try:
        if kind == "bool":
            return text in ("true", "True")
        return int(text) if kind == "int" else float(text)
    except ValueError:
        return None


def static_len(v):
    """len(v) when staging knows it (the first dimension of a tensor, the length of a
    tuple), else None."""
    t = type_of(v)
    if t is None:
        return None
    if t[0] == "tensor" and t[2]:
        return t[2][0]
    if t[0] == "tuple":
        return len(t[1])
    return None


def tensor_type(v):
    """(dtype, dims) of a staged tensor or scalar (dims: a tuple, None where unknown),
    or None."""
    t = type_of(v)
    if t is None:
        return None
    if t[0] == "tensor" and t[2] is not None:
        return t[1], t[2]
    if t[0] == "scalar":
        return {"int": "int64", "float": "float64", "bool": "bool"}[t[1]], ()
    return None


from . import staged as _staged  # noqa: E402 — installs the hooks Staged uses
_staged.static_hooks[:] = [type_of, static_len]
