"""Start-up: ``import ksched`` loads its public names on first use; numba's compiled kernels
go to the cache folder (``NUMBA_CACHE_DIR`` when set), one folder per version of the kernels'
sources, never into the installed package; a run compiles only what it calls.

Speed is measured in ``benchmarks/bench_startup.py``; nothing here is timed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import ksched
from ksched.kernels.compile_clock import COMPILING

ROOT = Path(__file__).resolve().parents[1]

#: Modules a plain ``ksched demo`` has no use for.
UNUSED_BY_DEMO = ("ksched.planning", "ksched.sweep", "ksched.simulator", "ksched.explain",
                  "pandas", "pyarrow", "matplotlib", "ray", "kubernetes")

#: Run in a fresh process: every write into the installed package's folders fails as on a
#: read-only install (an audit hook, so the test means the same run as root), then the
#: command line given as arguments runs; the refused writes, the modules loaded and numba's
#: cache statistics are printed as the last line.
READ_ONLY = r"""
import importlib.util, json, os, sys
from pathlib import Path

ROOTS = tuple(str(Path(importlib.util.find_spec(name).origin).parent) + os.sep
              for name in ("ksched", "ksched.kernels"))
WRITES = {"os.mkdir", "os.rename", "os.replace", "os.remove", "os.rmdir", "os.utime",
          "os.chmod", "os.symlink", "os.link", "os.truncate"}
MOVES = {"os.rename", "os.replace", "os.symlink", "os.link"}  # the written path comes second
refused = []


def read_only(event, args):
    if event == "open":
        path, mode, flags = args
        writing = (any(c in mode for c in "wax+") if isinstance(mode, str)
                   else bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)))
    elif event in WRITES:
        path, writing = args[1] if event in MOVES else args[0], True
    else:
        return
    if writing and isinstance(path, (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(path))
        if (path + os.sep).startswith(ROOTS):
            refused.append(path)
            raise PermissionError(13, "Read-only file system", path)


sys.addaudithook(read_only)
from ksched.cli import main

status = main(sys.argv[1:])
from numba.core.registry import CPUDispatcher

dispatchers = {id(v): v for name, module in list(sys.modules.items())
               if name.startswith("ksched.kernels.") for v in vars(module).values()
               if isinstance(v, CPUDispatcher)}.values()
print(json.dumps({"status": status, "refused": refused, "modules": sorted(sys.modules),
                  "hits": sum(sum(d.stats.cache_hits.values()) for d in dispatchers),
                  "misses": sum(sum(d.stats.cache_misses.values()) for d in dispatchers)}))
"""
DEMO = ["demo", "--nodes", "20", "--running", "5", "--pending", "30"]


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(changes, PYTHONDONTWRITEBYTECODE="1")
    return env


def _python(program: str, *args: str, env: dict[str, str], cwd: Path) -> Any:
    """What ``program`` printed last, as JSON (a run's report)."""
    return json.loads(_run(program, *args, env=env, cwd=cwd).stdout.strip().splitlines()[-1])


def _run(program: str, *args: str, env: dict[str, str], cwd: Path) -> Any:
    done = subprocess.run([sys.executable, "-c", program, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _report(program: str, *args: str, env: dict[str, str], cwd: Path) -> dict:
    """:func:`_python`'s report, with what the run printed on each stream."""
    done = _run(program, *args, env=env, cwd=cwd)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stdout": done.stdout,
            "stderr": done.stderr}


def _cache_files(folder: Path) -> list[Path]:
    return [p for pattern in ("*.nbi", "*.nbc") for p in folder.rglob(pattern)]


def test_every_public_name_resolves() -> None:
    assert set(dir(ksched)) >= set(ksched.__all__)
    assert len(set(ksched.__all__)) == len(ksched.__all__)
    for name in ksched.__all__:
        value = getattr(ksched, name)
        assert not isinstance(value, types.ModuleType), name
        assert getattr(value, "__module__", "ksched").startswith("ksched"), name
    assert ksched.Cluster is ksched.ClusterState
    assert ksched.PodTable.__name__ == "PodTable"
    namespace: dict = {}
    exec("from ksched import *", namespace)  # the star import users write
    assert set(namespace) - {"__builtins__"} == set(ksched.__all__)


def test_functions_named_like_modules_stay_functions() -> None:
    """``ksched.explain`` and ``ksched.sweep`` are functions, even once the modules of those
    names are imported (which binds a submodule on its package)."""
    import ksched.explain
    import ksched.sweep.run  # noqa: F401

    assert callable(ksched.explain) and ksched.explain.__module__ == "ksched.explain"
    assert callable(ksched.sweep) and not isinstance(ksched.sweep, types.ModuleType)


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'schedule'"):
        ksched.schedule
    with pytest.raises(ImportError):
        exec("from ksched import not_a_name")


def test_import_ksched_loads_no_engine(tmp_path: Path) -> None:
    """``import ksched`` and the command line's parser load neither numba nor the engine."""
    program = ("import json, sys, ksched; from ksched.cli import build_parser; build_parser(); "
               "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120, check=True)
    modules = set(json.loads(done.stdout))
    assert modules.isdisjoint({"numba", "scipy", "ksched.engine", "ksched.state", "yaml",
                               *UNUSED_BY_DEMO}), modules


def test_read_only_install_caches_in_numba_cache_dir(tmp_path: Path) -> None:
    """A run whose package folders cannot be written, with ``NUMBA_CACHE_DIR`` set: the demo
    works, nothing is written next to the sources, the compiled kernels land in this
    version's folder of ``NUMBA_CACHE_DIR`` and the next run loads them from there."""
    cache = tmp_path / "numba-cache"
    env = _env(NUMBA_CACHE_DIR=str(cache))
    first = _report(READ_ONLY, *DEMO, env=env, cwd=tmp_path)
    assert (first["status"], first["refused"]) == (0, [])
    assert first["misses"] > 0
    # A first run says it compiles, and reports the compile apart from its scheduling.
    assert first["stderr"].startswith(f"ksched: {COMPILING}\n")
    assert re.search(r"^kernels compiled in \d+\.\ds \(once after an install", first["stdout"],
                     re.MULTILINE)
    assert set(first["modules"]).isdisjoint(UNUSED_BY_DEMO)
    files = _cache_files(cache)
    assert files
    versions = {p.relative_to(cache).parts[0] for p in files}
    assert len(versions) == 1 and re.fullmatch(r"ksched-[0-9a-f]{16}", versions.pop())
    again = _report(READ_ONLY, *DEMO, env=env, cwd=tmp_path)
    assert (again["status"], again["refused"], again["misses"]) == (0, [], 0)
    assert again["hits"] > 0
    assert "compiling" not in again["stderr"] + again["stdout"]
    assert re.search(r"^kernels loaded from the cache in \d+\.\d\ds$", again["stdout"],
                     re.MULTILINE)
    assert sorted(_cache_files(cache)) == sorted(files)


def test_other_versions_folders_are_removed(tmp_path: Path) -> None:
    """Only the most recently used versions keep a folder; in ksched's own cache folder
    anything else (the layout of older ksched releases) goes too, while in a shared
    ``NUMBA_CACHE_DIR`` other programs' files stay."""
    program = ("import json; from ksched.kernels import _jit; "
               "print(json.dumps([_jit.KEPT_VERSIONS, str(_jit.kernel_cache_dir())]))")
    for env, root, ours in ((_env(XDG_CACHE_HOME=str(tmp_path / "xdg")),
                             tmp_path / "xdg" / "ksched" / "numba", True),
                            (_env(NUMBA_CACHE_DIR=str(tmp_path / "shared")),
                             tmp_path / "shared", False)):
        root.mkdir(parents=True)
        old = [root / f"ksched-{n:016x}" for n in range(5)]
        for age, folder in enumerate(old):
            (folder / "kernels_0").mkdir(parents=True)
            (folder / "kernels_0" / "f-1.py311.nbi").write_bytes(b"")
            os.utime(folder, (1e9 - age, 1e9 - age))  # old[0] the most recently used
        (root / "kernels_deadbeef").mkdir()  # not a version folder
        kept, current = _python(program, env=env, cwd=tmp_path)
        assert sorted(root.iterdir()) == sorted(
            [Path(current), *old[:kept - 1], *([] if ours else [root / "kernels_deadbeef"])])


def test_the_cache_follows_every_kernel_source() -> None:
    """Every kernel module and what they import from ksched (constants frozen into the
    compiled code) make the version, since numba checks only a function's own file."""
    from ksched.kernels import _jit

    sources = {p.resolve() for p in _jit.kernel_sources()}
    assert {p.resolve() for p in (ROOT / "kernels").glob("*.py")} <= sources
    assert (ROOT / "ksched" / "constants.py").resolve() in sources
    assert re.fullmatch(r"[0-9a-f]{16}", _jit.sources_digest())


def test_kernels_for_kernels_answer_python_too() -> None:
    """The loop's helpers are compiled for other kernels only, without numba's entry points
    for Python and C callers (they unbox every argument, tuples of arrays included: a fifth
    of a cold start's compile). Called from Python, as their own tests do, they run a copy
    compiled with an entry point, kept out of the cache, whose results are the kernel's."""
    import numpy as np

    from ksched.kernels import _jit, failure_tally, loop_steps, selection_tree, tree_run

    for kernel in (failure_tally.tally_failure, loop_steps.place, selection_tree.select_in_tree,
                   selection_tree.tree_width, tree_run.tree_classes):
        assert isinstance(kernel, _jit.InnerKernel), kernel
        assert kernel.targetoptions["no_cpython_wrapper"], kernel
    assert [selection_tree.tree_width(n) for n in (1, 5, 64)] == [1, 8, 64]
    assert not isinstance(selection_tree.tree_width.python_copy, _jit.InnerKernel)
    count, best, ties = (np.zeros(16, np.int64) for _ in range(3))
    feasible, score = np.array([True, False, True]), np.array([5, 9, 7], np.int64)
    selection_tree.build(count, best, ties, feasible, score)
    assert (count[1], best[1], ties[1]) == (2, 7, 1)
