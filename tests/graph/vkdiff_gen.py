# SPDX-License-Identifier: Apache-2.0
"""vkdiff_gen.py — seeded generator of random, well-typed staged programs (S-expressions)
for differential testing of the Vulkan executor against the CPU one (vkdiff.py).

A program is one entry def `(def f (PARAM ...) BODY)` (plus helper defs it calls) whose
BODY is a chain of `let` bindings — a DAG: each binding reads earlier values, some are
read many times and stay live long, others die at once — ending in a tuple of several
of them. Each binding is one generator (GENERATORS below) — an elementwise op with
broadcasting, a reduction along an axis (keepdims through reshape), matmul, a layout op,
a cast, softmax/argmax, a comparison + where, an `if` or a `while` whose predicate
depends on computed data (so the Vulkan executor splits regions and values cross them),
or a call of a nested helper def. Types and shapes are tracked by evaluating the same
op in NumPy 1.24 on zero tensors of the operands' dtypes and shapes (the semantics the
project follows, docs/sexpr.md), so programs stage without errors; a value of a type
the generator lacks becomes a new typed parameter. Float inputs lie on a 1/8 grid in
[-4, 4] so exact ops stay exact on both backends; `exact` per value tracks that, and
only exact floats are cast to integers or compared for equality (no rounding ties).

OP_COVERAGE maps each row of the op table (graph/ir/ops.c) to the generator exercising it
or the reason it is out of scope; vkdiff.py checks that it names every row, so a new
primitive must be added here.
"""
import random
import re
import warnings

import numpy as np

warnings.simplefilter("ignore")
DTYPES = ["float32", "float64", "float16", "int32", "int64", "bool"]
FLOATS = ["float32", "float64", "float16"]
INTS = ["int32", "int64"]
# the conformance suite's tolerances (tests/kernels/test_ops_numpy.py: tol(), and its
# matmul cases' rtol); integers and bools compare exactly
TOL = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}
MATMUL_TOL = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-12}

BINARY = ["+", "-", "*", "maximum", "minimum", "/", "//", "%", "**"]
EXACT_BINARY = {"+", "-", "*", "maximum", "minimum"}
COMPARE = ["==", "!=", "<", "<=", ">", ">="]
UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "sin", "cos"]
EXACT_UNARY = {"neg", "abs", "relu"}
REDUCE = ["sum", "mean", "max", "min", "argmax"]

# every row of graph/ir/ops.c: the generator exercising it, or why it is not generated
OP_COVERAGE = {
    **{op: "gen_binary" for op in BINARY},
    **{op: "gen_compare" for op in COMPARE},
    "and": "gen_logic", "or": "gen_logic", "not": "gen_logic",
    **{op: "gen_unary" for op in UNARY},
    "where": "gen_where", "cast": "gen_cast", "matmul": "gen_matmul",
    "matmul_tn": "gen_matmul_t", "matmul_nt": "gen_matmul_t", "matmul_tt": "gen_matmul_t",
    "transpose": "gen_transpose", "reshape": "gen_reshape/gen_reduce (keepdims)",
    **{op: "gen_reduce" for op in REDUCE},
    "softmax": "gen_softmax", "log_softmax": "gen_softmax",
    "concat": "gen_join", "stack": "gen_join", "slice": "gen_slice",
    "slice_update": "gen_slice_update",
    "gather": "gen_gather", "one_hot": "gen_one_hot",
    "zeros": "gen_fill", "ones": "gen_fill", "fill": "gen_fill", "arange": "gen_arange",
    "random_normal": "gen_random", "random_uniform": "gen_random",
    "shape": "gen_shape_of", "len": "gen_shape_of", "size": "gen_shape_of",
    "tuple": "program result, while state", "getitem": "while result, gen_getitem",
    "if": "gen_if", "while": "gen_while", "seq": "gen_if (begin)",
    "record": "out of scope: structure plumbing, no kernel",
    "getattr": "out of scope: structure plumbing, no kernel",
    "grad": "out of scope: AD (graph.ad_train_vulkan compares it with the CPU)",
    **{op: "out of scope: emitted by AD only (graph.ad_train_vulkan)" for op in
       ["zeros_like", "add_grad", "sum_like", "expand_like", "item_grad", "slice_grad",
        "gather_grad", "sens_item", "or_zeros", "matmul_grad", "join_grad", "captured"]},
    "sgd_momentum": "out of scope: optimizer step (graph.ad_train_vulkan)",
    "adam": "out of scope: optimizer step (graph.ad_train_vulkan)",
    **{op: "out of scope: host effect, no kernel" for op in
       ["print", "assert", "assume", "variable", "read", "assign", "assign_add", "assign_sub"]},
    "grad_scalar": "out of scope: grad's check of its function's value, metadata only "
                   "(graph.ad_train_vulkan: no CPU fallback)",
    **{op: "out of scope: Python's conversions on host numbers (graph/pyfront; "
           "test_pyfront.py)" for op in ["pyindex", "pyint", "pyfloat", "pybool"]},
}


def np_dummy(dtype, shape):
    return np.zeros(shape, dtype=dtype)


def fmt_num(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


class Val:
    """A value in scope: its name, dtype, shape, whether its floats are exact (on the
    1/8 grid, no rounding), and the tolerance its inexact ancestors carry: the largest
    conformance tolerance (TOL, MATMUL_TOL) of the dtypes they rounded in, since a
    float32 op's allowed ulps stay in a float64 result computed from it."""

    def __init__(self, name, dtype, shape, exact=True, tol=0.0):
        self.name, self.dtype, self.shape, self.exact, self.tol = name, dtype, tuple(shape), exact, tol

    def dummy(self):
        return np_dummy(self.dtype, self.shape)


class Stmt:
    """One `let` binding of the body: the value it defines, its expression, the names it
    reads, and helper defs it needs."""

    def __init__(self, val, expr, defs=()):
        self.val, self.expr, self.defs = val, expr, list(defs)


class Gen:
    def __init__(self, seed, max_stmts=None, depth=0, scope=None, prefix="v", rng=None,
                 program=None):
        self.rng = rng or random.Random(seed)
        self.depth = depth
        self.prefix = prefix
        self.program = program or self
        self.scope = list(scope or [])
        self.stmts = []
        if program is None:
            self.params = []  # Val
            self.counter = 0
            self.nhelpers = 0
            self.helpers = []  # (name, arg types, extra args, result, defs, depth)
        self.max_stmts = max_stmts if max_stmts is not None else self.rng.randint(3, 12)

    # ---- names and values
    def fresh(self, prefix=None):
        self.program.counter += 1
        return f"{prefix or self.prefix}{self.program.counter}"

    def random_shape(self, maxdim=3):
        nd = self.rng.choice([0, 1, 1, 2, 2, 2, 3][: maxdim + 4])
        nd = min(nd, maxdim)
        dims = []
        for _ in range(nd):
            r = self.rng.random()
            if r < 0.12:  # past a workgroup, a subgroup, a matmul tile, a half-word pair
                d = self.rng.choice([8, 9, 16, 17, 33, 64, 65, 129, 257])
            elif r < 0.25:
                d = self.rng.choice([0, 1, 1, 2])
            else:
                d = self.rng.choice([1, 2, 3, 4, 5, 7])
            dims.append(d if int(np.prod(dims + [d])) <= 4096 else 1)
        return tuple(dims)

    def new_param(self, dtype, shape):
        # parameters belong to the entry def, wherever the need arose (helpers pass them on)
        v = Val(self.fresh("p"), dtype, shape)
        if dtype in FLOATS and self.rng.random() < 0.1:
            v.exact = False  # NaN, infinities and -0 among its values (input_data)
        self.program.params.append(v)
        self.scope.append(v)
        return v

    def pick(self, pred=lambda v: True, dtype=None, shape=None, new_p=0.25):
        """A value in scope satisfying pred, or a new parameter of dtype/shape."""
        cands = [v for v in self.scope if pred(v)]
        if cands and self.rng.random() >= new_p:
            # favour recent values (chains) but keep reading old ones (long-lived)
            if self.rng.random() < 0.6:
                return cands[-1 - min(len(cands) - 1, int(self.rng.expovariate(0.8)))]
            return self.rng.choice(cands)
        if dtype is None:
            dtype = self.rng.choice(DTYPES)
        if shape is None:
            shape = self.random_shape()
        return self.new_param(dtype, shape)

    def bcast_shape_for(self, shape):
        """A shape broadcasting against `shape` (maybe the same)."""
        r = self.rng.random()
        if r < 0.4 or not shape:
            return shape if r < 0.8 else ()
        out = list(shape)
        for i in range(len(out)):
            if self.rng.random() < 0.35:
                out[i] = 1
        if self.rng.random() < 0.3:
            out = out[self.rng.randint(0, len(out)):]
        return tuple(out)

    def emit(self, expr, dtype, shape, exact, tol, defs=()):
        if tol == "matmul" or tol == "plain":
            tol = 0.0
        if dtype in FLOATS and not exact:
            own = (MATMUL_TOL if "(matmul" in expr[:8] else TOL)[dtype]
            tol = max(tol, own)
        v = Val(self.fresh(), dtype, shape, exact, tol)
        self.stmts.append(Stmt(v, expr, defs))
        self.scope.append(v)
        return v

    @staticmethod
    def join_tol(*vals):
        return max([v.tol for v in vals if isinstance(v, Val)] + [0.0])

    # ---- generators: each returns a new Val (emitted) or None (not applicable)
    def gen_binary(self):
        op = self.rng.choice(BINARY)
        a = self.pick(lambda v: v.dtype != "bool")
        if a.dtype == "bool":
            return None
        if self.rng.random() < 0.25:
            b = self.rng.choice([2, -1, 3, 0.5, 1.5, -2.25]) if op != "**" else self.rng.choice([2, 3, 0.5])
            if op in ("//", "%") and b in (0, 0.5, 1.5, -2.25) and a.dtype in INTS:
                b = 3
            bexpr, bdum, bexact = fmt_num(b), b, not (isinstance(b, float) and a.dtype in INTS)
        elif self.rng.random() < 0.5:  # any computed value that broadcasts against a
            b = self.pick(lambda v: v.dtype != "bool" and v is not a and self._bc(v.shape, a.shape),
                          shape=a.shape, dtype=self.rng.choice(DTYPES[:5]), new_p=0.1)
            bexpr, bdum, bexact = b.name, b.dummy(), b.exact
        else:
            bs = self.bcast_shape_for(a.shape)
            b = self.pick(lambda v: v.dtype != "bool" and v.shape == bs, shape=bs,
                          dtype=self.rng.choice(DTYPES[:5]))
            bexpr, bdum, bexact = b.name, b.dummy(), b.exact
        aexpr = a.name
        if op in ("/", "//", "%"):  # divisors away from zero
            bexpr = f"(+ (abs {bexpr}) 1)"
        if op == "**":
            aexpr = f"(abs {aexpr})"
            if not a.exact and not isinstance(b, (int, float)):
                return None  # a rounded base to a data exponent: ill-conditioned
            if not isinstance(b, (int, float)):
                bexpr = f"(minimum (abs {bexpr}) 3)"
        try:
            res = getattr(np, {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide",
                               "//": "floor_divide", "%": "remainder", "**": "power",
                               "maximum": "maximum", "minimum": "minimum"}[op])(a.dummy(), bdum)
        except Exception:
            return None
        if res.size > 20000:
            return None
        exact = op in EXACT_BINARY and a.exact and bexact and res.dtype.kind != "f" or (
            op in EXACT_BINARY and a.exact and bexact and op != "*")
        return self.emit(f"({op} {aexpr} {bexpr})", str(res.dtype), res.shape, exact,
                         self.join_tol(a, b))

    def gen_compare(self):
        op = self.rng.choice(COMPARE)
        a = self.pick(lambda v: v.exact)
        if self.rng.random() < 0.3:
            num = self.rng.choice([0, 1, -0.5, 2.5, True])
            return self.emit(f"({op} {a.name} {fmt_num(num)})", "bool", a.shape, True, 0.0)
        bs = self.bcast_shape_for(a.shape)
        b = self.pick(lambda v: v.shape == bs and v.exact, shape=bs)
        if not (a.exact and b.exact):
            if op in ("==", "!="):
                return None
        res = np.less(a.dummy(), b.dummy())
        return self.emit(f"({op} {a.name} {b.name})", "bool", res.shape, True, "plain")

    def gen_logic(self):
        a = self.pick(lambda v: v.dtype == "bool", dtype="bool")
        if self.rng.random() < 0.3:
            return self.emit(f"(not {a.name})", "bool", a.shape, True, "plain")
        bs = self.bcast_shape_for(a.shape)
        b = self.pick(lambda v: v.dtype == "bool" and v.shape == bs, dtype="bool", shape=bs)
        op = self.rng.choice(["and", "or"])
        return self.emit(f"({op} {a.name} {b.name})", "bool",
                         np.broadcast_shapes(a.shape, b.shape), True, "plain")

    def gen_unary(self):
        op = self.rng.choice(UNARY)
        if self.rng.random() < 0.1:
            a = self.pick(lambda v: v.dtype != "bool")
            if a.dtype == "bool":
                return None
            return self.emit(f"(- {a.name})", a.dtype, a.shape, a.exact, a.tol)
        a = self.pick(lambda v: v.dtype != "bool" or op in ("exp", "sin"))
        if a.dtype == "bool" and op not in ("exp", "sin"):
            return None
        arg = a.name
        if op == "log":
            arg = f"(+ (abs {arg}) 1)"
        elif op == "sqrt":
            arg = f"(abs {arg})"
        elif op in ("sin", "cos") and not a.exact:
            # bounded arguments: a last-ulp difference the tolerances allow upstream
            # would grow with |x| (well-conditioned compositions only)
            arg = f"(tanh {arg})"
        elif op == "exp" and a.dtype != "bool":
            arg = f"(tanh {arg})" if a.dtype in FLOATS else f"(minimum {arg} 5)"
        fn = {"neg": np.negative, "relu": np.abs}.get(op) or getattr(np, op if op != "sigmoid" else "tanh")
        res = fn(a.dummy())
        return self.emit(f"({op} {arg})", str(res.dtype), res.shape,
                         op in EXACT_UNARY and a.exact, a.tol)

    def gen_where(self):
        c = self.pick(lambda v: v.dtype == "bool", dtype="bool")
        a = self.pick(lambda v: self._bc(v.shape, c.shape))
        if not self._bc(a.shape, c.shape):
            return None
        if self.rng.random() < 0.3 and a.dtype != "bool":  # a Python number keeping a's dtype
            num = self.rng.choice([2, -1, 0]) if a.dtype in INTS else self.rng.choice([0.5, -2.25])
            res = np.where(c.dummy(), a.dummy(), num)
            return self.emit(f"(where {c.name} {a.name} {fmt_num(num)})", str(res.dtype), res.shape,
                             a.exact, a.tol)
        bs = self.bcast_shape_for(a.shape)
        b = self.pick(lambda v: v.shape == bs and v.dtype == a.dtype, dtype=a.dtype, shape=bs)
        if not self._bc(b.shape, np.broadcast_shapes(a.shape, c.shape)):
            return None
        res = np.where(c.dummy(), a.dummy(), b.dummy())
        return self.emit(f"(where {c.name} {a.name} {b.name})", str(res.dtype), res.shape,
                         a.exact and b.exact, self.join_tol(a, b))

    @staticmethod
    def _bc(s1, s2):
        try:
            np.broadcast_shapes(s1, s2)
            return True
        except ValueError:
            return False

    def gen_cast(self):
        a = self.pick()
        to = self.rng.choice(DTYPES)
        if a.dtype in FLOATS and to in INTS + ["bool"] and not a.exact:
            to = self.rng.choice(FLOATS)
        return self.emit(f"(cast {a.name} {to})", to, a.shape, a.exact, a.tol)

    def gen_reduce(self):
        op = self.rng.choice(REDUCE)
        a = self.pick(lambda v: v.dtype != "bool")
        if a.dtype == "bool":
            return None
        nd = len(a.shape)
        axis = self.rng.choice([None] + list(range(-nd, nd))) if nd else None
        dummy = a.dummy()
        if op in ("max", "min", "argmax") and (dummy.size == 0 if axis is None else a.shape[axis] == 0):
            # an empty reduction: both backends must fail alike (kept rare)
            if self.rng.random() < 0.7:
                return None
            return self.emit(f"({op} {a.name}{'' if axis is None else f' {axis}'})", "int64", (),
                             True, "plain")
        fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "argmax": np.argmax}[op]
        res = np.asarray(fn(np.ones(a.shape, a.dtype), axis=axis))
        expr = f"({op} {a.name}{'' if axis is None else f' {axis}'})"
        shape = res.shape
        if axis is not None and self.rng.random() < 0.4:  # keepdims
            shape = tuple(1 if i == axis % nd else d for i, d in enumerate(a.shape))
            expr = f"(reshape {expr} (tuple {' '.join(map(str, shape))}))"
        exact = a.exact and op in ("max", "min", "argmax", "sum")
        if a.dtype == "float16" and op == "sum":
            exact = False
        return self.emit(expr, str(res.dtype), shape, exact, a.tol)

    def gen_softmax(self):
        a = self.pick(lambda v: v.dtype in FLOATS and len(v.shape) > 0, dtype=self.rng.choice(FLOATS),
                      shape=self.random_shape(3) or (3,))
        if a.dtype not in FLOATS or not a.shape:
            return None
        op = self.rng.choice(["softmax", "log_softmax"])
        axis = self.rng.choice([None] + list(range(-len(a.shape), len(a.shape))))
        return self.emit(f"({op} {a.name}{'' if axis is None else f' {axis}'})", a.dtype, a.shape,
                         False, a.tol)

    def gen_matmul(self):
        a = self.pick(lambda v: 1 <= len(v.shape) <= 3 and v.dtype != "bool",
                      dtype=self.rng.choice(DTYPES[:5]), shape=self.random_shape(3) or (2, 3))
        if not a.shape or len(a.shape) > 3 or a.dtype == "bool":
            return None
        k = a.shape[-1]
        n = self.rng.choice([1, 2, 3, 5])
        form = self.rng.random()
        bshape = (k,) if form < 0.2 else (k, n) if form < 0.8 else (a.shape[:-2] or (2,)) + (k, n)
        if form >= 0.8 and len(a.shape) == 1:
            bshape = (2, k, n)
        bdt = a.dtype if self.rng.random() < 0.8 else self.rng.choice(DTYPES[:5])
        b = self.pick(lambda v: v.shape == bshape and v.dtype != "bool", dtype=bdt, shape=bshape)
        try:
            res = np.matmul(a.dummy(), b.dummy())
        except Exception:
            return None
        exact = a.exact and b.exact and a.dtype != "float16" and b.dtype != "float16"
        return self.emit(f"(matmul {a.name} {b.name})", str(res.dtype), res.shape, exact, self.join_tol(a, b))

    def gen_matmul_t(self):
        """matmul_tn / _nt / _tt: an operand stored with its last two axes swapped, 2-D
        or batched (the other operand 2-D: broadcast over the batch)."""
        row = self.rng.choice(["tn", "nt", "tt"])
        ta, tb = row[0] == "t", row[1] == "t"
        a = self.pick(lambda v: 2 <= len(v.shape) <= 3 and v.dtype != "bool",
                      dtype=self.rng.choice(DTYPES[:5]), shape=self.random_shape(3) or (2, 3))
        if not 2 <= len(a.shape) <= 3 or a.dtype == "bool":
            return None
        k = a.shape[-2] if ta else a.shape[-1]
        n = self.rng.choice([1, 2, 3, 5])
        bshape = (n, k) if tb else (k, n)
        b = self.pick(lambda v: v.shape == bshape and v.dtype != "bool", dtype=a.dtype, shape=bshape)
        sw = lambda x, t: np.swapaxes(x, -1, -2) if t else x  # noqa: E731
        try:
            res = np.matmul(sw(a.dummy(), ta), sw(b.dummy(), tb))
        except Exception:
            return None
        exact = a.exact and b.exact and a.dtype != "float16" and b.dtype != "float16"
        return self.emit(f"(matmul_{row} {a.name} {b.name})", str(res.dtype), res.shape, exact,
                         self.join_tol(a, b))

    def gen_transpose(self):
        a = self.pick(lambda v: len(v.shape) >= 2)
        nd = len(a.shape)
        if nd < 2 and self.rng.random() < 0.7:
            return None
        if self.rng.random() < 0.3:
            return self.emit(f"(transpose {a.name})", a.dtype, a.shape[::-1], a.exact, a.tol)
        perm = list(range(nd))
        self.rng.shuffle(perm)
        shown = [p - nd if self.rng.random() < 0.2 else p for p in perm]
        return self.emit(f"(transpose {a.name} (tuple {' '.join(map(str, shown))}))", a.dtype,
                         tuple(a.shape[p] for p in perm), a.exact, a.tol)

    def gen_reshape(self):
        a = self.pick()
        size = int(np.prod(a.shape)) if a.shape else 1
        divs = [d for d in range(1, size + 1) if size % d == 0] or [1]
        if size == 0:
            shape = self.rng.choice([(0,), (2, 0), (0, 3)])
        else:
            d = self.rng.choice(divs)
            shape = self.rng.choice([(size,), (d, size // d), (size // d, 1, d)])
        dims = list(shape)
        if size and self.rng.random() < 0.3:
            dims[self.rng.randrange(len(dims))] = -1
        return self.emit(f"(reshape {a.name} (tuple {' '.join(map(str, dims))}))", a.dtype, shape,
                         a.exact, a.tol)

    def slice_bounds(self, a):
        """Random bounds for a slice of a (an axis, Python's clamping): the text of
        START STOP STEP AXIS and the slice's shape."""
        nd = len(a.shape)
        axis = self.rng.randrange(-nd, nd)
        n = a.shape[axis]
        step = self.rng.choice([1, 1, 2, 3, -1, -2])
        start = self.rng.choice(["none", 0, 1, -1, n, self.rng.randint(-n - 1, n + 1)])
        stop = self.rng.choice(["none", 0, -1, n, self.rng.randint(-n - 1, n + 1)])
        ss = lambda x: None if x == "none" else x
        length = len(range(*slice(ss(start), ss(stop), step).indices(n)))
        shape = list(a.shape)
        shape[axis] = length
        return f"{start} {stop} {step} {axis}", tuple(shape)

    def gen_slice(self):
        a = self.pick(lambda v: len(v.shape) >= 1, shape=self.random_shape(3) or (4,))
        if not a.shape:
            return None
        bounds, shape = self.slice_bounds(a)
        return self.emit(f"(slice {a.name} {bounds})", a.dtype, shape, a.exact, a.tol)

    def gen_slice_update(self):
        """(slice_update A V BOUNDS): V of A's dtype broadcast into the slice (a trailing
        part of its shape, some dims 1), or a Python number."""
        a = self.pick(lambda v: len(v.shape) >= 1, shape=self.random_shape(3) or (4,))
        if not a.shape:
            return None
        bounds, shape = self.slice_bounds(a)
        if a.dtype != "bool" and self.rng.random() < 0.2:
            v = self.rng.choice([2, -1, 3] if a.dtype in INTS else [2, -1, 0.5, 1.5])
            return self.emit(f"(slice_update {a.name} {fmt_num(v)} {bounds})", a.dtype, a.shape,
                             a.exact, a.tol)
        vshape = tuple(1 if self.rng.random() < 0.2 else d
                       for d in shape[self.rng.randrange(len(shape) + 1):])
        v = self.pick(lambda w: w.dtype == a.dtype and w.shape == vshape, dtype=a.dtype, shape=vshape)
        if v.dtype != a.dtype or v.shape != vshape:
            return None
        return self.emit(f"(slice_update {a.name} {v.name} {bounds})", a.dtype, a.shape,
                         a.exact and v.exact, self.join_tol(a, v))

    def gen_join(self):
        a = self.pick(lambda v: len(v.shape) >= 1, shape=self.random_shape(3) or (3,))
        if not a.shape:
            return None
        stack = self.rng.random() < 0.3
        nd = len(a.shape)
        axis = self.rng.randrange(-nd - stack, nd + stack)
        parts = [a]
        for _ in range(self.rng.randint(1, 2)):
            shape = list(a.shape)
            if not stack:
                shape[axis] = self.rng.choice([0, 1, 2, 3])
            dt = a.dtype if self.rng.random() < 0.8 else self.rng.choice(DTYPES)
            parts.append(self.pick(lambda v: v.shape == tuple(shape) and v.dtype == dt,
                                   dtype=dt, shape=tuple(shape)))
        try:
            res = (np.stack if stack else np.concatenate)([p.dummy() for p in parts], axis=axis)
        except Exception:
            return None
        names = " ".join(p.name for p in parts)
        op = "stack" if stack else "concat"
        expr = f"({op} (tuple {names}) {axis})" if self.rng.random() < 0.5 else f"({op} {names} {axis})"
        return self.emit(expr, str(res.dtype), res.shape, all(p.exact for p in parts),
                         self.join_tol(*parts))

    def gen_gather(self):
        a = self.pick(lambda v: len(v.shape) >= 1 and min(v.shape) > 0, shape=(3, 4))
        if not a.shape or min(a.shape) == 0:
            return None
        nd = len(a.shape)
        axis = self.rng.randrange(-nd, nd)
        n = a.shape[axis]
        # indices: argmax of something (computed on the device) or a constant tensor
        src = self.pick(lambda v: v.dtype != "bool" and len(v.shape) == 1 and v.shape[0] == n
                        and v.exact, dtype="int32", shape=(n,))
        idx = f"(argmax {src.name})" if src.shape == (n,) and n else "0"
        if self.rng.random() < 0.5:
            k = self.rng.randint(0, 4)
            vals = " ".join(str(self.rng.randrange(-n, n)) for _ in range(k))
            idx = f"(tensor int64 ({k}) {vals})"
            ishape = (k,)
        else:
            ishape = ()
        shape = a.shape[: axis % nd] + ishape + a.shape[axis % nd + 1:]
        return self.emit(f"(gather {a.name} {idx} {axis})", a.dtype, shape, a.exact, a.tol)

    def gen_one_hot(self):
        a = self.pick(lambda v: v.dtype != "bool" and len(v.shape) >= 1 and v.exact and min(v.shape) > 0,
                      dtype="int32", shape=(2, 3))
        if a.dtype == "bool" or not a.shape or min(a.shape) == 0 or not a.exact:
            return None
        axis = self.rng.randrange(len(a.shape))
        depth = a.shape[axis] + self.rng.randint(0, 2)
        idx = Val("", "int64", a.shape[:axis] + a.shape[axis + 1:])
        return self.emit(f"(one_hot (argmax {a.name} {axis}) {depth})", "float32",
                         idx.shape + (depth,), True, "plain")

    def gen_fill(self):
        shape = self.random_shape(3)
        kind = self.rng.choice(["zeros", "ones", "fill"])
        dt = self.rng.choice(DTYPES)
        tup = f"(tuple {' '.join(map(str, shape))})"
        if kind == "fill":
            val = self.rng.choice([1.5, -2, 3, 0.25])
            expr = f"(fill {tup} {fmt_num(val)} {dt})"
        else:
            expr = f"({kind} {tup} {dt})"
        c = self.emit(expr, dt, shape, True, "plain")
        # combine with a value so the constant is read by a kernel
        a = self.pick(lambda v: v.dtype == dt and self._bc(v.shape, shape) and dt != "bool",
                      dtype=dt, shape=shape)
        if dt == "bool":
            return c
        res = np.add(a.dummy(), c.dummy())
        return self.emit(f"(+ {a.name} {c.name})", str(res.dtype), res.shape, a.exact, a.tol)

    def gen_arange(self):
        n = self.rng.randint(0, 6)
        a = self.pick(lambda v: v.shape[-1:] == (n,) and v.dtype != "bool", shape=(n,),
                      dtype=self.rng.choice(DTYPES[:5]))
        res = np.add(a.dummy(), np.arange(n))
        return self.emit(f"(* {a.name} (arange {n}))", str(res.dtype), res.shape, a.exact, a.tol)

    def gen_random(self):
        shape = self.random_shape(2)
        dt = self.rng.choice(["float32", "float64"])
        kind = self.rng.choice(["random_normal", "random_uniform"])
        # a seed computed from data, so the constructor runs as a kernel
        s = self.pick(lambda v: v.dtype in INTS and v.shape == (), dtype="int64", shape=())
        if s.dtype not in INTS or s.shape != ():
            return None
        tup = f"(tuple {' '.join(map(str, shape))})"
        return self.emit(f"({kind} {tup} (abs {s.name}) {dt})", dt, shape, False, "plain")

    def gen_shape_of(self):
        a = self.pick(lambda v: len(v.shape) >= 1)
        if not a.shape:
            return None
        b = self.pick(lambda v: v.dtype in FLOATS + INTS)
        kind = self.rng.choice(["len", "size", "shape"])
        num = f"(getitem (shape {a.name}) 0)" if kind == "shape" else f"({kind} {a.name})"
        res = np.add(b.dummy(), 1)
        return self.emit(f"(+ {b.name} {num})", str(res.dtype), res.shape, b.exact, b.tol)

    def gen_getitem(self):
        a = self.pick(lambda v: len(v.shape) >= 1 and v.shape[0] > 0)
        if not a.shape or not a.shape[0]:
            return None
        i = self.rng.randrange(-a.shape[0], a.shape[0])
        return self.emit(f"(getitem {a.name} {i})", a.dtype, a.shape[1:], a.exact, a.tol)

    def predicate(self):
        """A bool that depends on computed data (read back by the executor)."""
        a = self.pick(lambda v: v.dtype != "bool" and v.exact)
        op = self.rng.choice(["<", ">", ">=", "<="])
        return f"({op} (sum {a.name}) {self.rng.choice([0, 1, -1, 2])})"

    def sub_block(self, nstmts):
        sub = Gen(None, nstmts, self.depth + 1, self.scope, self.prefix, self.rng, self.program)
        sub.run()
        return sub

    def gen_if(self):
        if self.depth >= 2:
            return None
        pred = self.predicate()
        then = self.sub_block(self.rng.randint(1, 3))
        if not then.stmts:
            return None
        t = then.stmts[-1].val
        els = self.sub_block(self.rng.randint(0, 3))
        # the else branch's result must have t's dtype and shape
        cand = [s.val for s in els.stmts if s.val.shape == t.shape] + \
               [v for v in self.scope if v.shape == t.shape]
        e = self.rng.choice(cand) if cand else None
        if e is None or (e.dtype != t.dtype and e.dtype in FLOATS and t.dtype not in FLOATS
                         and not e.exact):
            return None  # a rounded float cast to an integer: 1 ulp apart may truncate apart
        eexpr = e.name if e.dtype == t.dtype else f"(cast {e.name} {t.dtype})"
        texpr = block_expr(then.stmts, t.name)
        eexpr = block_expr([s for s in els.stmts], eexpr)
        return self.emit(f"(if {pred} {texpr} {eexpr})", t.dtype, t.shape, t.exact and e.exact,
                         self.join_tol(t, e), then.defs() + els.defs())

    def gen_while(self):
        if self.depth >= 2:
            return None
        s0 = self.pick(lambda v: v.dtype in FLOATS + INTS, dtype=self.rng.choice(FLOATS))
        if s0.dtype not in FLOATS + INTS:
            return None
        i, s = self.fresh("i"), self.fresh("s")
        state = Val(s, s0.dtype, s0.shape, s0.exact, s0.tol)
        body = Gen(None, self.rng.randint(1, 3), self.depth + 1, self.scope + [state], self.prefix,
                   self.rng, self.program)
        body.run()
        # an integer state takes exact updates only, kept small by % (no overflow: an
        # out-of-range float -> int cast is undefined, as in NumPy)
        outs = [st.val for st in body.stmts if self._bc(st.val.shape, state.shape) and
                np.broadcast_shapes(st.val.shape, state.shape) == state.shape and
                (st.val.exact or s0.dtype in FLOATS)]
        upd = self.rng.choice(outs) if outs else state
        nxt = f"(cast (% (+ {s} {upd.name}) 97) {s0.dtype})" if upd is not state else f"(+ {s} 1)"
        if s0.dtype in FLOATS:
            nxt = f"(cast (tanh (+ {s} {upd.name})) {s0.dtype})" if upd is not state else f"(tanh {s})"
        if self.rng.random() < 0.15:
            # a long loop on the counter only: no read-back per iteration, so the
            # executor fills batches (1024 dispatches) and sends them while recording
            iters = self.rng.choice([100, 300, 700])
            cond = f"(< {i} {iters})"
        else:
            iters = self.rng.randint(0, 4)
            cond = f"(and (< {i} {iters}) (< (sum (abs {s})) 1000000))"
        bexpr = block_expr(body.stmts, f"(tuple (+ {i} 1) {nxt})")
        exact = s0.exact and s0.dtype in INTS and all(st.val.exact for st in body.stmts)
        return self.emit(f"(getitem (while (lambda ({i} {s}) {cond}) (lambda ({i} {s}) {bexpr}) "
                         f"(tuple 0 {s0.name})) 1)", s0.dtype, s0.shape, exact,
                         self.join_tol(s0, *[st.val for st in body.stmts]), body.defs())

    def gen_call(self):
        if self.depth >= 2:
            return None
        helpers = [h for h in self.program.helpers if self.depth == 0 or h[5] < self.depth]
        if helpers and self.rng.random() < 0.4:
            # call an existing helper again, on other values of the same types
            name, types, extra, res, defs, _ = self.rng.choice(helpers)
            args = [self.pick(lambda v, t=t: (v.dtype, v.shape) == t, dtype=t[0], shape=t[1])
                    for t in types]
            if [(a.dtype, a.shape) for a in args] != types:
                return None
            call = " ".join([a.name for a in args] + extra)
            return self.emit(f"({name} {call})", res.dtype, res.shape,
                             res.exact and all(a.exact for a in args),
                             max([res.tol] + [a.tol for a in args]), defs)
        args = [self.pick() for _ in range(self.rng.randint(1, 3))]
        args = list({a.name: a for a in args}.values())
        name = f"h{self.program.nhelpers}"
        self.program.nhelpers += 1
        formals = [Val(f"{name}_{k}", a.dtype, a.shape, a.exact, a.tol) for k, a in enumerate(args)]
        body = Gen(None, self.rng.randint(1, 4), self.depth + 1, formals, "v", self.rng, self.program)
        body.run()
        body.scope = [v for v in body.scope if v.name.startswith(name) or v in
                      [s.val for s in body.stmts]]
        res = body.stmts[-1].val if body.stmts else formals[0]
        # only the formals and the body's own values may be read inside the helper
        free = {v.name for v in self.program.params}
        text = " ".join(block_expr(body.stmts, res.name).split())
        if any(re.search(rf"(?<![\w$]){re.escape(p)}(?![\w$])", text) for p in free):
            # the body made a new parameter: pass it in as an argument too
            extra = [p for p in self.program.params if re.search(rf"(?<![\w$]){p.name}(?![\w$])", text)]
            formals_txt = " ".join([f.name for f in formals] + [p.name for p in extra])
            call_args = " ".join([a.name for a in args] + [p.name for p in extra])
        else:
            formals_txt = " ".join(f.name for f in formals)
            call_args = " ".join(a.name for a in args)
        helper = f"(def {name} ({formals_txt}) {block_expr(body.stmts, res.name)})"
        extra_names = call_args.split()[len(args):]
        self.program.helpers.append((name, [(a.dtype, a.shape) for a in args], extra_names, res,
                                     body.defs() + [helper], self.depth))
        return self.emit(f"({name} {call_args})", res.dtype, res.shape, res.exact, res.tol,
                         body.defs() + [helper])

    def defs(self):
        return [d for st in self.stmts for d in st.defs]

    GENERATORS = [("gen_binary", 6), ("gen_compare", 2), ("gen_logic", 1), ("gen_unary", 5),
                  ("gen_where", 2), ("gen_cast", 2), ("gen_reduce", 3), ("gen_softmax", 1),
                  ("gen_matmul", 2), ("gen_matmul_t", 1), ("gen_transpose", 2), ("gen_reshape", 1), ("gen_slice", 2),
                  ("gen_slice_update", 1),
                  ("gen_join", 2), ("gen_gather", 1), ("gen_one_hot", 1), ("gen_fill", 1),
                  ("gen_arange", 1), ("gen_random", 1), ("gen_shape_of", 1), ("gen_getitem", 1),
                  ("gen_if", 2), ("gen_while", 2), ("gen_call", 1)]

    def run(self):
        names = [g for g, _ in self.GENERATORS]
        weights = [w for _, w in self.GENERATORS]
        tries = 0
        while len(self.stmts) < self.max_stmts and tries < self.max_stmts * 4:
            tries += 1
            g = self.rng.choices(names, weights)[0]
            if self.depth and g in ("gen_if", "gen_while", "gen_call") and self.depth >= 2:
                continue
            getattr(self, g)()
        return self


def block_expr(stmts, result):
    """Nested lets binding stmts, then result."""
    out = result
    for st in reversed(stmts):
        out = f"(let {st.val.name} {st.expr} {out})"
    return out


def input_data(rng, v):
    """Deterministic argument data for parameter v: floats on the 1/8 grid in [-4, 4]."""
    n = int(np.prod(v.shape)) if v.shape else 1
    if v.dtype == "bool":
        data = rng.integers(0, 2, n).astype(bool)
    elif v.dtype in INTS:
        data = rng.integers(-5, 6, n)
    else:
        data = rng.integers(-32, 33, n) / 8.0
        if not v.exact:  # an inexact parameter holds special values
            special = rng.random(n) < 0.3
            data[special] = rng.choice([np.nan, np.inf, -np.inf, -0.0], int(special.sum()))
    return np.asarray(data, dtype=v.dtype).reshape(v.shape)


class Program:
    """A generated program: entry params, top-level statements, outputs, helper defs."""

    def __init__(self, params, stmts, outputs, seed):
        self.params, self.stmts, self.outputs, self.seed = params, stmts, outputs, seed

    def source(self):
        defs = []
        for st in self.stmts:
            for d in st.defs:
                if d not in defs:
                    defs.append(d)
        ps = " ".join(f"({p.name} {p.dtype} ({' '.join(map(str, p.shape))}))" for p in self.params)
        body = block_expr(self.stmts, f"(tuple {' '.join(self.outputs)})")
        return "\n".join(defs + [f"(def f ({ps})\n  {body})"]) + "\n"

    def args(self):
        # per parameter, so dropping one while minimizing keeps the others' data
        return [input_data(np.random.default_rng([self.seed, int(p.name[1:])]), p)
                for p in self.params]

    def nodes(self):
        return len(self.stmts)


def generate(seed, size=12):
    g = Gen(seed)
    g.max_stmts = g.rng.randint(3, max(3, size))
    g.run()
    if not g.stmts:
        g.gen_binary()
    # outputs: the values nothing reads (the DAG's sinks), so no statement is dead code
    outs = [st.val.name for i, st in enumerate(g.stmts)
            if not any(uses(st.val.name, later.expr) for later in g.stmts[i + 1:])]
    return Program(list(g.params), g.stmts, outs, seed)


def uses(name, text):
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) is not None


def prune(prog):
    """Drops statements and parameters nothing reads (dead code)."""
    live_text = " ".join(prog.outputs)
    keep = []
    for st in reversed(prog.stmts):
        if uses(st.val.name, live_text):
            keep.append(st)
            live_text += " " + st.expr + " " + " ".join(st.defs)
    keep.reverse()
    allt = " ".join(prog.outputs) + " " + " ".join(st.expr + " " + " ".join(st.defs) for st in keep)
    params = [p for p in prog.params if uses(p.name, allt)]
    return Program(params, keep, prog.outputs, prog.seed)
