"""The compile clock: time numba spends compiling ksched's kernels, kept apart from the work
a command times (``ksched schedule`` and ``ksched demo`` report both)."""

from __future__ import annotations

import numba

from ksched.kernels.compile_clock import Stopwatch, compile_seconds, stopwatch


def _fresh_kernel(module: str):
    """A function numba has never seen (no disk cache), as if defined in ``module``."""

    def add_one(x):
        return x + 1

    add_one.__module__ = module
    return numba.njit(add_one)


def test_a_compile_inside_the_block_is_kept_apart() -> None:
    kernel = _fresh_kernel("ksched.kernels.probe")
    before = compile_seconds()
    with stopwatch() as first:
        assert kernel(1) == 2
    assert first.compiling > 0
    assert compile_seconds() - before >= first.compiling
    assert "compiling kernels, once after an install" in str(first)
    with stopwatch() as again:  # compiled now: nothing to compile
        assert kernel(2) == 3
    assert again.compiling == 0
    assert str(again) == f"{again.seconds:.2f}s"


def test_other_programs_compiles_are_not_counted() -> None:
    kernel = _fresh_kernel("someone_else")
    with stopwatch() as watch:
        assert kernel(1) == 2
    assert watch.compiling == 0


def test_the_work_alone_is_the_wall_time_less_the_compile() -> None:
    watch = Stopwatch()
    watch.seconds, watch.compiling = 0.3149, 18.25
    assert str(watch) == "0.31s (and 18.2s compiling kernels, once after an install)"
