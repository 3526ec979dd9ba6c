# SPDX-License-Identifier: Apache-2.0
"""segments.py — py_func on staged values (TF Eager §4.7): a staged function whose trace
meets `stagd.py_func(fn, *args)` with staged arguments is cut there into segments.

The daemon never runs Python, so the graph cannot call back into the client. Instead,
at each such py_func the trace ends a segment: the bindings emitted so far become one
def that returns the py_func's arguments and every value later segments need; the
py_func's result becomes a parameter of the next segment. A call runs the segments in
order (one Execute each, handles in and out) and calls `fn` in Python between them on
the fetched-as-needed Tensors. Only py_funcs at the top level of the trace (not inside
staged if/while) can cut it.
"""
import re

from .runtime import sexpr as _sx

_TOKEN = re.compile(r"[^\s()]+")


class Cut:
    """One py_func met while tracing: the bindings before it, fn, its argument
    expressions and the symbol its result gets."""

    def __init__(self, bindings, fn, arg_exprs, result_sym):
        self.bindings = bindings
        self.fn = fn
        self.arg_exprs = arg_exprs
        self.result_sym = result_sym


class Segment:
    """A def of the cut program: its name, the symbols it takes after the function's
    own parameters (live_in), and what it returns."""

    def __init__(self, name, text, live_in, n_args, carried, cut):
        self.name = name
        self.text = text
        self.live_in = live_in
        self.n_args = n_args  # leading results: the py_func's arguments
        self.carried = carried  # the rest: symbols later segments use
        self.cut = cut  # the py_func after this segment (None for the last)
        self.graph_id = None


def _tokens(exprs):
    out = set()
    for e in exprs:
        out.update(_TOKEN.findall(e))
    return out




def build(base_name, params, cuts, last_bindings, result_expr):
    """The segment defs for a trace with cuts; params are the function's dynamic
    parameters and captures (passed to every segment)."""
    pieces = [(c.bindings, c) for c in cuts] + [(last_bindings, None)]
    defined_anywhere = {n for b, _ in pieces for n, _ in b} | {c.result_sym for c in cuts}
    pset = set(params)
    segs = [None] * len(pieces)
    need_after = set()  # symbols segments after i take as input
    for i in range(len(pieces) - 1, -1, -1):
        bindings, cut = pieces[i]
        defined = {n for n, _ in bindings}
        exprs = [e for _, e in bindings]
        if cut is None:
            exprs.append(result_expr)
            carried = []
            ret = result_expr
            n_args = 0
        else:
            exprs += cut.arg_exprs
            carried = sorted(need_after - {cut.result_sym})
            ret = "(tuple " + " ".join(cut.arg_exprs + carried) + ")"
            n_args = len(cut.arg_exprs)
        used = (_tokens(exprs) | set(carried)) & defined_anywhere
        live_in = sorted(used - defined - pset)
        name = f"{base_name}__seg{i}"
        text = f"(def {name} ({' '.join(params + live_in)}) {_sx.let_body(bindings, ret)})"
        segs[i] = Segment(name, text, live_in, n_args, carried, cut)
        need_after = set(live_in)
    return segs


def run(segs, param_values, execute, call_py):
    """Runs the segments: execute(segment, args) → result; call_py(fn, args) → the
    py_func's result."""
    env = {}
    out = None
    for seg in segs:
        out = execute(seg, list(param_values) + [env[s] for s in seg.live_in])
        if seg.cut is None:
            return out
        items = out if isinstance(out, tuple) else (out,)
        args, carried = items[:seg.n_args], items[seg.n_args:]
        env.update(zip(seg.carried, carried))
        env[seg.cut.result_sym] = call_py(seg.cut.fn, args)
    return out
