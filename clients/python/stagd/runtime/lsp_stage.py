# SPDX-License-Identifier: Apache-2.0
# `python3 -m stagd.runtime.lsp_stage`: the helper the daemon spawns for the LSP request
# stagd/graph (server/lsp_graph.c, docs/lsp.md). The daemon never runs Python itself.
#
# stdin:  one JSON object {"module": converted module text, "filename": the user's file,
#         "function": "f", "static": {"n": 2}}
# stdout: one JSON line, {"ok": true, "sexpr": "(def f (x) ...)", "params": ["x"]} or
#         {"ok": false, "kind": "load" | "staging" | "unsupported" | "request",
#          "type": exception type, "message": ..., "line": L, "column": C}
#         with L, C (1-based) in the user's original source when known.
# What the user's code prints while it is loaded or staged goes to stderr, so it cannot
# corrupt the answer.
import json
import os
import sys
import traceback


def _locate(exc, filename, smap):
    """(line, column) in the original source of the innermost frame of exc's traceback
    that runs the converted module; None when there is none."""
    if isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno:
        loc = smap.locate(exc.lineno) if smap is not None else None
        return loc or (exc.lineno, exc.offset or 1)
    found = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename and smap is not None:
            loc = smap.locate(tb.tb_lineno)
            if loc is not None:
                found = loc
        tb = tb.tb_next
    return found


def _failure(kind, exc, filename=None, smap=None):
    out = {"ok": False, "kind": kind, "type": type(exc).__name__,
           "message": str(exc) or type(exc).__name__}
    loc = _locate(exc, filename, smap) if filename else None
    if loc is not None:
        out["line"], out["column"] = int(loc[0]), int(loc[1])
    if kind in ("load", "staging"):
        out["traceback"] = "".join(traceback.format_exception(exc))[-4000:]
    return out


def stage_request(req):
    """The answer (a dict) for one request."""
    from .calls import set_converter
    from .stage import StagingError, stage_def
    set_converter(False)  # no daemon here: the module arrives converted as a whole
    try:
        module, filename, name = req["module"], req["filename"], req["function"]
        static = req.get("static") or {}
        if not isinstance(static, dict):
            raise TypeError("'static' must be an object")
    except (KeyError, TypeError) as e:
        return {"ok": False, "kind": "request", "type": type(e).__name__,
                "message": f"bad request from the daemon: {e}"}
    ns = {"__name__": "stagd_lsp_stage__", "__file__": filename}
    smap = None
    try:
        code = compile(module, filename, "exec")
        exec(code, ns)
    except BaseException as e:  # noqa: BLE001 — user code may raise anything
        smap = ns.get("sg__source_map__")
        return _failure("load", e, filename, smap)
    smap = ns.get("sg__source_map__")
    if "." in name:
        return {"ok": False, "kind": "unsupported", "type": "StagingError",
                "message": f"{name} is a method: stagd/graph stages module-level functions "
                           "(a method needs an instance to stage)"}
    fn = ns.get(name)
    if not callable(fn):
        return {"ok": False, "kind": "unsupported", "type": "StagingError",
                "message": f"the module defines no function {name!r} when it is loaded"}
    try:
        sexpr, params = stage_def(fn, name, static)
    except StagingError as e:
        return _failure("unsupported", e, filename, smap)
    except BaseException as e:  # noqa: BLE001
        return _failure("staging", e, filename, smap)
    return {"ok": True, "sexpr": sexpr, "params": params}


def main():
    # Keep the real stdout for the answer; everything the user's code prints goes to stderr.
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        req = json.loads(sys.stdin.read())
    except ValueError as e:
        out = {"ok": False, "kind": "request", "type": "ValueError",
               "message": f"bad request from the daemon: {e}"}
    else:
        out = stage_request(req) if isinstance(req, dict) else {
            "ok": False, "kind": "request", "type": "TypeError",
            "message": "bad request from the daemon: not a JSON object"}
    answer.write(json.dumps(out) + "\n")
    answer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
