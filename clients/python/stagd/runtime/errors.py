# SPDX-License-Identifier: Apache-2.0
# API version check, source maps and undefined-variable markers (the runtime's lowest
# module: it imports none of the others).
import sys
import types
import weakref

API_VERSION = 2
# 2 added elif_stmt / elif__ (flat if-elif chains); code converted for 1 still runs.
_SUPPORTED = (1, 2)


def require_api(version):
    if version not in _SUPPORTED:
        raise ImportError(f"converted code needs stagd runtime API {version}, this runtime has {API_VERSION}")


class SourceMap:
    """Converted line -> (original line, column) for one converted file."""

    def __init__(self, filename, lines):
        self.filename = filename
        self.lines = dict(lines)

    def locate(self, line):
        return self.lines.get(line)


class _CodeMaps:
    """Code object of converted code → its SourceMap, by identity and weakly. (Not a
    WeakKeyDictionary: code objects compare by value, so two converted functions with
    equal bodies on the same lines — in different files — shared one entry, the later
    one's map answered for both, and when either died the entry went for both: errors
    of the survivor lost their source location.)"""

    def __init__(self):
        self._d = {}  # id(code) → (weak reference to code, SourceMap)

    def __setitem__(self, code, source_map):
        key = id(code)

        def gone(ref, key=key, d=self._d):
            e = d.get(key)
            if e is not None and e[0] is ref:
                del d[key]

        self._d[key] = (weakref.ref(code, gone), source_map)

    def get(self, code, default=None):
        e = self._d.get(id(code))
        return e[1] if e is not None and e[0]() is code else default

    def __contains__(self, code):
        return self.get(code) is not None


_code_maps = _CodeMaps()  # code object of converted code -> SourceMap


def _register(code, source_map):
    _code_maps[code] = source_map
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _register(const, source_map)


def converted(source_map):
    """Decorator on every converted function. It returns the function itself, so
    identity, signature, defaults, attributes and call cost are exactly the
    original's (the contract: converted code behaves as the original), and registers
    its code (and that of the helpers nested in it) with `source_map`. Where an
    exception from converted code is reported, `original_locations(exc)` and
    `add_location_notes(exc)` map its frames back to the original source; the
    interpreter's excepthook does so for uncaught exceptions."""

    def wrap(fn):
        code = getattr(fn, "__code__", None)
        if code is not None:
            _register(code, source_map)
            _install_excepthook()
        return fn
    return wrap


def original_locations(exc):
    """(file, line, column) of each converted frame of exc's traceback, innermost last."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        smap = _code_maps.get(tb.tb_frame.f_code)
        loc = smap.locate(tb.tb_lineno) if smap is not None else None
        if loc is not None:
            out.append((smap.filename, loc[0], loc[1]))
        tb = tb.tb_next
    return out


def add_location_notes(exc):
    """Adds one PEP 678 note per converted frame ("converted from FILE:LINE:COL"),
    once; returns exc."""
    if getattr(exc, "_stagd_noted", False):
        return exc
    for filename, line, col in original_locations(exc):
        exc.add_note(f"  converted from {filename}:{line}:{col}")
    try:
        exc._stagd_noted = True
    except AttributeError:
        pass
    return exc


_hook_installed = False


def _install_excepthook():
    global _hook_installed
    if _hook_installed:
        return
    _hook_installed = True
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        if exc is not None:
            add_location_notes(exc)
        previous(exc_type, exc, tb)
    sys.excepthook = hook


RUNTIME_NAMES = ("sg__", "sg__source_map__")


def public_names(module_globals):
    """What `from m import *` imports from a converted module without `__all__` (its
    last line sets `__all__` to this): the public names, not the runtime's."""
    return [n for n in module_globals if not n.startswith("_") and n not in RUNTIME_NAMES]


class StagingError(TypeError):
    """A program stagd cannot stage with Python's meaning: the message says what and
    where (file and line of the construct). Raised by staging, never by plain code."""


class Undefined:
    """Marks a variable that may not be bound yet (`x = sg__.Undefined('x')`); `reason`
    says why, when staging left it unbound (docs/runtime.md "Staging")."""
    __slots__ = ("name", "reason")

    def __init__(self, name, reason=None):
        self.name = name
        self.reason = reason

    def __repr__(self):
        return f"Undefined({self.name!r})"


def ld(value, free=False, comp=False):
    """Read a variable that may be Undefined, raising what Python would raise: `free`
    marks a read from a nested function or lambda (NameError), `comp` one from a list /
    set / dict comprehension (a nested function before Python 3.12, inlined since)."""
    if isinstance(value, Undefined):
        read = getattr(value, "staged_read", None)
        if read is not None:  # bound on some staged paths only (merge.py)
            return read()
        if free or (comp and sys.version_info < (3, 12)):
            raise NameError(f"cannot access free variable '{value.name}' where it is not "
                            f"associated with a value in enclosing scope")
        raise UnboundLocalError(f"cannot access local variable '{value.name}' where it is not "
                                f"associated with a value"
                                + (f" (stagd: {value.reason})" if value.reason else ""))
    return value
