"""Start-up, each in a fresh process (issue 15's targets on a slow 2-core machine):

- ``bench_cold_demo``: ``ksched demo`` with an empty numba cache (``NUMBA_CACHE_DIR`` a new
  temporary folder), so every kernel the demo calls is compiled: under 15 s;
- ``bench_warm_demo``: ``ksched demo`` again, the kernels loaded from the user's cache (one
  untimed run fills it): under 2 s;
- ``bench_import``: ``import ksched``.

``extra_info`` holds the median seconds, the demo's own figures (kernels compiled or loaded,
scheduling)
and, for the cold run, the kernels it compiled.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time

DEMO = [sys.executable, "-m", "ksched.cli", "demo"]


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(changes)
    return env


def _run(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900,
                          check=True, cwd=tempfile.gettempdir())
    figures = {"seconds": time.perf_counter() - started}
    for key, pattern in (("kernels_ready_seconds",
                          r"kernels (?:compiled|loaded from the cache) in ([\d.]+)s"),
                         ("scheduling_seconds", r"placed \d+, unschedulable \d+ in ([\d.]+)s")):
        if found := re.search(pattern, done.stdout):
            figures[key] = float(found.group(1))
    return figures


def _cold() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ksched-cold-") as cache:
        figures = _run(DEMO, _env(NUMBA_CACHE_DIR=cache))
        figures["kernels_compiled"] = sum(1 for _, _, files in os.walk(cache)
                                          for f in files if f.endswith(".nbi"))
    return figures


def _measure(benchmark, target, rounds: int, warmup_rounds: int = 0) -> None:
    """``target`` ``rounds`` times after ``warmup_rounds`` untimed ones; the median run's
    figures into ``extra_info``."""
    runs: list[dict[str, float]] = []
    benchmark.pedantic(lambda: runs.append(target()), rounds=rounds, iterations=1,
                       warmup_rounds=warmup_rounds)
    timed = sorted(runs[warmup_rounds:], key=lambda r: r["seconds"])
    median = timed[len(timed) // 2]
    benchmark.extra_info.update(median, median_seconds=median["seconds"],
                                every_run_seconds=[round(r["seconds"], 3) for r in timed])


def bench_cold_demo(benchmark) -> None:
    _measure(benchmark, _cold, rounds=3)


def bench_warm_demo(benchmark) -> None:
    _measure(benchmark, lambda: _run(DEMO, _env()), rounds=3, warmup_rounds=1)


def bench_import(benchmark) -> None:
    _measure(benchmark, lambda: _run([sys.executable, "-c", "import ksched"], _env()),
             rounds=5, warmup_rounds=1)
