# SPDX-License-Identifier: Apache-2.0
"""_stagegen.py — seeded random generator of Python functions for differential testing of
the whole staged path (stagd.function: Convert, staging on Staged values, Execute).
tests/integration/_stagefuzz.py drives it; docs/runtime.md "Random differential testing".

`generate(seed)` returns a `Program`: the module text (optional helper functions, then
`def f(x, y, m, k, a, n, flag)`) and a few argument tuples. The parameters are a vector
`x` and `y` (shape (4,), float32 or float64 for the whole program), a matrix `m` (4, 4)
of that dtype, an int64 vector `k`, a Python float `a`, a Python int `n` (both dynamic:
staged scalars) and a Python bool `flag` (static: its branches are unrolled).

Expressions are typed (vec: shape (4,) of the program's dtype, scal: float scalar, int:
integer scalar) so every program is well-typed on every path, and values stay bounded
(tanh, small factors, no division by data that can be zero). Statements: assignments and
augmented assignments, `if`/`elif`/`else` on data-dependent predicates (staged) and on
`flag` or constants (unrolled), `while` loops with a data-dependent condition bounded by a
counter, `for` over `range` with a constant, a staged bound (`n`, `len(x)`), over the rows
of `m` or the items of `x`, `break`/`continue`, early `return` in branches and loops (every
return has the same kinds), lists appended in loops (`stagd.set_element_type`), helper
functions (converted on the fly), closures and tuple results. The functions use the
`stagd.` names the staged values support; the reference runs them with `stagd` bound to
`NUMPY_STAGD` (the same names on NumPy).
"""
import random

import numpy as np

VEC_UNARY = ("tanh", "sin", "cos", "sigmoid", "relu")
L = 4  # vector length


class _NumpyStagd:
    """The `stagd.` names generated programs use, on NumPy (the reference semantics)."""
    tanh = staticmethod(np.tanh)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    exp = staticmethod(np.exp)
    sqrt = staticmethod(np.sqrt)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    where = staticmethod(np.where)
    matmul = staticmethod(np.matmul)
    transpose = staticmethod(np.transpose)

    @staticmethod
    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    @staticmethod
    def relu(v):
        return np.maximum(v, 0)

    @staticmethod
    def reshape(v, shape):
        return np.reshape(v, shape)

    @staticmethod
    def cast(v, dtype):
        return np.asarray(v).astype(dtype)

    @staticmethod
    def reduce_sum(v, axis=None):
        return np.sum(v, axis=axis)

    @staticmethod
    def reduce_mean(v, axis=None):
        return np.mean(v, axis=axis)

    @staticmethod
    def softmax(v, axis=-1):
        e = np.exp(v - np.max(v, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    @staticmethod
    def set_element_type(lst, dtype, shape=()):
        pass

    @staticmethod
    def stack(values, axis=0):
        return np.stack(values, axis=axis)


NUMPY_STAGD = _NumpyStagd()

class Program:
    def __init__(self, seed, text, dtype, cases, returns):
        self.seed, self.text, self.dtype, self.cases, self.returns = seed, text, dtype, cases, returns


class Gen:
    def __init__(self, seed, state=False):
        self.state = state  # statements and containers (issue 21): see _state_stmt
        self.r = random.Random(seed)
        self.dtype = self.r.choice(("float32", "float64"))
        self.counter = 0
        self.helpers = []     # (name, text) of module-level helpers
        self.lines = []
        self.budget = self.r.randint(4, 12)
        self.frozen = set()   # loop counters: never assigned by random statements

    def chance(self, p):
        return self.r.random() < p

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self):
        return self.r.choice(("0.5", "1.5", "-0.25", "2.0", "0.1", "-1.0", "3.0"))

    # -- expressions ---------------------------------------------------------------
    def vec(self, env, d=0):
        r = self.r
        leaves = ["x", "y"] + [v for v, k in env.items() if k == "vec"] + \
            [f'{v}["b"][1]' for v, k in env.items() if k == "dict"] + \
            [f"{v}.v" for v, k in env.items() if k == "pair"]
        if d >= 2 or self.chance(0.3):
            return r.choice(leaves)
        c = r.randrange(18)
        if c == 0:
            return f"({self.vec(env, d + 1)} + {self.vec(env, d + 1)})"
        if c == 1:
            return f"({self.vec(env, d + 1)} * {self.scal(env, d + 1)})"
        if c == 2:
            return f"stagd.{r.choice(VEC_UNARY)}({self.vec(env, d + 1)})"
        if c == 3:
            return f"({self.vec(env, d + 1)} - {self.const()})"
        if c == 4:
            return f"(m @ {self.vec(env, d + 1)})"
        if c == 5:
            return f"stagd.maximum({self.vec(env, d + 1)}, {self.vec(env, d + 1)})"
        if c == 6:
            return (f"stagd.where({self.vec(env, d + 1)} > {self.scal(env, d + 1)}, "
                    f"{self.vec(env, d + 1)}, {self.vec(env, d + 1)})")
        if c == 7:
            return f"(-{self.vec(env, d + 1)})"
        if c == 8:
            return f"(stagd.transpose(m) @ {self.vec(env, d + 1)})"
        if c == 9:
            return f"stagd.reshape(stagd.reshape({self.vec(env, d + 1)}, (2, 2)), ({L},))"
        if c == 10:
            return f"({self.vec(env, d + 1)} / (abs({self.vec(env, d + 1)}) + 1.0))"
        if c == 11:
            return f"stagd.softmax({self.vec(env, d + 1)})"
        if c == 12:
            return f"({self.vec(env, d + 1)} * stagd.cast(k, '{self.dtype}'))"
        if c == 13:
            return f"m[{self.index(env, d + 1)}]"
        if c == 15:  # scalars next to the vector keep its dtype (NumPy's value-based casting)
            return f"stagd.{r.choice(('maximum', 'minimum'))}({self.vec(env, d + 1)}, {self.scal(env, d + 1)})"
        if c == 16:
            return f"({self.vec(env, d + 1)} {r.choice(('+', '*', '-'))} {self.int(env, d + 1)})"
        if c == 17:
            return (f"stagd.where({self.vec(env, d + 1)} < {self.scal(env, d + 1)}, "
                    f"{self.scal(env, d + 1)}, {self.vec(env, d + 1)})")
        return f"stagd.reduce_sum(m, axis={r.choice((0, 1))})"  # c == 14

    def scal(self, env, d=0):
        r = self.r
        leaves = ["a", self.const()] + [v for v, k in env.items() if k == "scal"] + \
            [f'{v}["a"]' for v, k in env.items() if k == "dict"] + \
            [f"{v}.s" for v, k in env.items() if k == "pair"] + \
            [f"{v}[{i}]" for v, k in env.items() if k == "lst" for i in (0, 1)]
        if d >= 2 or self.chance(0.3):
            return r.choice(leaves)
        c = r.randrange(14)
        if c == 0:
            return f"stagd.reduce_sum({self.vec(env, d + 1)})"
        if c == 1:
            return f"stagd.reduce_mean({self.vec(env, d + 1)})"
        if c == 2:
            return f"sum({self.vec(env, d + 1)})"
        if c == 3:
            return f"{r.choice(('max', 'min'))}({self.vec(env, d + 1)})"
        if c == 4:
            return f"{self.vec(env, d + 1)}[{self.index(env, d + 1)}]"
        if c == 5:
            return f"({self.scal(env, d + 1)} + {self.scal(env, d + 1)})"
        if c == 6:
            return f"({self.scal(env, d + 1)} * {self.scal(env, d + 1)})"
        if c == 7:
            return f"({self.vec(env, d + 1)} @ {self.vec(env, d + 1)})"
        if c == 8:
            return f"float({self.int(env, d + 1)})"
        if c == 9:
            return f"({self.scal(env, d + 1)} {r.choice(('//', '%'))} 1.5)"
        if c == 10:
            return f"abs({self.scal(env, d + 1)})"
        if c == 11:
            return f"max({self.scal(env, d + 1)}, {self.scal(env, d + 1)})"
        if c == 12:
            return f"({self.scal(env, d + 1)} if {self.pred(env, d + 1)} else {self.scal(env, d + 1)})"
        return f"stagd.tanh({self.scal(env, d + 1)})"

    def int(self, env, d=0):
        r = self.r
        leaves = ["n", str(r.randint(-2, 5))] + [v for v, k in env.items() if k == "int"]
        if d >= 2 or self.chance(0.4):
            return r.choice(leaves)
        c = r.randrange(7)
        if c == 0:
            return f"({self.int(env, d + 1)} + {self.int(env, d + 1)})"
        if c == 1:
            return f"({self.int(env, d + 1)} {r.choice(('//', '%'))} {r.choice((2, 3, -3))})"
        if c == 2:
            return "len(x)"
        if c == 3:
            return f"k[{self.index(env, d + 1)}]"
        if c == 4:
            return "sum(k)"
        if c == 5:
            return f"int({self.scal(env, d + 1)})"
        return f"({self.int(env, d + 1)} * {r.randint(-2, 3)})"

    def index(self, env, d):
        """An integer index in range for a length-4 axis (negative ones too)."""
        if self.chance(0.4):
            return str(self.r.randint(-L, L - 1))
        return f"{self.int(env, d + 1)} % {L}"

    def pred(self, env, d=0):
        r = self.r
        c = r.randrange(7 if self.state else 5)
        if c == 5:
            return f"-0.5 < {self.scal(env, d + 1)} <= {self.const()}"
        if c == 6:
            return f"n < {L} and x[n] > {self.const()}"  # x[n] only where n < 4 (lazy)
        if c == 0:
            return f"{self.scal(env, d + 1)} > {self.const()}"
        if c == 1:
            return f"{self.scal(env, d + 1)} < {self.scal(env, d + 1)}"
        if c == 2:
            return f"{self.int(env, d + 1)} % 2 == 0"
        if c == 3:
            return f"{self.scal(env, d + 1)} > 0.0 and {self.int(env, d + 1)} > 1"
        return f"not {self.scal(env, d + 1)} >= {self.const()}"

    def expr(self, kind, env):
        return {"vec": self.vec, "scal": self.scal, "int": self.int}[kind](env)

    # -- statements -----------------------------------------------------------------
    def emit(self, ind, text):
        self.lines.append("    " * ind + text)

    def ret_text(self, env):
        parts = [self.expr(kind, env) if kind != "cont" else
                 f'{{"r": {self.scal(env)}, "v": [{self.vec(env)}, {self.int(env)}]}}'
                 for kind in self.returns]
        return "return " + ", ".join(parts)

    def block(self, ind, env, loop, n):
        """Emits up to n statements at indentation ind; returns env after them."""
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            env = self.stmt(ind, env, loop)
        return env

    def assign(self, ind, env):
        kind = self.r.choice(("vec", "scal", "int", "vec", "scal"))
        names = [v for v, k in env.items() if k == kind and v not in self.frozen]
        name = self.r.choice(names) if names and self.chance(0.6) else self.fresh(
            {"vec": "v", "scal": "s", "int": "j"}[kind])
        # (no augmented assignment of vectors: `v += e` updates a NumPy array in place,
        # and every alias of it with it, which a staged program cannot reproduce)
        if name in env and kind != "vec" and self.chance(0.3):
            op = self.r.choice(("+=", "-=", "*=")) if kind != "int" else self.r.choice(("+=", "-="))
            rhs = self.expr(kind, env) if kind != "vec" or op != "*=" else self.scal(env)
            if op == "*=" and kind == "scal":
                rhs = "0.5"
            self.emit(ind, f"{name} {op} {rhs}")
        else:
            self.emit(ind, f"{name} = {self.expr(kind, env)}")
        return {**env, name: kind}

    def stmt(self, ind, env, loop):
        r = self.r
        if self.state and ind < 4 and self.chance(0.35):
            return self._state_stmt(ind, env, loop)
        c = r.randrange(12)
        if c <= 3:
            return self.assign(ind, env)
        if c == 4:
            return self.if_stmt(ind, env, loop)
        if c == 5 and ind < 3:
            return self.while_stmt(ind, env)
        if c == 6 and ind < 3:
            return self.for_stmt(ind, env)
        if c == 7 and loop:
            self.emit(ind, f"if {self.pred(env)}:")
            self.emit(ind + 1, r.choice(("break", "continue")))
            return env
        if c == 8 and self.chance(0.5):
            self.emit(ind, f"if {self.pred(env)}:")
            self.emit(ind + 1, self.ret_text(env))
            return env
        if c == 9 and ind < 3:
            return self.list_stmt(ind, env)
        if c == 10:
            return self.call_stmt(ind, env)
        if c == 11 and ind < 3:
            self.emit(ind, "if flag:" if self.chance(0.7) else "if len(x) > 2:")
            env1 = self.block(ind + 1, env, loop, 2)
            if len(self.lines[-1]) - len(self.lines[-1].lstrip()) <= 4 * ind:
                self.emit(ind + 1, "pass")
            return {k: v for k, v in env1.items() if k in env}
        return self.assign(ind, env)

    def if_stmt(self, ind, env, loop):
        self.emit(ind, f"if {self.pred(env)}:")
        arms = [self.arm(ind, env, loop)]
        while self.chance(0.3):
            self.emit(ind, f"elif {self.pred(env)}:")
            arms.append(self.arm(ind, env, loop))
        if self.chance(0.7):
            self.emit(ind, "else:")
            arms.append(self.arm(ind, env, loop))
            common = {k: v for k, v in arms[0].items() if all(a.get(k) == v for a in arms)}
            return common
        return env

    def arm(self, ind, env, loop):
        start = len(self.lines)
        env1 = self.block(ind + 1, env, loop, self.r.randint(1, 3))
        if len(self.lines) == start:
            self.emit(ind + 1, "pass")
        return env1

    def while_stmt(self, ind, env):
        c = self.fresh("c")
        s = self.fresh("w")
        self.frozen.add(c)
        self.emit(ind, f"{c} = 0")
        self.emit(ind, f"{s} = {self.scal(env)}")
        env = {**env, c: "int", s: "scal"}
        bound = self.r.randint(1, 6)
        self.emit(ind, f"while {s} < {self.r.choice(('2.0', '5.0', '0.5'))} and {c} < {bound}:")
        self.emit(ind + 1, f"{c} += 1")
        self.emit(ind + 1, f"{s} = {s} + abs({self.scal(env)}) + 0.25")
        self.block(ind + 1, env, True, self.r.randint(1, 3))
        return env

    def for_stmt(self, ind, env):
        r = self.r
        i = self.fresh("i")
        c = r.randrange(6)
        if c == 0:
            self.emit(ind, f"for {i} in range({r.randint(0, 4)}):")
            kind = "int"
        elif c == 1:
            self.emit(ind, f"for {i} in range(n):")
            kind = "int"
        elif c == 2:
            self.emit(ind, f"for {i} in range(len(x)):")
            kind = "int"
        elif c == 3:
            self.emit(ind, f"for {i} in m:")
            kind = "vec"
        elif c == 4:
            self.emit(ind, f"for {i} in x:")
            kind = "scal"
        else:
            self.emit(ind, f"for {i} in range(1, n, 2):")
            kind = "int"
        self.block(ind + 1, {**env, i: kind}, True, r.randint(1, 3))
        if len(self.lines[-1]) - len(self.lines[-1].lstrip()) <= 4 * ind:
            self.emit(ind + 1, "pass")
        return env

    def list_stmt(self, ind, env):
        r = self.r
        lst = self.fresh("out")
        item = r.choice(("scal", "vec"))
        shape = "" if item == "scal" else f", ({L},)"
        self.emit(ind, f"{lst} = []")
        self.emit(ind, f"stagd.set_element_type({lst}, '{self.dtype}'{shape})")
        i = self.fresh("i")
        self.emit(ind, f"for {i} in range({r.choice(('n', '3', 'len(x)'))}):")
        env1 = {**env, i: "int"}
        self.emit(ind + 1, f"{lst}.append({self.expr(item, env1)})")
        if item == "scal":
            name = self.fresh("s")
            count = f"float(len({lst}))" if self.dtype == "float64" else f"len({lst}) * 1.0"
            use = r.choice((count, f"{lst}[0] if len({lst}) > 0 else 0.0"))
            self.emit(ind, f"{name} = {use}")
            return {**env, name: "scal"}
        name = self.fresh("j")
        self.emit(ind, f"{name} = len({lst})")
        return {**env, name: "int"}

    def call_stmt(self, ind, env):
        r = self.r
        if self.chance(0.5) or not self.helpers:
            name = self.fresh("h")
            body = [f"def {name}(u, t):"]
            if self.chance(0.6):
                body += [f"    if t > {self.const()}:",
                         "        u = u * t",
                         "    else:",
                         "        u = stagd.tanh(u) - t"]
            body.append(f"    return u + {self.const()}")
            self.helpers.append((name, "\n".join(body)))
        else:
            name = r.choice(self.helpers)[0]
        if self.chance(0.3):
            g = self.fresh("g")
            s = self.scal(env)
            self.emit(ind, f"def {g}(u):")
            self.emit(ind + 1, f"return {name}(u, {s}) * 0.5")
            target = self.fresh("v")
            self.emit(ind, f"{target} = {g}({self.vec(env)})")
        else:
            target = self.fresh("v")
            self.emit(ind, f"{target} = {name}({self.vec(env)}, {self.scal(env)})")
        return {**env, target: "vec"}

    def _state_stmt(self, ind, env, loop):
        """Containers as state (dict, list, namedtuple; item and attribute updates),
        lists of tensors grown without set_element_type, variables bound on some paths,
        `raise` under a staged condition, `match` on a staged int."""
        r = self.r
        c = r.randrange(9)
        kinds = {k for k in env.values()}
        if c == 0 or (c <= 3 and not kinds & {"dict", "pair", "lst"}):
            kind = r.choice(("dict", "pair", "lst"))
            name = self.fresh({"dict": "st", "pair": "p", "lst": "l"}[kind])
            if kind == "dict":
                self.emit(ind, f'{name} = {{"a": {self.scal(env)}, "b": [{self.scal(env)}, {self.vec(env)}]}}')
            elif kind == "pair":
                self.emit(ind, f"{name} = P({self.scal(env)}, {self.vec(env)})")
            else:
                self.emit(ind, f"{name} = [{self.scal(env)}, {self.scal(env)}]")
            return {**env, name: kind}
        if c <= 3:  # update a container that is in scope
            name = r.choice([v for v, k in env.items() if k in ("dict", "pair", "lst")])
            kind = env[name]
            if kind == "dict":
                self.emit(ind, r.choice((f'{name}["a"] = {name}["a"] * 0.5 + {self.scal(env)}',
                                         f'{name}["b"][0] = {self.scal(env)}',
                                         f'{name}["b"][1] = {self.vec(env)}')))
            elif kind == "pair":
                self.emit(ind, f"{name} = P({name}.s * 0.5 + {self.scal(env)}, {self.vec(env)})")
            else:
                self.emit(ind, r.choice((f"{name}[0] = {self.scal(env)}",
                                         f"{name}[1] += {self.scal(env)}")))
            return env
        if c == 4:  # a list of tensors grown in a loop, used after it
            tl, i, s = self.fresh("tl"), self.fresh("i"), self.fresh("s")
            self.emit(ind, f"{tl} = []")
            self.emit(ind, f"for {i} in range({r.choice(('n', '2', 'len(x)'))}):")
            env1 = {**env, i: "int"}
            if self.chance(0.5):
                self.emit(ind + 1, f"if {self.pred(env1)}:")
                self.emit(ind + 2, f"{tl}.append({self.vec(env1)})")
            else:
                self.emit(ind + 1, f"{tl}.append({self.vec(env1)})")
            self.emit(ind, f"{s} = stagd.reduce_sum(stagd.stack({tl})) if len({tl}) > 0 else 0.0")
            return {**env, s: "scal"}
        if c == 5:  # bound on some paths: reading it may raise UnboundLocalError
            u, s = self.fresh("u"), self.fresh("s")
            self.emit(ind, f"if {self.pred(env)}:")
            self.emit(ind + 1, f"{u} = {self.scal(env)}")
            self.emit(ind, f"{s} = {u} * 2.0")
            return {**env, s: "scal"}
        if c == 6:
            self.emit(ind, f"if {self.pred(env)} and {self.pred(env)}:")
            self.emit(ind + 1, f"raise ValueError({self.fresh('bad')!r})")
            return env
        if c == 7 and ind < 3:
            self.emit(ind, "match n:")
            arms = []
            for pat in ("0", "1 | 3", "_"):
                self.emit(ind + 1, f"case {pat}:")
                arms.append(self.arm(ind + 1, env, loop))
            return {k: v for k, v in arms[0].items() if all(a.get(k) == v for a in arms)}
        s = self.fresh("s")  # a lazy `or` guarding an index
        self.emit(ind, f"{s} = {self.scal(env)} if n >= {L} or x[n] > 0.0 else {self.scal(env)}")
        return {**env, s: "scal"}

    def program(self):
        if self.state:
            self.returns = self.r.choice((("cont",), ("scal",), ("vec", "cont"), ("int", "scal")))
            env = self.block(1, {}, False, self.budget)
            self.lines.append("    " + self.ret_text(env))
            head = "P = collections.namedtuple('P', 's v')\n\n\ndef f(x, y, m, k, a, n, flag):"
            return ("import collections\n\n\n" + "\n\n\n".join(
                [h for _, h in self.helpers] + [head + "\n" + "\n".join(self.lines)]) + "\n")
        self.returns = self.r.choice((("vec",), ("scal",), ("vec", "scal"), ("int",), ("scal", "vec", "int")))
        env = self.block(1, {}, False, self.budget)
        self.lines.append("    " + self.ret_text(env))
        head = "def f(x, y, m, k, a, n, flag):"
        text = "\n\n\n".join([h for _, h in self.helpers] + [head + "\n" + "\n".join(self.lines)]) + "\n"
        return text


def args_for(seed, dtype, count=3):
    rs = np.random.RandomState(seed)
    cases = []
    for c in range(count):
        x = rs.uniform(-2, 2, L).astype(dtype)
        y = rs.uniform(-2, 2, L).astype(dtype)
        m = rs.uniform(-1, 1, (L, L)).astype(dtype)
        k = rs.randint(-3, 4, L).astype(np.int64)
        a = float(np.round(rs.uniform(-2, 3), 3))
        n = int(rs.randint(-1, 6))
        cases.append((x, y, m, k, a, n, bool(c % 2)))
    return cases


def generate(seed, state=False):
    """The program of a seed; state=True adds the statements of Gen._state_stmt."""
    g = Gen(seed, state)
    text = g.program()
    return Program(seed, text, g.dtype, args_for(seed, g.dtype), g.returns)


if __name__ == "__main__":
    import sys
    for s in map(int, sys.argv[1:] or ["0"]):
        print(f"# seed {s}\n{generate(s).text}")
