"""The fixed inputs of one :func:`ksched.planning.plan` call, and what the scheduler says of
them: the clusters with ``n`` new nodes of each type, the pending pods grouped by spec, and for
each group the node types it may use (decided by scheduling one pod of the group alone on a
one-node cluster of each type, DaemonSet pods bound) and the existing nodes it may use
(:func:`ksched.explain` of the group's pod without its requests over the existing nodes:
every Filter plugin but the resource ones, over the nodes as they are).

Only the engine's public functions are called: :func:`ksched.schedule_batch` and
:func:`ksched.explain`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Node, Pod
from ksched.constants import PODS
from ksched.engine import Result, schedule_batch
from ksched.explain import explain
from ksched.inputs import as_pod_table, node_from_template
from ksched.planning import plan_devices
from ksched.planning.capacity_claims import claim_copies, has_template_claims
from ksched.planning.workloads import expand_workloads
from ksched.resources import pod_requests
from ksched.state import ClusterState

__all__ = ["Groups", "Planner", "Unfit", "Workloads"]

#: Labels that controllers give each pod its own value of; left out when grouping pods.
_PER_POD_LABELS = frozenset({"statefulset.kubernetes.io/pod-name",
                             "apps.kubernetes.io/pod-index",
                             "batch.kubernetes.io/job-completion-index"})
#: The name of the pod that stands for its group in the probing schedules.
PROBE = "ksched-plan-probe"


@attrs.frozen
class Unfit:
    """A pending pod that no node type takes even on a node of its own.

    Attributes
    ----------
    pod : the pod.
    reasons : node type name -> the scheduler's message on a one-node cluster of that type.
    """

    pod: Pod
    reasons: dict[str, str]


@attrs.frozen
class Workloads:
    """The pending pods that need no node to expand, the DaemonSet manifests, the objects
    default spreading needs and the claims StatefulSets' volumeClaimTemplates make."""

    pods: tuple[Pod, ...]
    objects: tuple = ()
    daemon_sets: tuple[Mapping[str, Any], ...] = ()
    claims: tuple = ()


def new_node(template: Node, k: int) -> Node:
    """Node ``k`` of type ``template``: ``<type>-plan-<k>``, hostname label set."""
    return node_from_template(template, f"{template.name}-plan-{k}")


def _pinned_node(pod: Pod) -> str | None:
    """The node a DaemonSet pod is pinned to (``metadata.name In [node]``), else ``None``."""
    if pod.controller is None or pod.controller[1] != "DaemonSet" or pod.node_affinity is None:
        return None
    terms = pod.node_affinity.required
    if len(terms) != 1 or len(terms[0].match_fields) != 1:
        return None
    values = terms[0].match_fields[0].values
    return values[0] if len(values) == 1 else None


def _owner(pod: Pod) -> tuple[str, str]:
    """(namespace, DaemonSet name) of a DaemonSet pod."""
    return pod.namespace, pod.controller[2] if pod.controller else ""


@attrs.frozen(eq=False)
class Groups:
    """Pending pods grouped by everything but their names (replicas share a group).

    Attributes
    ----------
    probes : tuple of Pod
        One pod per group, renamed :data:`PROBE`.
    members : tuple of tuple of int
        Per group, the indices of its pods in the pending list.
    resources : tuple of str
        The resource names of :attr:`requests` (every one some pod requests, and ``pods``).
    requests : int64[n_groups, n_resources]
        One pod's requests per group (``pods`` = 1).
    """

    probes: tuple[Pod, ...]
    members: tuple[tuple[int, ...], ...]
    resources: tuple[str, ...]
    requests: npt.NDArray[np.int64]

    @classmethod
    def of(cls, pods: Sequence[Pod]) -> Groups:
        """Group ``pods`` (one ``pod_requests`` per group)."""
        index: dict[Pod, list[int]] = {}
        for i, pod in enumerate(pods):
            labels = {k: v for k, v in pod.labels.items() if k not in _PER_POD_LABELS}
            key = attrs.evolve(pod, name=PROBE, uid="", labels=labels, creation_time=None,
                               claim_statuses=())
            index.setdefault(key, []).append(i)
        probes = tuple(index)
        wanted = [{**pod_requests(p), PODS: 1} for p in probes]
        names = tuple(sorted({n for w in wanted for n, v in w.items() if v > 0}))
        requests = np.array([[w.get(n, 0) for n in names] for w in wanted],
                            dtype=np.int64).reshape(len(probes), len(names))
        return cls(probes, tuple(tuple(m) for m in index.values()), names, requests)

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """Pods per group: int64[n_groups]."""
        return np.array([len(m) for m in self.members], dtype=np.int64)

    def subset(self, counts: npt.NDArray[np.int64]) -> Groups:
        """The groups with ``counts[g]`` pods each (groups of 0 pods left out)."""
        keep = np.flatnonzero(counts > 0)
        return Groups(tuple(self.probes[g] for g in keep),
                      tuple(self.members[g][:int(counts[g])] for g in keep), self.resources,
                      self.requests[keep])


@attrs.frozen(eq=False)
class Planner:
    """The fixed inputs of one plan, and the clusters and schedules made of them.

    Attributes
    ----------
    cluster : the cluster now.
    types : the node types (templates).
    prices : type name -> price per node (1 per node for every type when none were given).
    work : the workloads.
    profile : the scheduling profile (or configuration).
    tie_break, seed : how every exact schedule breaks ties (as :func:`ksched.schedule_batch`).
    slices : type name -> the ResourceSlices each new node of the type gets a copy of.
    """

    cluster: ClusterState
    types: tuple[Node, ...]
    prices: dict[str, float]
    work: Workloads
    profile: Any
    tie_break: str = "round-robin"
    seed: int | None = 0
    slices: dict = attrs.field(factory=dict)
    #: Type name -> (:meth:`daemon_schedule`, :meth:`daemon_fit`).
    _daemons: dict = attrs.field(factory=dict, init=False)
    #: Made once per plan: the new nodes per type (grown as needed), the pending pods' table.
    _made: dict = attrs.field(factory=dict, init=False)

    def base(self) -> ClusterState:
        """The cluster with the workloads' objects and claims, no new node."""
        return self._with_nodes(list(self.cluster.nodes))

    def _with_nodes(self, nodes: list[Node], slices: Sequence[Any] = ()) -> ClusterState:
        objects = dict(self.cluster.objects)
        if slices:
            objects["dra"] = plan_devices.with_slices(self.cluster, slices)
        if self.work.objects:
            objects["workloads"] = tuple(objects.get("workloads", ())) + self.work.objects
        state = ClusterState.from_records(nodes, tuple(self.cluster.pods),
                                          dict(self.cluster.namespaces), objects)
        if self.work.claims:
            storage = state.storage
            known = {(c.namespace, c.name) for c in storage.persistent_volume_claims}
            claims = [c for c in self.work.claims if (c.namespace, c.name) not in known]
            state = state.with_storage(attrs.evolve(storage, persistent_volume_claims=(
                *storage.persistent_volume_claims, *claims)))
        return state

    def new_nodes(self, template: Node, count: int) -> list[Node]:
        """New nodes 0 to ``count - 1`` of ``template``'s type (made once per plan)."""
        made = self._made.setdefault(("nodes", template.name), [])
        made += [new_node(template, k) for k in range(len(made), count)]
        return made[:count]

    def new_slices(self, template: Node, count: int) -> list[Any]:
        """The ResourceSlices of new nodes 0 to ``count - 1`` of ``template``'s type."""
        own = self.slices.get(template.name, ())
        if not own:
            return []
        return [s for node in self.new_nodes(template, count)
                for s in plan_devices.slice_copies(template, own, node.name)]

    def build(self, counts: Mapping[str, int]) -> tuple[ClusterState, tuple[Pod, ...]]:
        """The cluster with ``counts`` new nodes of each type (the DaemonSet pods that fit a
        type bound to its new nodes) and the pending pods: DaemonSet pods of the existing
        nodes first, then the workloads'. DaemonSet pods with claims from templates get
        claims of their own (:func:`~ksched.planning.plan_devices.daemon_claims`)."""
        state = self._with_nodes(list(self.cluster.nodes) + [
            node for t in self.types for node in self.new_nodes(t, counts.get(t.name, 0))],
            [s for t in self.types for s in self.new_slices(t, counts.get(t.name, 0))])
        if not self.work.daemon_sets:
            return state, self.work.pods
        daemons = expand_workloads(self.work.daemon_sets, cluster=state).pods
        existing = set(self.cluster.node_names)
        pending = tuple(p for p in daemons if _pinned_node(p) in existing)
        fitting = {t.name: self.daemon_fit(t)[0] for t in self.types}
        kind = {new_node(t, k).name: t.name for t in self.types
                for k in range(counts.get(t.name, 0))}
        new = [(p, node) for p in daemons if (node := _pinned_node(p)) not in existing
               and _owner(p) in fitting[kind[node]]]
        bound = [(p, node) for p, node in new if not has_template_claims(p)]
        state = state.widened_for([p for p, _ in bound]).bind(bound) if bound else state
        state, pending = plan_devices.daemon_claims(
            state, pending, [p for p, _ in new if has_template_claims(p)], self.profile)
        return state, pending + self.work.pods

    def run(self, counts: Mapping[str, int]) -> Result:
        """:func:`ksched.schedule_batch` of the pending pods with ``counts`` new nodes (the
        workloads' pods read into one :class:`~ksched.pod_table.PodTable` once per plan
        when no DaemonSet adds pods)."""
        state, pods = self.build(counts)
        if not self.work.daemon_sets:
            if "table" not in self._made:
                self._made["table"] = as_pod_table(pods)
            pods = self._made["table"]
        return schedule_batch(state, pods, profile=self.profile, tie_break=self.tie_break,
                              seed=self.seed)

    def daemon_fit(self, template: Node) -> tuple[frozenset, tuple[Unfit, ...], dict[str, int]]:
        """Which DaemonSets run on a new node of ``template``'s type (:meth:`daemon_schedule`):
        those whose pod is placed ((namespace, name) pairs), the others' pods with the
        scheduler's reason, and the placed ones' summed requests (``pods`` counted)."""
        return self._daemon(template)[1]

    def daemon_schedule(self, template: Node) -> Result | None:
        """The DaemonSet pods scheduled in order on a one-node cluster of a new node of
        ``template``'s type (``None`` without DaemonSets); when some pod has a claim from a
        template, each gets claims of their own, allocated from the node's slices
        (:func:`~ksched.planning.plan_devices.daemon_probe`). Made once per plan."""
        return self._daemon(template)[0]

    def _daemon(self, template: Node) -> tuple[Result | None, tuple]:
        """(:meth:`daemon_schedule`, :meth:`daemon_fit`) of ``template``'s type, made once."""
        if template.name not in self._daemons:
            result = self._daemon_run(template)
            self._daemons[template.name] = (result, _daemon_summary(result, template.name))
        return self._daemons[template.name]

    def _daemon_run(self, template: Node) -> Result | None:
        """:meth:`daemon_schedule`, made."""
        if not self.work.daemon_sets:
            return None
        node = self.new_nodes(template, 1)[0]
        result = plan_devices.daemon_probe(node, self.new_slices(template, 1), self.cluster,
                                           self.work.daemon_sets, self.profile)
        if result is None:  # no claim from a template: the node alone, no DRA objects
            one = ClusterState.from_records([node])
            pods = expand_workloads(self.work.daemon_sets, cluster=one).pods
            result = schedule_batch(one, pods, profile=self.profile)
        return result

    def one_node(self, template: Node) -> ClusterState:
        """A cluster of one new node of ``template``'s type, its DaemonSet pods bound."""
        empty = ClusterState.from_records([], (), dict(self.cluster.namespaces),
                                          dict(self.cluster.objects))
        single = attrs.evolve(self, cluster=empty)
        single._daemons.update(self._daemons)
        return single.build({template.name: 1})[0]

    def effective(self, resources: Sequence[str]) -> npt.NDArray[np.int64]:
        """A new node's allocatable less its DaemonSet pods' requests: int64[n_types, R]."""
        rows = []
        for t in self.types:
            daemons = self.daemon_fit(t)[2]
            rows.append([max(0, int(t.allocatable.get(n, 0)) - int(daemons.get(n, 0)))
                         for n in resources])
        return np.array(rows, dtype=np.int64).reshape(len(self.types), len(resources))

    def type_fit(self, groups: Groups) -> tuple[npt.NDArray[np.bool_], list[dict[str, str]]]:
        """Per group and type, whether the group's pod schedules alone on a new node of the
        type: bool[n_groups, n_types]; and per group the scheduler's reason per type it
        does not fit."""
        singles = [self.one_node(t) for t in self.types]
        fits = np.zeros((len(groups.probes), len(self.types)), dtype=np.bool_)
        reasons: list[dict[str, str]] = []
        for g, probe in enumerate(groups.probes):
            why = {}
            for j, (t, single) in enumerate(zip(self.types, singles)):
                pods: Any = [probe]
                if has_template_claims(probe):  # the probe's own claims, as a new pod's
                    single, pods = claim_copies(single, as_pod_table(pods))
                placement = schedule_batch(single, pods, profile=self.profile).placements[0]
                fits[g, j] = placement.node is not None
                if placement.node is None:
                    why[t.name] = placement.reason
            reasons.append(why)
        return fits, reasons

    def existing_fit(self, groups: Groups, state: ClusterState) -> npt.NDArray[np.bool_]:
        """Per group and existing node, whether every Filter plugin but the resource ones
        passes for the group's pod (its requests taken away): bool[n_groups, n_nodes]."""
        masks = np.zeros((len(groups.probes), state.num_nodes), dtype=np.bool_)
        if not state.num_nodes:
            return masks
        seen: dict[Pod, npt.NDArray[np.bool_]] = {}
        for g, probe in enumerate(groups.probes):
            static = _without_requests(probe)
            if static not in seen:
                why = explain(state, static, profile=self.profile,
                              percentage_of_nodes_to_score=100)
                feasible = {n.node for n in why.nodes if n.feasible}
                seen[static] = np.array([n in feasible for n in state.node_names],
                                        dtype=np.bool_)
            masks[g] = seen[static]
        return masks


def _without_requests(pod: Pod) -> Pod:
    """``pod`` with no container, init container, overhead or pod-level requests/limits,
    and no resource claims (their devices are the bound's device columns)."""
    def bare(containers: Sequence[Any]) -> tuple:
        return tuple(attrs.evolve(c, requests={}, limits={}) for c in containers)

    return attrs.evolve(pod, containers=bare(pod.containers),
                        init_containers=bare(pod.init_containers), overhead={},
                        pod_requests=None, pod_limits=None, resource_claims=(),
                        claim_sources=(), claim_statuses=())


def _daemon_summary(result: Result | None, type_name: str
                    ) -> tuple[frozenset, tuple[Unfit, ...], dict[str, int]]:
    """:meth:`Planner.daemon_fit` of the DaemonSet pods' schedule ``result`` on a new node
    of type ``type_name``."""
    if result is None:
        return frozenset(), (), {}
    placed = [p.pod for p in result.placements if p.node is not None]
    total: dict[str, int] = {}
    for pod in placed:
        for name, value in {**pod_requests(pod), PODS: 1}.items():
            total[name] = total.get(name, 0) + value
    unfit = tuple(Unfit(p.pod, {type_name: p.reason})
                  for p in result.placements if p.node is None)
    return frozenset(map(_owner, placed)), unfit, total


def pinned_to_existing(pods: Sequence[Pod], cluster: ClusterState) -> list[bool]:
    """Per pod, whether it is a DaemonSet pod pinned to an existing node."""
    existing = set(cluster.node_names)
    return [_pinned_node(p) in existing for p in pods]
