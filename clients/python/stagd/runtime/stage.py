# SPDX-License-Identifier: Apache-2.0
# Staging one converted function into a `(def NAME (PARAMS) BODY)` S-expression, with
# no daemon involved: every parameter not given a static value becomes a Staged symbol
# (Snek §5). Used by the LSP staging helper (lsp_stage.py); docs/runtime.md "Staging".
import inspect

from . import sexpr as _sx
from .errors import StagingError
from .staged import Staged


def stage_def(fn, name=None, static=None):
    """The S-expression of converted `fn` staged with Staged parameters; `static`
    maps parameter names to plain Python values (hyperparameters)."""
    static = dict(static or {})
    name = name or fn.__name__
    sig = inspect.signature(fn)
    unknown = sorted(set(static) - set(sig.parameters))
    if unknown:
        raise StagingError(f"{name} has no parameter named {', '.join(map(repr, unknown))} "
                           f"(its parameters: {', '.join(sig.parameters) or 'none'})")
    call_args, params = [], []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise StagingError(f"{name} takes *{p.name}: a staged function needs a fixed "
                               "list of parameters")
        if p.kind is p.KEYWORD_ONLY and p.name not in static:
            if p.default is p.empty:
                raise StagingError(f"{name}: keyword-only parameter {p.name!r} needs a "
                                   "static value")
            continue
        if p.name in static:
            call_args.append(static[p.name])
        else:
            params.append(p.name)
            call_args.append(Staged(p.name))
    kwargs = {p.name: static[p.name] for p in sig.parameters.values()
              if p.kind is p.KEYWORD_ONLY and p.name in static}
    b = _sx.push()
    try:
        result = fn(*call_args, **kwargs)
        body = b.close(_sx.literal(result))
    finally:
        _sx.pop(b)
    return f"(def {name} ({' '.join(params)}) {body})", params
