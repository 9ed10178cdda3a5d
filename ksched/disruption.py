"""The part of the disruption controller preemption depends on: a PodDisruptionBudget's status
recomputed after pods are evicted (``pkg/controller/disruption/disruption.go``,
``getExpectedPodCount`` and ``updatePdbStatus``), and the controllers' ``spec.replicas`` it
reads."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ksched.api import Pod


def _scaled(value: int | str, expected: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` rounding up."""
    if isinstance(value, str):
        return math.ceil(int(value.rstrip("%")) * expected / 100)
    return value


def workload_replicas(cluster: Any) -> dict[tuple[str, str, str], int]:
    """(namespace, kind, name) -> ``spec.replicas`` of the workloads a cluster was read with
    (``cluster.objects["workloads"]``), the ``replicas`` :func:`pdb_status` takes."""
    return {(w.namespace, w.kind, w.name): w.replicas
            for w in cluster.objects.get("workloads", ()) if w.replicas is not None}


def pdb_status(pdb: Any, pods: Iterable[Pod],
               replicas: Mapping[tuple[str, str, str], int]) -> Any:
    """``pdb`` with ``expectedPods``, ``desiredHealthy``, ``currentHealthy`` and
    ``disruptionsAllowed`` recomputed over ``pods`` (the pods that exist).

    ``replicas`` maps a controller (namespace, kind, name) to its ``spec.replicas``: for an
    integer ``minAvailable`` the expected count is the number of matching pods, otherwise the
    matching pods' controllers' replicas. Only Ready pods are healthy.
    """
    matching = [p for p in pods if pdb.selector is not None and p.namespace == pdb.namespace
                and not p.deleting and pdb.selector.matches(p.labels)]
    if isinstance(pdb.min_available, int):
        expected, desired = len(matching), pdb.min_available
    else:
        owners = {(p.namespace, p.controller[1], p.controller[2]) for p in matching
                  if p.controller is not None}
        expected = sum(replicas.get(owner, 0) for owner in owners)
        if pdb.max_unavailable is not None:
            desired = max(0, expected - _scaled(pdb.max_unavailable, expected))
        else:
            desired = _scaled(pdb.min_available, expected)
    healthy = sum(1 for p in matching if p.ready)
    allowed = max(healthy - desired, 0) if expected > 0 else 0
    return attrs.evolve(pdb, expected_pods=expected, desired_healthy=desired,
                        current_healthy=healthy, disruptions_allowed=allowed)
