"""What a simulation records: each pod's decisions, samples of the queue and the cluster, and
the result with its summary (the :class:`~ksched.simulator.Simulator`'s output)."""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import CPU, MEMORY
from ksched.resources import is_extended_resource
from ksched.state import ClusterState
from ksched.utilisation import Usage

#: Decision outcomes, in the event log's ``outcome`` field.
BOUND, UNSCHEDULABLE, PREEMPTING, PREEMPTED = "bound", "unschedulable", "preempting", "preempted"
FINISHED, DELETED, EVICTED, IGNORED = "finished", "deleted", "evicted", "ignored"
WAITING, REJECTED = "waiting", "rejected"

#: ``is_extended_resource`` by name (a sample asks it of every resource).
_is_extended = functools.cache(is_extended_resource)


@attrs.frozen
class Decision:
    """What happened to one pod at one virtual time."""

    time: float
    pod: str
    outcome: str
    node: str | None = None
    reason: str = ""
    victims: tuple[str, ...] = ()
    attempt: int = 0

    def to_record(self) -> dict[str, Any]:
        record = {"time": self.time, "pod": self.pod, "outcome": self.outcome}
        for name in ("node", "reason", "victims", "attempt"):
            value = getattr(self, name)
            if value:
                record[name] = list(value) if name == "victims" else value
        return record


@attrs.frozen
class Sample:
    """The queue and the cluster at one virtual time: ``cpu`` and ``memory`` are the shares
    of the cluster's allocatable requested (fractions); ``extended`` gives, per extended
    resource some node has (GPUs ...), its ``allocatable``, ``requested`` and ``free``
    totals (counts)."""

    time: float
    active: int
    backoff: int
    unschedulable: int
    gated: int
    running: int
    cpu: float
    memory: float
    extended: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)

    @classmethod
    def take(cls, time: float, lengths: Mapping[str, int],
             totals: Mapping[str, tuple[int, int]], running: int) -> Sample:
        """A sample: the queue's ``lengths`` by sub-queue, the pods running, and the
        cluster's ``totals`` (resource -> (allocatable, requested), kept by the simulator's
        :class:`~ksched.utilisation.UtilisationMeter`, not summed over the nodes here)."""
        take = cls.maker(list(totals), [a for a, _ in totals.values()])
        return take(time, lengths, [q for _, q in totals.values()], running)

    @classmethod
    def maker(cls, names: Sequence[str], allocatable: Sequence[int]
              ) -> Callable[[float, Mapping[str, int], Sequence[int], int], Sample]:
        """:meth:`take` for the totals of the resources ``names``, with ``allocatable`` of
        each, worked out once: called with the time, the queue's lengths, the requested
        totals (in ``names``' order) and the pods running."""
        (cpu, cpu_total), (memory, memory_total), extended = sample_layout(names, allocatable)

        def take(time: float, lengths: Mapping[str, int], requested: Sequence[int],
                 running: int) -> Sample:
            return cls(time, lengths["active"], lengths["backoff"], lengths["unschedulable"],
                       lengths["gated"], running,
                       requested[cpu] / cpu_total if cpu_total else 0.0,
                       requested[memory] / memory_total if memory_total else 0.0,
                       {r: {"allocatable": a, "requested": requested[j],
                            "free": a - requested[j]} for j, r, a in extended})

        return take


def sample_layout(names: Sequence[str], allocatable: Sequence[int]
                  ) -> tuple[tuple[int, int], tuple[int, int], list[tuple[int, str, int]]]:
    """What a :class:`Sample` reads of the totals of the resources ``names`` (with
    ``allocatable`` of each): cpu's and memory's (column, allocatable; -1 and 0 where
    missing) and, per extended resource some node has, (column, name, allocatable)."""
    at = {r: j for j, r in enumerate(names)}
    cpu, memory = at.get(CPU, -1), at.get(MEMORY, -1)
    return ((cpu, allocatable[cpu] if cpu >= 0 else 0),
            (memory, allocatable[memory] if memory >= 0 else 0),
            [(j, r, a) for j, (r, a) in enumerate(zip(names, allocatable))
             if a > 0 and _is_extended(r)])


@attrs.frozen(eq=False)
class SimulationResult:
    """The decisions in time order, the samples, the final cluster and where time went."""

    decisions: Sequence[Decision]
    samples: Sequence[Sample]
    state: ClusterState
    created: Mapping[str, float]
    pending: tuple[Pod, ...]
    wall_seconds: float
    queue_seconds: float
    #: Utilisation over the run's virtual time (``None``: not measured).
    usage: Usage | None = None

    def summary(self) -> dict[str, Any]:
        """Pods created and scheduled, p50/p99 virtual time to schedule, preemptions,
        utilisation (time-averaged over the virtual time and its peak, see
        :mod:`ksched.utilisation`; per extended resource too) and the wall time (with the
        queue's share)."""
        pods, times, outcomes = (_column(self.decisions, f) for f in ("pod", "time", "outcome"))
        # each pod's first binding: in reverse time order, the first one is written last
        first_bound = {pod: t for pod, t, outcome in zip(reversed(pods), reversed(times),
                                                         reversed(outcomes)) if outcome == BOUND}
        created = self.created
        waits = np.array(sorted(t - created.get(pod, t) for pod, t in first_bound.items()),
                         dtype=np.float64)
        outcomes = collections.Counter(outcomes)
        count = outcomes.__getitem__
        quantile = (lambda q: float(np.quantile(waits, q, method="inverted_cdf"))  # noqa: E731
                    if len(waits) else None)
        return {
            "pods_created": len(self.created),
            "pods_scheduled": len(first_bound),
            "pods_pending_at_end": len(self.pending),
            "scheduling_attempts": count(BOUND) + count(UNSCHEDULABLE),
            "unschedulable_attempts": count(UNSCHEDULABLE),
            "preemptions": count(PREEMPTING),
            "victims": count(PREEMPTED),
            "time_to_schedule_p50": quantile(0.5),
            "time_to_schedule_p99": quantile(0.99),
            **self._utilisation(),
            "virtual_seconds": self.samples[-1].time if self.samples else 0.0,
            "wall_seconds": round(self.wall_seconds, 3),
            "queue_share": round(self.queue_seconds / self.wall_seconds, 4)
            if self.wall_seconds else 0.0,
        }

    def _utilisation(self) -> dict[str, Any]:
        """``cpu_`` / ``memory_utilisation_mean`` and ``_max``, and per extended resource
        ``extended.<name>.utilisation_mean`` / ``_max`` and its ``allocatable``,
        ``requested`` and ``free`` at the end (``None`` without a measurement)."""
        usage = self.usage
        row: dict[str, Any] = {}
        for r in (CPU, MEMORY):
            row[f"{r}_utilisation_mean"] = None if usage is None else usage.mean.get(r, 0.0)
            row[f"{r}_utilisation_max"] = None if usage is None else usage.peak.get(r, 0.0)
        for r in () if usage is None else usage.extended:
            row[f"extended.{r}.utilisation_mean"] = usage.mean[r]
            row[f"extended.{r}.utilisation_max"] = usage.peak[r]
            row[f"extended.{r}.allocatable"] = usage.allocatable[r]
            row[f"extended.{r}.requested"] = usage.requested[r]
            row[f"extended.{r}.free"] = usage.free(r)
        return row

    def event_log(self) -> Iterable[dict[str, Any]]:
        """The decisions as JSON-ready records, in time order."""
        return (d.to_record() for d in self.decisions)


def _column(decisions: Sequence[Decision], field: str) -> Sequence[Any]:
    """Every decision's ``field``: a column of the decisions kept as columns
    (:class:`~ksched.decision_log.Decisions`), else read off each record."""
    column = getattr(decisions, "column", None)
    return column(field) if column is not None else [getattr(d, field) for d in decisions]


__all__ = ["Decision", "Sample", "SimulationResult", "BOUND", "UNSCHEDULABLE", "PREEMPTING",
           "PREEMPTED", "FINISHED", "DELETED", "EVICTED", "IGNORED", "WAITING", "REJECTED"]
