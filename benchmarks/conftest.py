"""Benchmark fixtures: workloads built once per session, kernels compiled before timing."""

from __future__ import annotations

import pytest

import ksched
from ksched.workloads import WORKLOADS


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Benchmarks time one process: the test suite's ``-n auto`` (pyproject) is dropped here,
    since pytest-benchmark disables itself under xdist."""
    if getattr(config.option, "numprocesses", None):
        config.option.numprocesses = 0


@pytest.fixture(scope="session", autouse=True)
def compiled() -> float:
    """Compile (or load from numba's cache) every kernel and the fused loop, untimed."""
    return ksched.warmup()


@pytest.fixture(scope="session")
def unit(compiled: float) -> float:
    """U, the naive full-scan loop's pods/s on this machine, in this session: speeds are
    reported as multiples of it (``x_U`` in ``extra_info``), since machines differ."""
    from ksched.kernels.naive_unit import unit as naive_unit

    return naive_unit()


_built: dict[str, tuple] = {}


@pytest.fixture
def workload(request: pytest.FixtureRequest):
    """The (workload, cluster, pods) named by the test's ``name`` parameter."""
    name = request.param
    if name not in _built:
        _built.clear()  # keep one big cluster in memory at a time
        _built[name] = WORKLOADS[name].make()
    cluster, pods = _built[name]
    return WORKLOADS[name], cluster, pods
