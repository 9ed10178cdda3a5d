"""Shared test configuration.

The tests are laid out by layer: ``kernels/`` (numba kernels against plain references),
``plugins/`` (each plugin's Filter/Score against its reference implementation),
``framework/`` (the runtime, the registry, capabilities and the fused loop against the
object path), ``preemption/``, ``planning/``, ``sweep/``, ``bad_inputs/`` (refusals), and at the
top the records, loaders, CLI, simulator and conformance replays.

Hypothesis: no deadline anywhere (numba compiles on first use and CI machines are slow); set
``HYPOTHESIS_PROFILE=thorough`` for 1,000 examples in the tests that do not set their own.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None)
settings.register_profile("thorough", deadline=None, max_examples=1000,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def stretches(monkeypatch) -> list:
    """The steps of each stretch the Simulator commits while the test runs
    (:mod:`ksched.sim_lane`), one list per stretch."""
    from ksched.simulator import Simulator

    committed: list = []
    commit = Simulator._commit_stretch

    def recorded(self, steps, *args):
        committed.append(list(steps))
        return commit(self, steps, *args)

    monkeypatch.setattr(Simulator, "_commit_stretch", recorded)
    return committed
