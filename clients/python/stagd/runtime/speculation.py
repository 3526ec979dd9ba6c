# SPDX-License-Identifier: Apache-2.0
# JANUS speculation at the runtime's decision points (docs/client.md "Speculative mode").
# stagd/speculative.py runs a speculative function's first calls imperatively under a
# Recorder, then traces it under a Replay of what they recorded:
#
#   Recorder  (an imperative call: converted code on eager tensors, nothing staged)
#             every decision of converted control flow (if / elif / while test /
#             conditional expression) appends (site, kind, outcome); every float() /
#             int() / bool() of an eager tensor appends (site, kind, value).
#   Replay    (the speculative trace) walks the same events in the same order. A staged
#             decision becomes the profiled outcome plus an in-graph `assume` of it, so
#             the branch not taken and the loop's test after its profiled trip count
#             vanish from the graph; a plain decision must agree with the profile. A
#             scalar read whose value was the same in every profiled call becomes that
#             Python constant plus an `assume` of it; one that varied stays staged.
#             Anything that does not line up (another site, a decision inside staged
#             control flow) raises Abort: that function is traced without speculation.
#
# A site is (code object, bytecode offset) of the converted code's frame that reached
# the decision, so a branch inside a loop has one event per iteration. The state is a
# stack: a trace of a non-speculative stagd.function pushes a Facts (its decisions are its
# own), and the decision points pay one list test when nothing is pushed. Every trace
# pushes one: a plain trace a Facts (float() / int() / bool() of objects whose class
# computes them, which become guards), a speculative one a Replay (a Facts too).
import sys

from . import sexpr as _sx
from .staged import Staged, _operand, apply

_states = []


class Abort(BaseException):
    """The profile does not line up with the trace: trace without speculation. (Not an
    Exception: the traced program's own `except Exception` must not swallow it.)"""


def current():
    return _states[-1] if _states else None


def push(state):
    _states.append(state)


def pop(state):
    assert _states and _states[-1] is state
    _states.pop()


def _eager(x):
    t = sys.modules.get("stagd.tensor")
    return t is not None and isinstance(x, (t.Tensor, t.Variable))


def profiling(args, kwargs):
    """Whether a call with these arguments is part of a profiled call (a Recorder on
    top, nothing staged, an eager tensor among them): converted_call runs the callee's
    converted code then, so that its decisions are profiled as the trace will meet
    them (a callee with staged arguments is converted when tracing)."""
    return (isinstance(current(), Recorder) and not _sx._stack
            and (any(_eager(a) for a in args) or any(_eager(a) for a in kwargs.values())))


_PLAIN_MODULES = ("builtins", "numpy", "stagd")


def _custom(x):
    """An object whose float() / int() / bool() its own class computes (not a Python
    number, string or container, not NumPy's or stagd's)."""
    return type(x).__module__.split(".")[0] not in _PLAIN_MODULES


class Facts:
    """A trace's plain facts: float() / int() / bool() (a decision on it included) of a
    Python object whose class computes them (a schedule's __float__, a buffer's
    __len__). Each becomes a guard of the trace (guards.py "call" guards)."""

    def __init__(self):
        self.calls = []  # (conversion, object, result)

    def _plain(self, conv, x):
        v = conv(x)
        if _custom(x):
            self.calls.append((conv, x, v))
        return v

    def decide(self, where, kind, cond):
        if isinstance(cond, Staged) or not _custom(cond):
            return cond
        return self._plain(bool, cond)

    def scalar(self, where, kind, x, plain, staged):
        return staged(x) if isinstance(x, Staged) else self._plain(plain, x)


class Recorder:
    """The events of one imperative call."""

    def __init__(self):
        self.events = []

    def decide(self, where, kind, cond):
        if _sx._stack:  # a trace inside the call (a stagd.function it calls): not ours
            return cond
        v = bool(cond)
        self.events.append((where, kind, v))
        return v

    def scalar(self, where, kind, x, plain, staged):
        if _sx._stack or not _eager(x):
            return staged(x) if isinstance(x, Staged) else plain(x)
        v = plain(x)
        self.events.append((where, kind, v))
        return v


def _location():
    loc = _sx._user_location()
    return f"{loc[0]}:{loc[1]}" if loc else "?"


class Replay(Facts):
    """Consumes a profile while tracing; `stable[i]` says whether event i's value was the
    same in every profiled call (decisions always are: the profile is only replayed when
    the decisions of its calls agree)."""

    def __init__(self, events, stable):
        super().__init__()
        self.events, self.stable = events, stable
        self.i = 0
        self.builder = None  # the speculative trace's own builder (function.py binds it)
        self.assumptions = []  # one line per assume emitted

    def _here(self):
        stack = _sx._stack
        if not stack:
            return False  # init_scope: plain Python outside the trace
        if stack[-1] is self.builder:
            return True
        raise Abort("a tensor-derived decision inside staged control flow")

    def _assume(self, cond, what):
        n = len(self.assumptions)
        msg = f"[stagd-speculation {n}] {what} at {_location()}"
        self.assumptions.append(msg[msg.index("]") + 2:])
        _sx.current().emit(f"(assume {cond.sexpr} {_sx.literal(msg)})")

    def decide(self, where, kind, cond):
        if not self._here():
            return cond
        if self.i >= len(self.events):
            raise Abort("more decisions than profiled")
        ev = self.events[self.i]
        if ev[0] != where or ev[1] != kind:
            raise Abort("the decisions do not follow the profiled ones")
        self.i += 1
        if isinstance(cond, Staged):
            test = cond if ev[2] else apply("not", cond)
            self._assume(test, f"{kind} taken {'true' if ev[2] else 'false'}")
            return ev[2]
        v = self._plain(bool, cond)
        if v != ev[2]:
            raise Abort("a plain decision differs from the profiled one")
        return v

    def scalar(self, where, kind, x, plain, staged):
        if not isinstance(x, Staged):
            return self._plain(plain, x)
        if not self._here():
            return staged(x)
        s = staged(x)
        if self.i >= len(self.events) or self.events[self.i][:2] != (where, kind):
            return s  # not a tensor when profiled (a Python number argument)
        i = self.i
        self.i += 1
        if not self.stable[i]:
            return s
        v = self.events[i][2]
        self._assume(apply("==", s, v), f"{kind}() == {v!r}")
        return v

    def finish(self):
        if self.i != len(self.events):
            raise Abort("the trace made fewer decisions than profiled")


def decide(kind, cond, depth=1):
    """cond as the decision point `kind` should use it, at the site of the frame `depth`
    levels above the caller (the caller tests `_states` first: this runs only while a
    speculative function runs)."""
    if _sx._stack:
        cond = _operand(cond)  # a Variable while tracing: a staged read, as in scalar()
    st = _states[-1]
    if st is None:
        return cond
    f = sys._getframe(depth + 1)
    return st.decide((f.f_code, f.f_lasti), kind, cond)


def scalar(kind, x, plain, staged, depth=1):
    """float() / int() / bool() of x (`plain` on values, `staged` on staged ones) at
    the site of the frame `depth` levels above the caller."""
    if _sx._stack:
        x = _operand(x)  # a Variable while tracing: a staged read (its value is not fixed)
    st = _states[-1]
    if st is None:
        return staged(x) if isinstance(x, Staged) else plain(x)
    f = sys._getframe(depth + 1)
    return st.scalar((f.f_code, f.f_lasti), kind, x, plain, staged)
