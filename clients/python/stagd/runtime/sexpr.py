# SPDX-License-Identifier: Apache-2.0
# S-expression builder for staging (Snek §5 reflect/reify): a stack of builders, each a
# list of `let` bindings; staged operations append a binding and return its symbol.
# This module deals in text: the values that stand for symbols (Staged, staged.py) derive
# from `Symbolic`, and staged.py's emit/apply wrap the symbols the builder makes in them.
import math
import re
import sys

from .errors import StagingError, _code_maps

_counter = [0]
_stack = []
# Defs staged by @rep_fun calls (runtime/calls.py) during the current staging, in the
# order they were completed, and (function, signature) -> def name. Reset when the
# outermost builder is pushed; the outermost builder's close() puts the defs first.
_defs = []
defs_memo = {}
# symbols known to be bools (comparisons, not/and/or, merged flags): facts.py may put
# the value a path knows in their place; the exceptions that staged `raise`s stand for
# (assertion message → exception, runtime/staging.py), which the client raises again
bool_syms = set()
raised = {}
_raise_count = [0]


_print_templates = {}


def print_template(template):
    """Registers the text of a print() of containers with staged leaves (strings, None
    for each leaf); returns the marker, separator and end strings the staged print
    puts around the leaves, which fill_printed replaces by the text."""
    _raise_count[0] += 1
    if len(_print_templates) > 10000:
        _print_templates.clear()
    _print_templates[_raise_count[0]] = template
    return f"<stagd-print {_raise_count[0]}>", "<stagd-sep>", "<stagd-end>"


_PRINTED = re.compile(r"<stagd-print (\d+)>(.*?) ?<stagd-end>", re.S)


def fill_printed(text):
    """The output of a graph with the structured prints of print_template filled in."""
    def fill(m):
        template = _print_templates.get(int(m.group(1)))
        if template is None:
            return m.group(0)
        leaves = [t[1:] if t.startswith(" ") else t
                  for t in m.group(2).split(" <stagd-sep>")[1:]]
        leaves = iter(leaves)
        return "".join(next(leaves, "") if p is None else p for p in template)
    return _PRINTED.sub(fill, text) if "<stagd-print " in text else text


def raise_tag(exc):
    """A tag for an assertion message: the client raises exc again (its type and
    arguments) when the graph fails at that assertion (function.py)."""
    _raise_count[0] += 1
    if len(raised) > 10000:
        raised.clear()
    raised[_raise_count[0]] = exc
    return f" [stagd-raise {_raise_count[0]}]"
on_new_staging = []  # functions called when the outermost builder is pushed
constructs = []  # the staged constructs being staged ("the staged if at F:L"), innermost last


def add_def(text):
    _defs.append(text)


# A body of more bindings than this is written in the flat form, one binding a line:
# `(let n1 e1 (let n2 e2 … R))` nests one level per binding, and the daemon refuses
# S-expressions nested deeper than 1,000 levels (a long unrolled loop has thousands).
FLAT_LET_MIN = 32


def let_body(bindings, result):
    """The text binding [(name, expr)] in order around `result`: nested lets
    `(let n1 e1 (let n2 e2 … RESULT))` for a few, else the flat form
    `(let\nn1 e1\nn2 e2\n…\nRESULT)`, which the daemon reads as the same nesting
    (docs/sexpr.md)."""
    if not bindings:
        return result
    if len(bindings) < FLAT_LET_MIN:
        out = result
        for name, expr in reversed(bindings):
            out = f"(let {name} {expr} {out})"
        return out
    return "(let\n" + "".join(f"{name} {expr}\n" for name, expr in bindings) + result + ")"


_LET_OPEN = re.compile(r"\(let (\S+) ")
_LINE_BINDING = re.compile(r"\s*([^\s()]+) ")


def binding_at(text, line, col):
    """The name of the binding whose expression holds position (line, col) (1-based) of
    the S-expression `text` — the last nested `(let NAME` opened before it on its line,
    else the binding the line starts (the flat form) — or None."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    found = _LET_OPEN.findall(lines[line - 1][:max(col - 1, 0)])
    if found:
        return found[-1]
    m = _LINE_BINDING.match(lines[line - 1])
    return m.group(1) if m else None


def fresh(prefix="t"):
    """A new symbol; `$` keeps it apart from every Python identifier."""
    _counter[0] += 1
    return f"{prefix}${_counter[0]}"


class Symbolic:
    """Base of the values that stand for an expression of the program being built (their
    `.sexpr`): Staged and StagedList (staged.py, directives.py). The builder and the
    indexing lowering (indexing.py) recognise them by it, below the module that gives
    them operators."""

    __slots__ = ()


def literal(value):
    """The S-expression text of a plain value (bool, int, float, str, None, tuple)."""
    if isinstance(value, Symbolic):
        return value.sexpr
    hook = getattr(type(value), "_stagd_literal", None)
    if hook is not None:  # stagd.Tensor / stagd.Variable: captured inputs of the trace
        return hook(value)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") \
            .replace("\t", "\\t") + '"'
    if isinstance(value, (tuple, list)):
        return "(tuple " + " ".join(literal(v) for v in value) + ")" if value else "(tuple)"
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return literal(value.item())
        if isinstance(value, np.ndarray) and str(value.dtype) in _TENSOR_DTYPES:
            flat = " ".join(literal(v) for v in value.ravel().tolist())
            dims = " ".join(str(d) for d in value.shape)
            return f"(tensor {value.dtype} ({dims}){' ' + flat if flat else ''})"
    except ImportError:  # pragma: no cover
        pass
    raise StagingError(f"stagd: cannot stage a value of type {type(value).__name__}: {value!r}")


_TENSOR_DTYPES = ("bool", "int32", "int64", "float16", "float32", "float64")


def liftable(value):
    if isinstance(value, (Symbolic, bool, int, float)) or hasattr(type(value), "_stagd_literal"):
        return True
    try:
        import numpy as np
        return isinstance(value, np.generic)
    except ImportError:  # pragma: no cover
        return False


class Builder:
    def __init__(self):
        self.bindings = []
        # what static.py's probes need to type the symbols bound here: parameter
        # symbol → probe type text or None (a trace's parameters), the symbols a loop or
        # a staged def binds → the staged value each stands for (its initial value), and
        # the defs a trace calls (name → text)
        self.param_types = {}
        self.bound = {}
        self.probe_defs = None

    def emit(self, expr, prefix="t"):
        name = fresh(prefix)
        self.bindings.append((name, expr))
        loc = _user_location()
        if loc is not None:
            locations[name] = loc
        return name

    def close(self, result):
        """The bindings around the result expression text (let_body); for the
        outermost builder, inside `(begin DEF… …)` when @rep_fun calls staged defs
        (a def inside `begin` is visible to the rest of it, itself included)."""
        out = let_body(self.bindings, result)
        if _defs and _stack and _stack[0] is self:
            out = "(begin " + " ".join(_defs) + " " + out + ")"
            _defs.clear()
        return out


# binding symbol → (file, line) of the user's source line that emitted it (through the
# converted code's source map); stagd.function maps daemon errors back with it
locations = {}
LOCATIONS_MAX = 200000


def _user_location():
    f = sys._getframe(2)
    while f is not None:
        sm = _code_maps.get(f.f_code)
        if sm is not None:
            orig = sm.locate(f.f_lineno)
            if orig is None:
                return None
            if len(locations) > LOCATIONS_MAX:
                locations.clear()
            return (sm.filename, orig[0])
        f = f.f_back
    return None


def current():
    if not _stack:
        # Eager use of a Staged (no builder) is not implemented: it only exists while
        # stagd.function stages (sexpr() or a call).
        raise NotImplementedError("stagd: a staged value was used outside of staging "
                                  "(stagd.function(...).sexpr or a call)")
    return _stack[-1]


def push():
    if not _stack:  # a new staging
        _defs.clear()
        defs_memo.clear()
        bool_syms.clear()
        constructs.clear()
        for fn in on_new_staging:
            fn()
    b = Builder()
    _stack.append(b)
    return b


class converted_forms:
    """`with converted_forms():` — converted functions run their converted bodies on
    plain values too, as they do while a trace is built (their plain path runs only when
    nothing is staged): what the semantic tests check. Nestable."""

    def __enter__(self):
        self.b = push()
        return self

    def __exit__(self, *exc):
        pop(self.b)


def pop(b):
    assert _stack and _stack[-1] is b
    _stack.pop()


def backward_slice(target, bindings, symbols, cut=()):
    """The (symbol, expression) bindings `target` depends on, last first, not looking
    past the symbols in `cut`; `symbols` is the regular expression of a symbol (the
    tapes' programs and their slices of a trace, tape.py and tape_staged.py)."""
    needed, kept = {target}, []
    for s, e in reversed(bindings):
        if s in needed and s not in cut:
            kept.append((s, e))
            needed.update(symbols.findall(e))
    return kept
