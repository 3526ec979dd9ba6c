# SPDX-License-Identifier: Apache-2.0
"""_genprog.py — seeded random generator of small Python programs for differential
testing of the converter (tests/convert/semantics/_convfuzz.py drives it).

`generate(seed)` returns the text of a self-contained corpus-style module: a few
helpers (a logging context manager, a side-effect function, a global counter), one
function `f(a, b, xs, flag)` built from random statements, and a `CASES` table with
several argument tuples. The statements are chosen to stress the converter's rewrites:
nested `if`/`elif`/`else`, `while`/`for` with `else`, `break`/`continue`/`return` at any
depth, `try`/`except`/`else`/`finally`, `with` over managers that log or suppress,
comprehensions, lambdas, nested defs with closures and `nonlocal`, walrus, chained
comparisons, `and`/`or` with side effects, augmented assignment, tuple unpacking, `del`,
`global` (in nested defs too), item assignment with computed keys (walrus and side
effects in the key, slices with computed bounds, nested subscripts `g[i][j] = v`), dict
stores / `pop` / `get`, list `pop`, `print`, the
rewritten builtins, f-strings and a string local, `match` statements, small recursive
nested defs, a class `K` whose method has a random body, managers whose `__exit__`
raises, `assert` messages that read locals, `nonlocal` names bound on one path only
(and `del`eted), and variables bound on only some paths (so `UnboundLocalError` /
`NameError` must appear exactly where Python raises them).

Every program is valid Python 3.11 and terminates: every `while` carries its own
counter incremented first in the body and bounded by a small constant, `for` loops run
over short ranges or lists the body never grows, recursion is bounded by its argument
(at most 4 deep) and `K.m` never calls itself, and no arithmetic
can grow without bound quickly (no `**`, small multipliers). Runtime errors
(`ZeroDivisionError`, `IndexError`, `TypeError`, unbound names, raised exceptions) are
expected and compared like any other behaviour.
"""
import random

PRELUDE = '''\
G = 0
LOG = []


class CM:
    def __init__(self, name, suppress=False):
        self.name = name
        self.suppress = suppress

    def __enter__(self):
        LOG.append(('enter', self.name))
        return len(LOG)

    def __exit__(self, et, ev, tb):
        LOG.append(('exit', self.name, et.__name__ if et else None))
        if self.suppress == 'raise':
            raise KeyError(self.name)
        return self.suppress


def side(v):
    LOG.append(v)
    return v
'''

LOCALS = ("x", "y", "z", "acc", "n", "t")
INTS = ("a", "b")
EXC_TYPES = ("ValueError", "ZeroDivisionError", "IndexError", "TypeError", "KeyError")


class Gen:
    """One program's generator state: the random source and the scope bookkeeping."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines = []
        self.counter = 0          # fresh names (loop counters, nested functions)
        self.budget = 0           # statements left to emit
        self.has_class = False    # class K (method m) emitted before f
        self.method_calls = 0     # calls of K.m emitted in f

    # -- helpers ---------------------------------------------------------------
    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    # -- expressions -----------------------------------------------------------
    def name(self, ctx):
        """A name to read: usually one that is surely bound here, sometimes any local
        (which may be unbound on this path)."""
        readable = sorted(ctx["defined"] - {"xs", "out", "d", "s", "g"})
        if readable and self.chance(0.93):
            return self.pick(readable)
        return self.pick(INTS + LOCALS)

    def atom(self, ctx):
        k = self.r.randrange(10)
        if k < 4:
            return self.name(ctx)
        if k < 7:
            return str(self.r.randint(-2, 5))
        if k == 7:
            return self.pick(("len(xs)", "G", "sum(xs)", "int(flag)"))
        if k == 8 and ctx.get("comp"):
            return ctx["comp"]
        if k == 8 and ctx.get("method") and self.chance(0.6):
            return "self.v"
        if k == 8 and "s" in ctx["defined"] and self.chance(0.5):
            return "len(s)"
        return self.pick(("abs(a)", "min(a, b)", "max(b, 1)", "len(LOG)"))

    def expr(self, ctx, d=0):
        """An int-ish expression (it may raise: division by zero, bad index, ...)."""
        if d >= 2 or self.chance(0.35):
            return self.atom(ctx)
        k = self.r.randrange(19 if not ctx.get("nostr") else 17)
        e1, e2 = self.expr(ctx, d + 1), self.expr(ctx, d + 1)
        if k < 5:
            return f"({e1} {self.pick(('+', '-', '+', '*'))} {e2})"
        if k == 5:
            return f"({e1} {self.pick(('//', '%'))} {e2})"
        if k == 6:
            return f"({e1} if {self.cond(ctx, d + 1)} else {e2})"
        if k == 7:
            return f"xs[{e1}]"
        if k == 8:
            return f"side({e1})"
        if k == 9:
            return f"({e1} {self.pick(('and', 'or'))} side({e2}))"
        if k == 10:
            v = self.pick(LOCALS)
            return f"({v} := {e1})"
        if k == 11:
            return f"{self.pick(('min', 'max'))}({e1}, {e2})"
        if k == 12:
            return f"sum([{e1} for q in {self.iterable(ctx)} if q {self.pick(('>', '!=', '<='))} {e2}])"
        if k == 13:
            return f"len([q for q in range({self.small()}) if {self.cond(dict(ctx, comp='q'), d + 1)}])"
        if k == 14:
            return f"(lambda u: u {self.pick(('+', '-', '*'))} {e2})({e1})"
        if k == 15:
            return f"int({self.pick(('float', 'bool', 'abs'))}({e1}))"
        if k == 17:
            return f"len({self.fstring(ctx)})"
        if k == 18:
            return f"int(str({e1}) + {self.pick((repr('0'), repr('1'), repr('')))})"
        return f"(1 if isinstance({e1}, {self.pick(('int', 'bool', 'float'))}) else 0)"

    def fstring(self, ctx):
        """An f-string of int expressions (no strings inside: 3.11 cannot nest quotes)."""
        c = dict(ctx, nostr=True)
        parts = [f"{{{self.expr(c, 1)}{self.pick(('', '!r', ':>3', ':+d', ':03'))}}}" for _ in range(self.r.randint(1, 2))]
        return 'f"' + self.pick(("", "v=", "<")) + "|".join(parts) + '"'

    def small(self):
        return str(self.r.randint(0, 4))

    def cond(self, ctx, d=0):
        k = self.r.randrange(9)
        e1, e2 = self.expr(ctx, d + 1), self.expr(ctx, d + 1)
        op = self.pick(("<", "<=", ">", ">=", "==", "!="))
        if k < 3:
            return f"{e1} {op} {e2}"
        if k == 3:
            return f"{e1} {op} {e2} {self.pick(('<', '<=', '!='))} {self.expr(ctx, d + 1)}"
        if k == 4:
            return f"({self.cond(ctx, d + 2) if d < 2 else 'flag'}) {self.pick(('and', 'or'))} side({e2} {op} {e1})"
        if k == 5:
            return f"not {e1}"
        if k == 6:
            return self.pick(("flag", "not flag", "xs", "bool(xs)"))
        if k == 7:
            return f"side({e1}) {op} {e2}"
        return f"{e1}"

    def iterable(self, ctx):
        return self.pick((f"range({self.small()})", "xs", f"range(min({self.expr(ctx, 2)}, 4))",
                          "xs[:2]", f"[{self.expr(ctx, 2)}, {self.expr(ctx, 2)}]"))

    # -- statements ------------------------------------------------------------
    def emit(self, ind, text):
        self.lines.append("    " * ind + text)

    def block(self, ind, ctx, n=None):
        """Emits a non-empty block at indentation `ind`; returns nothing. `ctx` holds
        'loop' (inside a loop of this function), 'depth', 'defined' (names surely
        bound), 'fn' (nested function or None)."""
        n = n or self.r.randint(1, 3)
        start = len(self.lines)
        for _ in range(n):
            if self.budget <= 0:
                break
            self.stmt(ind, ctx)
        if len(self.lines) == start:
            self.emit(ind, "pass")

    def assign_target(self, ctx):
        v = self.pick(LOCALS)
        ctx["ever"].add(v)
        return v

    def stmt(self, ind, ctx):
        self.budget -= 1
        deep = ctx["depth"] >= 3
        choices = ["assign"] * 6 + ["aug"] * 3 + ["print"] * 2 + ["unpack", "xsstore", "append", "dict", "pop", "str"]
        if not deep:
            choices += ["if"] * 3 + ["while", "for"] * 2 + ["try"] * 2 + ["with", "nested", "match", "recur"]
        if self.has_class and not ctx.get("method"):
            choices += ["method"] * 2
        if ctx["loop"]:
            choices += ["break", "continue"] * 2
        choices += ["return", "raise", "del", "global"]
        kind = self.pick(choices)
        getattr(self, "s_" + kind)(ind, ctx)

    def sub(self, ctx, **kw):
        c = dict(ctx)
        c["depth"] = ctx["depth"] + 1
        c["defined"] = set(ctx["defined"])
        c.update(kw)
        return c

    def s_assign(self, ind, ctx):
        v = self.assign_target(ctx)
        self.emit(ind, f"{v} = {self.expr(ctx)}")
        ctx["defined"].add(v)

    def s_aug(self, ind, ctx):
        if self.chance(0.25):
            self.emit(ind, f"xs[{self.expr(ctx, 2)}] {self.pick(('+=', '-='))} {self.expr(ctx)}")
            return
        v = self.assign_target(ctx)
        self.emit(ind, f"{v} {self.pick(('+=', '-=', '*=', '+=', '//='))} {self.expr(ctx)}")
        ctx["defined"].add(v)

    def s_print(self, ind, ctx):
        k = self.r.randrange(4)
        if k == 3:
            self.emit(ind, f"print({self.fstring(ctx)})")
        elif k == 0:
            self.emit(ind, f"print({self.expr(ctx)}, {self.expr(ctx)})")
        elif k == 1:
            self.emit(ind, f"print('at{len(self.lines)}', {self.name(ctx)}, sep='-')")
        else:
            self.emit(ind, f"print([{self.expr(dict(ctx, comp='q'))} for q in {self.iterable(ctx)}])")

    def s_unpack(self, ind, ctx):
        v, w = self.assign_target(ctx), self.assign_target(ctx)
        if v == w:
            self.emit(ind, f"{v} = {self.expr(ctx)}")
        elif self.chance(0.5):
            self.emit(ind, f"{v}, {w} = {self.expr(ctx)}, {self.expr(ctx)}")
        else:
            self.emit(ind, f"{v}, *{w} = {self.pick(('xs', '[a, b, a]', 'range(3)'))}")
        ctx["defined"] |= {v, w}

    def s_str(self, ind, ctx):
        """The string local `s`: f-strings, concatenation, slicing, methods."""
        if "s" not in ctx["defined"] or self.chance(0.3):
            self.emit(ind, f"s = {self.fstring(ctx)}")
            ctx["defined"].add("s")
            return
        k = self.r.randrange(4)
        if k == 0:
            self.emit(ind, f"s += str({self.expr(ctx)})")
        elif k == 1:
            self.emit(ind, "s = s" + self.pick(("[::-1]", "[1:]", "[:3]", ".upper()", ".strip('-')")))
        elif k == 2:
            self.emit(ind, f"print(s, s.count('1'), {self.pick(('s.find', 's.startswith'))}('-'))")
        else:
            v = self.assign_target(ctx)
            self.emit(ind, f"{v} = int(s) if s.isdigit() else len(s)")
            ctx["defined"].add(v)

    def s_match(self, ind, ctx):
        m = self.fresh("m")
        branches = []
        if self.chance(0.35):
            self.emit(ind, f"match {self.pick(('xs', 'xs[:2]', '[a, b]'))}:")
            pats = [("[]", set()), (f"[{m}]", {m}), (f"[{m}, *{m}r]", {m, m + 'r'}),
                    (f"[{m}, 0 | 1, *_]", {m})]
        else:
            self.emit(ind, f"match {self.expr(ctx)}:")
            pats = [(f"{self.r.randint(-1, 2)} | {self.r.randint(3, 5)}", set()), (f"int({m}) if {m} > {self.small()}", {m}),
                    (f"{self.r.randint(-2, 4)}", set()), (f"{m} if {m} < 0", {m}), ("True", set())]
        for pat, names in self.r.sample(pats, self.r.randint(1, 3)):
            self.emit(ind + 1, f"case {pat}:")
            c = self.sub(ctx)
            c["defined"] |= names
            self.block(ind + 2, c)
            branches.append(c)
        if self.chance(0.6):
            self.emit(ind + 1, f"case {self.pick(('_', m + 'x'))}:")
            c = self.sub(ctx)
            self.block(ind + 2, c)
            branches.append(c)
            ctx["defined"] |= set.intersection(*(b["defined"] for b in branches))

    def s_recur(self, ind, ctx):
        """A small recursive nested function (depth at most 4), reading a closure name."""
        r = self.fresh("r")
        self.emit(ind, f"def {r}(k):")
        self.emit(ind + 1, "if k <= 0:")
        self.emit(ind + 2, f"return {self.name(ctx)}")
        self.emit(ind + 1, f"if k {self.pick(('==', '>'))} {self.r.randint(1, 3)}:")
        self.emit(ind + 2, f"return {r}(k - 1) {self.pick(('+', '-', '*'))} k")
        self.emit(ind + 1, f"return {r}(k - {self.pick(('1', '2'))}) + side(k)")
        v = self.assign_target(ctx)
        self.emit(ind, f"{v} = {r}(min(abs({self.expr(ctx)}), 4))")
        ctx["defined"].add(v)

    def s_method(self, ind, ctx):
        v = self.assign_target(ctx)
        obj = self.fresh("o")
        self.emit(ind, f"{obj} = K({self.expr(ctx)})")
        self.emit(ind, f"{v} = {obj}.m(a, b, xs, flag) + {obj}.v")
        self.method_calls += 1
        ctx["defined"].add(v)

    def s_xsstore(self, ind, ctx):
        """Item assignment: simple and computed keys (Python evaluates the value, then
        the target, then the key), slices with computed bounds (never growing xs), and
        nested subscripts (the outer item is loaded, the inner one stored)."""
        k = self.r.randrange(7)
        if k < 2:
            self.emit(ind, f"xs[{self.pick(('0', '-1', 'a', '1'))}] = {self.expr(ctx)}")
        elif k < 4:
            self.emit(ind, f"xs[{self.expr(ctx, 1)}] {self.pick(('=', '=', '+=', '*='))} {self.expr(ctx)}")
        elif k == 4:
            step = f":{self.expr(ctx, 2)}" if self.chance(0.3) else ""
            self.emit(ind, f"xs[{self.expr(ctx, 2)}:{self.expr(ctx, 2)}{step}] = []")
        else:
            if "g" not in ctx["defined"]:
                self.emit(ind, f"g = [[{self.expr(ctx, 2)}, 0], [1, {self.expr(ctx, 2)}]]")
                ctx["defined"].add("g")
            self.emit(ind, f"g[{self.expr(ctx, 2)}][{self.expr(ctx, 2)}] {self.pick(('=', '+='))} {self.expr(ctx)}")

    def s_append(self, ind, ctx):
        if "out" in ctx["defined"]:
            self.emit(ind, f"out.append({self.expr(ctx)})")
        else:
            self.emit(ind, f"out = [{self.expr(ctx)}]")
            ctx["defined"].add("out")

    def s_dict(self, ind, ctx):
        if "d" not in ctx["defined"]:
            self.emit(ind, "d = {}")
            ctx["defined"].add("d")
        k = self.r.randrange(3)
        if k == 0:
            self.emit(ind, f"d[{self.expr(ctx, 1)} % 3] = {self.expr(ctx)}")
        elif k == 1:
            v = self.assign_target(ctx)
            self.emit(ind, f"{v} = d.pop({self.expr(ctx, 1)} % 3)")
            ctx["defined"].add(v)
        else:
            v = self.assign_target(ctx)
            self.emit(ind, f"{v} = d.get({self.expr(ctx, 1)} % 3, len(d))")
            ctx["defined"].add(v)

    def s_pop(self, ind, ctx):
        lst = "out" if "out" in ctx["defined"] and self.chance(0.7) else "xs"
        v = self.assign_target(ctx)
        self.emit(ind, f"{v} = {lst}.pop({'' if self.chance(0.5) else self.pick(('0', '-1', 'a'))})")
        ctx["defined"].add(v)

    def s_if(self, ind, ctx):
        self.emit(ind, f"if {self.cond(ctx)}:")
        branches = [self.sub(ctx)]
        self.block(ind + 1, branches[-1])
        for _ in range(self.r.randint(0, 2)):
            self.emit(ind, f"elif {self.cond(ctx)}:")
            branches.append(self.sub(ctx))
            self.block(ind + 1, branches[-1])
        if self.chance(0.6):
            self.emit(ind, "else:")
            branches.append(self.sub(ctx))
            self.block(ind + 1, branches[-1])
            ctx["defined"] |= set.intersection(*(b["defined"] for b in branches))

    def loop_else(self, ind, ctx):
        if self.chance(0.35):
            self.emit(ind, "else:")
            self.block(ind + 1, self.sub(ctx))

    def s_while(self, ind, ctx):
        w = self.fresh("w")
        self.emit(ind, f"{w} = 0")
        self.emit(ind, f"while {w} < {self.r.randint(1, 4)} and ({self.cond(ctx) if self.chance(0.6) else 'True'}):")
        self.emit(ind + 1, f"{w} += 1")
        self.block(ind + 1, self.sub(ctx, loop=True))
        self.loop_else(ind, ctx)

    def s_for(self, ind, ctx):
        k = self.r.randrange(4)
        c = self.sub(ctx, loop=True)
        if k == 0:
            i, v = self.fresh("i"), self.fresh("v")
            self.emit(ind, f"for {i}, {v} in enumerate({self.pick(('xs', 'xs[1:]', '[a, b]'))}):")
            c["defined"] |= {i, v}
        elif k == 1:
            i, v = self.fresh("i"), self.fresh("v")
            self.emit(ind, f"for {i}, {v} in zip(range({self.small()}), {self.pick(('xs', '[b, a, b]'))}):")
            c["defined"] |= {i, v}
        else:
            v = self.pick(LOCALS) if self.chance(0.3) else self.fresh("i")
            self.emit(ind, f"for {v} in {self.iterable(ctx)}:")
            c["defined"].add(v)
        self.block(ind + 1, c)
        self.loop_else(ind, ctx)

    def s_try(self, ind, ctx):
        self.emit(ind, "try:")
        self.block(ind + 1, self.sub(ctx))
        nh = self.r.randint(0, 2)
        if nh == 0 and self.chance(0.3):
            nh = 1
        for h in range(nh):
            k = self.r.randrange(4)
            e = self.fresh("e")
            if k == 0:
                self.emit(ind, f"except ({self.pick(EXC_TYPES)}, {self.pick(EXC_TYPES)}) as {e}:")
            elif k == 1:
                self.emit(ind, f"except {self.pick(EXC_TYPES)}:")
            elif k == 2:
                self.emit(ind, f"except Exception as {e}:")
            else:
                self.emit(ind, f"except {'Exception' if h < nh - 1 else self.pick(('Exception', 'ArithmeticError', 'LookupError'))}:")
            c = self.sub(ctx)
            if k in (0, 2) and self.chance(0.5):
                self.emit(ind + 1, f"print(type({e}).__name__, {e})")
            self.block(ind + 1, c)
        if nh and self.chance(0.3):
            self.emit(ind, "else:")
            self.block(ind + 1, self.sub(ctx))
        if nh == 0 or self.chance(0.4):
            self.emit(ind, "finally:")
            # jumps in finally are documented as unsupported (function left alone):
            # keep them rare so most programs are converted
            self.block(ind + 1, self.sub(ctx, loop=ctx["loop"] and self.chance(0.1),
                                         nojump=not self.chance(0.1)))

    def s_with(self, ind, ctx):
        nm = self.fresh("cm")
        sup = self.pick(("True", "False", "flag", "'raise'"))
        if self.chance(0.5):
            v = self.assign_target(ctx)
            self.emit(ind, f"with CM('{nm}', {sup}) as {v}:")
            c = self.sub(ctx)
            c["defined"].add(v)
        else:
            self.emit(ind, f"with CM('{nm}', {sup}), CM('{nm}b'):")
            c = self.sub(ctx)
        self.block(ind + 1, c)

    def s_nested(self, ind, ctx):
        if self.chance(0.3):
            v = self.assign_target(ctx)
            g = self.fresh("g")
            self.emit(ind, f"{g} = lambda u, k={self.expr(ctx, 2)}: u * k + {self.name(ctx)}")
            self.emit(ind, f"{v} = {g}({self.expr(ctx)})")
            ctx["defined"].add(v)
            return
        g = self.fresh("g")
        fresh = sorted(set(LOCALS) - ctx["top_ever"])
        one_path = None
        if ctx["fn"] is None and fresh and self.chance(0.15):
            # a local bound on one path only, then a nonlocal of the nested def
            v = one_path = self.pick(fresh)
            self.emit(ind, f"if {self.cond(ctx)}:")
            self.emit(ind + 1, f"{v} = {self.expr(ctx)}")
            ctx["top_ever"].add(v)
            ctx["ever"].add(v)
        self.emit(ind, f"def {g}(p):")
        bound = sorted(n for n in ctx["top_defined"] if n in LOCALS)
        # bound in f somewhere, but not surely here (an Undefined-bound local after conversion)
        maybe = sorted(n for n in ctx["top_ever"] - ctx["top_defined"] if n in LOCALS)
        nl = (one_path if one_path else
              self.pick(bound) if bound and self.chance(0.5) else
              self.pick(maybe) if maybe and self.chance(0.4) else None)
        inner = {"loop": False, "depth": ctx["depth"] + 1, "fn": g,
                 "defined": {"p", "a", "b", "xs", "flag"} | ({nl} if nl else set()),
                 "top_defined": set(), "top_ever": set(), "ever": set(),
                 "nojump": False, "gdecl": self.chance(0.25), "method": ctx.get("method")}
        if inner["gdecl"]:
            self.emit(ind + 1, "global G")
            self.emit(ind + 1, f"G {self.pick(('+=', '='))} p")
        if nl:
            self.emit(ind + 1, f"nonlocal {nl}")
            if self.chance(0.5 if one_path else 0.3):
                self.emit(ind + 1, f"del {nl}")
                inner["defined"].discard(nl)
            else:
                self.emit(ind + 1, f"{nl} {self.pick(('+=', '-='))} p")
        saved = self.budget
        self.budget = min(self.budget, 3)
        self.block(ind + 1, inner)
        self.budget = saved - 2
        self.emit(ind + 1, f"return p + {self.name(dict(ctx, defined=inner['defined']))}")
        v = self.assign_target(ctx)
        self.emit(ind, f"{v} = {g}({self.expr(ctx)})")
        ctx["defined"].add(v)

    def s_break(self, ind, ctx):
        if ctx["loop"] and not ctx.get("nojump"):
            self.emit(ind, "break")
        else:
            self.s_assign(ind, ctx)

    def s_continue(self, ind, ctx):
        if ctx["loop"] and not ctx.get("nojump"):
            self.emit(ind, "continue")
        else:
            self.s_assign(ind, ctx)

    def s_return(self, ind, ctx):
        if ctx.get("nojump") or ctx["depth"] == 0 and self.chance(0.7):
            self.s_print(ind, ctx)
            return
        self.emit(ind, f"return {self.expr(ctx)}")

    def s_raise(self, ind, ctx):
        if self.chance(0.5):
            self.emit(ind, f"raise {self.pick(EXC_TYPES)}({self.expr(ctx)})")
        else:
            msg = self.pick((f"'assert{len(self.lines)}'", self.name(ctx), f"({self.name(ctx)}, 'a{len(self.lines)}')",
                             self.fstring(ctx)))
            self.emit(ind, f"assert {self.cond(ctx)}, {msg}")

    def s_del(self, ind, ctx):
        if ctx["fn"]:
            self.s_assign(ind, ctx)
            return
        v = self.assign_target(ctx)
        self.emit(ind, f"del {v}")
        ctx["defined"].discard(v)

    def s_global(self, ind, ctx):
        if ctx["fn"] and not ctx.get("gdecl"):
            self.s_print(ind, ctx)
            return
        self.emit(ind, f"G {self.pick(('+=', '='))} {self.expr(ctx)}")

    # -- the program -----------------------------------------------------------
    def body(self, ind, budget, method=False):
        """The statements of f, or of the method K.m (same parameters), at `ind`."""
        self.emit(ind, "global G")
        top = {"loop": False, "depth": 0, "fn": None, "method": method,
               "defined": {"a", "b", "xs", "flag"}, "nojump": False, "ever": set()}
        top["top_defined"], top["top_ever"] = top["defined"], top["ever"]
        for v in LOCALS:
            if self.chance(0.3):
                self.emit(ind, f"{v} = {self.r.randint(0, 3)}")
                top["defined"].add(v)
                top["ever"].add(v)
        self.budget = budget
        while self.budget > 0:
            self.stmt(ind, top)
        return top

    def klass(self):
        """class K: a method m(self, a, b, xs, flag) with a random body, called from f."""
        self.emit(0, "class K:")
        self.emit(1, "def __init__(self, v):")
        self.emit(2, "self.v = v")
        self.emit(0, "")
        self.emit(1, "def m(self, a, b, xs, flag):")
        top = self.body(2, self.r.randint(2, 6), method=True)
        if self.chance(0.5):
            self.emit(2, f"self.v {self.pick(('+=', '-='))} {self.expr(top)}")
        self.emit(2, f"return {self.expr(top)}")
        self.emit(0, "")
        self.emit(0, "")

    def function(self):
        self.has_class = self.chance(0.3)
        if self.has_class:
            self.klass()
        self.emit(0, "def f(a, b, xs, flag):")
        top = self.body(1, self.r.randint(6, 18))
        if self.has_class and not self.method_calls:
            self.s_method(1, top)
        names = sorted(top["defined"] - {"a", "b", "xs", "flag"})
        if names and self.chance(0.5):
            extra = self.pick(LOCALS)
            self.emit(1, f"return ({', '.join(names)}, {extra})" if self.chance(0.3)
                      else f"return ({', '.join(names)},)")
        elif self.chance(0.7):
            self.emit(1, f"return {self.expr(top)}")

    def cases(self):
        r = self.r
        out = []
        for _ in range(r.randint(3, 5)):
            xs = [r.randint(-2, 5) for _ in range(r.randint(0, 4))]
            out.append((r.randint(-2, 5), r.randint(-2, 5), xs, r.random() < 0.5))
        return out


def generate(seed):
    """The text of a random corpus-style module (function `f`, helpers, CASES)."""
    g = Gen(seed)
    g.function()
    body = "\n".join(g.lines)
    return f"{PRELUDE}\n\n{body}\n\n\nCASES = {{'f': {g.cases()!r}}}\n"


if __name__ == "__main__":
    import sys
    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
