# SPDX-License-Identifier: Apache-2.0
"""context.py — what is going on right now, as eager ops see it: the traces that
`stagd.function` is building and the `GradientTape`s that record.

function.py and tape.py make traces and tapes; tensor.py, below both of them, asks here
whether it is tracing (then ops stage instead of running) and reports what it ran to the
recording tapes. A tape puts itself in `tapes` while its `with` block runs, and the
report functions below call these methods of each (tape.py implements them):

    tape._record_op(op, args, out)          an eager op ran (tensor.eager)
    tape._record_call(conc, inputs, out)    a staged function ran (function.py)
    tape._record_read(var, out)             a trainable Variable was read eagerly
    tape._record_staged_read(var, out)      a Variable was read inside a trace

so no module below tape.py imports it (docs/client.md "How the package is layered").
"""
import contextlib

from .runtime import sexpr as _sx

traces = []  # the traces being built (Trace), innermost last
tapes = []  # the active GradientTapes, innermost last


class Trace:
    """The state of one trace: the captured objects and the defs of staged functions
    it calls."""

    def __init__(self, builder=None, params=()):
        self.builder = builder  # the trace's top-level builder (py_func cuts there)
        self.params = list(params)  # the def's parameter symbols (captures come later)
        self.cuts = []  # segments.Cut per py_func on staged values
        self.captures = []  # objects, in parameter order
        self.capture_syms = {}  # id(obj) → symbol
        self.defs = {}  # def name → S-expression text (callee defs, in call order)
        self.bound_vars = []  # Variables passed as arguments (their symbols: parameters)


def tracing():
    """Whether operations stage now: a trace is being built and a builder is open
    (init_scope closes both)."""
    return bool(traces and _sx._stack)


def capture(obj):
    """The symbol of a Tensor/Variable inside the innermost trace (captured once)."""
    if not traces:
        raise NotImplementedError("stagd: a tensor was staged outside of stagd.function")
    tr = traces[-1]
    sym = tr.capture_syms.get(id(obj))
    if sym is None:
        sym = _sx.fresh("cap")
        tr.capture_syms[id(obj)] = sym
        tr.captures.append(obj)
        if tr.builder is not None:  # its type, for runtime/static.py's probes
            tr.builder.param_types[sym] = _capture_type(obj)
    return sym


def _capture_type(obj):
    dtype, shape = getattr(obj, "dtype", None), getattr(obj, "shape", None)
    if not isinstance(dtype, str) or shape is None:
        return None
    text = f"({dtype} ({' '.join(str(d) for d in shape)}))"
    return ("variable " + text) if hasattr(obj, "assign") else text


@contextlib.contextmanager
def init_scope():
    """Runs its body outside every trace (TF's init_scope): ops run eagerly, state
    created there is created once, not staged into the graph."""
    saved_traces, saved_stack = list(traces), list(_sx._stack)
    traces.clear()
    _sx._stack.clear()
    try:
        yield
    finally:
        traces[:] = saved_traces
        _sx._stack[:] = saved_stack


# ------------------------------------------------------- reports to the active tapes
# Callers test `if tapes:` first, so an op with no tape active pays one list test.

def record_op(op, args, out):
    for tape in tapes:
        tape._record_op(op, args, out)


def record_call(conc, inputs, out):
    for tape in tapes:
        tape._record_call(conc, inputs, out)


def record_read(var, out):
    for tape in tapes:
        tape._record_read(var, out)


def record_staged_read(var, out):
    for tape in tapes:
        tape._record_staged_read(var, out)
