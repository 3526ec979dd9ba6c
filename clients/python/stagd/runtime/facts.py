# SPDX-License-Identifier: Apache-2.0
# What staging knows about staged booleans on the current path: inside the true branch
# of a staged `if c` the symbol c is true, inside a staged loop's body its test is true.
# Staged symbols are immutable (each binds once), so a fact about one holds wherever
# it is visible. The forms of control.py consult the facts: a staged condition that is
# known is a plain one (its branch runs alone), and a flag (break__N, do_return__) a
# branch leaves at a known value is merged as that plain value. Facts about the
# operands follow from `not`, and from the lazy `and` / `or` forms (control.py).
from . import sexpr as _sx

_scopes = []  # per open branch or loop body: {symbol text: bool}
_derived = {}  # symbol text → ("not", a) / ("and", a, b) / ("or", a, b)


def reset():
    """A new staging: facts and derivations of the last one are gone."""
    _scopes.clear()
    _derived.clear()


_sx.on_new_staging.append(reset)


def known(v):
    """The value of staged boolean v on this path, or None."""
    if not _scopes or hasattr(v, "rebuild"):  # (a StagedList's .sexpr binds its stack)
        return None
    s = getattr(v, "sexpr", None)
    for scope in reversed(_scopes):
        k = scope.get(s)
        if k is not None:
            return k
    return None


def derive(result, op, *operands):
    """Records how staged `result` was made (op 'not', 'and' or 'or' of staged or
    plain operands), so a fact about it gives facts about them."""
    _derived[result.sexpr] = (op,) + tuple(operands)


def _assume(scope, s, value, depth=0):
    if s is None or depth > 64 or scope.get(s) is not None:
        return
    scope[s] = value
    d = _derived.get(s)
    if d is None:
        return
    op = d[0]
    if op == "not":
        _assume(scope, getattr(d[1], "sexpr", None), not value, depth + 1)
    elif (op == "and" and value) or (op == "or" and not value):
        for a in d[1:]:
            _assume(scope, getattr(a, "sexpr", None), value, depth + 1)


class assuming:
    """`with assuming(c, True):` — the facts of a branch taken when c is true."""

    def __init__(self, cond, value):
        self.cond, self.value = cond, value

    def __enter__(self):
        scope = {}
        if self.cond is not None:
            _assume(scope, getattr(self.cond, "sexpr", None), self.value)
        _scopes.append(scope)
        return scope

    def __exit__(self, *exc):
        _scopes.pop()


def plain(v):
    """v, or the plain bool it is known to be on this path."""
    if isinstance(v, _sx.Symbolic):
        k = known(v)
        if k is not None:
            return k
    return v
