"""How long numba spends compiling ksched's kernels in this process.

The first run after an install compiles every kernel it calls (tens of seconds); later runs
load them from the disk cache (:mod:`ksched.kernels._jit`). So that a first run neither looks
hung nor reports its compile as scheduling time, this module listens to numba's
``numba:compile`` events (a compile; a load from the cache sends none): the first compile is
announced on the ``ksched`` logger (INFO; the command line prints it), and
:func:`compile_seconds` is the time spent compiling so far, for a command to subtract from
what it times.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from numba.core import event

__all__ = ["COMPILING", "Stopwatch", "compile_seconds", "stopwatch"]

#: What the ``ksched`` logger says when the process starts its first compile.
COMPILING = ("compiling kernels for this machine (once after an install or upgrade; later runs "
             "load them from the cache)...")

_LOG = logging.getLogger("ksched")


class _Clock(event.Listener):
    """Sums the outermost compiles of ksched's kernels (a kernel's callees compile inside it)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.announced = False
        self._depth = 0
        self._started = 0.0
        self._ours = False

    def on_start(self, ev: event.Event) -> None:
        if self._depth == 0:
            self._ours = _is_ours(ev)
            self._started = time.perf_counter()
            if self._ours and not self.announced:
                self.announced = True
                _LOG.info(COMPILING)
        self._depth += 1

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth == 0 and self._ours:
            self.seconds += time.perf_counter() - self._started


def _is_ours(ev: event.Event) -> bool:
    dispatcher = (ev.data or {}).get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module.startswith("ksched")


_CLOCK = _Clock()
event.register("numba:compile", _CLOCK)


def compile_seconds() -> float:
    """Seconds this process has spent compiling kernels (not loading them from the cache);
    a difference of two readings is the compile time between them."""
    return _CLOCK.seconds


class Stopwatch:
    """A block's wall time with the kernel compiling inside it kept apart: ``seconds`` is the
    work alone, ``compiling`` the compile; ``str`` gives both for people."""

    seconds: float = 0.0
    compiling: float = 0.0

    def __str__(self) -> str:
        text = f"{self.seconds:.2f}s"
        if self.compiling >= 0.005:
            text += f" (and {self.compiling:.1f}s compiling kernels, once after an install)"
        return text


@contextlib.contextmanager
def stopwatch() -> Iterator[Stopwatch]:
    """Times the block into the :class:`Stopwatch` it yields (filled in when it ends)."""
    watch = Stopwatch()
    compiled, started = compile_seconds(), time.perf_counter()
    try:
        yield watch
    finally:
        watch.compiling = compile_seconds() - compiled
        watch.seconds = time.perf_counter() - started - watch.compiling
