"""Node loss (N-1, zone loss): the nodes a selector or a list names are removed and their
pods re-placed on the rest through the simulator's cycle, highest priority first, with
preemption that respects the cluster's PodDisruptionBudgets. A pod preemption evicts is
re-created, as its controller would, and re-placed in turn, round after round, so the
outcome counts every pod that ends unplaced. DaemonSet and mirror (static) pods go with their
nodes. :func:`ksched.headroom`'s ``without``, ``ksched capacity --remove-nodes`` and the
sweep's ``without`` / ``node_count`` all come here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.disruption import pdb_status, workload_replicas
from ksched.errors import ArgumentError
from ksched.inputs import policy_objects
from ksched.simulator import BOUND, PREEMPTED, UNSCHEDULABLE, Event, Simulator
from ksched.state import ClusterState

__all__ = ["Displaced", "Displacement", "Victim", "displace", "selected_nodes"]

_SELECTOR = re.compile(r"^\s*([^\s=!,()]+)\s*(?:==?\s*([^\s=,()]*)|\s+in\s+\(([^()]*)\))\s*$")


# ---------------------------------------------------------------------------- records


@attrs.frozen
class Displaced:
    """A pod re-placed after a node loss: ``outcome`` is ``"placed"`` (on ``node``) or
    ``"pending"`` (with the scheduler's ``reason``); ``from_node`` is the lost node it ran on
    or, for a pod evicted by preemption (``by`` the pod that preempted it), the remaining
    node it was evicted from."""

    pod: str
    priority: int
    from_node: str
    outcome: str
    node: str | None = None
    reason: str = ""
    by: str = ""


@attrs.frozen
class Victim:
    """A pod that was running on ``node`` and was preempted by ``by``."""

    pod: str
    node: str
    by: str


@attrs.frozen(eq=False)
class Displacement:
    """What removing ``removed_nodes`` does.

    The pods of the lost nodes (``pods``) are re-placed on the rest, highest priority first,
    with preemption (PodDisruptionBudgets respected); each pod preempted meanwhile
    (``victims``) is re-created, as its controller would, and re-placed too (``evicted``:
    its last fate), until no more pods are evicted. DaemonSet pods and mirror (static) pods
    of the lost nodes go with their nodes: counted in ``daemon_pods`` / ``mirror_pods``,
    not re-placed. ``state`` is the remaining cluster afterwards.
    """

    removed_nodes: tuple[str, ...]
    pods: tuple[Displaced, ...]
    victims: tuple[Victim, ...]
    daemon_pods: int
    state: ClusterState = attrs.field(repr=False)
    wall_seconds: float = 0.0
    evicted: tuple[Displaced, ...] = ()
    mirror_pods: int = 0

    @property
    def placed(self) -> tuple[Displaced, ...]:
        """The displaced pods placed again."""
        return tuple(d for d in self.pods if d.outcome == "placed")

    @property
    def pending(self) -> tuple[Displaced, ...]:
        """The displaced pods that no longer fit (evicted ones: :attr:`evicted_pending`)."""
        return tuple(d for d in self.pods if d.outcome != "placed")

    @property
    def evicted_pending(self) -> tuple[Displaced, ...]:
        """The pods evicted by preemption that fit nowhere afterwards."""
        return tuple(d for d in self.evicted if d.outcome != "placed")

    @property
    def unplaced(self) -> tuple[Displaced, ...]:
        """Every pod that ends unplaced: displaced ones and evicted ones."""
        return self.pending + self.evicted_pending

    def __str__(self) -> str:
        """The headline (every pod that ends unplaced), its two parts, the pods that went
        with their nodes, then a line per unplaced pod."""
        lines = [f"without {len(self.removed_nodes)} node(s): {len(self.unplaced)} pod(s) end "
                 f"unplaced",
                 f"  displaced from the lost nodes: {len(self.pods)}, "
                 f"{len(self.placed)} placed again, {len(self.pending)} unplaced",
                 f"  evicted by preemption to make room: {len(self.evicted)}, "
                 f"{len(self.evicted) - len(self.evicted_pending)} placed again, "
                 f"{len(self.evicted_pending)} unplaced",
                 f"  gone with their nodes (not re-placed): {self.daemon_pods} DaemonSet "
                 f"pod(s), {self.mirror_pods} mirror (static) pod(s)"]
        lines += [f"  pending {p.pod} (from {p.from_node}): {p.reason}" for p in self.pending]
        lines += [f"  evicted {p.pod} (from {p.from_node}, by {p.by}): {p.reason}"
                  for p in self.evicted_pending]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"removed_nodes": list(self.removed_nodes), "daemon_pods": self.daemon_pods,
                "mirror_pods": self.mirror_pods, "unplaced": len(self.unplaced),
                "pods": [attrs.asdict(d) for d in self.pods],
                "evicted": [attrs.asdict(d) for d in self.evicted],
                "victims": [attrs.asdict(v) for v in self.victims]}


# ---------------------------------------------------------------------------- node loss


def selected_nodes(cluster: ClusterState, nodes: Any, argument: str = "without") -> np.ndarray:
    """int64 rows of the nodes that ``nodes`` names: a selector (``"key=value"``, ``"key in
    (a,b)"``) or node names, checked; errors name ``argument``."""
    if isinstance(nodes, str):
        return _selected_rows(cluster, nodes, argument)
    if not isinstance(nodes, Iterable) or isinstance(nodes, Mapping):
        raise ArgumentError(f"{argument}: expected a node selector or a list of node names, "
                            f"got {type(nodes).__name__}")
    rows = []
    for i, name in enumerate(nodes):
        if not isinstance(name, str) or not name.strip():
            raise ArgumentError(f"{argument}[{i}]: expected a node name, got {name!r}")
        row = cluster.node_index.get(name)
        if row is None:
            raise ArgumentError(f"{argument}[{i}]: node {name!r} not found")
        rows.append(int(row))
    if not rows:
        raise ArgumentError(f"{argument}: names no node")
    return np.unique(np.asarray(rows, dtype=np.int64))


def _selected_rows(cluster: ClusterState, selector: str, argument: str) -> np.ndarray:
    _, bracket, listed = selector.partition("(")
    items = listed.rstrip().removesuffix(")").split(",") if bracket else [selector]
    if any(not item.strip() for item in items):
        raise ArgumentError(f"{argument}: {selector!r}: an empty node selector or value")
    match = _SELECTOR.match(selector)
    if match is None:
        raise ArgumentError(f"{argument}: malformed selector {selector!r}: expected "
                            f"\"key=value\" or \"key in (v1,v2)\"")
    key, value, values = match.groups()
    wanted = [value] if values is None else [v.strip() for v in values.split(",")]
    column = cluster.label_column(key)
    ids = [cluster.vocab.get(v) for v in wanted]
    rows = (np.flatnonzero(np.isin(cluster.labels[:, column], ids)) if column >= 0
            else np.zeros(0, dtype=np.int64))
    if not rows.size:
        raise ArgumentError(f"{argument}: selector {selector!r} matches no node")
    return rows.astype(np.int64)


def _goes_with_node(pod: Any) -> str:
    """``"daemon"`` for a DaemonSet's pod, ``"mirror"`` for a mirror pod (owned by its Node:
    the reader gives a pod with ``kubernetes.io/config.mirror`` that owner), else ``""``."""
    kind = pod.controller[1] if pod.controller is not None else ""
    return {"DaemonSet": "daemon", "Node": "mirror"}.get(kind, "")


def _fresh(pod: Any) -> Any:
    """A pod as its controller creates it again: pending, no node, no nomination."""
    return attrs.evolve(pod.with_status(None, ""), node_name="")


def displace(cluster: ClusterState, removed: np.ndarray, profile: Any = None) -> Displacement:
    """Remove the nodes at rows ``removed``; re-place their pods (DaemonSet and mirror pods
    excepted) on the rest through the simulator, highest priority first, with preemption
    that respects the cluster's PodDisruptionBudgets; then re-place the pods preemption
    evicted, round after round, until none is evicted (each round's pods have a lower
    priority than the last round's highest, so the rounds end)."""
    gone = np.zeros(cluster.num_nodes, dtype=np.bool_)
    gone[removed] = True
    on_gone = gone[np.asarray(cluster.pod_node)]
    pods = cluster.pods
    keep_nodes = [cluster.nodes[int(i)] for i in np.flatnonzero(~gone)]
    keep_pods = [pods[int(i)] for i in np.flatnonzero(~on_gone)]
    moved = [pods[int(i)] for i in np.flatnonzero(on_gone)]
    kinds = [_goes_with_node(p) for p in moved]
    moved = sorted((p for p, k in zip(moved, kinds) if not k), key=lambda p: -p.priority)
    state = ClusterState.from_records(keep_nodes, keep_pods, namespaces=cluster.namespaces,
                                      objects=cluster.objects)
    replant = _Replant(cluster, profile, {p.key: (p.node_name, "") for p in moved})
    state = replant.run(state, [_fresh(p) for p in moved])
    displaced = tuple(replant.fates[p.key] for p in moved)
    evicted = tuple(f for key, f in replant.fates.items() if key not in replant.displaced)
    return Displacement(tuple(cluster.node_names[int(i)] for i in removed), displaced,
                        tuple(replant.victims), kinds.count("daemon"), state,
                        replant.wall_seconds, evicted, kinds.count("mirror"))


class _Replant:
    """The rounds of :func:`displace`: each pod's last fate (by key, in the order pods
    first came), every preemption, the wall time."""

    def __init__(self, cluster: ClusterState, profile: Any,
                 origin: dict[str, tuple[str, str]]) -> None:
        self.pdbs = policy_objects(cluster, "pdbs")
        self.replicas = workload_replicas(cluster)
        self.profile = profile
        #: Pod key -> (the node it came from, the pod that evicted it or "").
        self.origin = origin
        self.displaced = frozenset(origin)
        self.fates: dict[str, Displaced] = {}
        self.victims: list[Victim] = []
        self.wall_seconds = 0.0

    def run(self, state: ClusterState, pending: list[Any]) -> ClusterState:
        """Rounds until no pod is evicted; the cluster after the last."""
        while pending:
            state, pending = self._round(state, pending)
        return state

    def _round(self, state: ClusterState, pending: list[Any]
               ) -> tuple[ClusterState, list[Any]]:
        running = list(state.pods)
        pdbs = [pdb_status(pdb, running, self.replicas) for pdb in self.pdbs]
        result = Simulator(state, profile=self.profile, pdbs=pdbs).run(
            [Event(0.0, "create", pod=p) for p in pending])
        self.wall_seconds += result.wall_seconds
        keys = {p.key for p in pending}
        fates, victims = _fates(result.decisions, keys)
        again = [p for p in pending if fates[p.key][0] == "preempted"]
        for p in pending:
            outcome, node, reason = fates[p.key]
            if outcome != "preempted":
                self._fate(p, outcome, node, reason)
        self.victims += victims
        by_key = {v.pod: v for v in victims}
        evicted = [p for p in running if p.key in by_key]
        for p in evicted:
            self.origin[p.key] = (by_key[p.key].node, by_key[p.key].by)
        return result.state, sorted(map(_fresh, again + evicted), key=lambda p: -p.priority)

    def _fate(self, pod: Any, outcome: str, node: str | None, reason: str) -> None:
        from_node, by = self.origin[pod.key]
        self.fates[pod.key] = Displaced(pod.key, pod.priority, from_node, outcome, node,
                                        reason, by)


def _fates(decisions: Sequence[Any], moved: set[str]
           ) -> tuple[dict[str, tuple[str, str | None, str]], list[Victim]]:
    """Each re-placed pod's last outcome (placed / pending / preempted) and the running
    pods preempted, from the simulator's decisions."""
    fates: dict[str, tuple[str, str | None, str]] = {}
    victims: list[Victim] = []
    for d in decisions:
        if d.pod in moved:
            if d.outcome == BOUND:
                fates[d.pod] = ("placed", d.node, "")
            elif d.outcome == UNSCHEDULABLE:
                fates[d.pod] = ("pending", None, d.reason)
            elif d.outcome == PREEMPTED:
                fates[d.pod] = ("preempted", None, d.reason)
        elif d.outcome == PREEMPTED:
            victims.append(Victim(d.pod, d.node, d.reason.removeprefix("preempted by ")))
    for key in moved:
        fates.setdefault(key, ("pending", None, ""))
    return fates, victims
