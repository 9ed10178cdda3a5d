"""The one place where numba options are chosen.

``cache=True`` keeps compiled code on disk between processes; ``fastmath`` stays off because
scores must match Go bit for bit; ``error_model="numpy"`` keeps divisions free of Python checks.
No kernel gets the entry point numba adds for C callers (``no_cfunc_wrapper``: nothing takes
a kernel's address), and a kernel only other kernels call gets none for Python either
(``jit(inner=True)``, :class:`InnerKernel`): those entry points unbox or box every argument,
tuples of arrays included, and made up a fifth of a cold start's compile.

The compiled code goes to a per-user cache directory, never next to the sources: numba's
default writes ``__pycache__/*.nbi`` files into site-packages, which fails on a read-only
install and, on a writable one, leaves a ``ksched`` folder behind when pip uninstalls the
package (an editable install made afterwards is then shadowed by it). ``NUMBA_CACHE_DIR``,
when set, wins, as numba documents. Inside it, each version of the kernels' sources has its
own folder (:func:`kernel_cache_dir`), and old versions' folders are removed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core.registry import CPUDispatcher

from . import compile_clock  # noqa: F401 - times every compile from the first kernel on

_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy", "no_cfunc_wrapper": True}


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


#: How many versions of the kernels keep their compiled code (the one running and the most
#: recently used others), so that two installs used in turn do not recompile each other's.
KEPT_VERSIONS = 3
_VERSION_PREFIX = "ksched-"
_DEPENDENCY = re.compile(r"^from (ksched\.[\w.]+) import", re.MULTILINE)


def kernel_sources() -> list[Path]:
    """The files the compiled kernels are made of: every module of this package and the
    ksched modules they import (their constants are frozen into the compiled code)."""
    here = Path(__file__).parent
    files = sorted(here.glob("*.py"))
    imported = {name for path in files for name in _DEPENDENCY.findall(path.read_text("utf-8"))}
    for name in sorted(imported - {f"ksched.kernels.{path.stem}" for path in files}):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            files.append(Path(spec.origin))
    return files


def sources_digest() -> str:
    """A digest of :func:`kernel_sources` and numba's version.

    numba checks only a function's own source file before reusing its compiled code, not the
    files of the kernels it calls: a changed callee would otherwise run stale inside an
    unchanged caller. Keeping each version of the sources in its own folder rules that out."""
    digest = hashlib.sha256(f"numba {numba.__version__}".encode())
    for path in kernel_sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def kernel_cache_dir() -> Path:
    """This version's folder in :func:`cache_dir`. The folders of versions not among the
    :data:`KEPT_VERSIONS` most recently used are removed, and, in ksched's own cache folder
    (not one ``NUMBA_CACHE_DIR`` names, which other programs share), anything else."""
    root = cache_dir()
    folder = root / f"{_VERSION_PREFIX}{sources_digest()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)  # marks it used
    except OSError:
        return folder  # numba then finds it unwritable, as any folder it cannot cache in
    with contextlib.suppress(OSError):  # tidying up never stops a run
        _remove_unused(root, folder, ours=not numba.config.CACHE_DIR)
    return folder


def _remove_unused(root: Path, current: Path, ours: bool) -> None:
    def last_used(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    versions, others = [], []
    for path in root.iterdir():
        if path == current:
            continue
        if re.fullmatch(rf"{_VERSION_PREFIX}[0-9a-f]{{16}}", path.name):
            versions.append(path)
        elif ours:
            others.append(path)
    versions.sort(key=last_used, reverse=True)
    for path in versions[KEPT_VERSIONS - 1:] + others:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()


@contextlib.contextmanager
def _caching_in_our_folder() -> Iterator[None]:
    """numba picks a function's cache folder when the function is decorated: point its
    setting at ours for that moment only, so other numba code in the process keeps its own."""
    chosen = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(kernel_cache_dir())
    try:
        yield
    finally:
        numba.config.CACHE_DIR = chosen


class InnerKernel(CPUDispatcher):
    """A kernel compiled for other kernels to call, with no entry point for Python. Called from
    Python (its tests do), it runs a copy compiled with one, which is not cached: the cache
    holds the kernel's own code, which has none."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.python_copy(*args, **kwargs)

    @functools.cached_property
    def python_copy(self) -> Any:
        """The kernel compiled with an entry point for Python, uncached."""
        options = {key: value for key, value in self.targetoptions.items()
                   if key not in ("nopython", "no_cpython_wrapper")}
        return numba.njit(self.py_func, **options)


def jit(func: Callable | None = None, *, inner: bool = False, **options: Any) -> Any:
    """``numba.njit`` with ksched's options (``@jit`` or ``@jit(inline="always")``);
    ``inner``: only other kernels call it (an :class:`InnerKernel`)."""
    if func is None:
        return functools.partial(jit, inner=inner, **options)
    options = {**_OPTIONS, **options}
    with _caching_in_our_folder():
        if not inner or numba.config.DISABLE_JIT:
            return numba.njit(func, **options)
        options.pop("cache")
        kernel = InnerKernel(py_func=func, targetoptions={
            "nopython": True, "no_cpython_wrapper": True, **options})
        kernel.enable_caching()
        return kernel
