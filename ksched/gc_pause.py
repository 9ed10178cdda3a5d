"""Python's cyclic garbage collector paused around work that allocates millions of
objects without cycles (a simulation run, a batch, reading a snapshot)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector meanwhile. Reference counting frees the
    short-lived objects; the collector would only traverse them (and the cluster's) again and
    again. It resumes as soon as the block ends (if it was enabled before)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()
