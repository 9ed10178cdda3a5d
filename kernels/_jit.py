"""The one place where numba options are chosen.

``cache=True`` keeps compiled code on disk between processes; ``fastmath`` stays off because
scores must match Go bit for bit; ``error_model="numpy"`` keeps divisions free of Python checks.

The compiled code goes to a per-user cache directory, never next to the sources: numba's
default writes ``__pycache__/*.nbi`` files into site-packages, which fails on a read-only
install and, on a writable one, leaves a ``ksched`` folder behind when pip uninstalls the
package (an editable install made afterwards is then shadowed by it). ``NUMBA_CACHE_DIR``,
when set, wins, as numba documents.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba

_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}


def cache_dir() -> Path:
    """Where ksched's compiled kernels are cached: ``NUMBA_CACHE_DIR`` when set, else
    ``$XDG_CACHE_HOME/ksched/numba`` (``~/.cache/ksched/numba``; ``%LOCALAPPDATA%`` on
    Windows), else, when that cannot be written, a folder of this user in the temporary
    directory."""
    if numba.config.CACHE_DIR:
        return Path(numba.config.CACHE_DIR)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    for candidate in (Path(base) / "ksched" / "numba",
                      Path(tempfile.gettempdir()) / f"ksched-numba-{uid}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(candidate, os.W_OK):
            return candidate
    return Path(tempfile.mkdtemp(prefix="ksched-numba-"))


@functools.cache
def _cache_dir() -> str:
    return str(cache_dir())


@contextlib.contextmanager
def _caching_in_our_folder() -> Iterator[None]:
    """numba picks a function's cache folder when the function is decorated: point its
    setting at ours for that moment only, so other numba code in the process keeps its own."""
    if numba.config.CACHE_DIR:  # NUMBA_CACHE_DIR is set: the user's choice
        yield
        return
    numba.config.CACHE_DIR = _cache_dir()
    try:
        yield
    finally:
        numba.config.CACHE_DIR = ""


def jit(func: Callable | None = None, **options: Any) -> Any:
    """``numba.njit`` with ksched's options (``@jit`` or ``@jit(inline="always")``)."""
    if func is None:
        return functools.partial(jit, **options)
    with _caching_in_our_folder():
        return numba.njit(func, **{**_OPTIONS, **options})
