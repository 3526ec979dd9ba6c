# SPDX-License-Identifier: Apache-2.0
# Staged values (Snek's Rep): a symbol of the S-expression being built. Operators on a
# Staged append a `let` binding to the current builder (sexpr.py) and return a new
# Staged; plain Python numbers mixed in become literals. emit/apply are how every staged
# operation (here, in the runtime's forms and in the client's tensors) binds an
# expression and gets its Staged symbol.
from . import indexing
from . import sexpr as _sx


def emit(expr):
    """Binds `expr` in the current builder; returns the Staged symbol."""
    return Staged(_sx.current().emit(expr))


def apply(op, *args):
    return emit("(" + op + "".join(" " + _sx.literal(a) for a in args) + ")")


def _operand(v):
    """An operand of an operator: a stagd.Variable is read first (its `_stagd_operand`
    hook stages a `read`), as eager operators on Variables do."""
    hook = getattr(type(v), "_stagd_operand", None)
    return hook(v) if hook is not None else v


def _op(op, *args):
    return apply(op, *[_operand(a) for a in args])


class Staged(_sx.Symbolic):
    """A value known only when the staged graph runs (see docs/runtime.md)."""

    def __init__(self, sexpr):
        self.sexpr = sexpr

    def __repr__(self):
        return f"Staged({self.sexpr})"

    def __bool__(self):
        raise TypeError(f"stagd: the truth value of staged {self.sexpr} is unknown while "
                        "staging; use it in converted control flow (if/while/and/or)")

    def __iter__(self):
        raise TypeError(f"stagd: cannot iterate staged {self.sexpr} in plain Python")

    def __add__(self, o): return _op("+", self, o)
    def __radd__(self, o): return _op("+", o, self)
    def __sub__(self, o): return _op("-", self, o)
    def __rsub__(self, o): return _op("-", o, self)
    def __mul__(self, o): return _op("*", self, o)
    def __rmul__(self, o): return _op("*", o, self)
    def __truediv__(self, o): return _op("/", self, o)
    def __rtruediv__(self, o): return _op("/", o, self)
    def __floordiv__(self, o): return _op("//", self, o)
    def __rfloordiv__(self, o): return _op("//", o, self)
    def __mod__(self, o): return _op("%", self, o)
    def __rmod__(self, o): return _op("%", o, self)
    def __pow__(self, o): return _op("**", self, o)
    def __rpow__(self, o): return _op("**", o, self)
    def __matmul__(self, o): return _op("matmul", self, o)
    def __rmatmul__(self, o): return _op("matmul", o, self)
    def __neg__(self): return _op("neg", self)
    def __pos__(self): return self
    def __abs__(self): return _op("abs", self)
    def __eq__(self, o): return _op("==", self, o)
    def __ne__(self, o): return _op("!=", self, o)
    def __lt__(self, o): return _op("<", self, o)
    def __le__(self, o): return _op("<=", self, o)
    def __gt__(self, o): return _op(">", self, o)
    def __ge__(self, o): return _op(">=", self, o)
    def __getitem__(self, key):
        return indexing.read(_op, self, key)

    def __setitem__(self, key, value):
        # the converter rewrites `x[K] = v` / `x[K] op= v` on a local name x (any key K)
        # into sg__.set_item; other targets (`obj.attr[K]`, `x[i][j]`, a global) reach here
        raise TypeError(f"stagd: cannot assign an item of staged {self.sexpr} here: item "
                        "assignment on a staged tensor needs a local variable as its target "
                        "(bind the tensor to one and assign it back: row = x[i]; row[j] = v; "
                        "x[i] = row)")
    __hash__ = object.__hash__


def is_staged(*values):
    return any(isinstance(v, Staged) for v in values)


def check_plain(*values):
    for v in values:
        if isinstance(v, Staged):
            raise NotImplementedError("stagd.runtime: staging of Staged values is not "
                                      "implemented for this construct yet")


def staged_set_item(x, key, value):
    """`x[key] = value` on a staged tensor, NumPy basic indexing (indexing.py): a new
    tensor (graph values are immutable) equal to x except x[key], which becomes value
    broadcast to it, built from `slice_update`s. The converted code rebinds x."""
    return indexing.write(_op, x, key, value)
