"""What :func:`ksched.capacity` reports: per template the replicas placed, where, and why the
next copy did not fit; as text, JSON-ready dicts, and cluster-capacity's
``ClusterCapacityReview`` (``kubernetes-sigs/cluster-capacity``, ``pkg/framework/report.go``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ksched.api import Pod
from ksched.planning.headroom import Displacement
from ksched.constants import CAPACITY_ORDERS as ORDERS
from ksched.state import ClusterState

__all__ = ["LIMIT_REACHED", "ORDERS", "CapacityReport", "CapacityResult", "fail_counts"]

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
    order, how the templates shared the cluster (``order``, one of :data:`ORDERS`), and the
    cluster after the copies were placed (``state``; built on first use for a closed-form
    answer; with ``order="independent"`` and several templates, the cluster as given, each
    template having been counted alone)."""

    results: tuple[CapacityResult, ...]
    by_label: str | None
    _state: Callable[[], ClusterState] = attrs.field(repr=False)
    #: What ``remove_nodes`` displaced (``None``: no nodes were removed).
    displaced: Displacement | None = None
    order: str = "independent"

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
        out = {"replicas": self.replicas, "order": self.order, "by_label": self.by_label,
               "templates": [r.to_dict() for r in self.results],
               "resources": self.resources()}
        if self.displaced is not None:
            out["displaced"] = self.displaced.to_dict()
        return out

    def to_cluster_capacity(self, manifests: Sequence[Mapping[str, Any]] | None = None,
                            max_limit: int = 0) -> dict[str, Any]:
        """cluster-capacity's ``ClusterCapacityReview``, field for field
        (:func:`ksched.planning.cluster_capacity.review`): ``manifests`` are the templates'
        Pod manifests (default: made from the records' name, namespace and labels);
        ``max_limit`` is written as ``spec.replicas`` (0: unlimited)."""
        from ksched.planning.cluster_capacity import review

        if manifests is None:
            manifests = [_template_dict(r.template) for r in self.results]
        return review(self, manifests, max_limit)

    def __str__(self) -> str:
        rows = [("TEMPLATE", "REPLICAS", "METHOD", "STOP REASON")] + [
            (r.template.key, str(r.replicas), r.method, r.stop_reason) for r in self.results]
        lines = _table(rows)
        if len(self.results) > 1:
            lines += ["", f"order: {self.order}: {ORDERS[self.order]}"]
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
    """A manifest of what the record keeps of a template's identity (the CLI passes the
    manifest it read instead)."""
    containers = [{"name": c.name, "image": c.image, "resources": {"requests": {
        name: f"{value}m" if name == "cpu" else str(value)
        for name, value in c.requests.items() if value}}} for c in pod.containers]
    spec: dict[str, Any] = {"containers": containers}
    if pod.node_selector is not None:
        spec["nodeSelector"] = dict(pod.node_selector)
    return {"metadata": {"name": pod.name, "namespace": pod.namespace,
                         "labels": dict(pod.labels)}, "spec": spec}


def fail_counts(message: str) -> dict[str, int]:
    """Reason -> node count of a diagnosis ``0/5 nodes are available: 3 Insufficient cpu,
    2 node(s) had untolerated taint {a: b}. preemption: ...``; empty when it has none."""
    _, sep, tail = message.partition(" nodes are available: ")
    if not sep:
        return {}
    tail = tail.split(". ", 1)[0].rstrip(".") + "."  # the diagnosis, not preemption's
    return {reason: int(count) for count, reason in _REASON.findall(tail)}
