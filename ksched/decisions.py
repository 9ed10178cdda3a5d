"""What a simulation records: each pod's decisions, samples of the queue and the cluster, and
the result with its summary (the :class:`~ksched.simulator.Simulator`'s output)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import CPU, MEMORY
from ksched.state import ClusterState

#: Decision outcomes, in the event log's ``outcome`` field.
BOUND, UNSCHEDULABLE, PREEMPTING, PREEMPTED = "bound", "unschedulable", "preempting", "preempted"
FINISHED, DELETED, EVICTED, IGNORED = "finished", "deleted", "evicted", "ignored"
WAITING, REJECTED = "waiting", "rejected"


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
    """The queue and the cluster at one virtual time."""

    time: float
    active: int
    backoff: int
    unschedulable: int
    gated: int
    running: int
    cpu: float
    memory: float

    @classmethod
    def take(cls, time: float, lengths: Mapping[str, int], state: ClusterState,
             running: int) -> Sample:
        """A sample: the queue's ``lengths`` by sub-queue, the pods running, and the share
        of the cluster's allocatable cpu and memory requested."""
        used = []
        for name in (CPU, MEMORY):
            column = state.resource_column(name)
            total = int(state.allocatable[:, column].sum()) if column >= 0 else 0
            used.append(float(state.requested[:, column].sum()) / total if total else 0.0)
        return cls(time, lengths["active"], lengths["backoff"], lengths["unschedulable"],
                   lengths["gated"], running, used[0], used[1])


@attrs.frozen(eq=False)
class SimulationResult:
    """The decisions in time order, the samples, the final cluster and where time went."""

    decisions: tuple[Decision, ...]
    samples: tuple[Sample, ...]
    state: ClusterState
    created: Mapping[str, float]
    pending: tuple[Pod, ...]
    wall_seconds: float
    queue_seconds: float

    def summary(self) -> dict[str, Any]:
        """Pods created and scheduled, p50/p99 virtual time to schedule, preemptions,
        utilisation and the wall time (with the queue's share)."""
        first_bound: dict[str, float] = {}
        for d in self.decisions:
            if d.outcome == BOUND and d.pod not in first_bound:
                first_bound[d.pod] = d.time - self.created.get(d.pod, d.time)
        waits = np.array(sorted(first_bound.values()), dtype=np.float64)
        count = lambda outcome: sum(d.outcome == outcome for d in self.decisions)  # noqa: E731
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
            "cpu_utilisation_mean": _mean(s.cpu for s in self.samples),
            "cpu_utilisation_max": max((s.cpu for s in self.samples), default=None),
            "memory_utilisation_mean": _mean(s.memory for s in self.samples),
            "memory_utilisation_max": max((s.memory for s in self.samples), default=None),
            "virtual_seconds": self.samples[-1].time if self.samples else 0.0,
            "wall_seconds": round(self.wall_seconds, 3),
            "queue_share": round(self.queue_seconds / self.wall_seconds, 4)
            if self.wall_seconds else 0.0,
        }

    def event_log(self) -> Iterable[dict[str, Any]]:
        """The decisions as JSON-ready records, in time order."""
        return (d.to_record() for d in self.decisions)


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


__all__ = ["Decision", "Sample", "SimulationResult", "BOUND", "UNSCHEDULABLE", "PREEMPTING",
           "PREEMPTED", "FINISHED", "DELETED", "EVICTED", "IGNORED", "WAITING", "REJECTED"]
