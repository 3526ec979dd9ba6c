# SPDX-License-Identifier: Apache-2.0
# Staged function calls (docs/runtime.md "Staged calls"):
#  * `@rep_fun` (Snek §5 `@rep_fun`): a call with staged arguments is staged once per
#    signature as its own `(def NAME$N (PARAMS) BODY)` and emitted as a call, so a
#    recursion on a staged value terminates (the recursive call finds the def);
#  * `converted_call`: a user function that is not converted yet and is called with
#    staged arguments is converted on the fly (through the Convert RPC, or the
#    converter set with `set_converter`), so its control flow stages too.
# Plain arguments always get a plain Python call.
import ast
import contextvars
import functools
import inspect
import sys
import sysconfig
import textwrap
import types
import weakref

from ..client import default_client
from . import sexpr as _sx
from . import speculation
from .errors import StagingError, _code_maps
from .staged import Staged, emit, item_of

_rep_funs = {}  # (module, qualname) of every @rep_fun function


def _key(fn):
    return (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None))


def _has_staged(v):
    if isinstance(v, Staged):
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_staged(x) for x in v)
    if isinstance(v, dict):
        return any(_has_staged(x) for x in v.values())
    return False


def _staging_with(args, kwargs):
    return bool(_sx._stack) and (any(isinstance(a, Staged) for a in args)
                                 or any(isinstance(a, Staged) for a in kwargs.values()))


def stage_call(fn, args, kwargs, key=None):
    """Emits `(NAME$N staged-args…)` for fn(*args, **kwargs), staging fn's body as the
    def NAME$N (once per rep function and values of its plain arguments)."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"stagd: calling {fn.__qualname__}: {e}") from None
    bound.apply_defaults()
    names, values = list(bound.arguments), list(bound.arguments.values())
    for n, v in zip(names, values):
        p = bound.signature.parameters[n]
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise StagingError(f"stagd: @rep_fun {fn.__qualname__} takes *{n}: a staged function "
                            "needs a fixed list of parameters")
        if not isinstance(v, Staged) and _has_staged(v):
            raise StagingError(f"stagd: @rep_fun {fn.__qualname__}: argument {n!r} holds staged "
                            "values inside a container; pass them as separate arguments")
    staged = [isinstance(v, Staged) for v in values]
    try:
        sig = tuple("S" if s else (type(v).__name__, repr(v)) for s, v in zip(staged, values))
    except Exception:  # noqa: BLE001 — an argument without a usable repr
        sig = tuple("S" if s else ("id", id(v)) for s, v in zip(staged, values))
    memo_key = (key or _key(fn), sig)
    name = _sx.defs_memo.get(memo_key)
    if name is None:
        name = _sx.fresh(fn.__name__)
        _sx.defs_memo[memo_key] = name  # before the body: a recursive call finds it
        params = [_sx.fresh(n) for n, s in zip(names, staged) if s]
        it = iter(params)
        for n, s in zip(names, staged):
            if s:
                bound.arguments[n] = Staged(next(it))
        b = _sx.push()
        b.bound = {p: v for p, v in zip(params, [v for v, s in zip(values, staged) if s])}
        body = _convert(fn) or fn  # its control flow stages too (the converted twin)
        try:
            result = body(*bound.args, **bound.kwargs)
            body = b.close(_sx.literal(result))
        finally:
            _sx.pop(b)
        _sx.add_def(f"(def {name} ({' '.join(params)}) {body})")
    return emit("(" + name + "".join(" " + v.sexpr for v, s in zip(values, staged) if s) + ")")


def rep_fun(fn):
    """Decorator (Snek's @rep_fun): staged calls of fn become calls of a staged def.
    Called with plain values only, fn runs as plain Python."""
    key = _key(fn)
    _rep_funs[key] = True

    def make(impl, k, staging_with, stage):
        # only closure variables: the code runs with fn's globals (below)
        def rep_fun_call(*args, **kwargs):
            if staging_with(args, kwargs):
                return stage(impl, args, kwargs, k)
            return impl(*args, **kwargs)
        return rep_fun_call

    wrapper = make(fn, key, _staging_with, stage_call)
    # The wrapper gets fn's globals, so code that copies a function's globals to run a
    # converted twin of it (stagd.function) sees the user's module, not this one.
    wrapper = types.FunctionType(wrapper.__code__, fn.__globals__, fn.__name__, None,
                                 wrapper.__closure__)
    functools.update_wrapper(wrapper, fn)
    wrapper.__stagd_rep_fun__ = True
    return wrapper


# ------------------------------------------------------------ converting callees

_converter = [None]  # callable(source, filename) -> converted module text, or False
_converted = weakref.WeakKeyDictionary()  # function -> converted twin (or None)


def set_converter(convert):
    """Sets how converted_call converts a user function called with staged arguments:
    convert(source, filename) returns the converted module's text (None: the Convert
    RPC of the default client; False: never convert, call callees as they are).
    Returns the previous setting."""
    old = _converter[0]
    _converter[0] = convert
    return old


def _library_dirs():
    paths = sysconfig.get_paths()
    dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(d for d in dirs if d)


def _convertible(fn):
    if not isinstance(fn, types.FunctionType) or fn.__code__.co_freevars:
        return False  # builtins, classes, closures (their cells cannot be re-created)
    if getattr(fn, "__stagd_rep_fun__", False):
        return False
    if fn.__code__ in _code_maps:
        return False  # already converted
    mod = (fn.__module__ or "").split(".")[0]
    if mod in ("stagd", "numpy") or mod in sys.builtin_module_names:
        return False
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        return False
    return bool(path) and not path.startswith(_library_dirs())


# The client of the stagd.function being traced: callees met while tracing convert
# through its daemon, not the default client's (which may be another or closed).
tracing_client = contextvars.ContextVar("stagd_tracing_client", default=None)


def _default_convert(source, filename):
    client = tracing_client.get() or default_client()
    reply = client.call("Convert", {"source": source, "filename": filename})
    if any(d.severity == 1 or d.code in ("unsupported-construct", "reserved-name")
           for d in reply.diagnostics):
        return None
    return reply.code


def _convert(fn):
    """fn's converted twin, or None when it cannot be converted."""
    convert = _converter[0]
    if convert is False:
        return None
    if fn in _converted:
        return _converted[fn]
    twin = None
    if _convertible(fn):
        try:
            src = def_source(fn)
            filename = inspect.getsourcefile(fn) or "<stagd converted_call>"
            code = (convert or _default_convert)(src, filename) if src is not None else None
            if code:
                ns = dict(fn.__globals__)
                exec(compile(code, filename, "exec"), ns)
                twin = ns.get(fn.__name__)
                unshadow(ns, fn)
                if twin is not None:
                    twin.__defaults__ = fn.__defaults__
                    twin.__kwdefaults__ = fn.__kwdefaults__
                    g = fn.__globals__
                    twin.__stagd_globals__ = (ns, g, tuple(  # not those it defines itself
                        k for k in _global_names(fn.__code__)
                        if (k in g and ns.get(k) is g[k]) or k not in ns))
        except (OSError, SyntaxError, IndexError):
            twin = None
    _converted[fn] = twin
    return twin


def def_source(fn):
    """fn's dedented source with its decorators blanked (the converted twin is the bare
    function), at its line numbers in its file — blank lines before it — so the
    converter's source map, its diagnostics and tracebacks of the converted code name
    the file's lines; None when fn is not defined by a def statement."""
    lines, first = inspect.getsourcelines(fn)
    src = textwrap.dedent("".join(lines))
    node = ast.parse(src).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    lines = src.splitlines(keepends=True)
    for i in range(node.lineno - 1):
        lines[i] = "\n"
    return "\n" * max(first - 1, 0) + "".join(lines)


def _global_names(code):
    """The names code (and the code nested in it) may read as globals."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.update(c.co_names)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return out


def _refresh(twin):
    """A twin runs in a copy of its module's globals made when it was converted: before
    each call, the globals its function reads get their values of now (a rebound global
    of a callee is a guard of the caller's trace, and its retrace must see the new
    value)."""
    ns, g, names = twin.__stagd_globals__
    for k in names:
        v = g.get(k, ns)
        if v is ns:
            ns.pop(k, None)
        else:
            ns[k] = v


def unshadow(ns, fn):
    """Executing a method's converted twin in a copy of its module's globals bound its
    name there: a method `abs` would shadow the builtin `abs` its own body calls. The
    module's own binding (or none) comes back; a module-level function keeps its twin
    (its recursive calls reach it)."""
    if "." in getattr(fn, "__qualname__", ""):
        name = fn.__name__
        if name in fn.__globals__:
            ns[name] = fn.__globals__[name]
        else:
            ns.pop(name, None)


def _item(x):
    return x.item()


def _profiled_item(x):
    """x.item() as a fact speculation profiles (runtime/speculation.py); a Variable
    while tracing: item() of a staged read, with the Variable's own dtype and shape
    (fixed for its life; staging's probe does not know a read's)."""
    staged = _item
    if _sx._stack and hasattr(type(x), "_stagd_operand"):
        t = ("tensor", x.dtype, tuple(x.shape))
        x = x.read_value()
        staged = lambda s: item_of(s, t)  # noqa: E731
    return speculation.scalar("item", x, _item, staged, depth=2)


def _is_item(fn):
    """Whether fn is a tensor's bound item() (a stagd.Tensor / Variable or a Staged)."""
    if not isinstance(fn, types.MethodType) or fn.__name__ != "item":
        return False
    x = fn.__self__
    return isinstance(x, Staged) or speculation._eager(x)


def converted_call(fn, args, kwargs):
    """A call the converter could not resolve statically. Plain arguments: fn(*args,
    **kwargs). Staged arguments: a @rep_fun (or the converted twin of one) is staged as
    a def and called; a user function not converted yet is converted first."""
    if speculation._states and not args and not kwargs and _is_item(fn):
        return _profiled_item(fn.__self__)
    profiling = speculation._states and speculation.profiling(args, kwargs)
    if _staging_with(args, kwargs) or profiling:
        if _key(fn) in _rep_funs and not getattr(fn, "__stagd_rep_fun__", False):
            if profiling:  # a @rep_fun profiled: its plain Python body runs
                return fn(*args, **kwargs)
            return stage_call(fn, args, kwargs, _key(fn))  # the converted twin of a @rep_fun
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
            twin = _convert(fn.__func__)
            if twin is not None:
                _refresh(twin)
                return twin(fn.__self__, *args, **kwargs)
        else:
            twin = _convert(fn)
            if twin is not None:
                _refresh(twin)
                return twin(*args, **kwargs)
    return fn(*args, **kwargs)
