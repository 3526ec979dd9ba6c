# SPDX-License-Identifier: Apache-2.0
"""adfuzz_gen.py — seeded generator of random differentiable staged programs for the
reverse-mode AD differential tester (adfuzz.py, docs/ad.md "Random differential testing").

A program is a few helper defs plus the entry `(def f (PARAMS...) BODY)`: float64 scalar
and small tensor parameters and one small int `n` (loop bounds, recursion depth). BODY is
a `let` chain — each binding reads earlier ones, so values are reused — ending in a
float64 scalar. Expressions are trees of Node (each knows its shape), built by
`Gen.expr(shape)` from: smooth elementwise ops with broadcasting (operands of fewer or
size-1 dimensions, made with reshape), reductions with axes, matmul (2-D, 1-D operands, batches),
transpose,
softmax/log_softmax, getitem/slice/gather/concat/stack (of a
literal tuple and of one known at run time), tuples and records built and
taken apart, `if` on a data-dependent predicate, functional `while` loops carrying a
tensor with a bounded counter, calls of helper defs, closures (let-bound and called
later, passed to the higher-order def `twice`, stored in a tuple, returned by a def),
recursion on `n`, the gradient of a helper def used as a value inside f (so grad f
is a second-order gradient), and the gradient of a closure (a lambda or nested def over
f's values). Values are kept bounded (tanh/sin/sigmoid squash deep
expressions; log/sqrt/`/`/`**` get positive arguments) so finite differences work.

The minimizer (adfuzz.py) shrinks a program by replacing a node by a child of the same
shape, or (inside f) by a fresh parameter of its shape.
"""
import random

import numpy as np

SHAPES = [(), (3,), (2, 3), (3, 2), (2,), (2, 2)]


class Node:
    """An expression: its shape, a format string over its kids ({0}, {1}, ...) and
    whether it lies inside f (where a fresh parameter of f is in scope)."""

    def __init__(self, shape, fmt, kids=(), in_f=True):
        self.shape, self.fmt, self.kids, self.in_f = tuple(shape), fmt, list(kids), in_f

    def text(self):
        return self.fmt.format(*[k.text() for k in self.kids])

    def size(self):
        return 1 + sum(k.size() for k in self.kids)

    def walk(self):
        yield self
        for k in self.kids:
            yield from k.walk()


def leaf(name, shape, in_f=True):
    return Node(shape, name.replace("{", "{{").replace("}", "}}"), (), in_f)


def is_val(s):
    """A tensor/number shape (not ("fn", shape), a closure, nor None, an int)."""
    return isinstance(s, tuple) and all(isinstance(d, int) for d in s)


def shp(s):
    return "(tuple " + " ".join(str(d) for d in s) + ")"


class Program:
    """Helper defs (name, params [(name, shape)], body Node), f's params [(name, shape)]
    (the last is the int `n`), f's let chain [(name, Node)] and its result Node."""

    def __init__(self, seed, helpers, params, lets, result, n):
        self.seed, self.helpers, self.params, self.lets, self.result, self.n = \
            seed, helpers, params, lets, result, n

    def float_params(self):
        return [(p, s) for p, s in self.params]

    def f_source(self):
        body = self.result.text()
        for name, node in reversed(self.lets):
            body = f"(let {name} {node.text()}\n  {body})"
        ps = " ".join(p for p, _ in self.params)
        return f"(def f ({ps} n)\n  {body})"

    def source(self):
        """The program: helpers used (transitively), f, and the entries `grad_all`
        (the gradient w.r.t. every float parameter, a tuple) and `fval`."""
        fsrc = self.f_source()
        used, text = [], fsrc
        changed = True
        while changed:
            changed = False
            for h in self.helpers:
                if h[0] not in used and h[0] in text.replace("(", " ( ").replace(")", " ) ").split():
                    used.append(h[0])
                    text += "\n" + self.helper_source(h)
                    changed = True
        defs = [self.helper_source(h) for h in self.helpers if h[0] in used]
        ps = " ".join(p for p, _ in self.params)
        idx = " ".join(str(i) for i in range(len(self.params)))
        return "\n".join(defs + [fsrc, f"(def fval ({ps} n) (f {ps} n))",
                                 f"(def grad_all ({ps} n) ((grad f {idx}) {ps} n))"]) + "\n"

    @staticmethod
    def helper_source(h):
        name, params, body = h
        if body is None:  # fixed text (twice, mk)
            return params
        return f"(def {name} ({' '.join(p for p, _ in params)})\n  {body.text()})"

    def fd_source(self, npoints):
        """A def `fd_all` taking npoints argument sets (one after the other) and returning
        the tuple of f at each: one staging for all finite-difference evaluations."""
        names = []
        calls = []
        for k in range(npoints):
            ps = [f"a{k}_{p}" for p, _ in self.params]
            names += ps
            calls.append(f"(f {' '.join(ps)} {self.n})")
        return self.source() + f"(def fd_all ({' '.join(names)})\n  (tuple {' '.join(calls)}))\n"

    def nodes(self):
        return sum(n.size() for _, n in self.lets) + self.result.size() + \
            sum(h[2].size() for h in self.helpers if h[2] is not None)

    def point(self, rng):
        """Random arguments for the float parameters (float64)."""
        out = []
        for _, s in self.params:
            a = rng.uniform(-1.5, 1.5, size=s)
            out.append(float(a) if s == () else a.astype(np.float64))
        return out


class Gen:
    def __init__(self, seed, size):
        self.rng = random.Random(seed)
        self.seed, self.size = seed, size
        self.counter = 0
        self.helpers = []
        self.fixed = set()
        self.n = self.rng.choice([0, 1, 2, 3])

    def fresh(self, base):
        self.counter += 1
        return f"{base}{self.counter}"

    # ---- leaves and helpers -------------------------------------------------------
    def pick_var(self, env, shape):
        c = [v for v, s in env if s == shape]
        return self.rng.choice(c) if c else None

    def atom(self, env, shape, in_f):
        """A value of `shape` from what is in scope: a variable of that shape, one that
        broadcasts to it (plus a constant), or the first elements of a larger tensor
        (flattened, sliced, reshaped); a constant only when nothing fits."""
        v = self.pick_var(env, shape)
        if v and self.rng.random() < 0.8:
            return leaf(v, shape, in_f)
        size = int(np.prod(shape))
        env = [(u, s) for u, s in env if is_val(s)]
        bc = [(u, s) for u, s in env if s != shape and (s == () or s == shape[len(shape) - len(s):])]
        big = [(u, s) for u, s in env if s != () and s != shape and int(np.prod(s)) >= size]
        r = self.rng.random()
        if bc and (r < 0.5 or not big):
            u, s = self.rng.choice(bc)
            return Node(shape, "(+ {0} {1})", [leaf(u, s, in_f), self.const_like(shape, in_f)], in_f)
        if big:
            u, s = self.rng.choice(big)
            k = self.rng.randrange(int(np.prod(s)) - size + 1)
            fmt = f"(slice (reshape {{0}} (tuple -1)) {k} {k + size})"
            if shape != (size,):
                fmt = f"(reshape {fmt} {shp(shape) if shape else '(tuple)'})"
            if shape == ():
                fmt = f"(getitem (reshape {{0}} (tuple -1)) {k})"
            return Node(shape, fmt, [leaf(u, s, in_f)], in_f)
        if v:
            return leaf(v, shape, in_f)
        return self.const_like(shape, in_f)

    def const_like(self, shape, in_f):
        c = round(self.rng.uniform(-1, 1), 3)
        if shape == ():
            return leaf(repr(c), (), in_f)
        return leaf(f"(fill {shp(shape)} {c!r})", shape, in_f)

    def squash(self, node):
        op = self.rng.choice(["tanh", "sin", "sigmoid", "cos"])
        return Node(node.shape, f"({op} {{0}})", [node], node.in_f)

    # ---- expressions ---------------------------------------------------------------
    def expr(self, env, shape, depth, in_f=True):
        if depth <= 0:
            return self.atom(env, shape, in_f)
        gens = [(self.g_unary, 4), (self.g_binary, 6), (self.g_reduce, 3), (self.g_tuple, 1),
                (self.g_record, 1), (self.g_if, 1.2), (self.g_call, 1.2)]
        if any(s == ("fn", shape) for _, s in env):
            gens += [(self.g_callfn, 3)]
        if len(shape) <= 2:
            gens += [(self.g_matmul, 2 if len(shape) == 2 else 0.7)]
        if len(shape) == 2:
            gens += [(self.g_transpose, 1.5)]
        if len(shape) >= 1:
            gens += [(self.g_softmax, 1.2), (self.g_getitem, 1), (self.g_slice, 1.2),
                     (self.g_gather, 1), (self.g_concat, 1.2), (self.g_stack, 1)]
        gens += [(self.g_while, 1), (self.g_closure, 1.2), (self.g_twice, 0.8),
                 (self.g_mk, 0.8), (self.g_rec, 0.8), (self.g_grad, 0.8 if in_f else 0.3),
                 (self.g_gradclo, 0.8 if in_f else 0.3)]
        fs, ws = zip(*gens)
        g = self.rng.choices(fs, ws)[0]
        return g(env, shape, depth - 1, in_f)

    def g_unary(self, env, shape, d, in_f):
        e = self.expr(env, shape, d, in_f)
        op = self.rng.choice(["tanh", "sin", "cos", "sigmoid", "neg", "exp", "log", "sqrt",
                              "sq", "relu", "abs"])
        fmt = {"exp": "(exp (tanh {0}))", "log": "(log (+ 1.5 (* {0} {0})))",
               "sqrt": "(sqrt (+ 1.0 (* {0} {0})))", "sq": "(** {0} 2)"}.get(op, f"({op} {{0}})")
        return Node(shape, fmt, [e], in_f)

    def bshape(self, shape):
        """A shape that broadcasts to `shape`."""
        r = self.rng.random()
        if shape == () or r < 0.5:
            return shape
        if r < 0.7:
            return ()
        if r < 0.85:
            return shape[1:]
        return tuple(1 if i == self.rng.randrange(len(shape)) else d for i, d in enumerate(shape))

    def expr_b(self, env, shape, d, in_f):
        s = self.bshape(shape)
        if 1 in s:
            inner = tuple(x for x in s if x != 1)
            if inner == ():
                return self.expr(env, shape, d, in_f)
            e = self.expr(env, inner, d, in_f)
            return Node(s, f"(reshape {{0}} {shp(s)})", [e], in_f)
        return self.expr(env, s, d, in_f)

    def g_binary(self, env, shape, d, in_f):
        a, b = self.expr(env, shape, d, in_f), self.expr_b(env, shape, d, in_f)
        if self.rng.random() < 0.5:
            a, b = b, a
        if a.shape != shape and b.shape != shape:
            a = self.expr(env, shape, 0, in_f)
        op = self.rng.choice(["+", "-", "*", "*", "/", "maximum", "minimum", "pow"])
        if op == "/":
            return Node(shape, "(/ {0} (+ 2.0 (* {1} {1})))", [a, b], in_f)
        if op == "pow":
            return Node(shape, "(** (+ 1.0 (* {0} {0})) (tanh {1}))", [a, b], in_f)
        return Node(shape, f"({op} {{0}} {{1}})", [a, b], in_f)

    def g_reduce(self, env, shape, d, in_f):
        op = self.rng.choice(["sum", "mean", "sum", "max", "min"])
        if len(shape) < 2 and self.rng.random() < 0.5:
            ax = self.rng.randrange(len(shape) + 1)
            full = shape[:ax] + (self.rng.choice([2, 3]),) + shape[ax:]
            axis = ax - len(full) if self.rng.random() < 0.3 else ax
            return Node(shape, f"({op} {{0}} {axis})", [self.expr(env, full, d, in_f)], in_f)
        if shape == ():
            s = self.rng.choice(SHAPES[1:])
            return Node((), f"({op} {{0}})", [self.expr(env, s, d, in_f)], in_f)
        return self.g_unary(env, shape, d, in_f)

    def g_matmul(self, env, shape, d, in_f):
        """NumPy matmul: 2-D (also matmul_tn / _nt / _tt), a 1-D operand on either side (or
        both: a scalar), or a batch of two (stacked; the other operand stacked too or
        broadcast) reduced."""
        k = self.rng.choice([2, 3])
        e = lambda s: self.expr(env, s, d, in_f)  # noqa: E731
        if len(shape) == 0:
            return Node(shape, "(tanh (matmul {0} {1}))", [e((k,)), e((k,))], in_f)
        if len(shape) == 1:
            if self.rng.random() < 0.5:
                return Node(shape, "(tanh (matmul {0} {1}))", [e((k,)), e((k, shape[0]))], in_f)
            return Node(shape, "(tanh (matmul {0} {1}))", [e((shape[0], k)), e((k,))], in_f)
        r = self.rng.random()
        if r < 0.3:  # the rows reading an operand transposed (matmul_grad's T flags)
            row, ta, tb = [("tn", True, False), ("nt", False, True), ("tt", True, True)][int(r * 10)]
            sa, sb = (k, shape[0]) if ta else (shape[0], k), (shape[1], k) if tb else (k, shape[1])
            return Node(shape, f"(tanh (matmul_{row} {{0}} {{1}}))", [e(sa), e(sb)], in_f)
        if r < 0.5:
            return Node(shape, "(tanh (matmul {0} {1}))", [e((shape[0], k)), e((k, shape[1]))], in_f)
        red = self.rng.choice(["(sum {0} 0)", "(getitem {0} 1)", "(mean {0} 0)"])
        a = Node((2, shape[0], k), "(stack {0} {1})", [e((shape[0], k)), e((shape[0], k))], in_f)
        b = Node((2, k, shape[1]), "(stack {0} {1})", [e((k, shape[1])), e((k, shape[1]))], in_f)
        if r < 0.7:
            b = e((k, shape[1]))
        elif r < 0.85:
            a = e((shape[0], k))
        return Node(shape, "(tanh %s)" % red.format("(matmul {0} {1})"), [a, b], in_f)

    def g_transpose(self, env, shape, d, in_f):
        e = self.expr(env, (shape[1], shape[0]), d, in_f)
        fmt = "(transpose {0})" if self.rng.random() < 0.5 else "(transpose {0} (tuple 1 0))"
        return Node(shape, fmt, [e], in_f)

    def g_softmax(self, env, shape, d, in_f):
        op = self.rng.choice(["softmax", "log_softmax"])
        ax = self.rng.randrange(-len(shape), len(shape))
        return Node(shape, f"({op} {{0}} {ax})", [self.expr(env, shape, d, in_f)], in_f)

    def g_getitem(self, env, shape, d, in_f):
        k = self.rng.choice([2, 3])
        i = self.rng.randrange(-k, k)
        return Node(shape, f"(getitem {{0}} {i})", [self.expr(env, (k,) + shape, d, in_f)], in_f)

    def g_slice(self, env, shape, d, in_f):
        m = shape[0]
        step = self.rng.choice([1, 1, 2, -1])
        full = m * abs(step) + self.rng.choice([0, 1])
        if step > 0:
            start = self.rng.randrange(full - (m - 1) * step)
            stop = start + (m - 1) * step + 1
        else:
            start = full - 1 - self.rng.randrange(full - m + 1)
            stop = start - m
            stop = "none" if stop < 0 else stop
        ax = 0
        fshape = (full,) + shape[1:]
        if len(shape) == 2 and self.rng.random() < 0.4:  # along axis 1
            m = shape[1]
            full = m + self.rng.choice([0, 1])
            start, stop, step, ax = full - m, full, 1, 1
            fshape = (shape[0], full)
        return Node(shape, f"(slice {{0}} {start} {stop} {step} {ax})",
                    [self.expr(env, fshape, d, in_f)], in_f)

    def g_gather(self, env, shape, d, in_f):
        ax = self.rng.randrange(len(shape))
        src = self.rng.choice([2, 3])
        idx = [self.rng.randrange(src) for _ in range(shape[ax])]
        fshape = shape[:ax] + (src,) + shape[ax + 1:]
        return Node(shape, f"(gather {{0}} (tensor int64 ({len(idx)}) {' '.join(map(str, idx))}) {ax})",
                    [self.expr(env, fshape, d, in_f)], in_f)

    def g_concat(self, env, shape, d, in_f):
        ax = self.rng.randrange(len(shape))
        if shape[ax] < 2:
            return self.g_unary(env, shape, d, in_f)
        k = self.rng.randrange(1, shape[ax])
        s1 = shape[:ax] + (k,) + shape[ax + 1:]
        s2 = shape[:ax] + (shape[ax] - k,) + shape[ax + 1:]
        a, b = self.expr(env, s1, d, in_f), self.expr(env, s2, d, in_f)
        fmt = self.rng.choice(["(concat {0} {1} %d)", "(concat (tuple {0} {1}) %d)",
                               "(concat (getitem (tuple (tuple {0} {1}) 0.0) 0) %d)"])
        return Node(shape, fmt % ax, [a, b], in_f)

    def g_stack(self, env, shape, d, in_f):
        ax = self.rng.randrange(len(shape))
        inner = shape[:ax] + shape[ax + 1:]
        parts = [self.expr(env, inner, d, in_f) for _ in range(shape[ax])]
        body = " ".join("{%d}" % i for i in range(len(parts)))
        fmt = self.rng.choice([f"(stack {body} {ax})", f"(stack (tuple {body}) {ax})",
                               f"(stack (getitem (tuple (tuple {body}) 0.0) 0) {ax})"])
        return Node(shape, fmt, parts, in_f)

    def g_tuple(self, env, shape, d, in_f):
        other = self.rng.choice(SHAPES)
        a, b = self.expr(env, shape, d, in_f), self.expr(env, other, d, in_f)
        if self.rng.random() < 0.5:
            return Node(shape, "(getitem (tuple {1} {0}) 1)", [a, b], in_f)
        t = self.fresh("t")
        return Node(shape, f"(let {t} (tuple {{0}} {{1}}) (* (getitem {t} 0) (+ 1.0 (sum (getitem {t} 1)))))",
                    [a, Node(other, "(tanh {0})", [b], in_f)], in_f)

    def g_record(self, env, shape, d, in_f):
        a, b = self.expr(env, shape, d, in_f), self.expr(env, shape, d, in_f)
        r = self.fresh("r")
        return Node(shape, f"(let {r} (record (p {{0}}) (q {{1}})) (- (getattr {r} q) (* 0.5 (getattr {r} p))))",
                    [a, b], in_f)

    def g_if(self, env, shape, d, in_f):
        ps = self.rng.choice(SHAPES)
        pred = self.expr(env, ps, max(d - 1, 0), in_f)
        a, b = self.expr(env, shape, d, in_f), self.expr(env, shape, d, in_f)
        cmp = self.rng.choice([">", "<"])
        return Node(shape, f"(if ({cmp} (sum {{0}}) {round(self.rng.uniform(-0.5, 0.5), 2)}) {{1}} {{2}})",
                    [pred, a, b], in_f)

    def helper(self, shapes, out, depth):
        """A new helper def of parameters of `shapes` returning `out`."""
        name = self.fresh("h")
        params = [(self.fresh("q"), s) for s in shapes]
        body = self.expr(params, out, depth, in_f=False)
        self.helpers.append((name, params, body))
        return name

    def g_call(self, env, shape, d, in_f):
        reuse = [h for h in self.helpers if h[2] is not None and h[2].shape == shape
                 and all(s is not None for _, s in h[1])]
        if reuse and self.rng.random() < 0.4:
            name, params, _ = self.rng.choice(reuse)
            shapes = [s for _, s in params]
        else:
            shapes = [self.rng.choice(SHAPES + [shape]) for _ in range(self.rng.choice([1, 2]))]
            name = self.helper(shapes, shape, min(d, 2))
        args = [self.expr(env, s, d, in_f) for s in shapes]
        return Node(shape, f"({name} " + " ".join("{%d}" % i for i in range(len(args))) + ")",
                    args, in_f)

    def lam(self, env, shape, d, in_f):
        z = self.fresh("z")
        body = self.expr(env + [(z, shape)], shape, d, in_f)
        if z not in body.text():
            body = Node(shape, "(* {0} %s)" % z, [body], in_f)
        return z, body

    def g_closure(self, env, shape, d, in_f):
        c = self.fresh("c")
        z, body = self.lam(env, shape, d, in_f)
        a, b = self.expr(env, shape, d, in_f), self.expr(env, shape, d, in_f)
        if self.rng.random() < 0.5:  # stored in a tuple, taken out and called
            return Node(shape, f"(let {c} (tuple (lambda ({z}) {{0}}) 2.0) (+ ((getitem {c} 0) {{1}}) ((getitem {c} 0) {{2}})))",
                        [body, a, b], in_f)
        return Node(shape, f"(let {c} (lambda ({z}) {{0}}) (* ({c} {{1}}) {{2}}))", [body, a, b], in_f)

    def fixed_helper(self, name, text):
        if name not in self.fixed:
            self.fixed.add(name)
            self.helpers.append((name, text, None))

    def g_callfn(self, env, shape, d, in_f):
        """A call of a closure bound earlier (possibly in another `let` of f): directly,
        through `twice`, or chosen by an `if` between it and a new lambda."""
        c = self.rng.choice([v for v, s in env if s == ("fn", shape)])
        x = self.expr(env, shape, d, in_f)
        r = self.rng.random()
        if r < 0.4:
            return Node(shape, f"({c} {{0}})", [x], in_f)
        if r < 0.7:
            self.fixed_helper("twice", "(def twice (g v) (g (g v)))")
            return Node(shape, f"(twice {c} {{0}})", [x], in_f)
        z, body = self.lam(env, shape, max(d - 1, 0), in_f)
        pred = self.expr(env, (), max(d - 1, 0), in_f)
        return Node(shape, f"((if (> {{1}} 0.0) {c} (lambda ({z}) {{2}})) {{0}})", [x, pred, body], in_f)

    def g_twice(self, env, shape, d, in_f):
        self.fixed_helper("twice", "(def twice (g v) (g (g v)))")
        z, body = self.lam(env, shape, d, in_f)
        return Node(shape, f"(twice (lambda ({z}) (tanh {{0}})) {{1}})", [body, self.expr(env, shape, d, in_f)], in_f)

    def g_mk(self, env, shape, d, in_f):
        self.fixed_helper("mk", "(def mk (a b) (tuple (lambda (u) (* (sin u) a)) b))")
        a, b, x = self.expr(env, shape, d, in_f), self.expr(env, (), d, in_f), self.expr(env, shape, d, in_f)
        t = self.fresh("m")
        return Node(shape, f"(let {t} (mk {{0}} {{1}}) (+ ((getitem {t} 0) {{2}}) (getitem {t} 1)))",
                    [a, b, x], in_f)

    def g_while(self, env, shape, d, in_f):
        i, acc = self.fresh("i"), self.fresh("s")
        body = self.expr(env + [(acc, shape)], shape, d, in_f)
        if acc not in body.text():
            body = Node(shape, "(+ {0} %s)" % acc, [body], in_f)
        bound = "n" if in_f and self.rng.random() < 0.6 else str(self.rng.choice([1, 2, 3]))
        return Node(shape, f"(getitem (while (lambda ({i} {acc}) (< {i} {bound})) (lambda ({i} {acc}) (tuple (+ {i} 1) (tanh {{0}}))) (tuple 0 {{1}})) 1)",
                    [body, self.expr(env, shape, d, in_f)], in_f)

    def g_rec(self, env, shape, d, in_f):
        name = self.fresh("rec")
        x, k = self.fresh("q"), self.fresh("k")
        step = self.expr([(x, shape)], shape, min(d, 2), in_f=False)
        if x not in step.text():
            step = Node(shape, "(* {0} %s)" % x, [step], False)
        body = Node(shape, f"(if (<= {k} 0) {x} ({name} (tanh {{0}}) (- {k} 1)))", [step], False)
        self.helpers.append((name, [(x, shape), (k, None)], body))
        bound = "n" if in_f and self.rng.random() < 0.7 else str(self.rng.choice([0, 1, 2]))
        return Node(shape, f"({name} {{0}} {bound})", [self.expr(env, shape, d, in_f)], in_f)

    def g_grad(self, env, shape, d, in_f):
        """((grad h 0) ARG OTHER): h a helper of a `shape` and another parameter returning
        a scalar (its gradient has ARG's shape)."""
        other = self.rng.choice(SHAPES)
        name = self.fresh("gh")
        both = self.rng.random() < 0.3  # (grad gh 0 1): a tuple, item 0 taken
        a, b = self.fresh("q"), self.fresh("q")
        body = self.expr([(a, shape), (b, other)], (), min(d, 2), in_f=False)
        if a not in body.text():
            body = Node((), "(* {0} (sum (sin %s)))" % a, [body], False)
        self.helpers.append((name, [(a, shape), (b, other)], body))
        fmt = f"(getitem ((grad {name} 0 1) {{0}} {{1}}) 0)" if both else f"((grad {name} 0) {{0}} {{1}})"
        return Node(shape, fmt,
                    [self.expr(env, shape, d, in_f), self.expr(env, other, d, in_f)], in_f)

    def g_gradclo(self, env, shape, d, in_f):
        """The gradient of a closure over f's values: `((grad c 0) ARG)` of a lambda
        (or a nested def, or `(grad c 0 1)` of two parameters, item 0 taken) whose
        scalar body reads its parameter and captured values (constants of that
        gradient, differentiated by grad f: second order through the capture). The
        body calls no captured closure (unsupported: a located error)."""
        vals = [(v, s) for v, s in env if is_val(s)]
        c, q, r = self.fresh("c"), self.fresh("q"), self.fresh("q")
        other = self.rng.choice(SHAPES)
        two = self.rng.random() < 0.25
        scope = vals + [(q, shape)] + ([(r, other)] if two else [])
        body = self.expr(scope, (), min(d, 2), in_f)
        if q not in body.text():
            body = Node((), "(* {0} (sum (sin %s)))" % q, [body], in_f)
        kids = [body, self.expr(env, shape, d, in_f)]
        ps, call = q, f"((grad {c} 0) {{1}})"
        if two:
            kids.append(self.expr(env, other, d, in_f))
            ps, call = f"{q} {r}", f"(getitem ((grad {c} 0 1) {{1}} {{2}}) 0)"
        if self.rng.random() < 0.3:
            return Node(shape, f"(begin (def {c} ({ps}) {{0}}) {call})", kids, in_f)
        return Node(shape, f"(let {c} (lambda ({ps}) {{0}}) {call})", kids, in_f)


def generate(seed, size=5, depth=3):
    """Program number `seed`: 1-4 float parameters of random shapes, `size` let
    bindings at most, expression depth 2..`depth`."""
    g = Gen(seed, size)
    rng = g.rng
    params = [(f"x{i}", rng.choice(SHAPES)) for i in range(rng.randint(1, 4))]
    env = list(params)
    lets = []
    for _ in range(rng.randint(1, size)):
        s = rng.choice(SHAPES + [p[1] for p in params])
        if rng.random() < 0.25:  # a closure over what is in scope, called in later bindings
            name = g.fresh("c")
            z, body = g.lam(env, s, rng.randint(1, depth - 1), True)
            lets.append((name, Node(("fn", s), f"(lambda ({z}) {{0}})", [body])))
            env.append((name, ("fn", s)))
            continue
        name = g.fresh("v")
        node = g.expr(env, s, rng.randint(2, depth))
        lets.append((name, node))
        env.append((name, s))
    # the result: a scalar mixing a few values (later ones more often)
    vals = [(v, s) for v, s in env if is_val(s)]
    picks = [v for v, _ in vals[-3:]] + [rng.choice(vals)[0]]
    fmt = "(sum (sin {0}))"
    for i in range(1, len(picks)):
        fmt = "(+ %s (sum (sin {%d})))" % (fmt, i)
    res = Node((), fmt, [leaf(p, dict(env)[p]) for p in picks])
    return Program(seed, g.helpers, params, lets, res, g.n)
