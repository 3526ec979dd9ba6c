# SPDX-License-Identifier: Apache-2.0
"""speculative.py — JANUS's speculative mode of stagd.function (`speculative=True`,
docs/client.md "Speculative mode"): profile, speculate, fall back.

Per argument key (the key plain stagd.function traces by) a Function keeps a _Key:

  profile     a call with no speculative graph runs imperatively — the converted
              function on eager tensors (NumPy arrays become Tensors), no trace —
              under a runtime/speculation.Recorder: its decisions (if / elif / while
              test / conditional expression) and float() / int() / bool() of tensors,
              in order. The answer is Python's.
  stable      the last PROFILE_CALLS profiles made the same decisions at the same
              sites. Scalar values need not agree: one that did is specialized (a
              constant in the graph), one that varied stays a graph value.
  speculate   then the next call traces the function under a Replay of the profile:
              each staged decision becomes the profiled outcome plus an `assume` node
              (while loops unroll to the profiled trip count), and runs the graph.
  fallback    an `assume` that does not hold stops the Execute with reason
              `speculation` before any Variable changes (Execute is all-or-nothing);
              the call runs imperatively (profiled again) and returns Python's answer.
              The graph is dropped and the key profiles until its decisions are stable
              again, then speculates anew.
  generic     a key whose decisions are not stable after UNSTABLE_AFTER profiles, whose
              graph failed MAX_FALLBACKS times, or whose profile does not line up with
              its trace (runtime/speculation.Abort) is served by plain stagd.function's
              graph (staged if / while, guarded) from then on.

f.stats counts profiled, speculative, fallbacks and speculations besides traces and
guard_failures.
"""
import collections
import dis
import types
import warnings

from .client import SpeculationFailed
from .runtime import speculation

PROFILE_CALLS = 3  # JANUS §3.1: three iterations were enough for its workloads
UNSTABLE_AFTER = 8  # profiles in a row without PROFILE_CALLS equal ones: generic
MAX_FALLBACKS = 4  # failed speculative graphs of one key: generic
_VALUES = ("float", "int", "bool", "item")


class _Key:
    __slots__ = ("history", "profiled", "conc", "fallbacks", "generic", "assumptions")

    def __init__(self):
        self.history = collections.deque(maxlen=PROFILE_CALLS)  # event lists
        self.profiled = 0  # profiles since the last speculative graph was made
        self.conc = None  # the speculative ConcreteFunction
        self.fallbacks = 0
        self.generic = False
        self.assumptions = []  # what conc assumes, one line each


def _shape(events):
    """What must agree between profiles: sites, kinds and decisions (not values)."""
    return [(w, k, None if k in _VALUES else v) for w, k, v in events]


def _same(a, b):
    return type(a) is type(b) and a == b


_WRITES = ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR", "DELETE_ATTR")


def writes_python_state(code):
    """The Python state code assigns (a global, a nonlocal, an attribute), as `(OP,
    NAME)`, or None. A graph cannot do that on each call (JANUS defers such writes
    with PySetAttr ops; stagd does not have them), so such a function always runs
    imperatively."""
    todo, top = [code], code
    while todo:
        c = todo.pop()
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        for ins in dis.get_instructions(c):
            if ins.opname in _WRITES or (c is top and ins.opname == "STORE_DEREF"
                                         and ins.argval in top.co_freevars):
                return ins.opname, ins.argval
    return None


class Speculation:
    def __init__(self, f):
        self.f = f
        self.keys = {}
        self.imperative = writes_python_state(f.fn.__code__)
        if self.imperative is not None:
            warnings.warn(f"stagd.function: {f.fn.__name__} assigns Python state "
                          f"({self.imperative[0]} {self.imperative[1]}): speculative=True "
                          "runs each of its calls imperatively", stacklevel=4)

    def call(self, values):
        f = self.f
        if self.imperative is not None:
            f.stats["profiled"] += 1
            return f._imperative(values, None)
        parts = f._parts(values)
        key = f._key(parts)
        st = self.keys.get(key)
        if st is None:
            st = self.keys[key] = _Key()
        if st.generic:
            return f._call_graph(values, parts)
        if st.conc is not None and not st.conc.guards.holds():
            f.stats["guard_failures"] += 1
            self._drop(st)
        if st.conc is None and self._stable(st):
            try:
                st.conc = self._speculate(st, values, parts)
            except speculation.Abort:
                st.generic = True
                return f._call_graph(values, parts)
        if st.conc is not None:
            try:
                out = st.conc.result(f._execute(st.conc, values, parts))
            except SpeculationFailed:
                f.stats["fallbacks"] += 1
                st.fallbacks += 1
                self._drop(st)
                out = self._profile(st, values)
                if st.fallbacks >= MAX_FALLBACKS:
                    st.generic = True
                return out
            f.stats["speculative"] += 1
            return out
        out = self._profile(st, values)
        if st.profiled >= UNSTABLE_AFTER and not self._stable(st):
            st.generic = True
        return out

    def _drop(self, st):
        st.conc = None
        st.history.clear()
        st.profiled = 0
        st.assumptions = []

    def _stable(self, st):
        h = st.history
        return len(h) == PROFILE_CALLS and all(_shape(e) == _shape(h[0]) for e in h)

    def _profile(self, st, values):
        rec = speculation.Recorder()
        out = self.f._imperative(values, rec)
        st.history.append(rec.events)
        st.profiled += 1
        self.f.stats["profiled"] += 1
        return out

    def _speculate(self, st, values, parts):
        """The speculative graph of this key, traced and staged (speculation.Abort when
        the profile does not line up with the trace, or the trace cannot speculate)."""
        h = list(st.history)
        last = h[-1]
        stable = [k not in _VALUES or all(_same(e[i][2], v) for e in h)
                  for i, (_w, k, v) in enumerate(last)]
        replay = speculation.Replay(last, stable)
        f = self.f
        try:
            conc = f._trace(values, parts, replay)
            if conc.segments:  # a py_func cut: its segments commit one by one
                raise speculation.Abort("a py_func cuts the function into segments")
            conc.graph_id = f._stage(conc).graph_id
        except speculation.Abort:
            raise
        except Exception as e:  # noqa: BLE001 — plain stagd.function reports it
            warnings.warn(f"stagd.function: {f.__name__}: no speculative graph ({e}); "
                          "using the graph of plain stagd.function", stacklevel=4)
            raise speculation.Abort(str(e)) from None
        conc.assumptions = list(replay.assumptions)
        st.assumptions = conc.assumptions
        f.stats["speculations"] += 1
        return conc

    def assumptions(self, values):
        """The assumptions of the speculative graph these arguments select (none yet:
        [])."""
        f = self.f
        st = self.keys.get(f._key(f._parts(values)))
        return list(st.assumptions) if st is not None else []
