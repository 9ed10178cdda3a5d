"""What :func:`ksched.capacity` reports: per template the replicas placed, where, and why the
next copy did not fit; as text, JSON-ready dicts, and cluster-capacity's
``ClusterCapacityReview`` (``kubernetes-sigs/cluster-capacity``, ``pkg/framework/report.go``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from ksched.api import Pod
from ksched.planning.headroom import Displacement
from ksched.quantity import canonical
from ksched.resources import pod_requests
from ksched.state import ClusterState

__all__ = ["LIMIT_REACHED", "CapacityReport", "CapacityResult", "fail_counts"]

#: The stop reason of a template that reached its limit.
LIMIT_REACHED = "limit reached"
_REASON = re.compile(r"(\d+) (.+?)(?=, \d+ |\.$|\. )")


@attrs.frozen(eq=False)
class CapacityResult:
    """How one template fared.

    Attributes
    ----------
    template : the pod the copies were made of.
    replicas : copies placed.
    replicas_on_nodes : node name -> copies placed there (nodes with at least one).
    by : value of the ``by`` node label -> copies placed on nodes with it (``"<none>"``: nodes
        without the label); empty when no ``by`` was given.
    method : ``"closed-form"`` or ``"loop"``.
    limit : the template's limit (``None``: none).
    """

    template: Pod
    replicas: int
    replicas_on_nodes: dict[str, int]
    by: dict[str, int]
    method: str
    limit: int | None
    _stop: Callable[[], str] = attrs.field(repr=False)

    @property
    def stop_reason(self) -> str:
        """The scheduler's message for the first copy that did not fit (``0/3 nodes are
        available: 3 Insufficient cpu.``), or ``"limit reached"``."""
        return self._stop()

    @property
    def limit_reached(self) -> bool:
        return self.stop_reason == LIMIT_REACHED

    @property
    def fail_counts(self) -> dict[str, int]:
        """Reason -> node count, parsed from the stop reason's diagnosis (empty when the
        limit was reached)."""
        return fail_counts(self.stop_reason)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the template's key, the counts, the stop reason and its counts."""
        return {"template": self.template.key, "replicas": self.replicas,
                "limit": self.limit, "method": self.method, "stop_reason": self.stop_reason,
                "fail_counts": self.fail_counts, "replicas_on_nodes": dict(self.replicas_on_nodes),
                "by": dict(self.by)}


@attrs.frozen(eq=False)
class CapacityReport:
    """What :func:`capacity` found: one :class:`CapacityResult` per template, in input
    order, and the cluster after the copies were placed (``state``; built on first use for a
    closed-form answer)."""

    results: tuple[CapacityResult, ...]
    by_label: str | None
    _state: Callable[[], ClusterState] = attrs.field(repr=False)
    #: What ``remove_nodes`` displaced (``None``: no nodes were removed).
    displaced: Displacement | None = None

    @property
    def state(self) -> ClusterState:
        """The cluster with every placed copy bound (without the excluded nodes)."""
        return self._state()

    @property
    def replicas(self) -> int:
        """Copies placed, all templates together."""
        return sum(r.replicas for r in self.results)

    def resources(self) -> dict[str, dict[str, int]]:
        """Per resource, the cluster's allocatable and requested totals after the copies."""
        state = self.state
        alloc, req = state.allocatable.sum(axis=0), state.requested.sum(axis=0)
        return {name: {"allocatable": int(alloc[j]), "requested": int(req[j])}
                for j, name in enumerate(state.resource_names)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the total, per template its result, and the resources after."""
        out = {"replicas": self.replicas, "by_label": self.by_label,
               "templates": [r.to_dict() for r in self.results],
               "resources": self.resources()}
        if self.displaced is not None:
            out["displaced"] = self.displaced.to_dict()
        return out

    def to_cluster_capacity(self) -> dict[str, Any]:
        """cluster-capacity's ``ClusterCapacityReview`` (``pkg/framework/report.go``, its JSON
        field names): the templates and their requirements, the total replicas, the last
        template's stop as ``failReason`` (split at the first colon of cluster-capacity's stop
        reason, ``Unschedulable: <message>`` or ``LimitReached: Maximum number of pods
        simulated: N``), and per template its replicas per node and fail summary."""
        last = self.results[-1] if self.results else None
        return {
            "kind": "ClusterCapacityReview",
            "spec": {"templates": [_template_dict(r.template) for r in self.results],
                     "podRequirements": [_requirements(r.template) for r in self.results]},
            "status": {
                "creationTimestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "replicas": self.replicas,
                "failReason": None if last is None else _fail_reason(last),
                "pods": [{"podName": r.template.name,
                          "replicasOnNodes": [{"nodeName": n, "replicas": c}
                                              for n, c in r.replicas_on_nodes.items()],
                          "failSummary": [{"reason": k, "count": c}
                                          for k, c in r.fail_counts.items()]}
                         for r in self.results]}}

    def __str__(self) -> str:
        rows = [("TEMPLATE", "REPLICAS", "METHOD", "STOP REASON")] + [
            (r.template.key, str(r.replicas), r.method, r.stop_reason) for r in self.results]
        lines = _table(rows)
        if self.by_label is not None:
            values = sorted({v for r in self.results for v in r.by})
            rows = [(self.by_label.upper(), *(r.template.name for r in self.results))] + [
                (v, *(str(r.by.get(v, 0)) for r in self.results)) for v in values]
            lines += [""] + _table(rows)
        if self.displaced is not None:
            lines += ["", str(self.displaced)]
        return "\n".join(lines)


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _template_dict(pod: Pod) -> dict[str, Any]:
    return {"metadata": {"name": pod.name, "namespace": pod.namespace,
                         "labels": dict(pod.labels)}}


#: cluster-capacity's ``PrimaryResources`` (the rest are ``ScalarResources``): name -> binary.
_PRIMARY = {"cpu": False, "memory": True, "storage": True, "ephemeral-storage": True}


def _requirements(pod: Pod) -> dict[str, Any]:
    """cluster-capacity's ``Requirements`` of a template: its requests as quantities."""
    requests = pod_requests(pod)
    primary = {name: _quantity(requests.get(name, 0), binary)
               for name, binary in _PRIMARY.items()}
    scalar = {name: int(v) for name, v in requests.items() if name not in _PRIMARY}
    return {"podName": pod.name,
            "resources": {"primaryResources": primary, "scalarResources": scalar or None},
            "nodeSelectors": dict(pod.node_selector or {}) or None}


def _quantity(value: int, binary: bool) -> str:
    """``Quantity.String()`` of milli-cpu (``binary`` False) or bytes."""
    if not binary:
        return canonical(f"{value}m")
    return canonical(f"{value // 1024}Ki") if value % 1024 == 0 else str(value)


def _fail_reason(result: CapacityResult) -> dict[str, str]:
    if result.limit_reached:
        return {"failType": "LimitReached",
                "failMessage": f"Maximum number of pods simulated: {result.limit}"}
    return {"failType": "Unschedulable", "failMessage": result.stop_reason}


def fail_counts(message: str) -> dict[str, int]:
    """Reason -> node count of a diagnosis ``0/5 nodes are available: 3 Insufficient cpu,
    2 node(s) had untolerated taint {a: b}. preemption: ...``; empty when it has none."""
    _, sep, tail = message.partition(" nodes are available: ")
    if not sep:
        return {}
    tail = tail.split(". ", 1)[0].rstrip(".") + "."  # the diagnosis, not preemption's
    return {reason: int(count) for count, reason in _REASON.findall(tail)}
