"""PodTopologySpread's reference: a plain per-node transliteration of
``plugins/podtopologyspread/{common,filtering,scoring}.go`` and ``helper/spread.go`` over
NodeInfo records.

Label values are strings, domains are dicts keyed by them, and every function recomputes the
PreFilter / PreScore state it needs from all nodes. The plugin
(:mod:`ksched.plugins.pod_topology_spread`) is tested against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from ksched.api import Pod
from ksched.constants import LABEL_HOSTNAME, MAX_NODE_SCORE
from ksched.labels import Selector
from ksched.plugins.pod_topology_spread import (
    DO_NOT_SCHEDULE,
    REASON_MISSING_LABEL,
    REASON_SKEW,
    SCHEDULE_ANYWAY,
    SYSTEM,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    PodTopologySpreadArgs,
)
from ksched.status import Code, Status, unresolvable, unschedulable


def _reference_default_selector(pod: Pod, workloads: Sequence) -> Selector:
    """``helper.DefaultSelector`` over Workload records."""
    label_set: dict[str, str] = {}
    for w in workloads:
        if w.kind != "Service" or w.namespace != pod.namespace or w.selector is None:
            continue
        wanted = w.selector.match_labels
        if all(k in pod.labels and pod.labels[k] == v for k, v in wanted.items()):
            label_set.update(wanted)
    requirements = [(k, "In", (v,)) for k, v in sorted(label_set.items())]
    if pod.controller is None:
        return Selector(requirements)
    api_version, kind, name = pod.controller
    owner = None
    for w in workloads:
        if w.kind == kind and w.name == name and w.namespace == pod.namespace:
            owner = w
            break
    if owner is None:
        return Selector(requirements)
    if (api_version, kind) == ("v1", "ReplicationController"):
        if owner.selector is not None:
            label_set.update(owner.selector.match_labels)
        requirements = [(k, "In", (v,)) for k, v in sorted(label_set.items())]
    elif (api_version, kind) in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
        try:
            other = Selector.from_label_selector(owner.selector)
        except ValueError:
            other = None
        if other is not None and not other.nothing:
            requirements += list(other.requirements)
    return Selector(requirements)


def reference_constraints(pod: Pod, action: str, args: PodTopologySpreadArgs,
                           workloads: Sequence) -> list[Constraint]:
    """``filterTopologySpreadConstraints`` on the pod's constraints, or
    ``buildDefaultConstraints``. Raises ``ValueError`` on an invalid label selector."""
    explicit = bool(pod.topology_spread_constraints)
    if explicit:
        specs = pod.topology_spread_constraints
    elif args.defaulting_type == SYSTEM:
        specs = SYSTEM_DEFAULT_CONSTRAINTS
    else:
        specs = args.default_constraints
    out = []
    for c in specs:
        if c.when_unsatisfiable != action:
            continue
        selector = Selector.from_label_selector(c.label_selector)
        match_labels = {}
        for key in c.match_label_keys:
            if key in pod.labels:
                match_labels[key] = pod.labels[key]
        if match_labels and not selector.nothing:
            selector = Selector([(k, "In", (v,)) for k, v in match_labels.items()]
                                + list(selector.requirements))
        out.append(Constraint(
            max_skew=c.max_skew, topology_key=c.topology_key, selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            honor_affinity=c.node_affinity_policy in (None, "Honor"),
            honor_taints=c.node_taints_policy == "Honor",
        ))
    if explicit or not out:
        return out
    selector = _reference_default_selector(pod, workloads)
    if selector.empty:
        return []
    return [attrs.evolve(c, selector=selector) for c in out]


def _reference_included(c: Constraint, pod: Pod, node: object) -> bool:
    """``matchNodeInclusionPolicies``."""
    from ksched.plugins.node_affinity import reference_filter as affinity_filter
    from ksched.plugins.taint_toleration import reference_filter as taint_filter

    if c.honor_affinity and not affinity_filter(pod, node).is_success:
        return False
    if c.honor_taints and not taint_filter(pod, node).is_success:
        return False
    return True


def _reference_count(pods: Sequence[Pod], selector: Selector, namespace: str) -> int:
    """``countPodsMatchSelector``."""
    if selector.empty:
        return 0
    return sum(1 for p in pods
               if not p.deleting and p.namespace == namespace and selector.matches(p.labels))


def _has_keys(labels: object, constraints: Sequence[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``."""
    return all(c.topology_key in labels for c in constraints)


def reference_filter(pod: Pod, node_info: object, all_nodes: Sequence,
                     args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                     workloads: Sequence = ()) -> Status:
    """``PreFilter`` (over ``all_nodes``) then ``Filter`` of one NodeInfo.

    A PreFilter Skip reads as success; an invalid selector as an Error status.
    """
    from ksched.status import SUCCESS

    try:
        constraints = reference_constraints(pod, DO_NOT_SCHEDULE, args, workloads)
    except ValueError as exc:
        return Status(Code.ERROR, (str(exc),))
    if not constraints:
        return SUCCESS
    tp_value_to_match_num: list[dict[str, int]] = [{} for _ in constraints]
    for info in all_nodes:
        node = info.node
        if not _has_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _reference_included(c, pod, node):
                continue
            value = node.labels[c.topology_key]
            count = _reference_count(info.pods, c.selector, pod.namespace)
            counts = tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + count
    labels = node_info.node.labels
    for i, c in enumerate(constraints):
        if c.topology_key not in labels:
            return unresolvable(REASON_MISSING_LABEL)
        counts = tp_value_to_match_num[i]
        # criticalPaths[0] always ends as the smallest count (MaxInt32 when there is none).
        min_match = min(counts.values(), default=2**31 - 1)
        if len(counts) < c.min_domains:
            min_match = 0
        self_match = 1 if c.selector.matches(pod.labels) else 0
        skew = counts.get(labels[c.topology_key], 0) + self_match - min_match
        if skew > c.max_skew:
            return unschedulable(REASON_SKEW)
    return SUCCESS


def reference_skips(pod: Pod, all_nodes: Sequence,
                    args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                    workloads: Sequence = ()) -> bool:
    """Whether ``PreScore`` returns Skip (no nodes, or no soft constraints)."""
    if not all_nodes:
        return True
    return not reference_constraints(pod, SCHEDULE_ANYWAY, args, workloads)


def _reference_pre_score(pod: Pod, feasible: Sequence, all_nodes: Sequence,
                         args: PodTopologySpreadArgs, workloads: Sequence) -> tuple:
    """``initPreScoreState`` + the counting pass of ``PreScore``."""
    constraints = reference_constraints(pod, SCHEDULE_ANYWAY, args, workloads)
    require_all = bool(pod.topology_spread_constraints) or args.defaulting_type != SYSTEM
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for info in feasible:
        labels = info.node.labels
        if require_all and not _has_keys(labels, constraints):
            ignored.add(info.node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                counts[i][value] = 0
                topo_size[i] += 1
    weights = []
    for i, c in enumerate(constraints):
        size = topo_size[i]
        if c.topology_key == LABEL_HOSTNAME:
            size = len(feasible) - len(ignored)
        weights.append(math.log(float(size + 2)))
    for info in all_nodes:
        labels = info.node.labels
        if require_all and not _has_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _reference_included(c, pod, info.node):
                continue
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                continue
            counts[i][value] += _reference_count(info.pods, c.selector, pod.namespace)
    return constraints, ignored, counts, weights


def _go_round(x: float) -> int:
    """``math.Round``: half away from zero, on the exact binary value."""
    from decimal import ROUND_HALF_UP, Decimal

    return int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def reference_score(pod: Pod, node_info: object, feasible: Sequence, all_nodes: Sequence,
                    args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                    workloads: Sequence = ()) -> int:
    """``PreScore`` (over ``feasible`` and ``all_nodes``) then ``Score`` of one NodeInfo.

    Call only when :func:`reference_skips` is false.
    """
    constraints, ignored, counts, weights = _reference_pre_score(pod, feasible, all_nodes,
                                                                 args, workloads)
    node = node_info.node
    if node.name in ignored:
        return 0
    score = 0.0
    for i, c in enumerate(constraints):
        if c.topology_key in node.labels:
            if c.topology_key == LABEL_HOSTNAME:
                cnt = _reference_count(node_info.pods, c.selector, pod.namespace)
            else:
                cnt = counts[i][node.labels[c.topology_key]]
            score += float(cnt) * weights[i] + float(c.max_skew - 1)
    return _go_round(score)


def reference_normalize(pod: Pod, feasible: Sequence, scores: Sequence[int],
                        args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                        workloads: Sequence = ()) -> list[int]:
    """``NormalizeScore`` of the scores of ``feasible`` (in that order)."""
    invalid_score = -1
    _, ignored, _, _ = _reference_pre_score(pod, feasible, feasible, args, workloads)
    out = list(scores)
    min_score, max_score = 2**63 - 1, 0
    for i, info in enumerate(feasible):
        if info.node.name in ignored:
            out[i] = invalid_score
            continue
        min_score = min(min_score, out[i])
        max_score = max(max_score, out[i])
    for i in range(len(out)):
        if out[i] == invalid_score:
            out[i] = 0
        elif max_score == 0:
            out[i] = MAX_NODE_SCORE
        else:
            # Operands are non-negative, so // is Go's truncating division.
            out[i] = MAX_NODE_SCORE * (max_score + min_score - out[i]) // max_score
    return out
