"""A virtual clock on which scheduling takes time: the Simulator with a cost model.

:class:`~ksched.simulator.Simulator` runs scheduling cycles in no virtual time by default, so
churn paced in time (upstream's ``churn`` op creates an object every ``intervalMilliseconds``)
would never interleave with the pods it should slow down. :func:`paced_simulator` makes one
whose every scheduling attempt costs ``cycle_seconds`` of virtual time (the cost model; the
timeline's events that come due meanwhile apply after the attempt) and which asks a
:class:`Script` what to do next after every attempt and whenever the loop goes idle, through
the simulator's ``on_cycle`` hook. scheduler_perf's ops run as such a script
(:mod:`ksched.perf.script`), so an op that waits (for pods to be scheduled, a barrier) holds
the ops after it until its condition holds, or until the loop is idle and nothing can change.

Cost model: one attempt (a pod popped from the queue, its cycle run, preemption included)
costs ``cycle_seconds`` (default :data:`CYCLE_SECONDS`, 4 ms: about the 250 pods/s upstream's
CI measures for its basic workloads); creating, deleting and updating objects cost nothing.
Throughput measured on this clock is therefore ``1 / cycle_seconds`` times the share of
attempts that bind a measured pod: it shows what churn, retries and preemption cost in
attempts, not ksched's speed (the ``clock: virtual`` label says so in the results).
"""

from __future__ import annotations

from typing import Any, Protocol

from ksched.constants import PERF_CYCLE_SECONDS
from ksched.errors import ArgumentError
from ksched.simulator import Simulator

__all__ = ["CYCLE_SECONDS", "Script", "paced_simulator"]

#: The default virtual cost of one scheduling attempt, in seconds.
CYCLE_SECONDS = PERF_CYCLE_SECONDS


class Script(Protocol):
    """What drives a paced :class:`~ksched.simulator.Simulator` run besides its timeline."""

    def poll(self, sim: Simulator, idle: bool) -> None:
        """Act at ``sim.now``: push events, change nodes. ``idle``: only a later event of the
        timeline (or of the queue's timers) can change anything now."""


def paced_simulator(cluster: Any, script: Script, cycle_seconds: float = CYCLE_SECONDS,
                    **options: Any) -> Simulator:
    """A :class:`~ksched.simulator.Simulator` whose attempts cost ``cycle_seconds`` (> 0) of
    virtual time, driven by ``script``; ``options`` are the simulator's keyword arguments."""
    if not cycle_seconds > 0:
        raise ArgumentError(f"cycle_seconds: must be > 0, got {cycle_seconds!r}")
    return Simulator(cluster, cycle_seconds=cycle_seconds, on_cycle=script.poll, **options)
