# SPDX-License-Identifier: Apache-2.0
# stagd.function(fn) — defun (TF Eager §4.6): converts fn through the daemon (Convert
# RPC), traces the converted function on Staged parameters into a `(def NAME (PARAMS)
# BODY)` S-expression per input signature, stages it (Stage RPC) and runs it (Execute
# RPC) on device-resident handles. See docs/client.md "Staged functions".
#
#   trace cache   key = per argument: tensors by (dtype, shape), Python numbers as
#                 dynamic scalars, everything else (bools, None, strings, objects) by
#                 value (identity when unhashable); static_argnames are by value too.
#                 input_signature=[TensorSpec...] → one trace for every call.
#   captures      Tensors and Variables a trace meets (closures, globals) become extra
#                 parameters, passed by handle at each call — Variables by reference,
#                 so graphs may assign to them.
#   composition   a stagd.function called while another traces emits a call of its own
#                 def (a call node in the dump), not an inlined copy.
#   escapes       init_scope() runs code outside the trace; py_func(fn, *args) runs a
#                 Python function on values (eagerly, or at trace time when its inputs
#                 are known then).
#   errors        a daemon error located in the staged S-expression is raised again at
#                 the user's source line that emitted the failing operation.
#   speculative   speculative=True (speculative.py): calls run imperatively while they
#                 are profiled, then a trace that assumes what they did (`assume` nodes),
#                 falling back to an imperative call when an assumption fails.
#
# The traces being built live in context.py, where tensor.py (below this module) sees
# them; tensor.py itself is imported where it is used, so `import stagd` loads no NumPy.
import ast
import inspect
import itertools
import re
import sys
import types
import warnings
import weakref

from . import _wire, context, guards, segments, signature
from . import runtime as _runtime
from . import speculative as _speculative
from .client import NotFound, StagdError, default_client, shared_ids
from .context import init_scope
from .runtime import flow, speculation
from .runtime import sexpr as _sx
from .runtime.calls import def_source, tracing_client, unshadow
from .runtime.errors import StagingError, _code_maps, add_location_notes
from .runtime.staged import Staged, apply

_names = itertools.count(1)


def _source(fn):
    """(fn's dedented source with its decorators blanked, at its line numbers in its
    file, so the converter's source map and diagnostics name the file's lines; the name
    the converted module defines it under). A lambda becomes `def NAME(PARAMS): return
    (BODY)` with BODY at its own lines, found through its code object's positions."""
    if fn.__name__ == "<lambda>":
        return _lambda_source(fn)
    src = def_source(fn)
    if src is None:
        raise TypeError(f"stagd.function: {fn!r} is not defined by a def statement")
    return src, fn.__name__


def _lambda_source(fn):
    code = fn.__code__
    spans = [p for p in code.co_positions() if None not in p and (p[0], p[2]) < (p[1], p[3])]
    if not spans:
        raise TypeError(f"stagd.function: the source of {fn!r} has no positions")
    lo = min((p[0], p[2]) for p in spans)
    hi = max((p[1], p[3]) for p in spans)
    filename = code.co_filename
    import linecache
    text = "".join(linecache.getlines(filename, fn.__globals__))
    if not text:
        raise TypeError(f"stagd.function: the source of {fn!r} is not available")
    found = None
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Lambda):
            continue
        body = node.body
        if (body.lineno, body.col_offset) <= lo and (body.end_lineno, body.end_col_offset) >= hi:
            if found is None or (body.lineno, body.col_offset) >= (found.body.lineno,
                                                                  found.body.col_offset):
                found = node
    if found is None:
        raise TypeError(f"stagd.function: cannot find the source of {fn!r} in {filename}")
    lines = text.splitlines(keepends=True)
    b = found.body
    if b.lineno == b.end_lineno:
        body = lines[b.lineno - 1].encode()[b.col_offset:b.end_col_offset].decode()
    else:
        first = lines[b.lineno - 1].encode()[b.col_offset:].decode()
        last = lines[b.end_lineno - 1].encode()[:b.end_col_offset].decode()
        body = first + "".join(lines[b.lineno:b.end_lineno - 1]) + last
    name = f"stagd_lambda_{b.lineno}"
    args = found.args  # defaults come from fn itself (they may name enclosing locals)
    args.defaults = [ast.Constant(None) for _ in args.defaults]
    args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
    params = ast.unparse(args)
    return ("\n" * (b.lineno - 1) + f"def {name}({params}): return (" + body + ")\n",
            name)


class TensorSpec:
    """The declared type of a tensor argument: shape (None for any size of a dimension)
    and dtype."""

    def __init__(self, shape, dtype="float32"):
        self.shape = None if shape is None else tuple(shape)
        self.dtype = str(dtype)

    def matches(self, dtype, shape):
        if dtype != self.dtype:
            return False
        if self.shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            want is None or want == got for want, got in zip(self.shape, shape))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype})"


def py_func(fn, *args):
    """Escape hatch (TF's py_func): runs the Python function fn(*args) on concrete
    values. Eagerly it is a plain call. While tracing with no staged argument it runs at
    trace time (its result becomes part of the graph). With staged arguments it cuts the
    staged function there (segments.py): each call runs the graph up to this point, calls
    fn on the resulting Tensors in Python, and runs the rest with fn's result."""
    if any(isinstance(a, Staged) for a in args):
        tr = context.traces[-1] if context.traces else None
        if tr is None or not _sx._stack or _sx._stack[-1] is not tr.builder:
            loc = _sx._user_location()
            where = f"{loc[0]}:{loc[1]}: " if loc else ""
            inside = _sx.constructs[-1] if _sx.constructs else "staged control flow"
            raise NotImplementedError(
                f"{where}stagd.py_func on staged values inside {inside}: the daemon runs "
                "the graph without Python, and a py_func can only cut it where the whole "
                "trace continues after it (at the top level of the staged function), not in "
                "one branch or one iteration; compute its arguments there and call it "
                "before or after the staged if / loop, or make the condition plain")
        arg_exprs = [_sx.literal(a) for a in args]
        sym = _sx.fresh("pyf")
        tr.cuts.append(segments.Cut(list(tr.builder.bindings), fn, arg_exprs, sym))
        tr.builder.bindings.clear()
        return Staged(sym)
    with init_scope():
        return fn(*args)


class ConcreteFunction:
    """One traced signature: its def, captures and (once staged) graph id."""

    def __init__(self, name, params, captures, program, body_defs, arity, out_tree=None):
        self.name = name
        self.params = params  # dynamic parameter names, captures last
        self.captures = captures
        self.program = program  # callee defs + this def
        self.body_defs = body_defs  # {name: text} of callees + this def
        self.arity = arity  # None, or the length of the returned tuple
        self.out_tree = out_tree  # signature.ResultTree of a structured result, or None
        self.graph_id = None
        self.segments = None  # segments.Segment list when a py_func cut the trace
        # how a call goes in the eager queue, per argument types (learned from the reply of
        # a call with those types): 0 never, -1 one tensor, K a tuple of K tensors
        self.queue_n = {}
        self.call_head = None  # (graph id, _wire.call_head's bytes) of queued calls

    def result(self, value):
        """The caller's result from what the graph returned."""
        return value if self.out_tree is None else self.out_tree.rebuild(value)


_NO_RECEIVER = object()  # Function.receiver of a plain function
_MISSING = object()
_TRACES_PER_KEY = 8  # traces kept per argument key (guard outcomes differ)
_FRAMES_PER_CALL = 5  # a converted body's frames per call of the original (the function,
# its NAME__staged body, if_stmt, helper, converted_call): a trace runs under this
# multiple of the recursion limit


class Function:
    """A Python function staged into the daemon (see `function`). On a bound method the
    receiver is a static first argument; `@stagd.function` on a method in a class body
    gives each instance its own Function (and trace cache) through `__get__`."""

    def __init__(self, fn, static_argnames=(), client=None, input_signature=None,
                 receiver=_NO_RECEIVER, style="autograph", relax_shapes=True,
                 speculative=False):
        if isinstance(fn, types.MethodType):
            fn, receiver = fn.__func__, fn.__self__
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise TypeError(f"stagd.function: {fn!r} is not a Python function")
        if style not in ("autograph", "snek"):
            raise ValueError(f"stagd.function: style must be 'autograph' or 'snek', not {style!r}")
        self.fn = fn
        self.receiver = receiver
        self.style = style
        self.static_argnames = tuple(static_argnames)
        self.input_signature = None if input_signature is None else list(input_signature)
        self.relax_shapes = bool(relax_shapes)
        self._dims = {}  # (argument path, dtype, rank) → sizes seen per dim, None: varied
        self._client = client
        self._converted = None
        self._concrete = {}  # signature key → ConcreteFunction
        self._bound = {}  # id(instance) → (its Function, weakref or the instance)
        self.trace_count = 0
        self.stats = {"traces": 0, "guard_failures": 0}
        self.speculative = bool(speculative)
        self._spec = None
        if self.speculative:
            if input_signature is not None:
                raise ValueError("stagd.function: speculative=True specializes each call's "
                                 "shapes from its profile; it takes no input_signature")
            self._spec = _speculative.Speculation(self)
            self.stats.update(profiled=0, speculative=0, fallbacks=0, speculations=0)
        self._read_names = None  # guards.reads of fn's code, found at the first trace
        self._misses = 0  # calls in a row that no cached trace's guards fitted
        sig = inspect.signature(fn)
        if receiver is not _NO_RECEIVER:
            ps = list(sig.parameters.values())
            if not ps or ps[0].kind not in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD):
                raise TypeError(f"stagd.function: method {fn.__qualname__} takes no receiver")
            sig = sig.replace(parameters=ps[1:])
        self.params = list(sig.parameters)
        self._signature = sig
        # a call with one positional argument per parameter binds them in order: the
        # count, when every parameter may be given by position (else -1: bind() decides)
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in sig.parameters.values())
        self._positional = len(self.params) if plain else -1
        self.__name__ = getattr(fn, "__name__", "function")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __get__(self, obj, cls=None):
        """`instance.method` of a method decorated in its class body: a Function bound
        to the instance, one per instance (traces keyed by its attributes too)."""
        if obj is None or self.receiver is not _NO_RECEIVER:
            return self
        entry = self._bound.get(id(obj))
        if entry is not None and _alive(entry[1]) is obj:
            return entry[0]
        bound = Function(self.fn, self.static_argnames, self._client, self.input_signature,
                         receiver=obj, style=self.style, relax_shapes=self.relax_shapes,
                         speculative=self.speculative)
        bound._converted = self._converted
        bound._source_of = self
        key = id(obj)
        try:
            ref = weakref.ref(obj, lambda _r, key=key, d=self._bound: d.pop(key, None))
        except TypeError:
            ref = obj  # not weakly referenceable: kept alive by its Function
        self._bound[key] = (bound, ref)
        return bound

    def client(self):
        if self._client is None:
            self._client = default_client()
        return self._client

    def converted(self):
        """The converted function (converted once, through the daemon)."""
        if self._converted is None:
            owner = getattr(self, "_source_of", None)
            if owner is not None:
                self._converted = owner.converted()
                return self._converted
            if self.fn.__code__ in _code_maps:  # converted code already (a lambda in it)
                self._converted = self.fn
                return self.fn
            filename = inspect.getsourcefile(self.fn) or "<stagd.function>"
            source, name = _source(self.fn)
            reply = self.client().call("Convert", {"source": source, "filename": filename,
                                                   "style": "STYLE_" + self.style.upper()})
            errors = [d for d in reply.diagnostics if d.severity == 1]
            if errors:
                raise SyntaxError(f"stagd.function: converting {self.fn.__name__}: "
                                  + "; ".join(d.message for d in errors))
            ns = dict(self.fn.__globals__)
            if self.fn.__closure__:  # closures: the cells' current values, by name
                for cname, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__):
                    try:
                        ns[cname] = cell.cell_contents
                    except ValueError:
                        pass
            exec(compile(reply.code, filename, "exec"), ns)
            conv = ns[name]
            unshadow(ns, self.fn)
            g = self.fn.__globals__  # the names the converted module did not redefine
            conv.__stagd_copied__ = {k for k, v in g.items() if ns.get(k, _MISSING) is v}
            conv.__defaults__, conv.__kwdefaults__ = self.fn.__defaults__, self.fn.__kwdefaults__
            self._converted = conv
        return self._converted

    # -- signatures
    def _bind(self, args, kwargs):
        if not kwargs and len(args) == self._positional:
            return list(args)  # what bind() and apply_defaults() give for such a call
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"stagd.function: {self.fn.__name__}: {e}") from None
        bound.apply_defaults()
        return [bound.arguments[p] for p in self.params]

    def _parts(self, values, check=True):
        """The key part of each argument (signature.py); check=False: the values may be
        the specs themselves (stagd.export's examples)."""
        if self.input_signature is not None:
            if check:
                self._check_signature(values)
            return [signature.arg_part(v, True) if s is None else signature.spec_part(s)
                    for v, s in zip(values, self._spec_list())]
        parts = [signature.arg_part(v, name in self.static_argnames)
                 for name, v in zip(self.params, values)]
        return signature.relax(parts, self._dims) if self.relax_shapes else parts

    def _key(self, parts):
        key = tuple(parts)
        if self.receiver is not _NO_RECEIVER:
            key += (_receiver_key(self.receiver),)
        return key

    def _spec_list(self):
        specs = list(self.input_signature)
        return specs + [None] * (len(self.params) - len(specs))

    def _check_signature(self, values):
        from .tensor import Tensor
        for name, v, spec in zip(self.params, values, self._spec_list()):
            if spec is None or isinstance(v, Staged):
                continue
            import numpy as np
            if isinstance(v, Tensor):
                dtype, shape = v.dtype, v.shape
            elif isinstance(v, np.ndarray):
                dtype, shape = str(v.dtype), v.shape
            else:
                raise TypeError(f"stagd.function: {self.fn.__name__}: argument {name!r} must "
                                f"be a tensor matching {spec}, got {type(v).__name__}")
            if not spec.matches(dtype, tuple(shape)):
                raise TypeError(f"stagd.function: {self.fn.__name__}: argument {name!r} "
                                f"({dtype}, shape {tuple(shape)}) does not match {spec}")

    def _is_dynamic(self, name, v, spec=None):
        if self.input_signature is not None:
            return spec is not None
        return name not in self.static_argnames and signature.is_dynamic(
            signature.arg_part(v, False))

    # -- tracing
    def _get_concrete(self, values, parts=None):
        """The trace for these arguments whose guards hold (guards.py), else a new one
        kept beside the others of the same key (at most _TRACES_PER_KEY, oldest out)."""
        parts = self._parts(values) if parts is None else parts
        key = self._key(parts)
        traces = self._concrete.get(key)
        if traces:
            for conc in traces:
                if conc.guards.holds():
                    self._misses = 0
                    return conc
            self.stats["guard_failures"] += 1
            self._misses += 1
            if self._misses == _TRACES_PER_KEY:
                g = guards.failing(traces[0].guards)
                warnings.warn(f"stagd.function: {self.__name__} traced again on each of its last "
                              f"{self._misses} calls because a Python fact it reads changed "
                              f"each time ({g!r}); results are right, but slow: read the "
                              "value from an argument instead", stacklevel=3)
        conc = self._trace(values, parts)
        traces = self._concrete.setdefault(key, [])
        traces.insert(0, conc)
        del traces[_TRACES_PER_KEY:]
        return conc

    def _reads(self):
        if self._read_names is None:
            self._read_names = guards.reads(self.fn.__code__)
        return self._read_names

    def guards(self, *args, **kwargs):
        """The guards of the trace these arguments select (tracing it if needed): what
        must still hold for that trace to run, one readable line each."""
        return [repr(g) for g in self._get_concrete(self._bind(args, kwargs)).guards]

    def _trace(self, values, parts, replay=None):
        """A trace of the function for these arguments; with `replay`
        (runtime/speculation.Replay), a speculative one (speculative.py)."""
        conv = self.converted()
        copied = getattr(conv, "__stagd_copied__", None)
        if copied is not None:  # the values the trace reads are today's, as its guards
            guards.refresh(conv.__globals__, self.fn, self._reads(), copied)
        specs = self._spec_list() if self.input_signature is not None else [None] * len(values)
        b = _sx.push()
        tr = context.Trace(b, [])
        call_args, params = [], []

        def bind_variable(var, sym):
            tr.capture_syms[id(var)] = sym
            tr.bound_vars.append(var)  # alive while the trace's key holds its id
        for name, v, part, spec in zip(self.params, values, parts, specs):
            if part[0] == "static":
                call_args.append(v)
                continue
            if part[0] == "tensor" and spec is not None:
                arg, names = Staged(name), [name]
            else:
                arg, names = signature.staged_argument(name, v, part, bind_variable)
            call_args.append(arg)
            params += names
            leaf_parts = part[2] if part[0] == "tree" else (part,)
            for sym, q in zip(names, [q for q in leaf_parts if q[0] != "static"]):
                b.param_types[sym] = signature.probe_type(sym, q, spec)
        tr.params = list(params)
        if self.receiver is not _NO_RECEIVER:
            call_args.insert(0, self.receiver)
        b.probe_defs = tr.defs
        outermost = not context.traces
        limit = sys.getrecursionlimit()
        if outermost:  # converted bodies take about 5 frames per call of the original's 1
            sys.setrecursionlimit(limit * _FRAMES_PER_CALL)
        facts = speculation.Facts() if replay is None else replay
        if replay is not None:
            replay.builder = b
        speculation.push(facts)  # an enclosing profile or speculation pauses
        context.traces.append(tr)
        token = tracing_client.set(self.client())
        try:
            try:
                result = conv(*call_args)
                if replay is not None:
                    replay.finish()
                result_expr, out_tree = signature.result_form(result)
                arity = len(result) if isinstance(result, tuple) and out_tree is None else None
            except Exception as e:
                add_location_notes(e)
                # raised on every path from here, but after a staged raise the graph
                # checks first: the graph decides which exception Python raises
                if isinstance(e, StagingError) or _sx.current() is not b or \
                        not flow.checks_raise(b):
                    raise
                result_expr = flow.raise_after_checks(b, e)
                out_tree, arity = None, None
            _hoist_rep_defs(tr, params)
            last_bindings = list(b.bindings)
            body = b.close(result_expr)
        except BaseException as e:
            add_location_notes(e)
            raise
        finally:
            tracing_client.reset(token)
            speculation.pop(facts)
            _sx.pop(b)
            context.traces.pop()
            if outermost:
                sys.setrecursionlimit(limit)
        self.trace_count += 1
        self.stats["traces"] += 1
        # the facts as the trace leaves them: Python side effects of tracing (an
        # init_scope that appends to a global list) happen once, as in TF
        args = dict(zip(self.params, values))
        if self.receiver is not _NO_RECEIVER:
            args[self.fn.__code__.co_varnames[0]] = self.receiver
        trace_guards = guards.record(self.fn, self._reads(), args, facts.calls)
        name = _def_name(self)
        cap_syms = [tr.capture_syms[id(o)] for o in tr.captures]
        all_params = params + cap_syms
        defs = dict(tr.defs)
        segs = None
        if tr.cuts:
            segs = segments.build(name, all_params, tr.cuts, last_bindings, result_expr)
            for seg in segs:
                defs[seg.name] = seg.text
        else:
            defs[name] = f"(def {name} ({' '.join(all_params)}) {body})"
        program = "\n".join(defs.values())
        conc = ConcreteFunction(name, all_params, tr.captures, program, defs, arity, out_tree)
        conc.segments = segs
        conc.guards = trace_guards
        return conc

    def sexpr(self, *args, **kwargs):
        """The program staged for these arguments: the defs of the staged functions it
        calls, then `(def NAME (PARAMS) BODY)`."""
        return self._get_concrete(self._bind(args, kwargs)).program

    def get_concrete_function(self, *args, **kwargs):
        return self._get_concrete(self._bind(args, kwargs))

    def graph(self, *args, format="text", optimize=True, **kwargs):
        """The staged graph for these arguments as text, sexpr, dot or json; with
        optimize=False, before inlining and the other passes (calls of other staged
        functions show as call nodes)."""
        conc = self._get_concrete(self._bind(args, kwargs))
        fmt = {"sexpr": 1, "text": 2, "dot": 3, "json": 4}.get(format)
        if fmt is None:
            raise ValueError(f"stagd.function.graph: format must be sexpr, text, dot or json, "
                             f"not {format!r}")
        if conc.segments:  # cut by py_func: one graph per segment
            return "\n".join(self._stage(conc, dumps=[fmt], no_optimize=not optimize,
                                          entry=seg.name).dumps[0].text
                             for seg in conc.segments)
        reply = self._stage(conc, dumps=[fmt], no_optimize=not optimize)
        return reply.dumps[0].text

    def _stage(self, conc, dumps=(), no_optimize=False, entry=None):
        try:
            return self.client().call("Stage", {"sexpr": conc.program,
                                               "entry": entry or conc.name,
                                               "filename": f"<stagd {self.fn.__name__}>",
                                               "dumps": list(dumps),
                                               "no_optimize": no_optimize})
        except Exception as e:
            _reraise_located(e, conc)
            raise

    # -- calling
    def __call__(self, *args, **kwargs):
        values = self._bind(args, kwargs)
        if context.tracing():
            return self._call_staged(values)
        if self._spec is not None:
            return self._spec.call(values)
        return self._call_graph(values)

    def _call_graph(self, values, parts=None):
        """A call served by the trace these arguments select (guards checked)."""
        parts = self._parts(values) if parts is None else parts
        conc = self._get_concrete(values, parts)
        if conc.segments:
            return conc.result(self._execute_segments(conc, values, parts))
        if conc.graph_id is None:
            conc.graph_id = self._stage(conc).graph_id
        return conc.result(self._execute(conc, values, parts))

    def _imperative(self, values, recorder):
        """Runs the call imperatively (speculative.py) on eager tensors (NumPy arrays
        become Tensors): with a `recorder` (runtime/speculation.Recorder), the converted
        function, with today's globals, along its staged path so that its decision
        points record; without one, the function itself."""
        from .tensor import constant
        args = [_eager_value(v, constant) for v in values]
        if self.receiver is not _NO_RECEIVER:
            args.insert(0, self.receiver)
        if recorder is None:
            speculation.push(None)  # an enclosing trace's facts are not this call's
            try:
                return self.fn(*args)
            finally:
                speculation.pop(None)
        conv = self.converted()
        copied = getattr(conv, "__stagd_copied__", None)
        if copied is not None:
            guards.refresh(conv.__globals__, self.fn, self._reads(), copied)
        speculation.push(recorder)
        staging = _runtime.staging
        _runtime.staging = _PROFILING  # converted bodies take their staged path
        try:
            return conv(*args)
        finally:
            _runtime.staging = staging
            speculation.pop(recorder)

    def assumptions(self, *args, **kwargs):
        """speculative=True: what the speculative graph for these arguments assumes, one
        line each (`if taken true at FILE:LINE`, `float() == 2.0 at ...`); [] while
        they are being profiled."""
        if self._spec is None:
            raise ValueError(f"stagd.function: {self.__name__} is not speculative")
        return self._spec.assumptions(self._bind(args, kwargs))

    def _execute_segments(self, conc, values, parts):
        def execute(seg, args):
            def restage():
                seg.graph_id = self._stage(conc, entry=seg.name).graph_id
                return seg.graph_id

            if seg.graph_id is None:
                restage()
            return self._run(conc, seg.graph_id, args, restage)

        def call_py(fn, args):
            with init_scope():
                return fn(*args)

        params = self._dynamic_values(values, parts) + list(conc.captures)
        return segments.run(conc.segments, params, execute, call_py)

    def _run(self, conc, graph_id, args, restage=None, learn=False):
        """Executes staged graph `graph_id` on `args`; results stay in the daemon. When the
        daemon no longer has the graph (its cache keeps the 1,024 most recent programs),
        `restage()` stages it again and the call is made once more. learn: conc's own
        graph, whose reply tells how later calls may be queued (conc.queue_n)."""
        from .tensor import _arg_values, _wrap, current_device
        client = self.client()
        values, keep = _arg_values(client, args, current_device())
        req = client.pb2.ExecuteRequest(graph_id=graph_id, return_handles=True, args=values,
                                        device=current_device())
        try:
            try:
                reply = client.call("Execute", req)
            except NotFound as e:
                if restage is None or getattr(e, "queued_op", False):  # (not the graph's)
                    raise
                req.graph_id = restage()
                reply = client.call("Execute", req)
        except Exception as e:
            _reraise_python(e)
            _reraise_located(e, conc)
            raise
        if reply.output:
            out = _sx.fill_printed(reply.output)
            print(out, end="" if out.endswith("\n") else "\n")
        if learn:
            key = _types_key(args)
            if key is not None and key not in conc.queue_n and len(conc.queue_n) < 64:
                conc.queue_n[key] = _queue_shape(conc, reply, client)
        return _wrap(reply.result, client)

    def _queued(self, conc, args):
        """The call's results as Tensors when it goes in the eager queue (a queued call
        of its graph, results told by the daemon when it ran: tensor._LazyTensor), else
        None. Only calls on the CPU, with no tape recording and not speculative, of a
        trace whose first call returned tensors and that prints nothing, and no Variable
        shared with another session among the arguments."""
        if not conc.queue_n or context.tapes or self._spec is not None:
            return None
        n = conc.queue_n.get(_types_key(args))
        if not n:
            return None
        from .tensor import _Handle, _queue_call, current_device, queues_calls
        client = self.client()
        if not queues_calls(client, args, current_device()) or \
                any(isinstance(a, _Handle) and a._id in shared_ids for a in args):
            return None  # (a Variable another session reads is updated at once)
        if conc.call_head is None or conc.call_head[0] != conc.graph_id:
            conc.call_head = (conc.graph_id, _wire.call_head(conc.graph_id, conc.program, conc.name))

        def rewrite(e):  # a failure raised as the synchronous call raises it
            _reraise_python(e)
            _reraise_located(e, conc)
        outs = _queue_call(client, conc.call_head[1], args, [None] * abs(n), "cpu", rewrite)
        return outs[0] if n == -1 else tuple(outs)

    def _dynamic_values(self, values, parts=None):
        """The values of the def's parameters (before the captures)."""
        parts = self._parts(values) if parts is None else parts
        out = []
        for v, part in zip(values, parts):
            out += signature.dynamic_leaves(v, part)
        return out

    def _argument_params(self, values, parts, k):
        """The positions among the def's parameters of argument k's dynamic leaves."""
        start = sum(len(signature.dynamic_leaves(v, p)) for v, p in zip(values[:k], parts[:k]))
        return list(range(start, start + len(signature.dynamic_leaves(values[k], parts[k]))))

    def _execute(self, conc, values, parts):
        args = self._dynamic_values(values, parts) + list(conc.captures)
        def restage():
            conc.graph_id = self._stage(conc).graph_id
            return conc.graph_id

        out = self._queued(conc, args)
        if out is None:
            out = self._run(conc, conc.graph_id, args, restage, learn=True)
        if context.tapes:
            context.record_call(conc, args, out)
        return out

    def _call_staged(self, values):
        """Called while another function traces: a call of this function's def."""
        parts = self._parts(values)
        conc = self._get_concrete(values, parts)
        if conc.segments:
            raise NotImplementedError(
                f"stagd.function: {self.fn.__name__} runs a py_func on staged values, so "
                "it cannot be called from another staged function (call it eagerly)")
        outer = context.traces[-1]
        for name, text in conc.body_defs.items():
            outer.defs.setdefault(name, text)
        args = self._dynamic_values(values, parts) + list(conc.captures)
        r = apply(conc.name, *args)
        if conc.out_tree is not None:
            n = sum(conc.out_tree.in_graph)
            return conc.out_tree.rebuild([apply("getitem", r, k) for k in range(n)])
        if conc.arity is not None:
            return tuple(apply("getitem", r, k) for k in range(conc.arity))
        return r


_PROFILING = ["profiling"]  # stagd.runtime.staging during a profiled call: non-empty
_QUEUED_PROGRAM_BYTES = 256 << 10  # a queued call carries its program: larger ones are not queued


def _types_key(args):
    """The types of a call's arguments as the daemon's type inference sees them (tensors'
    and Variables' dtypes and shapes, the kinds of numbers); None when one is of another
    kind (its calls are not queued)."""
    from .tensor import Tensor, Variable
    key = []
    for a in args:
        t = type(a)
        if t is Tensor or t is Variable:
            key.append((a.dtype, a.shape))
        elif t is float or t is int or t is bool:
            key.append(t)
        else:
            return None
    return tuple(key)


def _queue_shape(conc, reply, client):
    """How later calls with the same argument types are queued (ConcreteFunction.queue_n),
    from an Execute reply: only when the daemon's type inference proves the result a
    tensor or a tuple of tensors for those types (`result_tensors`): -1 a tensor, K a
    tuple of K; 0 for anything else, a structured result, a program that prints (a
    queued call's output has nowhere to go) or too large to carry, and a daemon without
    queued calls."""
    result = reply.result
    if not reply.result_tensors or conc.out_tree is not None or conc.segments or \
            len(conc.program) > _QUEUED_PROGRAM_BYTES or "(print " in conc.program or \
            not client._queues_calls():
        return 0
    kind = result.WhichOneof("kind")
    if kind == "handle":
        return 0 if result.handle.variable else -1
    if kind == "tuple" and result.tuple.items and all(
            v.WhichOneof("kind") == "handle" and not v.handle.variable for v in result.tuple.items):
        return len(result.tuple.items)
    return 0


def _eager_value(v, constant):
    """An argument as an imperative call gets it: NumPy arrays (also inside lists,
    tuples and dicts) as eager Tensors, as the graph gets them."""
    t = type(v)
    if t in (list, tuple):
        return t(_eager_value(x, constant) for x in v)
    if t is dict:
        return {k: _eager_value(x, constant) for k, x in v.items()}
    np = sys.modules.get("numpy")
    if np is not None and t is np.ndarray:
        return constant(v)
    return v


_SYMBOL = re.compile(r"[^\s()\"]+")


def _hoist_rep_defs(tr, params):
    """The defs @rep_fun calls staged become top-level defs of the program (the daemon
    differentiates a recursive def only there), unless one uses a symbol of this trace
    (a capture): those stay inside the def, in its `(begin DEF… BODY)`."""
    local = set(params) | set(tr.capture_syms.values())
    keep = []
    for text in _sx._defs:
        if local & set(_SYMBOL.findall(text)):
            keep.append(text)
            local.add(text.split(None, 2)[1])  # and the defs that call it
        else:
            name = text.split(None, 2)[1]
            tr.defs[name] = text
    _sx._defs[:] = keep


def _alive(ref):
    return ref() if isinstance(ref, weakref.ref) else ref


_RECEIVER_ARRAY_MAX = 4096  # elements: larger array attributes are keyed by identity


def _receiver_key(obj):
    """A method's receiver in the trace key: the object itself (by identity) and its
    attributes by value, so a trace never outlives a change of an attribute it read."""
    attrs = getattr(obj, "__dict__", None)
    if not isinstance(attrs, dict):
        return signature.freeze(obj)
    items = []
    for k, v in attrs.items():
        size = getattr(v, "size", None)
        if isinstance(size, int) and size > _RECEIVER_ARRAY_MAX and hasattr(v, "tobytes"):
            items.append((k, signature._Ref(v)))
        else:
            items.append((k, signature.freeze(v)))
    return (signature._Ref(obj), tuple(items))


_def_owner = {}  # def name → the Function that first used it


def _def_name(f):
    """The function's own name for its first def, NAME__N when taken — or when it is a
    primitive's name (`def exp(x): return stagd.exp(x)` must not call itself)."""
    base = _sym_name(f.fn.__name__)
    if base in f.client().primitives():
        return f"{base}__{next(_names)}"
    owner = _def_owner.get(base)
    if owner is None or owner() is None:
        _def_owner[base] = weakref.ref(f)
        if not f._concrete:
            return base
    elif owner() is f and not f._concrete:
        return base
    return f"{base}__{next(_names)}"


def _sym_name(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "f"


_RAISE_TAG = re.compile(r"\[stagd-raise (\d+)\]")


def _reraise_python(e):
    """The graph failed at the assertion a staged `raise` (or a read of a variable
    unbound on that path) became: the Python exception it stands for, again."""
    m = _RAISE_TAG.search(getattr(e, "details", "") or "") if isinstance(e, StagdError) else None
    orig = _sx.raised.get(int(m.group(1))) if m else None
    if orig is None:
        return
    try:
        again = type(orig)(*orig.args)
    except Exception:  # noqa: BLE001 — a class that cannot be rebuilt from its args
        return
    for note in getattr(orig, "__notes__", ()):
        again.add_note(note)
    again.add_note(f"stagd: raised when the staged graph ran: {e.details}")
    raise again from None


_LOCATED = re.compile(r"^(<[^>]*>|[^:]+):(\d+):(\d+): (.*)$", re.S)


def _reraise_located(e, conc):
    """A daemon error located in conc's S-expression → the same error raised again at
    the user's source line that emitted the failing binding (when known)."""
    if not isinstance(e, StagdError) or getattr(e, "_stagd_located", False):
        return
    m = _LOCATED.match(e.details or "")
    if not m:
        return
    line, col = int(m.group(2)), int(m.group(3))
    # the failing node sits in the expression of the binding that holds its position
    name = _sx.binding_at(conc.program, line, col)
    loc = _sx.locations.get(name) if name else None
    if loc is None:
        return
    filename, lineno = loc
    err = type(e)(f"{filename}:{lineno}: {m.group(4)} (staged in {conc.name}, "
                  f"S-expression line {line})", e.code, e.reason)
    err.filename, err.lineno, err._stagd_located = filename, lineno, True
    # raise from a frame that sits at the user's line, so the traceback shows it
    code = compile("\n" * (lineno - 1) + "raise __stagd_error__", filename, "exec")
    try:
        exec(code, {"__stagd_error__": err})
    except StagdError as located:
        raise located.with_traceback(located.__traceback__) from None


def function(fn=None, *, input_signature=None, static_argnames=(), client=None,
             style="autograph", relax_shapes=True, speculative=False):
    """Stages `fn` into the daemon. Usable as `@stagd.function`,
    `stagd.function(fn, input_signature=[stagd.TensorSpec((None, 3))])` or
    `stagd.function(fn, static_argnames=('n',))`; style='snek' converts it in the Snek
    style (docs/runtime.md); relax_shapes=False keeps one trace per exact shape (by
    default a dimension seen with two sizes is traced as unknown from then on);
    speculative=True runs the first calls imperatively, then a graph that assumes what
    they did and falls back when it does not hold (speculative.py); see the module
    comment."""
    if fn is None:
        return lambda f: Function(f, static_argnames, client, input_signature, style=style,
                                  relax_shapes=relax_shapes, speculative=speculative)
    return Function(fn, static_argnames, client, input_signature, style=style,
                    relax_shapes=relax_shapes, speculative=speculative)
