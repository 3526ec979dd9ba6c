# SPDX-License-Identifier: Apache-2.0
"""progress.py — progress displays for long executions in notebooks and terminals.

    bar = stagd.progress.progress(range(100), desc="training")
    for step in bar:
        loss = train_step(...)
        bar.set_postfix(loss=loss)     # shown after the counts

    with stagd.progress.busy("staged call", threshold=1.0):
        result = f(x)                  # one long call: an elapsed-time display appears
                                       # only when it runs longer than `threshold` s
    g = stagd.progress.timed(f)        # every call of g runs under busy()

In a Jupyter kernel the display is one output updated in place (an HTML <progress>
bar); elsewhere it is one line on stderr rewritten with '\\r'. Both take an `out`
argument (an object with `update(view)` and `close(view)`, where `view` has `.text()`
and `_repr_html_()`) so tests and other front ends can watch what is shown.
"""
import html
import sys
import threading
import time

MIN_INTERVAL = 0.1  # seconds between two redraws of a bar
BUSY_THRESHOLD = 1.0  # seconds a busy() block runs before its display appears
BUSY_INTERVAL = 0.25  # seconds between two redraws of a busy display


def _in_kernel():
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


class TerminalOut:
    """Writes a view as one line of a stream, rewritten in place."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self._width = 0

    def update(self, view):
        line = view.text()
        pad = " " * max(self._width - len(line), 0)
        self._width = len(line)
        self.stream.write("\r" + line + pad)
        self.stream.flush()

    def close(self, view):
        self.update(view)
        self.stream.write("\n")
        self.stream.flush()


class KernelOut:
    """One Jupyter display output, created at once (empty) and updated in place: updates
    may then come from another thread and still reach the right cell."""

    def __init__(self):
        from IPython.display import display
        self._handle = display({"text/plain": "", "text/html": ""}, raw=True, display_id=True)

    def update(self, view):
        self._handle.update({"text/plain": view.text(), "text/html": view._repr_html_()},
                            raw=True)

    close = update


def default_out():
    return KernelOut() if _in_kernel() else TerminalOut()


def _fmt_time(s):
    s = int(s)
    if s < 3600:
        return f"{s // 60:d}:{s % 60:02d}"
    return f"{s // 3600:d}:{s // 60 % 60:02d}:{s % 60:02d}"


class Progress:
    """A bar over `total` steps (None: unknown) with a description and a postfix."""

    def __init__(self, total=None, desc="", out=None, clock=time.monotonic,
                 min_interval=MIN_INTERVAL, width=30, iterable=None):
        if total is not None and total < 0:
            raise ValueError(f"stagd.progress: total must be >= 0, got {total}")
        self.total, self.desc, self.clock = total, desc, clock
        self.min_interval, self.width = min_interval, width
        self.n = 0
        self.iterable = iterable
        self.postfix = {}
        self.start = clock()
        self.closed = False
        self._out = out if out is not None else default_out()
        self._last = None
        self._out.update(self)

    # -- state --------------------------------------------------------------------
    def update(self, n=1):
        self.n += n
        now = self.clock()
        if self._last is None or now - self._last >= self.min_interval or self.n == self.total:
            self._last = now
            self._out.update(self)

    def set_postfix(self, **values):
        self.postfix.update(values)

    def close(self):
        if not self.closed:
            self.closed = True
            self._out.close(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("stagd.progress: this Progress has no iterable (use progress())")
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    # -- rendering ----------------------------------------------------------------
    def _postfix_text(self):
        def fmt(v):
            try:
                return f"{float(v):.4g}"
            except (TypeError, ValueError):
                return str(v)
        return ", ".join(f"{k}={fmt(v)}" for k, v in self.postfix.items())

    def text(self):
        elapsed = self.clock() - self.start
        rate = self.n / elapsed if elapsed > 0 else 0.0
        head = f"{self.desc}: " if self.desc else ""
        if self.total:
            frac = min(self.n / self.total, 1.0)
            fill = int(round(frac * self.width))
            cells = "#" * fill + " " * (self.width - fill)
            bar = f"{frac * 100:3.0f}%|{cells}| {self.n}/{self.total}"
        else:
            bar = f"{self.n} it"
        tail = f" [{_fmt_time(elapsed)}, {rate:.3g} it/s]"
        post = self._postfix_text()
        return head + bar + tail + (f" {post}" if post else "")

    def _repr_html_(self):
        value = f' value="{self.n}" max="{self.total}"' if self.total else ""
        return (f'<div class="stagd-progress"><progress{value} style="width:20em"></progress> '
                f'<code>{html.escape(self.text())}</code></div>')


def progress(iterable, total=None, desc="", out=None, **kw):
    """A `Progress` bar that counts the items of `iterable` as a loop takes them:

        bar = progress(range(100), desc="training")
        for step in bar:
            ...
            bar.set_postfix(loss=loss)

    The bar closes when the loop ends or breaks. `total` defaults to len(iterable)."""
    if total is None:
        try:
            total = len(iterable)
        except TypeError:
            total = None
    return Progress(total, desc, out=out, iterable=iterable, **kw)


class busy:
    """Context manager: while its block runs longer than `threshold` seconds, shows the
    elapsed time (updated every `interval` s) and, at the end, how long it took."""

    def __init__(self, desc="running", threshold=BUSY_THRESHOLD, interval=BUSY_INTERVAL,
                 out=None, clock=time.monotonic):
        if threshold < 0:
            raise ValueError(f"stagd.progress.busy: threshold must be >= 0, got {threshold}")
        self.desc, self.threshold, self.interval, self.clock = desc, threshold, interval, clock
        self._out_arg = out
        self._out = None
        self.shown = False
        self.elapsed = 0.0
        self.failed = False
        self._done = threading.Event()
        self._thread = None

    def text(self):
        if self._done.is_set():
            state = "failed after" if self.failed else "done in"
            return f"{self.desc}: {state} {self.elapsed:.2f} s"
        return f"{self.desc}: running for {_fmt_time(self.elapsed)} ({self.elapsed:.1f} s)"

    def _repr_html_(self):
        bar = "" if self._done.is_set() else '<progress style="width:10em"></progress> '
        return f'<div class="stagd-busy">{bar}<code>{html.escape(self.text())}</code></div>'

    def _watch(self):
        if not self.shown:
            if self._done.wait(self.threshold):
                return
            self.shown = True
        while not self._done.is_set():
            self.elapsed = self.clock() - self.start
            self._out.update(self)
            self._done.wait(self.interval)

    def __enter__(self):
        # The output is made here, on the caller's thread (a kernel routes it to the
        # running cell); the watcher thread only updates it.
        self._out = self._out_arg if self._out_arg is not None else default_out()
        self.start = self.clock()
        if self.threshold == 0:  # shown at once, not when the watcher gets to run
            self.shown = True
            self._out.update(self)
        self._thread = threading.Thread(target=self._watch, name="stagd-busy", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        end = self.clock()
        self._done.set()
        self._thread.join()
        self.elapsed = end - self.start
        self.failed = self.failed or exc_type is not None
        if self.shown:
            self._out.close(self)
        return False


def timed(fn, threshold=BUSY_THRESHOLD, desc=None, out=None):
    """`fn` wrapped so that every call runs under `busy(desc or fn's name, threshold)`:
    `train = stagd.progress.timed(stagd.function(train), threshold=2.0)`."""
    label = desc or getattr(fn, "__name__", "call")

    def call(*args, **kwargs):
        with busy(label, threshold=threshold, out=out):
            return fn(*args, **kwargs)

    call.__name__ = label
    call.__wrapped__ = fn
    return call
