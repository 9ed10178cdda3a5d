"""The fused loop: runs of pods scheduled by one compiled loop
(:mod:`ksched.kernels.schedule_loop`).

Pods with identical scheduling specs share a *pod class*, compiled once: the node-static filters
and scores of the class are evaluated over all nodes by the same plugin code the object-level
framework runs, so both paths agree by construction; the loop adds the parts that change as pods
are placed (host ports, resource fit, resource scores, topology spreading, inter-pod affinity),
with the kernels the plugins use, and the node walk, host selection and assume.

Which plugins the loop takes is what they declare (:mod:`ksched.framework.capabilities`): any
Filter or Score of the node-static kind, in-tree or not, and one plugin of each kind the loop has
kernels for. Topology spreading and inter-pod affinity keep their counts per domain
(:mod:`ksched.domain_counts`), seeded from the bound pods and updated as pods are placed; attach
limits their counts per node and driver (an ``ATTACH_LIMITS`` filter's table), taken afresh at
each run. Pods the loop does not model go through the framework, one cycle at a time, on the
same arrays.

Pods with claims are classed by what their volumes add (:mod:`ksched.volume_classes`). The loop
counts a pod's volumes against attach limits, and places a pod its Reserve plugins reserve
something for (:func:`~ksched.framework.capabilities.reserves_for`: the caller runs that Reserve
after the run, :meth:`FusedLoop.binds`), only when the pod uses its claims alone: then no other
pod's placement or Reserve changes its verdicts.

Classes whose pods differ only in what they request and how they rank (one
:func:`~ksched.pods.sibling_signature`) share the node-static verdicts and scores of the
first of them; each computes only its requests.
A pod that fits nowhere fails inside the loop, which words the failure itself where the class
allows it (:mod:`ksched.loop_failures`) and goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ksched.api import Pod
from ksched.constants import MAX_NODE_SCORE, PODS
from ksched.class_stacks import COUNTING, StackedTables, full_loop
from ksched.class_tables import ClassTables, RequestTables, node_unique
from ksched.domain_counts import DomainCounts, SpreadCounter
from ksched.errors import UnsupportedFeatureError
from ksched.framework.capabilities import (
    FilterKind,
    Normalization,
    ScoreKind,
    filter_kind,
    is_node_static_filter,
    is_node_static_score,
    judged_by_node_class,
    node_static_for,
    normalization,
    reserves_for,
    score_kind,
)
from ksched.framework.interfaces import Cycle, PreFilterResult
from ksched.framework.runtime import Framework
from ksched.loop_call import NO_REMOVALS, ONE_CLASS, ONE_WALK, LoopCall, loop_parameters, no_attach
from ksched.loop_failures import FailureWording, StaticStatuses, Tallies, worded
from ksched.pods import Hashed, class_signature, shape_signature, sibling_signature, \
    spec_signature
from ksched.state import ClusterState, host_ports
from ksched.status import Code, Status
from ksched.volume_classes import ClaimUse, has_claims

#: The kinds of Filter the loop has kernels for, besides the node-static ones.
LOOP_FILTERS = (FilterKind.REQUEST_DELTA, FilterKind.HOST_PORTS, FilterKind.TOPOLOGY_SPREAD,
                FilterKind.POD_AFFINITY, FilterKind.ATTACH_LIMITS)
#: The kinds of Score the loop has kernels for, in the order of its ``weights`` (``W_*``).
LOOP_SCORES = (ScoreKind.RESOURCE_ALLOCATION, ScoreKind.BALANCED_ALLOCATION,
               ScoreKind.TOPOLOGY_SPREAD, ScoreKind.POD_AFFINITY)


def supports(framework: Framework) -> bool:
    """Whether the loop can run this profile's plugins: every Filter and PreFilter plugin
    declares a filter kind (or, at PreFilter, a score kind), every Score and PreScore plugin a
    score kind, no kind the loop has kernels for comes twice, and every weighted total fits
    the loop's int32 score caches (weights of tens of millions are left to the framework)."""
    points = framework.points
    declared = lambda p: filter_kind(p) is not None or score_kind(p) is not None  # noqa: E731
    if not (points["filter"]
            and MAX_NODE_SCORE * sum(framework.weights.values()) <= np.iinfo(np.int32).max
            and all(filter_kind(p) is not None for _, p in points["filter"])
            and all(declared(p) for _, p in points["preFilter"])
            and all(score_kind(p) is not None for _, p in points["score"] + points["preScore"])):
        return False
    filters = [filter_kind(p) for _, p in points["filter"]]
    scores = [score_kind(p) for _, p in points["score"]]
    return all(filters.count(k) <= 1 for k in LOOP_FILTERS) and \
        all(scores.count(k) <= 1 for k in LOOP_SCORES)


def _of_kind(entries: Sequence[tuple[str, Any]], kind: Any, kind_of: Any) -> tuple[str, Any]:
    """The (name, plugin) of ``entries`` of the given kind, ``("", None)`` when none is."""
    return next(((n, p) for n, p in entries if kind_of(p) is kind), ("", None))


_UNSEEN = object()
#: Room for no failure record (the loop words none) for runs of one pod.
_NO_TALLIES: dict[int, Tallies] = {}
#: Classes x nodes of one-class arrays :meth:`FusedLoop.arrays` keeps (oldest out first).
ONE_CLASS_NODES = 1 << 22


class FusedLoop:
    """Compiles pod classes for one framework and state layout, and runs the loop.

    ``pending``: the pods it may be asked to class (pod-affinity keys are sized by them, and
    a pod uses a claim alone only where no other of them, or of the bound pods, mounts it)."""

    def __init__(self, framework: Framework, state: ClusterState,
                 node_version: np.ndarray | None = None, pending: Sequence[Pod] = (),
                 count_pods: bool = True) -> None:
        self.framework = framework
        #: Whether placements keep the pod-counting classes' counts (a batch); without, a
        #: run of one pod takes its class's arrays alone (:meth:`arrays`), not all anew.
        self.count_pods, self._stacked, self._one = count_pods, 0, {}
        self.layout = state
        self.classes: dict[Hashed | tuple, int | None] = {}
        self.classes_by_identity: dict[tuple, int | None] = {}
        #: Per containers object, the last pod signature seen with it and its class: replicas
        #: share their containers, and a tuple of the same objects compares equal at once.
        self._last_by_containers: dict[int, tuple[tuple, int | None]] = {}
        #: Pod signature -> its class, or ``None`` where the loop does not take such pods
        #: (pods of one spec arriving as separate objects, as in the simulator).
        self.verdicts: dict[Hashed, int | None] = {}
        self.tables = ClassTables()
        points = framework.points
        self.static_filters = [(n, p) for n, p in points["filter"] if is_node_static_filter(p)]
        self.fit_name, self.fit = _of_kind(points["filter"], FilterKind.REQUEST_DELTA,
                                           filter_kind)
        self.ports = _of_kind(points["filter"], FilterKind.HOST_PORTS, filter_kind)[1]
        self.spread_filter = _of_kind(points["filter"], FilterKind.TOPOLOGY_SPREAD,
                                      filter_kind)[1]
        self.affinity_filter = _of_kind(points["filter"], FilterKind.POD_AFFINITY,
                                        filter_kind)[1]
        self.attach_name, self.attach_filter = _of_kind(points["filter"],
                                                        FilterKind.ATTACH_LIMITS, filter_kind)
        #: Each Filter plugin's position, and NodeResourcesFit's (-1: none).
        self.filter_position = {n: k for k, (n, _) in enumerate(points["filter"])}
        self.fit_position = self.filter_position.get(self.fit_name, -1) if self.fit else -1
        #: The FitError messages of the failures the loop tallies.
        self.wording = FailureWording(self.tables, state, self.fit, self.fit_name)
        #: Per :func:`~ksched.pods.sibling_signature`, the first class of it that
        #: counts no pods, and per :func:`~ksched.pods.shape_signature` what :meth:`_admitted`
        #: and :meth:`_eligible` said: classes differing only in their requests (and, for the
        #: first, rank) share them. Only where every plugin is in-tree (none reads requests
        #: but NodeResourcesFit and the resource scores, nor priorities).
        self._shapes: dict[Hashed, int] = {}
        self._shape_verdicts: dict[Hashed | None, tuple[Any, bool]] = {}
        self._shares_shapes = all(type(p).__module__.startswith("ksched.plugins.")
                                  for p in framework.plugins.values())
        #: The node-static plugins (Filter or Score, each once) and the Reserve plugins.
        self._node_static = list({id(p): p for _, p in points["filter"] + points["score"]
                                  if is_node_static_filter(p) or is_node_static_score(p)
                                  }.values())
        self._reserve = [p for _, p in points["reserve"]]
        self.pending = pending
        self._claim_use: ClaimUse | None = None
        weight = lambda name: framework.weights.get(name, 0)  # noqa: E731
        #: The node-static scores: (name, plugin, weight, normalisation).
        self.static_scores = [(n, p, weight(n), normalization(p)) for n, p in points["score"]
                              if is_node_static_score(p)]
        self.normalized = [s for s in self.static_scores if s[3] is not Normalization.NONE]
        scorers = [_of_kind(points["score"], kind, score_kind) for kind in LOOP_SCORES]
        self.weights = np.array([weight(n) if p is not None else 0 for n, p in scorers],
                                dtype=np.int64)
        self.fit_scorer, self.balanced, self.spread_scorer, self.affinity_scorer = \
            (p for _, p in scorers)
        self.request_tables = RequestTables(self.fit, self.fit_scorer, self.balanced)
        #: The loop's arguments that the profile decides.
        self.parameters = loop_parameters(self.fit_scorer, self.weights, self.normalized,
                                          state.labels, framework.has_scoring,
                                          self.fit is not None)
        #: The topology spread plugin, wherever it is enabled.
        self.spread = next((p for p in framework.plugins.values()
                            if filter_kind(p) is FilterKind.TOPOLOGY_SPREAD
                            or score_kind(p) is ScoreKind.TOPOLOGY_SPREAD), None)
        self.fail_epoch = np.zeros(0, dtype=np.int64)
        n = state.num_nodes
        #: Bumped whenever a node's requests change (shared by the batch's fast paths).
        self.node_version = node_version if node_version is not None else np.ones(n, np.int64)
        #: Per class and walk position (fixed: new nodes make a new loop) a cached score, stamped:
        #: int32, half the memory the walks read at random (every total fits: :func:`supports`).
        self.cached_version = np.zeros((0, n), dtype=np.int32)
        self.cached_score = np.zeros((0, n), dtype=np.int32)
        affinity = self.affinity_filter if self.affinity_filter is not None \
            else self.affinity_scorer
        self.counts = DomainCounts(state, pending, affinity, count_pods)
        self._arrays: dict[str, Any] | None = None
        #: The classes' tables stacked so far, with their walk lists.
        self._stacks = StackedTables(state, len(self.normalized), self.fit is not None)
        #: Per :meth:`arrays` ``(c)`` kept, the loop's arguments prepared (:meth:`_call`).
        self._calls: dict[int, LoopCall] = {}
        #: Select by a tree over the node walk where the loop can (``False``: walk every pod).
        self.tree_selection = True

    @property
    def counters(self) -> list:
        """The spread counters (:class:`ksched.domain_counts.SpreadCounter`)."""
        return self.counts.counters

    def counts_pods(self, c: int) -> bool:
        """Whether class ``c``'s cycle counts pods (spreading, pod affinity): departures then
        leave its counts stale."""
        return any(len(getattr(self.tables, table)[c]) for table in COUNTING)

    def class_of(self, pod: Pod, state: ClusterState) -> int | None:
        """The pod's class index, compiling it on first sight; ``None``: use the framework.

        Replicas made with ``attrs.evolve`` share their field objects, so the class is found
        first by the identities of the fields (valid while the batch holds the pods), then by
        value."""
        if pod.resource_claims:  # resource claims: classes that count devices, or none
            return self.tables.device_classes.class_of(self, pod, state)
        if pod.volumes and has_claims(pod):
            return self._claim_class(pod, state)
        key = class_signature(pod)
        workloads = state.objects.get("workloads")
        last = self._last_by_containers.get(id(pod.containers))
        if last is not None and last[0] == key and (last[1] is None or not workloads):
            return last[1]  # (a tuple compares its items by identity first)
        identity = tuple(map(id, key))
        found = self.classes_by_identity.get(identity, _UNSEEN)
        if found is _UNSEEN or (found is not None and workloads):
            hashed = Hashed(key)
            found = self.verdicts.get(hashed, _UNSEEN) if not workloads else _UNSEEN
            if found is _UNSEEN:
                found = self.verdicts[hashed] = self._new_verdict(pod, hashed, state, not workloads)
            self.classes_by_identity[identity] = found
        self._last_by_containers[id(pod.containers)] = key, found
        return found

    def _new_verdict(self, pod: Pod, key: Hashed, state: ClusterState, shares: bool) -> int | None:
        """:meth:`class_of` a pod of a signature not seen (``shares``: classes of one shape
        may share their verdicts)."""
        shape = Hashed(shape_signature(pod)) if self._shares_shapes and shares else None
        admitted, eligible = self._shape_verdicts.get(shape, (_UNSEEN, False))
        if admitted is _UNSEEN:
            admitted = self._admitted(pod, state)
            eligible = admitted is not None and self._eligible(pod, state)
            if shape is not None:
                self._shape_verdicts[shape] = admitted, eligible
        if not eligible:
            return None
        found = self.classes.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self.classes[key] = self._compile(pod, state, *admitted, shape=shape)
        return found

    def _claim_class(self, pod: Pod, state: ClusterState) -> int | None:
        """:meth:`class_of` a pod with claims: by its spec but the volumes, what its volumes
        add (:meth:`ClaimUse.volume_key`) and how the plugins take it (:meth:`_admitted`),
        which the storage objects decide as they are now."""
        admitted = self._admitted(pod, state)
        if admitted is None:
            return None
        volumes = self._claims(state).volume_key(pod, state.storage)
        identity = (tuple(map(id, spec_signature(pod))), volumes, admitted)
        found = self.classes_by_identity.get(identity, _UNSEEN)
        if found is _UNSEEN or (found is not None and state.objects.get("workloads")):
            found = None
            if self._eligible(pod, state):
                key = (spec_signature(pod), volumes, admitted)
                if key not in self.classes:
                    self.classes[key] = self._compile(pod, state, *admitted)
                found = self.classes[key]
            self.classes_by_identity[identity] = found
        return found

    def lasting(self, pod: Pod) -> bool:
        """Whether the pod's class stays its class while the pod is pending (one with claims
        is found again: the storage objects change as bindings are assumed)."""
        return not (pod.volumes and has_claims(pod) or pod.resource_claims)

    def _claims(self, state: ClusterState) -> ClaimUse:
        """Who uses which claims: the pending pods and the bound ones (made on first use; a
        pod that is neither uses no claim alone)."""
        if self._claim_use is None:
            self._claim_use = ClaimUse([*self.pending, *state.pods], self.layout.storage)
        return self._claim_use

    def _admitted(self, pod: Pod, state: ClusterState) -> tuple[bool, bool] | None:
        """How the node-static plugins take the pod: ``None`` when one of them is not
        node-static for it (:func:`node_static_for`) and the loop cannot count it; else
        whether the attach-limit filter counts its volumes and whether a Reserve plugin
        reserves something for it (both only for a pod that uses its claims alone)."""
        attach = False
        for p in self._node_static:
            if not node_static_for(p, pod, state):
                if p is not self.attach_filter and p is not self.tables.device_classes.counting:
                    return None
                attach = attach or p is self.attach_filter
        binds = any(reserves_for(p, pod, state) for p in self._reserve)
        if (attach or binds) and not self._claims(state).exclusive(pod, state.storage):
            return None
        return attach, binds

    def binds(self, c: int) -> bool:
        """Whether a Reserve plugin reserves something for the pods of class ``c``: the
        caller runs Reserve for each one the loop places."""
        return self.tables.binds[c]

    def _eligible(self, pod: Pod, state: ClusterState) -> bool:
        """Whether the loop models the pod's counted filters and scores (the node-static plugins
        take it, :meth:`_admitted`): no resource claims; pod affinity needs its plugin's
        PreFilter and Filter; spread constraints (valid ones) need the spread plugin's PreFilter
        and Filter (hard) or, where it scores, its PreScore and Score (soft)."""
        if pod.resource_claims and self.tables.device_classes.compiling is None:
            return False
        points = self.framework.points
        runs = lambda point, p: any(q is p for _, q in points[point])  # noqa: E731
        ipa = self.affinity_filter
        if pod.has_pod_affinity and not (ipa is not None and runs("preFilter", ipa)):
            return False
        spread = self.spread
        if spread is None or not (pod.topology_spread_constraints
                                  or state.objects.get("workloads")):
            return True
        found = spread.constraints(Cycle(state, pod))
        if isinstance(found, Status):
            return False
        hard, soft = found
        if hard and not (runs("preFilter", spread) and runs("filter", spread)):
            return False
        return not (soft and runs("score", spread) and not runs("preScore", spread))

    def _compile(self, pod: Pod, state: ClusterState, attach: bool, binds: bool,
                 shape: Hashed | None = None) -> int | None:
        """Compile a new class (its volumes counted against attach limits, Reserve to run
        for its pods); ``None`` when the loop does not model the pod's cycle, or a plugin
        refuses a feature ksched does not model (the framework raises it in turn). A class
        whose pods differ from an earlier class's only by what they request and how they rank
        (one :func:`~ksched.pods.sibling_signature`; ``shape`` given: all plugins
        allow it) takes that class's node-static verdicts and scores and computes only its
        requests (:meth:`_add_sibling`)."""
        cycle = Cycle(state, pod)
        key = Hashed(sibling_signature(pod)) if shape is not None and not attach else None
        sibling = self._shapes.get(key, -1) if key is not None else -1
        if sibling >= 0:
            return self._add_sibling(cycle, sibling, binds)
        found = self._compile_cycle(cycle, attach, binds)
        if found is not None and key is not None \
                and not self.counts_pods(found):  # siblings share no counts
            self._shapes[key] = found
        return found

    def _add_sibling(self, cycle: Cycle, s: int, binds: bool) -> int | None:
        """Append a class like class ``s`` but for its requests (``None``: the pod requests
        a resource no node has; the framework words that)."""
        resources = self.request_tables(cycle)
        if resources is None:
            return None
        return self.tables.add_like(s, cycle.pod, resources, self.counts.add_like(cycle.pod, s),
                                    binds)

    def _compile_cycle(self, cycle: Cycle, attach: bool, binds: bool) -> int | None:
        """:meth:`_compile` of a class of a new shape."""
        try:
            found = self._pre_filter(cycle)
            if found is None or (self.fit is not None and self.fit_name in found[0]):
                return None
            counts = None
            if attach and self.attach_name not in found[0]:
                counts = self.attach_filter.attach_counts(cycle)
                if counts is None:
                    return None
            parts = self._statics(cycle, found[0], counts)
            return None if parts is None else self._add_class(cycle, found[1], counts, binds,
                                                              *parts)
        except UnsupportedFeatureError:
            return None

    def _pre_filter(self, cycle: Cycle) -> tuple[set[str], frozenset[str] | None] | None:
        """PreFilter: the plugins that Skip and the node subset; ``None`` when it rejects
        the pod (the framework words that)."""
        subset, skipped = None, self.tables.device_classes.skipped()
        for name, plugin in self.framework.points["preFilter"]:
            outcome = plugin.pre_filter(cycle)
            if isinstance(outcome, PreFilterResult):
                if outcome.node_names is not None:
                    subset = outcome.node_names if subset is None else subset & outcome.node_names
            elif isinstance(outcome, Status) and outcome.is_skip:
                skipped.add(name)
            elif isinstance(outcome, Status) and not outcome.is_success:
                return None
        if subset is not None and not subset:
            return None
        return skipped, subset

    def _statics(self, cycle: Cycle, skipped: set[str], counts: Any
                 ) -> tuple[Any, ...] | None:
        """The node-static filters' pass flags and scores of the class over all nodes (but an
        attach-limit filter's that counts the pod's volumes: ``counts``): judged once per node
        class when every node-static plugin allows it. ``None`` when one of them errs. With
        them, the verdicts as the loop words a failure (:class:`StaticStatuses`; ``None``
        when a plugin gives a plain mask)."""
        state, pod, n = cycle.state, cycle.pod, cycle.state.num_nodes
        plugins = [p for _, p in self.static_filters] + [s[1] for s in self.static_scores]
        if all(judged_by_node_class(p, pod) for p in plugins):
            judged, spread = state.class_nodes, state.node_class
        else:
            judged, spread = np.arange(n, dtype=np.int64), slice(None)
        ok = np.ones(len(judged), dtype=np.bool_)
        wording = StaticStatuses.builder(len(judged))
        for name, plugin in self.static_filters:
            if name not in skipped and (plugin is not self.attach_filter or counts is None):
                result = plugin.filter(cycle, judged)
                if isinstance(result, np.ndarray):  # a plain mask from an out-of-tree plugin
                    result_passed = np.asarray(result, dtype=np.bool_)
                elif any(s.code == Code.ERROR for s in result.statuses):
                    return None
                else:
                    result_passed = result.passed
                wording.add(name, result, self.filter_position[name] > self.fit_position)
                ok &= result_passed
        not_scored = set()
        for name, plugin in self.framework.points["preScore"]:
            status = plugin.pre_score(cycle, judged)
            if status is not None and status.is_skip:
                not_scored.add(name)
            elif status is not None and not status.is_success:
                return None
        static = np.zeros(len(judged), dtype=np.int64)
        raw: list[np.ndarray | None] = []
        for name, plugin, weight, how in self.static_scores:
            scores = (np.asarray(plugin.score(cycle, judged), dtype=np.int64)
                      if name not in not_scored else np.zeros(len(judged), dtype=np.int64))
            if how is Normalization.NONE:
                static += weight * scores
            else:  # spread over the nodes only when some node's score is not 0
                raw.append(scores[spread] if scores.any() else None)
        return ok[spread], raw, static[spread] if static.any() else None, wording.made(spread)

    def _add_class(self, cycle: Cycle, subset: frozenset[str] | None, counts: Any, binds: bool,
                   ok: np.ndarray, norm_raw: list, static_score: np.ndarray | None,
                   wording: StaticStatuses | None) -> int | None:
        """Append the class to the tables (``None``, nothing appended, when the loop does
        not model it after all)."""
        state, pod, t = cycle.state, cycle.pod, self.tables
        resources = self.request_tables(cycle)
        hard = self.spread_filter.filter_counts(cycle) if self.spread_filter is not None \
            else None
        soft = self.spread_scorer.soft_constraints(cycle) if self.spread_scorer is not None \
            else None
        affinity = self._affinity_counts(cycle)
        if resources is None or affinity is None or isinstance(hard, Status) \
                or isinstance(soft, Status):
            return None
        for name, value in resources.items():
            getattr(t, name).append(value)
        t.static_ok.append(ok & hard.keyed if hard is not None else ok)
        t.norm_raw.append(norm_raw)
        t.static_score.append(static_score)
        t.port_check.append(self.ports.blocking_columns(cycle) if self.ports is not None
                            else np.zeros(0, np.int64))
        t.port_add.append(np.array([state.port_keys.index(p) for p in set(host_ports(pod))],
                                   dtype=np.int64))
        t.spread.append(self.counts.hard_spread(pod, hard))
        t.soft_spread.append(self.counts.soft_spread(pod, soft, state))
        t.require_all.append(soft.require_all if soft is not None else False)
        t.add_affinity(self.counts.add_class(pod, *affinity, state))
        t.attach.append(counts)
        t.binds.append(binds)
        t.identity.append((pod.namespace, pod.labels, pod.deleting))
        t.pods.append(pod)
        t.has_subset.append(subset is not None)
        t.subset.append(state.in_tree_order(subset) if subset is not None
                        else np.zeros(0, np.int64))
        t.wording.append(wording if wording is not None and t.device_classes.compiling is None
                         and worded(t, len(t.wording), wording, state.num_nodes) else None)
        return len(t.static_ok) - 1

    def _grow_rows(self, classes: int) -> None:
        """Room for ``classes`` classes in the per-class state (at least four, doubling: rows
        are copied a few times, not once per class). The score cache's rows are zeros, which
        no node version equals (versions start at 1): calloc'd, they cost no memory until
        the loop writes them."""
        have = len(self.fail_epoch)
        if classes <= have:
            return
        rows, n = max(classes, 2 * have, 4), self.layout.num_nodes
        grown = np.full(rows, -1, dtype=np.int64), np.zeros((rows, n), dtype=np.int32), \
            np.zeros((rows, n), dtype=np.int32)
        if have:
            for new, old in zip(grown, (self.fail_epoch, self.cached_version, self.cached_score)):
                new[:have] = old
        self.fail_epoch, self.cached_version, self.cached_score = grown

    def _affinity_counts(self, cycle: Cycle) -> tuple[Any, Any] | None:
        """The InterPodAffinity plugin's PreFilter counts and PreScore sums for the class
        (:meth:`DomainCounts.add_class`); ``None`` when a term does not parse."""
        filter_counts = score_counts = None
        if self.affinity_filter is not None:
            filter_counts = self.affinity_filter.filter_counts(cycle)
        scorer = self.affinity_scorer
        if scorer is not None and scorer.may_score(cycle.pod):
            score_counts = scorer.score_counts(cycle)
            score_counts = False if score_counts is None else score_counts
        if isinstance(filter_counts, Status) or isinstance(score_counts, Status):
            return None
        return filter_counts, score_counts

    def note_placement(self, pod: Pod, node: int, state: ClusterState) -> None:
        """A pod was placed outside this loop: count it where it matches (``AddPod``)."""
        self.counts.note_placement(pod, node, state)

    def arrays(self, c: int = -1) -> dict[str, Any]:
        """The class tables stacked for the loop (cached until a class is added), with room
        for every class in the per-class state; ``c >= 0``: class ``c``'s alone, as class 0."""
        found = self._one.get(c) if c >= 0 else self._arrays
        if found is None or (c < 0 and self._stacked != len(self.tables.static_ok)):
            t, layout = self.tables.one(c) if c >= 0 else self.tables, self.layout
            self._grow_rows(len(self.tables.static_ok))
            stacked = self._stacks.update(t) if c < 0 else self._stacks.one(self.tables, c)
            anti = len(stacked["ipa_anti"]) or len(stacked["ipa_existing"])
            found = {**stacked, **t.counter_arrays(self.counts, layout), **t.attach_arrays(),
                     **self.parameters,  # hostnames are read where anti-affinity may read them
                     "node_unique": node_unique(layout.labels) if anti
                     else np.zeros(layout.labels.shape[1], dtype=np.bool_)}
            if c < 0:
                self._arrays, self._stacked = found, len(t.static_ok)
            else:
                if len(self._one) >= max(64, ONE_CLASS_NODES // (self.layout.num_nodes + 1)):
                    self._calls.pop(next(iter(self._one)), None)
                    del self._one[next(iter(self._one))]
                self._one[c] = found
        return found

    def _one_class(self, classes: np.ndarray, begin: int) -> int:
        """The class of a run of one pod that takes its class's arrays alone, else -1."""
        c = int(classes[begin]) if begin == len(classes) - 1 and not self.count_pods else -1
        return c if c in self._one or c >= 0 and self.tables.one(c) is not None else -1

    def left_out_scores(self) -> np.ndarray:
        """Per class, int64[C]: what the loop's totals lack of upstream's, the same on every
        node: the weighted normalised node-static scores whose raw score is 0 on every node
        (the loop leaves them out; ``DefaultNormalizeScore`` makes them ``MAX_NODE_SCORE``
        when reversed, else 0)."""
        arrays = self.arrays()
        left_out = (arrays["norm_row"] < 0) & arrays["norm_reverse"][None, :]
        return (left_out * arrays["norm_weight"][None, :]).sum(axis=1) * MAX_NODE_SCORE

    def counts_attachments(self, classes: np.ndarray | None = None, begin: int = 0) -> bool:
        """Whether a class (of a run of ``classes[begin:]``) counts volumes against attach
        limits (the loop then reads the attached volumes of the state's pods, not devices)."""
        call = self._call(-1) if classes is None or self._one_class(classes, begin) < 0 else None
        return call is not None and call.attaches \
            and self.tables.device_classes.counts_volumes(call.arrays)

    def run(self, state: ClusterState, classes: np.ndarray, begin: int, percentage: int,
            tie_mode: int, draws: np.ndarray, counters: np.ndarray, out_node: np.ndarray,
            out_start: np.ndarray, out_walk: np.ndarray | None = None,
            tallies: Tallies | None = None, removals: np.ndarray = NO_REMOVALS) -> int:
        """Run the loop over ``classes[begin:]`` on ``state``'s (writable) arrays; returns
        where it stopped (see :func:`ksched.kernels.schedule_loop.schedule_loop`; without
        ``out_walk`` each pod's walk is not kept; without ``tallies`` the loop words no
        failure and stops at each new one; ``removals``: the loop's ``remove_node``)."""
        one = len(classes) == 1
        if out_walk is None:  # written, never read: kept for runs of one pod
            out_walk = ONE_WALK if one else np.empty((len(classes), 4), dtype=np.int64)
        if tallies is None:  # one pod at a time (the simulator): kept
            tallies = _NO_TALLIES.get(len(classes)) or Tallies(len(classes), records=0,
                                                               entries=0)
            if one:
                _NO_TALLIES[1] = tallies
        c = self._one_class(classes, begin)
        call = self._call(c)
        table = self.tables.device_classes.attach_table(state, self.attach_filter, call.arrays) \
            if c < 0 and call.attaches else no_attach(state.num_nodes)
        return call(begin, ONE_CLASS if one and c >= 0 else classes - max(c, 0),
                    state.allocatable, state.requested, state.nonzero_requested,
                    state.port_count, state.tree_order, state.resource_column(PODS), percentage,
                    tie_mode, draws, counters, table.group, table.limits, table.attached,
                    self.tree_selection, tallies.out_fail, tallies.rec_class,
                    tallies.rec_indptr, tallies.rec_keys, tallies.rec_counts, tallies.used,
                    removals, out_node, out_start, out_walk)

    def _call(self, c: int) -> LoopCall:
        """The loop's prepared arguments for :meth:`arrays` ``(c)`` (made anew with those),
        viewing the live per-class state."""
        arrays, counts = self.arrays(c), self.counts
        call = self._calls.get(c)
        if call is None or call.arrays is not arrays:
            call = self._calls[c] = LoopCall(arrays, full_loop(arrays), {
                **arrays, "node_version": self.node_version, "fit_position": self.fit_position})
        rows = slice(c, c + 1) if c >= 0 else slice(None)
        return call.refresh(
            (self.fail_epoch, self.cached_version, self.cached_score, counts.affinity_empty,
             counts.counter_counts, counts.rows),
            lambda: dict(fail_epoch=self.fail_epoch[rows],
                         cached_version=self.cached_version[rows],
                         cached_score=self.cached_score[rows],
                         ipa_affinity_empty=counts.affinity_empty[rows],
                         counter_counts=counts.counter_counts, ipa_rows=counts.rows))


__all__ = ["FusedLoop", "ClassTables", "SpreadCounter", "StaticStatuses", "Tallies",
           "LOOP_FILTERS", "LOOP_SCORES", "supports"]
