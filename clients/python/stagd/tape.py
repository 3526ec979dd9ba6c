# SPDX-License-Identifier: Apache-2.0
"""tape.py — `stagd.GradientTape` and `stagd.grad`: reverse-mode gradients through the
daemon's graph AD (docs/ad.md). See docs/client.md "Gradients".

A tape records, as an S-expression program, every eager op whose inputs it watches:
watched tensors and the variables read while it is active become parameters, other
tensor inputs become extra (constant) parameters, each op a `let` binding. `gradient(y,
xs)` stages

    (def tapeK (p1 p2 ...) (let s1 (op ...) ... y))
    (def tapeK_grad (p1 p2 ...) ((grad tapeK i ...) p1 p2 ...))

(cached by its text, so a training loop stages once) and executes it on the handles.
Symbols are numbered per tape, so the same computation gives the same program text.

Nesting: the gradient computation is itself recorded on every other active tape that
watches its inputs, as `((grad tapeK i ...) args)` with tapeK's def carried along — so
the outer tape's program differentiates a gradient: grad of grad (TF Eager Listing 1).
Staged function calls are recorded as calls of their defs, the same way.

A tape enters context.py's list of active tapes; tensor.py and function.py (below this
module) report eager ops, variable reads and staged calls to it there, through the
`_record_*` methods. tensor.py is imported where it is used: `import stagd` loads no NumPy.
"""
import re

from . import _wire, context, eager_infer, eager_queue, tape_staged
from .client import NotFound, Unimplemented, default_client
from .function import Function, function
from .runtime import sexpr as _sx
from .runtime.staged import Staged, apply, emit

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_stage_cache = {}  # program text → graph id
_call_heads = {}  # graph id → its queued calls' EagerCall fields but the results (_wire.call_head)
_programs = {}  # what a gradient's program depends on → GradientTape._make_program's result
_PROGRAM_CACHE_BINDINGS = 512
_tape_ids = iter(range(1, 1 << 62))


class GradientTape:
    """`with stagd.GradientTape() as t: t.watch(x); y = f(x)` then
    `t.gradient(y, x)`. persistent=True allows several gradient() calls."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._n = next(_tape_ids)
        self._syms = {}  # id(tensor) → symbol
        self._keep = []  # the tensors behind _syms (keeps their ids unique)
        self._params = []  # (symbol, tensor-or-variable-read) in order
        self._sources = set()  # symbols that are watched sources (not constants)
        self._var_syms = {}  # id(variable) → symbol
        self._vars = []
        self._bindings = []  # (symbol, expression)
        self._defs = {}  # callee def name → text
        self._count = 0
        self._used = False
        self._recording = False
        self._staged_sources = set()  # symbols watched inside a trace (tape_staged.py)
        self._staged_vars = {}  # id(variable) → symbols of its reads inside a trace
        self._undiff = {}  # symbol → why a gradient cannot go through it (_record_call)

    # -- context
    def __enter__(self):
        context.tapes.append(self)  # eager ops and staged calls report to it (context.py)
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._recording = False
        if self in context.tapes:
            context.tapes.remove(self)

    def _sym(self, prefix):
        self._count += 1
        return f"{prefix}{self._count}"

    def watch(self, x):
        """Watches a Tensor or Variable (or a list/tuple of them)."""
        from .tensor import Tensor, Variable
        if isinstance(x, (list, tuple)):
            for v in x:
                self.watch(v)
            return
        if isinstance(x, Staged):  # inside stagd.function (tape_staged.py)
            self._staged_sources.add(x.sexpr)
            return
        if isinstance(x, Variable):
            self._var_syms.setdefault(id(x), None)
            self._vars.append(x)
            return
        if not isinstance(x, Tensor):
            raise TypeError(f"GradientTape.watch: expected a stagd.Tensor, Variable or staged "
                            f"value, got "
                            f"{type(x).__name__}")
        if id(x) in self._syms:
            self._sources.add(self._syms[id(x)])
            return
        s = self._sym("p")
        self._syms[id(x)] = s
        self._keep.append(x)
        self._params.append((s, x))
        self._sources.add(s)

    def watched_variables(self):
        return list(self._vars)

    def _knows(self, x):
        return id(x) in self._syms

    def _arg(self, a):
        """The expression text of an op argument on this tape (constants captured)."""
        if isinstance(a, eager_infer.TENSOR_TYPES):
            s = self._syms.get(id(a))
            if s is None:
                s = self._sym("c")
                self._syms[id(a)] = s
                self._keep.append(a)
                self._params.append((s, a))
            return s
        if isinstance(a, tuple):
            return "(tuple " + " ".join(self._arg(x) for x in a) + ")" if a else "(tuple)"
        return _sx.literal(a)

    def _bind(self, expr, out):
        Tensor = eager_infer.TENSOR_TYPES
        if isinstance(out, Tensor):
            s = self._sym("s")
            self._bindings.append((s, expr))
            self._syms[id(out)] = s
            self._keep.append(out)
        elif isinstance(out, tuple):
            s = self._sym("s")
            self._bindings.append((s, expr))
            for k, o in enumerate(out):
                if isinstance(o, Tensor):
                    sk = self._sym("s")
                    self._bindings.append((sk, f"(getitem {s} {k})"))
                    self._syms[id(o)] = sk
                    self._keep.append(o)

    # -- what context.py reports (eager ops, staged calls, variable reads)
    def _record_op(self, op, args, out):
        """An eager op ran: recorded when one of its inputs is known to this tape (only
        Tensors the tape keeps are in _syms: an id found there is that Tensor's)."""
        if not self._recording:
            return
        syms = self._syms
        parts = [syms.get(id(a)) for a in args]
        if parts.count(None) == len(parts):
            return
        expr = "(" + " ".join([op] + [self._arg(a) if s is None else s for a, s in zip(args, parts)]) + ")"
        self._bind(expr, out)

    def _record_call(self, conc, inputs, out):
        """A staged function ran: recorded as a call of its def. A def that reads a
        Variable it captured takes the cell, whose `read` graph AD does not
        differentiate: its results are recorded as not differentiable, and a gradient
        that needs them raises (gradient, _undiff) naming the call's line; a call on no
        watched tensor is recorded too when it captured a Variable the tape watches (a
        gradient for it must not be None)."""
        from .tensor import Tensor, Variable
        if not self._recording:
            return
        cells = [a for a in inputs if isinstance(a, Variable)]
        watched = any((self.watch_accessed_variables and v.trainable) or id(v) in self._var_syms
                      for v in cells)
        if watched or any(isinstance(a, Tensor) and self._knows(a) for a in inputs):
            if cells:
                file, line = eager_queue.user_site()
                names = ", ".join(repr(v.name) if v.name else "unnamed" for v in cells)
                self._bind("(tuple)", out)  # symbols, so that a slice can name them
                for o in (out if isinstance(out, tuple) else (out,)):
                    s = self._syms.get(id(o))
                    if s is not None:
                        self._undiff[s] = (
                            f"{file}:{line}: stagd.GradientTape: the gradient needs the result of "
                            f"this call of stagd.function {conc.name!r}, which reads "
                            f"Variables it captured ({names}); gradients through a Variable read "
                            f"inside a stagd.function are not supported: pass its value as an "
                            f"argument (f(x, v.read_value())), or take the gradient inside the "
                            f"function (a GradientTape or stagd.grad there)")
                return
            for dn, dt in conc.body_defs.items():
                self._defs.setdefault(dn, dt)
            expr = f"({conc.name}" + "".join(" " + self._arg(a) for a in inputs) + ")"
            self._bind(expr, out)

    def _record_staged_read(self, var, out):
        """A variable was read inside a trace: remembered (tape_staged.py) when this tape
        watches it, explicitly or as an accessed trainable variable."""
        if self._recording and (self.watch_accessed_variables and var.trainable
                                or id(var) in self._var_syms):
            self._staged_vars.setdefault(id(var), []).append(out.sexpr)

    def _record_read(self, var, out):
        """A trainable variable was read eagerly: the read becomes its parameter."""
        if not self._recording:
            return
        if not (self.watch_accessed_variables or id(var) in self._var_syms):
            return
        s = self._var_syms.get(id(var))
        if s is None:
            s = self._sym("p")
            self._var_syms[id(var)] = s
            self._vars.append(var)
            self._params.append((s, out))
            self._sources.add(s)
        # later reads map to the same parameter (the value is assumed unchanged while
        # the tape records; assign inside a tape is not differentiated)
        self._syms[id(out)] = s
        self._keep.append(out)

    # -- gradients
    def _program(self, target_sym, wrt):
        """(name, its def, the gradient's name, its def, the program text) of the gradient
        of target_sym with respect to the parameters at positions wrt. A training loop
        records the same bindings every step: the result is cached by them (for tapes of
        up to _PROGRAM_CACHE_BINDINGS bindings: a key holds them all)."""
        if len(self._bindings) > _PROGRAM_CACHE_BINDINGS:
            return self._make_program(target_sym, wrt)
        key = (target_sym, tuple(wrt), tuple(s for s, _ in self._params), tuple(self._bindings),
               tuple(self._defs.values()))
        got = _programs.get(key)
        if got is None:
            if len(_programs) > 1024:
                _programs.clear()
            got = _programs[key] = self._make_program(target_sym, wrt)
        return got

    def _make_program(self, target_sym, wrt):
        params = " ".join(s for s, _ in self._params)
        # only the bindings the target depends on (dead ones would stage as `seq`)
        kept = _sx.backward_slice(target_sym, self._bindings, _SYMBOL)
        # a target of several numbers: its sum's gradient, as TF
        body = _sx.let_body(list(reversed(kept)), f"(sum {target_sym})")
        name = f"tape{len(self._params)}_{abs(hash((params, body))) % (1 << 40):x}"
        fdef = f"(def {name} ({params}) {body})"
        idx = " ".join(str(i) for i in wrt)
        gname = f"{name}_grad"
        gdef = f"(def {gname} ({params}) ((grad {name} {idx}) {params}))"
        return name, fdef, gname, gdef, "\n".join(list(self._defs.values()) + [fdef, gdef])

    def gradient(self, target, sources):
        """d target / d sources: one gradient per source (same nesting as sources);
        None for a source the target does not depend on through this tape."""
        from .tensor import Tensor, Variable
        if self._used and not self.persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on a "
                               "non-persistent tape (use GradientTape(persistent=True))")
        self._used = True
        single = not isinstance(sources, (list, tuple))
        listed = [sources] if single else list(sources)
        if context.tracing() and (isinstance(target, (Staged, Variable)) or
                                  any(isinstance(x, Staged) for x in listed)):
            return tape_staged.gradient(self, target, sources, single)
        srcs = [sources] if single else list(sources)
        if isinstance(target, Variable):
            target = target.read_value()
        tsym = self._syms.get(id(target)) if isinstance(target, Tensor) else None
        # a call the target depends on read a captured Variable: refused before the sources
        # are looked up (such a Variable is not one of them, and its gradient is not None)
        if tsym is not None and self._undiff:
            for s, _ in _sx.backward_slice(tsym, self._bindings, _SYMBOL):
                if s in self._undiff:
                    raise Unimplemented(self._undiff[s])
        positions, index = [], None
        for x in srcs:
            if isinstance(x, Variable):
                s = self._var_syms.get(id(x))
            elif isinstance(x, Tensor):
                s = self._syms.get(id(x))
                s = s if s in self._sources else None
            else:
                raise TypeError(f"GradientTape.gradient: sources must be Tensors or "
                                f"Variables, got {type(x).__name__}")
            if s is not None and index is None:
                index = {ps: i for i, (ps, _) in enumerate(self._params)}
            positions.append(None if s is None else index[s])
        wrt = sorted({p for p in positions if p is not None})
        if tsym is None or not wrt:
            out = [None] * len(srcs)
            return out[0] if single else out
        name, fdef, gname, gdef, program = self._program(tsym, wrt)
        inputs = [t for _, t in self._params]
        # each gradient has its source's dtype and shape (a queued call declares them)
        metas = [(self._params[p][1].dtype, tuple(self._params[p][1].shape)) for p in wrt]
        was = self._recording
        self._recording = False  # the tape does not record its own gradient
        try:
            result = _run(program, gname, inputs, metas)
            grads = result if len(wrt) > 1 else (result,)
            for tape in context.tapes:
                if tape is not self and tape._recording and any(tape._knows(t) for t in inputs):
                    for dn, dt in self._defs.items():
                        tape._defs.setdefault(dn, dt)
                    tape._defs.setdefault(name, fdef)
                    expr = f"((grad {name} {' '.join(map(str, wrt))}) " + \
                        " ".join(tape._arg(t) for t in inputs) + ")"
                    tape._bind(expr, result)
        finally:
            self._recording = was
        # the optimizer may fold a gradient to a plain number: a tensor of the source's
        # dtype and shape, as a queued gradient call stores it (EagerCall)
        if any(isinstance(g, (int, float)) for g in grads):
            from .tensor import constant
            import numpy as np
            grads = tuple(constant(np.full(self._params[p][1].shape, g, dtype=self._params[p][1].dtype))
                          if isinstance(g, (int, float)) else g for g, p in zip(grads, wrt))
        by_pos = dict(zip(wrt, grads))
        out = [None if p is None else by_pos[p] for p in positions]
        return out[0] if single else out


def _run(program, entry, inputs, metas=None):
    """Runs `entry` of `program` on inputs (staged once per client and program text):
    its result's Tensors. With metas (each result's (dtype, shape)) the call is queued
    with the eager ops when it can be (tensor.queues_calls)."""
    from .tensor import _arg_values, _queue_call, _wrap, current_device, queues_calls, Tensor, Variable
    client = next((t._c for t in inputs if isinstance(t, (Tensor, Variable))), None) \
        or default_client()
    def stage():
        gid = client.call("Stage", {"sexpr": program, "entry": entry,
                                    "filename": "<stagd gradient>"}).graph_id
        if len(_stage_cache) > 4096:
            _stage_cache.clear()
        _stage_cache[(client, program)] = gid
        return gid

    device = current_device()
    gid = _stage_cache.get((client, program)) or stage()
    if metas is not None and queues_calls(client, inputs, device):
        head = _call_heads.get(gid)
        if head is None:  # the program goes along: staged again if the daemon dropped gid
            if len(_call_heads) > 4096:
                _call_heads.clear()
            head = _call_heads[gid] = _wire.call_head(gid, program, entry)
        outs = _queue_call(client, head, inputs, metas, device)
        return tuple(outs) if len(outs) > 1 else outs[0]
    pb2 = client.pb2
    values, keep = _arg_values(client, inputs, device)
    req = pb2.ExecuteRequest(graph_id=gid, args=values, return_handles=True, device=device)
    try:
        reply = client.call("Execute", req)
    except NotFound as e:  # the daemon's graph cache dropped it: stage it again, once
        if getattr(e, "queued_op", False):  # (a queued op's failure, raised at this call)
            raise
        req.graph_id = stage()
        reply = client.call("Execute", req)
    del keep
    return _wrap(reply.result, client)


# ------------------------------------------------------------------- grad

def _rebuild_grads(value, part, grads):
    """The gradients of a container argument's dynamic leaves, in its structure (None at
    its static leaves)."""
    from .runtime import tree
    leaves, td = tree.flatten(value)
    it = iter(grads)
    return tree.unflatten(td, [None if q[0] == "static" else next(it) for q in part[2]])


def grad(fn, argnums=0):
    """The gradient function of fn (a Python function or stagd.function) w.r.t. the
    positional arguments argnums (an int → that gradient; a tuple → a tuple). The
    gradient is graph AD of fn's staged def; inside another stagd.function it stages
    as `((grad F i ...) args)`."""
    F = fn if isinstance(fn, Function) else function(fn)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def gradient_fn(*args, **kwargs):
        values = F._bind(args, kwargs)
        parts = F._parts(values)
        conc = F._get_concrete(values, parts)
        idx, shapes = [], []  # def parameter positions; per argnum, its structure
        for k in nums:
            pos = F._argument_params(values, parts, k)
            if not pos or parts[k][0] == "variable":
                raise TypeError(f"stagd.grad: argument {k} ({F.params[k]!r}) of {F.__name__} is "
                                f"static (not a tensor or number); it has no gradient")
            shapes.append((pos, values[k] if parts[k][0] == "tree" else None, parts[k]))
            idx += pos
        inputs = F._dynamic_values(values, parts) + list(conc.captures)
        head = f"(grad {conc.name} {' '.join(map(str, idx))})"
        if context.tracing():
            outer = context.traces[-1]
            for n, t in conc.body_defs.items():
                outer.defs.setdefault(n, t)
            r = emit("(" + head + "".join(" " + _sx.literal(a) for a in inputs) + ")")
            flat = (r,) if len(idx) == 1 else tuple(apply("getitem", r, k)
                                                    for k in range(len(idx)))
        else:
            params = " ".join(f"a{i}" for i in range(len(inputs)))
            gname = f"{conc.name}_grad_{'_'.join(map(str, idx))}"
            program = conc.program + f"\n(def {gname} ({params}) ({head} {params}))"
            from .tensor import constant, Tensor, Variable
            call_inputs = [a if isinstance(a, (Tensor, Variable)) or not hasattr(a, "shape")
                           else constant(a) for a in inputs]
            out = _run(program, gname, call_inputs)
            flat = (out,) if len(idx) == 1 else tuple(out)
        grads, at = [], 0
        for pos, structured, part in shapes:  # a container argument: its structure back
            mine = flat[at:at + len(pos)]
            at += len(pos)
            grads.append(mine[0] if structured is None else _rebuild_grads(structured, part, mine))
        return grads[0] if isinstance(argnums, int) else tuple(grads)

    gradient_fn.__name__ = f"grad_{getattr(fn, '__name__', 'fn')}"
    return gradient_fn
