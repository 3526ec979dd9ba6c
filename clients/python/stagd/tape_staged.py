# SPDX-License-Identifier: Apache-2.0
"""tape_staged.py — `stagd.GradientTape` used inside a function being staged by
`stagd.function` (docs/client.md "Gradients inside staged functions").

While a trace runs, operations do not execute: they append `let` bindings to the
trace's builders (runtime/sexpr.py). A tape there remembers the symbols it watches
(tensors given to `watch`, and each `read` of a variable while it records), and
`gradient(y, xs)` slices the trace backwards from y's symbol:

    (def tapegK (x1 ... xk f1 ... fm) (let s1 e1 (let s2 e2 ... y)))

where x1..xk are the watched symbols y depends on and f1..fm the other symbols of the
trace the slice reads (parameters, captures, earlier bindings) — then stages the
gradient in place as `((grad tapegK 1 .. k) x1 ... xk f1 ... fm)`, one call node that the
daemon's graph AD differentiates. The def joins the trace's defs, so nested tapes
(a gradient of a gradient) and calls of other staged functions compose as they do
eagerly. A variable read several times gets the sum of its reads' gradients.
"""
import re

from . import context
from .runtime import sexpr as _sx
from .runtime.staged import Staged, apply, emit

# A symbol in an argument position: not an operator (which follows an opening paren).
_ARG_SYMBOL = re.compile(r"(?<![(\w$])[A-Za-z_][A-Za-z0-9_$]*")


def _scope():
    """The symbols visible at this point of the trace: the function's parameters and
    captures, and the bindings of every open builder, in binding order."""
    tr = context.traces[-1]
    bindings = [bd for b in _sx._stack for bd in b.bindings]
    visible = set(tr.params) | set(tr.capture_syms.values()) | {s for s, _ in bindings}
    return bindings, visible


def _slice(target, cut, bindings, visible):
    """The bindings target depends on (last first), stopping at the symbols in `cut`,
    and the visible symbols the slice reads but does not bind (in first-use order)."""
    kept = _sx.backward_slice(target, bindings, _ARG_SYMBOL, cut)
    bound = {s for s, _ in kept}
    free = {}  # an ordered set
    for s in [target] + [x for _, e in reversed(kept) for x in _ARG_SYMBOL.findall(e)]:
        if s in visible and s not in bound:
            free.setdefault(s)
    return kept, list(free)


def gradient(tape, target, sources, single):
    """GradientTape.gradient inside a trace (see the module comment)."""
    from .tensor import Variable
    if isinstance(target, Variable):
        target = target.read_value()
    srcs = [sources] if single else list(sources)
    if not isinstance(target, Staged):  # made outside the trace: constant in its values
        return None if single else [None] * len(srcs)
    groups = []  # per source: the watched symbols standing for it
    for x in srcs:
        if isinstance(x, Variable):
            groups.append(list(tape._staged_vars.get(id(x), ())))
        elif isinstance(x, Staged):
            groups.append([x.sexpr] if x.sexpr in tape._staged_sources else [])
        else:
            raise TypeError("GradientTape.gradient: sources must be staged values or "
                            f"Variables inside a staged function, got {type(x).__name__}")
    cut = {s for g in groups for s in g}
    bindings, visible = _scope()
    kept, free = _slice(target.sexpr, cut, bindings, visible)
    wrt = [s for s in free if s in cut]
    if not wrt:
        return None if single else [None] * len(srcs)
    others = [s for s in free if s not in cut]
    params = wrt + others
    # a target of several numbers: its sum's gradient, as TF
    body = _sx.let_body(list(reversed(kept)), f"(sum {target.sexpr})")
    import hashlib  # loads OpenSSL (~7 ms): not at `import stagd`
    digest = hashlib.sha1(f"{params}{body}".encode()).hexdigest()[:10]
    name = f"tapeg{len(params)}_{digest}"
    context.traces[-1].defs.setdefault(name, f"(def {name} ({' '.join(params)}) {body})")
    idx = " ".join(str(i) for i in range(len(wrt)))
    call = emit(f"((grad {name} {idx}) {' '.join(params)})")
    grads = {wrt[0]: call} if len(wrt) == 1 else \
        {s: apply("getitem", call, k) for k, s in enumerate(wrt)}
    out = []
    for g in groups:
        parts = [grads[s] for s in g if s in grads]
        total = parts[0] if parts else None
        for p in parts[1:]:
            total = total + p
        out.append(total)
    return out[0] if single else out
