# SPDX-License-Identifier: Apache-2.0
# Staged values (Snek's Rep): a symbol of the S-expression being built. Operators on a
# Staged append a `let` binding to the current builder (sexpr.py) and return a new
# Staged; plain Python numbers mixed in become literals. emit/apply are how every staged
# operation (here, in the runtime's forms and in the client's tensors) binds an
# expression and gets its Staged symbol.
from . import indexing
from . import sexpr as _sx
from .errors import StagingError


# runtime/static.py installs what the daemon's inference knows (type_of, static_len)
static_hooks = [lambda v: None, lambda v: None]


def _static_type(v):
    return static_hooks[0](v)


def _static_len(v):
    return static_hooks[1](v)


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
        raise StagingError(f"stagd: the truth value of staged {self.sexpr} is unknown while "
                        "staging; use it in converted control flow (if/while/and/or)")

    def __iter__(self):
        n = _static_len(self)
        if n is None:
            raise StagingError(f"stagd: cannot iterate staged {self.sexpr} here: its length is "
                               "not known while staging (iterate it in a for statement of "
                               "converted code, which stages a loop)")
        return iter([apply("getitem", self, i) for i in range(n)])

    def __len__(self):
        n = _static_len(self)
        if n is None:
            raise StagingError(f"stagd: the length of staged {self.sexpr} is not known while "
                               "staging (len(x) in converted code stages it)")
        return n

    def __str__(self):
        raise StagingError(f"stagd: staged {self.sexpr} has no text while staging (its value "
                           "is known when the graph runs): print(x) prints it then")

    def __format__(self, spec):
        raise StagingError(f"stagd: staged {self.sexpr} cannot be formatted while staging "
                           "(its value is known when the graph runs): print(x) prints it then")

    @property
    def shape(self):
        """The shape: Python ints for the dimensions staging knows, staged ints for
        the others (a staged tuple when even the rank is unknown)."""
        t = _static_type(self)
        if t is not None and t[0] == "scalar":
            return ()
        if t is None or t[0] != "tensor" or t[2] is None:
            return apply("shape", self)
        whole = None
        dims = []
        for i, d in enumerate(t[2]):
            if d is None:
                whole = whole if whole is not None else apply("shape", self)
                d = apply("getitem", whole, i)
            dims.append(d)
        return tuple(dims)

    @property
    def ndim(self):
        t = _static_type(self)
        if t is not None and t[0] == "scalar":
            return 0
        if t is not None and t[0] == "tensor" and t[2] is not None:
            return len(t[2])
        return apply("len", apply("shape", self))

    @property
    def dtype(self):
        t = _static_type(self)
        if t is not None and t[0] == "tensor":
            return t[1]
        if t is not None and t[0] == "scalar":
            return {"int": "int64", "float": "float64", "bool": "bool"}[t[1]]
        raise StagingError(f"stagd: the dtype of staged {self.sexpr} is not known while "
                           "staging")

    def item(self):
        """NumPy's item(): the Python number of a one-element tensor, staged as a 0-d
        float64 (float dtypes), int64 (int dtypes) or bool value, as float() / int()
        / bool() stage theirs (while speculating, a profiled fact: docs/client.md)."""
        return item_of(self, _static_type(self))

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
        raise StagingError(f"stagd: cannot assign an item of staged {self.sexpr} here: item "
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



def item_of(x, t):
    """Staged.item() of x whose static type is t (runtime/static.py's form:
    ("tensor", dtype, dims) or ("scalar", kind), None when unknown)."""
    if t is not None and t[0] == "scalar":
        return x
    if t is None or t[0] != "tensor" or t[1] is None:
        raise StagingError(f"stagd: {x.sexpr}.item(): the dtype of the staged value is "
                           "not known while staging (use float(x) or int(x))")
    if t[2] is not None and None not in t[2]:
        size = 1
        for d in t[2]:
            size *= d
        if size != 1:
            raise StagingError(f"stagd: {x.sexpr}.item(): can only convert a tensor of "
                               f"size 1 to a Python scalar (shape {tuple(t[2])})")
    one = apply("reshape", x, ())  # a size other than 1 fails when the graph runs
    if t[1] == "bool":
        return one
    return apply("cast", one, Staged("int64" if t[1].startswith("int") else "float64"))
