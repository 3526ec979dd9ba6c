# stagd.function(fn): converts fn through the daemon (Convert RPC), stages it with
# Staged parameters into a `(def NAME (PARAMS) BODY)` S-expression, and runs it
# (Stage + Execute). See docs/runtime.md "Staging".
import ast
import inspect
import json
import textwrap


def _source(fn):
    """fn's dedented source with its decorators blanked (line numbers kept)."""
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise TypeError(f"stagd.function: {fn!r} is not defined by a def statement")
    lines = src.splitlines(keepends=True)
    for i in range(node.lineno - 1):
        lines[i] = "\n"
    return "".join(lines)


def _decode(v):
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(_decode(x) for x in v["tuple"])
        if "record" in v:
            return {k: _decode(x) for k, x in v["record"].items()}
        if "dtype" in v:
            import numpy as np
            return np.array(v["data"], dtype=v["dtype"]).reshape(v["shape"])
    return v


def _encode(v):
    try:
        import numpy as np
        if isinstance(v, np.ndarray):
            return {"dtype": str(v.dtype), "shape": list(v.shape), "data": v.ravel().tolist()}
        if isinstance(v, np.generic):
            return v.item()
    except ImportError:  # pragma: no cover
        pass
    return v


class Function:
    """A Python function staged into the daemon (see `function`)."""

    def __init__(self, fn, static_argnames=(), client=None):
        self.fn = fn
        self.static_argnames = tuple(static_argnames)
        self._client = client
        self._converted = None
        self._graphs = {}  # static argument values → graph id
        self.params = list(inspect.signature(fn).parameters)

    def client(self):
        if self._client is None:
            from . import _client
            self._client = _client()
        return self._client

    def converted(self):
        """The converted function (converted once, through the daemon)."""
        if self._converted is None:
            filename = inspect.getsourcefile(self.fn) or "<stagd.function>"
            reply = self.client().call("Convert", {"source": _source(self.fn),
                                                   "filename": filename})
            errors = [d for d in reply.diagnostics if d.severity == 1]
            if errors:
                raise SyntaxError(f"stagd.function: converting {self.fn.__name__}: "
                                  + "; ".join(d.message for d in errors))
            ns = dict(self.fn.__globals__)
            exec(compile(reply.code, filename, "exec"), ns)
            self._converted = ns[self.fn.__name__]
        return self._converted

    def _split(self, args):
        if len(args) != len(self.params):
            raise TypeError(f"stagd.function: {self.fn.__name__} takes {len(self.params)} "
                            f"arguments, got {len(args)}")
        static = {}
        dynamic = []
        for name, a in zip(self.params, args):
            if name in self.static_argnames:
                static[name] = a
            else:
                dynamic.append(a)
        return static, dynamic

    def sexpr(self, *args):
        """The `(def NAME (PARAMS) BODY)` S-expression of fn staged for `args`."""
        from .runtime import sexpr as _sx  # lazily: `import stagd` stays light
        from .runtime.staged import Staged
        static, _ = self._split(args)
        conv = self.converted()
        call_args = []
        params = []
        for name in self.params:
            if name in static:
                call_args.append(static[name])
            else:
                params.append(name)
                call_args.append(Staged(name))
        b = _sx.push()
        try:
            result = conv(*call_args)
            body = b.close(_sx.literal(result))
        finally:
            _sx.pop(b)
        return f"(def {self.fn.__name__} ({' '.join(params)}) {body})"

    def __call__(self, *args):
        static, dynamic = self._split(args)
        key = repr(sorted(static.items()))
        gid = self._graphs.get(key)
        if gid is None:
            src = self.sexpr(*args)
            gid = self.client().call("Stage", {"sexpr": src,
                                              "filename": f"<stagd {self.fn.__name__}>"}).graph_id
            self._graphs[key] = gid
        reply = self.client().call("Execute", {"graph_id": gid,
                                              "args_json": json.dumps([_encode(a) for a in dynamic])})
        if reply.output:
            print(reply.output, end="" if reply.output.endswith("\n") else "\n")
        return _decode(json.loads(reply.result_json))


def function(fn=None, *, static_argnames=(), client=None):
    """Stages `fn` into the daemon. Usable as `@stagd.function` or
    `stagd.function(fn, static_argnames=('n',))`; static arguments stay plain Python
    values while staging (hyperparameters, Snek §5) and key the graph cache."""
    if fn is None:
        return lambda f: Function(f, static_argnames, client)
    return Function(fn, static_argnames, client)
