"""``schedule_batch``: place pending pods one after another, as kube-scheduler's cycle would.

Each pod runs the profile's plugins over the whole cluster at once (vectorised filters and
scores), walks the ``percentageOfNodesToScore`` window from the rotating start index, picks the
best node, and is assumed onto it before the next pod is considered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import PODS
from ksched.framework.runtime import Framework, ScheduleResult, SchedulingError
from ksched.framework.tiebreak import TieBreaker
from ksched.profile import Profile, default_profile
from ksched.resources import node_info_non_zero, pod_requests
from ksched.state import ClusterState, host_ports


@attrs.frozen
class Placement:
    """Where one pod went: ``node`` is ``None`` when it could not be placed, and ``reason``
    then gives the scheduler's diagnosis (``0/3 nodes are available: ...``)."""

    pod: Pod
    node: str | None
    reason: str = ""

    @property
    def scheduled(self) -> bool:
        return self.node is not None


@attrs.frozen(eq=False)
class Result:
    """The outcome of a batch: one placement per pod, in input order, and the new cluster."""

    placements: tuple[Placement, ...]
    state: ClusterState

    @property
    def scheduled(self) -> tuple[Placement, ...]:
        return tuple(p for p in self.placements if p.scheduled)

    @property
    def unschedulable(self) -> tuple[Placement, ...]:
        return tuple(p for p in self.placements if not p.scheduled)

    def node_of(self, pod_key: str) -> str | None:
        """The node of pod ``namespace/name`` (the last one of that key in the batch)."""
        found = [p.node for p in self.placements if p.pod.key == pod_key]
        if not found:
            raise KeyError(pod_key)
        return found[-1]

    def to_records(self) -> list[dict[str, Any]]:
        """JSON-ready rows: namespace, name, node, reason."""
        return [{"namespace": p.pod.namespace, "name": p.pod.name, "node": p.node,
                 "reason": p.reason} for p in self.placements]


class Assumer:
    """Adds placed pods to a private, writable copy of a state (``Cache.AssumePod``)."""

    def __init__(self, state: ClusterState, pending: Iterable[Pod]) -> None:
        pending = list(pending)
        resources = {name for pod in pending for c in pod.containers + pod.init_containers
                     for name in c.requests} | {name for pod in pending for name in pod.overhead}
        ports = {p for pod in pending for p in host_ports(pod)}
        state = state.widened(resources=sorted(resources), ports=sorted(ports))
        self.state = attrs.evolve(state, requested=state.requested.copy(),
                                  nonzero_requested=state.nonzero_requested.copy(),
                                  port_count=state.port_count.copy())
        self._pods = list(self.state.pods)
        self._pod_node = list(self.state.pod_node)
        self._columns = {name: j for j, name in enumerate(self.state.resource_names)}

    def assume(self, pod: Pod, node: int) -> None:
        """Account ``pod`` on node row ``node``, as ``NodeInfo.AddPod`` does."""
        state = self.state
        requests = pod_requests(pod)
        for name, amount in requests.items():
            column = self._columns.get(name)
            if column is not None and name != PODS:
                state.requested[node, column] += amount
        state.requested[node, self._columns[PODS]] += 1
        state.nonzero_requested[node] += node_info_non_zero(pod, requests)
        for port in set(host_ports(pod)):
            state.port_count[node, state.port_keys.index(port)] += 1
        affinity_pods = state.affinity_pods
        if pod.has_pod_affinity:
            affinity_pods += (len(self._pods),)
        self._pods.append(attrs.evolve(pod, node_name=state.nodes[node].name))
        self._pod_node.append(node)
        self.state = attrs.evolve(state, pods=tuple(self._pods),
                                  pod_node=np.asarray(self._pod_node, dtype=np.int64),
                                  affinity_pods=affinity_pods)

    def frozen(self) -> ClusterState:
        """The final state, its arrays made read-only."""
        for array in (self.state.requested, self.state.nonzero_requested, self.state.port_count,
                      self.state.pod_node):
            array.flags.writeable = False
        return self.state


def schedule_batch(cluster: ClusterState, pods: Sequence[Pod], *, profile: Profile | None = None,
                   percentage_of_nodes_to_score: int | None = None,
                   tie_break: str = "round-robin",
                   seed: int | np.random.Generator | None = None,
                   progress: Any = None) -> Result:
    """Schedule ``pods`` in order on ``cluster``, each seeing the ones placed before it.

    Parameters
    ----------
    cluster : the cluster before the batch (never modified).
    pods : pending pods, in the order the scheduling queue would pop them.
    profile : the scheduler profile (default: kube-scheduler v1.35's default profile).
    percentage_of_nodes_to_score : the scheduler-wide value; ``None`` or 0 is adaptive, as
        upstream's default. A profile's own value wins.
    tie_break : ``"round-robin"`` (deterministic) or ``"random"`` (uniform, from ``seed``).
    progress : optional callable ``progress(n)`` told after each pod (e.g. a tqdm ``update``).

    Examples
    --------
    >>> from ksched import ClusterState, Node, Pod, Container, schedule_batch
    >>> node = Node("n1", allocatable={"cpu": 2000, "memory": 2**32, "pods": 110})
    >>> pod = Pod("web", containers=[Container("c", requests={"cpu": 500})])
    >>> schedule_batch(ClusterState.from_records([node]), [pod]).placements[0].node
    'n1'
    """
    framework = Framework(profile or default_profile())
    tie_breaker = TieBreaker(tie_break, seed)
    assumer = Assumer(cluster, pods)
    placements = []
    next_start = 0
    for pod in pods:
        try:
            outcome = framework.schedule_one(
                assumer.state, pod, next_start_index=next_start,
                percentage_of_nodes_to_score=percentage_of_nodes_to_score or 0,
                tie_breaker=tie_breaker)
        except SchedulingError as exc:
            placements.append(Placement(pod, None, str(exc)))
            continue
        next_start = outcome.next_start_index
        placements.append(_placement(assumer, outcome))
        if progress is not None:
            progress(1)
    return Result(tuple(placements), assumer.frozen())


def _placement(assumer: Assumer, outcome: ScheduleResult) -> Placement:
    if outcome.node is None:
        return Placement(outcome.pod, None, outcome.message)
    assumer.assume(outcome.pod, outcome.node)
    return Placement(outcome.pod, assumer.state.nodes[outcome.node].name)


__all__ = ["schedule_batch", "Result", "Placement", "Assumer"]
