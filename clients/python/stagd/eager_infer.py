# SPDX-License-Identifier: Apache-2.0
"""eager_infer.py — the dtype and shape of an eager op's result, worked out in the client
so that a queued op (eager_queue.py) needs no reply before `t.shape` / `t.dtype` answer.

The rules are the daemon's (docs/sexpr.md "Values and semantics": NumPy 1.24 dtypes and
broadcasting, Python numbers weak next to a tensor), for the cases this module is sure
of; anything else — other ops, float16 and bool operands, mixed dtypes, 0-d weak
promotion, shapes that do not broadcast — answers None, and the op runs synchronously,
so its error (or its result) is exactly the synchronous one. The daemon checks every
queued result against the inferred dtype and shape (EagerBatch), so a wrong rule here
fails loudly instead of leaving a wrong shape in the client.

`infer(op, args)` takes the op's arguments as eager() has them (Tensors with `dtype`
and `shape`, Python numbers, strings, tuples) and returns (dtype name, shape) or None.
"""
_NUM = frozenset(("int32", "int64", "float32", "float64"))
_FLOAT = frozenset(("float32", "float64"))
_ALL = frozenset(("bool", "int32", "int64", "float16", "float32", "float64"))
_ARITH = frozenset(("+", "-", "*", "maximum", "minimum", "//", "%"))
_CMP = frozenset(("==", "!=", "<", "<=", ">", ">="))
_SAME = frozenset(("neg", "abs", "relu"))
_TO_FLOAT = frozenset(("exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos"))


# the classes whose objects are tensor arguments (tensor.py sets it to (Tensor,))
TENSOR_TYPES = ()


def _meta(x):
    """(dtype, shape) of a tensor argument, else None."""
    return (x.dtype, x.shape) if isinstance(x, TENSOR_TYPES) else None


def broadcast(a, b):
    """NumPy's broadcast of two shapes (tuples), or None when they do not broadcast."""
    if a == b:
        return a
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _binary_dtype(ma, mb, a, b):
    """The common dtype of two operands (one at least a tensor; ma, mb: their _meta),
    or None."""
    if ma and mb:
        return ma[0] if ma[0] == mb[0] and ma[0] in _NUM else None
    m, s = (ma, b) if ma else (mb, a)
    if m is None or m[0] not in _NUM or isinstance(s, bool):
        return None
    if isinstance(s, int):
        return m[0]
    if isinstance(s, float):
        return m[0] if m[0] in _FLOAT else "float64"
    return None


def _binary(op, a, b):
    ma, mb = _meta(a), _meta(b)
    d = _binary_dtype(ma, mb, a, b)
    if d is None:
        return None
    shape = broadcast(ma[1] if ma else (), mb[1] if mb else ())
    if shape is None:
        return None
    if op in _CMP:
        return "bool", shape
    if op == "/":
        return ("float64" if d not in _FLOAT else d), shape
    if op == "**":
        return (d, shape) if d in _FLOAT else None
    return d, shape


def _axis(axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, int) or not -ndim <= axis < ndim:
        return None
    return axis % ndim


def _matmul(a, b):
    ma, mb = _meta(a), _meta(b)
    if not ma or not mb or ma[0] != mb[0] or ma[0] not in _FLOAT:
        return None
    sa, sb = ma[1], mb[1]
    if not 1 <= len(sa) <= 2 or not 1 <= len(sb) <= 2 or sa[-1] != sb[0]:
        return None
    return ma[0], tuple(sa[:-1]) + tuple(sb[1:])


def _reshape(m, shape):
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= -1
                                               for d in shape):
        return None
    size = 1
    for d in m[1]:
        size *= d
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    holes = shape.count(-1)
    if holes > 1 or (holes == 0 and known != size):
        return None
    if holes:
        if known == 0 or size % known:
            return None
        shape = tuple(size // known if d == -1 else d for d in shape)
    return m[0], shape


def _shape_arg(shape):
    if isinstance(shape, tuple) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        return shape
    return None


def infer(op, args):
    """(dtype, shape) of `op` on args, or None when this module cannot tell."""
    n = len(args)
    if n == 2 and (op in _ARITH or op in _CMP or op in ("/", "**")):
        return _binary(op, args[0], args[1])
    if op in ("zeros", "ones") and n == 2 and args[1] in _ALL and _shape_arg(args[0]) is not None:
        return args[1], args[0]
    m = _meta(args[0]) if n else None
    if m is None:
        return None
    d, s = m
    if n == 1 and op in _SAME:
        return m if d in _NUM else None
    if n == 1 and op in _TO_FLOAT:
        return (d if d in _FLOAT else "float64", s) if d in _NUM else None
    if op == "matmul" and n == 2:
        return _matmul(args[0], args[1])
    if op in ("sum", "mean") and d in _FLOAT:
        if n == 1:
            return d, ()
        ax = _axis(args[1], len(s)) if n == 2 else None
        return None if ax is None else (d, s[:ax] + s[ax + 1:])
    if op == "softmax" and n == 2 and d in _FLOAT and _axis(args[1], len(s)) is not None:
        return m
    if op == "transpose" and n == 1:
        return d, tuple(reversed(s))
    if op == "reshape" and n == 2:
        return _reshape(m, args[1])
    if op == "cast" and n == 2 and args[1] in _ALL:
        return args[1], s
    return None
