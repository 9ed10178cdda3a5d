"""InterPodAffinity's reference: a plain per-node transliteration of
``plugins/interpodaffinity/{filtering,scoring}.go`` over NodeInfo records.

Topology pairs are (key, value) strings in dicts, every function recomputes the PreFilter /
PreScore state it needs from all nodes, and terms are parsed here on their own. The plugin
(:mod:`ksched.plugins.inter_pod_affinity`) is tested against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ksched.api import FrozenDict, Pod, PodAffinityTerm
from ksched.constants import MAX_NODE_SCORE
from ksched.labels import Selector
from ksched.plugins.inter_pod_affinity import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
    InterPodAffinityArgs,
    aggregate_errors,
    has_preferred_terms,
    has_required_anti_affinity,
    wrap_int32,
)
from ksched.status import SKIP, SUCCESS, Code, Status, unresolvable, unschedulable

_NO_NAMESPACES: Mapping[str, Mapping[str, str]] = FrozenDict()


def _reference_term(pod: Pod, term: PodAffinityTerm) -> dict:
    selector = Selector.from_label_selector(term.label_selector)
    if len(term.namespaces) == 0 and term.namespace_selector is None:
        namespaces = {pod.namespace}
    else:
        namespaces = set(term.namespaces)
    ns_selector = Selector.from_label_selector(term.namespace_selector)
    return {"namespaces": namespaces, "selector": selector, "key": term.topology_key,
            "ns_selector": ns_selector}


def _reference_pod_info(pod: Pod) -> tuple[dict[str, list], list[str]]:
    """``NewPodInfo``: the four term lists (a list with a bad term is empty) and the errors."""
    info: dict[str, list] = {}
    errors: list[str] = []
    sources = {
        "requiredAffinityTerms": (pod.pod_affinity, False),
        "requiredAntiAffinityTerms": (pod.pod_anti_affinity, False),
        "preferredAffinityTerms": (pod.pod_affinity, True),
        "preferredAntiAffinityTerms": (pod.pod_anti_affinity, True),
    }
    for name, (affinity, weighted) in sources.items():
        terms = []
        try:
            if affinity is not None:
                if weighted:
                    for w in affinity.preferred:
                        t = _reference_term(pod, w.term)
                        t["weight"] = w.weight
                        terms.append(t)
                else:
                    for term in affinity.required:
                        terms.append(_reference_term(pod, term))
        except ValueError as exc:
            terms = []
            errors.append(f"{name}: {exc}")
        info[name] = terms
    return info, errors


def _reference_matches(term: dict, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
    if pod.namespace in term["namespaces"] or term["ns_selector"].matches(ns_labels or {}):
        return term["selector"].matches(pod.labels)
    return False


def _reference_merge(term: dict, namespaces: Mapping[str, Mapping[str, str]]) -> dict:
    """``mergeAffinityTermNamespacesIfNotEmpty``."""
    if term["ns_selector"].empty:
        return term
    merged = dict(term)
    merged["namespaces"] = set(term["namespaces"])
    for name, labels in namespaces.items():
        if term["ns_selector"].matches(labels):
            merged["namespaces"].add(name)
    merged["ns_selector"] = Selector(nothing=True)
    return merged


def _reference_matches_all(terms: list[dict], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms``."""
    if len(terms) == 0:
        return False
    for t in terms:
        if not _reference_matches(t, pod, None):
            return False
    return True


def _reference_pre_filter(pod: Pod, all_nodes: Sequence,
                          namespaces: Mapping[str, Mapping[str, str]]) -> dict | Status:
    """``PreFilter``: the three counters, or the rejection / Skip status."""
    info, errors = _reference_pod_info(pod)
    if errors:
        return unresolvable(f"parsing pod: {aggregate_errors(errors)}")
    affinity_terms = [_reference_merge(t, namespaces) for t in info["requiredAffinityTerms"]]
    anti_terms = [_reference_merge(t, namespaces) for t in info["requiredAntiAffinityTerms"]]
    ns_labels = namespaces.get(pod.namespace)

    existing_anti: dict[tuple[str, str], int] = {}
    for node_info in all_nodes:
        labels = node_info.node.labels
        for other in node_info.pods:
            if not has_required_anti_affinity(other):
                continue
            other_info, _ = _reference_pod_info(other)
            for t in other_info["requiredAntiAffinityTerms"]:
                if _reference_matches(t, pod, ns_labels) and t["key"] in labels:
                    pair = (t["key"], labels[t["key"]])
                    existing_anti[pair] = existing_anti.get(pair, 0) + 1

    affinity_counts: dict[tuple[str, str], int] = {}
    anti_counts: dict[tuple[str, str], int] = {}
    if affinity_terms or anti_terms:
        for node_info in all_nodes:
            labels = node_info.node.labels
            for other in node_info.pods:
                if _reference_matches_all(affinity_terms, other):
                    for t in affinity_terms:
                        if t["key"] in labels:
                            pair = (t["key"], labels[t["key"]])
                            affinity_counts[pair] = affinity_counts.get(pair, 0) + 1
                for t in anti_terms:
                    if _reference_matches(t, other, None) and t["key"] in labels:
                        pair = (t["key"], labels[t["key"]])
                        anti_counts[pair] = anti_counts.get(pair, 0) + 1

    if not existing_anti and not affinity_terms and not anti_terms:
        return SKIP
    return {"affinity_terms": affinity_terms, "anti_terms": anti_terms, "pod": pod,
            "existing_anti": existing_anti, "affinity": affinity_counts, "anti": anti_counts}


def reference_pre_filter(pod: Pod, all_nodes: Sequence,
                         namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES
                         ) -> Status | None:
    """``PreFilter``'s status: ``None`` to go on, Skip, or the parse rejection."""
    s = _reference_pre_filter(pod, all_nodes, namespaces)
    return s if isinstance(s, Status) else None


def reference_filter(pod: Pod, node_info: object, all_nodes: Sequence,
                     namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES) -> Status:
    """``PreFilter`` (over ``all_nodes``) then ``Filter`` of one NodeInfo.

    A PreFilter Skip reads as success, a PreFilter rejection as that status.
    """
    s = _reference_pre_filter(pod, all_nodes, namespaces)
    if isinstance(s, Status):
        return SUCCESS if s.is_skip else s
    labels = node_info.node.labels

    # satisfyPodAffinity
    pods_exist = True
    affinity_ok = True
    for t in s["affinity_terms"]:
        if t["key"] in labels:
            if s["affinity"].get((t["key"], labels[t["key"]]), 0) <= 0:
                pods_exist = False
        else:
            affinity_ok = False
            break
    if affinity_ok and not pods_exist:
        affinity_ok = (len(s["affinity"]) == 0
                       and _reference_matches_all(s["affinity_terms"], s["pod"]))
    if not affinity_ok:
        return unresolvable(REASON_AFFINITY)

    # satisfyPodAntiAffinity
    if len(s["anti"]) > 0:
        for t in s["anti_terms"]:
            if t["key"] in labels and s["anti"].get((t["key"], labels[t["key"]]), 0) > 0:
                return unschedulable(REASON_ANTI_AFFINITY)

    # satisfyExistingPodsAntiAffinity
    if len(s["existing_anti"]) > 0:
        for key, value in labels.items():
            if s["existing_anti"].get((key, value), 0) > 0:
                return unschedulable(REASON_EXISTING_ANTI_AFFINITY)
    return SUCCESS


def _reference_pre_score(pod: Pod, all_nodes: Sequence,
                         namespaces: Mapping[str, Mapping[str, str]],
                         args: InterPodAffinityArgs) -> dict | None | Status:
    """``PreScore``: the topology score map, ``None`` for Skip, or an Error status."""
    has_constraints = has_preferred_terms(pod)
    if args.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None
    if has_constraints:
        nodes = list(all_nodes)
    else:
        nodes = [n for n in all_nodes if any(p.has_pod_affinity for p in n.pods)]
    info, errors = _reference_pod_info(pod)
    if errors:
        return Status(Code.ERROR, (f"failed to parse pod: {aggregate_errors(errors)}",))
    preferred = [_reference_merge(t, namespaces) for t in info["preferredAffinityTerms"]]
    preferred_anti = [_reference_merge(t, namespaces)
                      for t in info["preferredAntiAffinityTerms"]]
    ns_labels = namespaces.get(pod.namespace)

    topology_score: dict[str, dict[str, int]] = {}

    def process_term(term: dict, weight: int, target: Pod, target_ns_labels: object,
                     labels: Mapping[str, str], multiplier: int) -> None:
        if _reference_matches(term, target, target_ns_labels) and term["key"] in labels:
            scores = topology_score.setdefault(term["key"], {})
            value = labels[term["key"]]
            scores[value] = scores.get(value, 0) + wrap_int32(weight * multiplier)

    for node_info in nodes:
        labels = node_info.node.labels
        if has_constraints:
            to_process = list(node_info.pods)
        else:
            to_process = [p for p in node_info.pods if p.has_pod_affinity]
        for existing in to_process:
            if len(labels) == 0:  # processExistingPod
                continue
            existing_info, _ = _reference_pod_info(existing)
            for t in preferred:
                process_term(t, t["weight"], existing, None, labels, 1)
            for t in preferred_anti:
                process_term(t, t["weight"], existing, None, labels, -1)
            if args.hard_pod_affinity_weight > 0:
                for t in existing_info["requiredAffinityTerms"]:
                    process_term(t, args.hard_pod_affinity_weight, pod, ns_labels, labels, 1)
            for t in existing_info["preferredAffinityTerms"]:
                process_term(t, t["weight"], pod, ns_labels, labels, 1)
            for t in existing_info["preferredAntiAffinityTerms"]:
                process_term(t, t["weight"], pod, ns_labels, labels, -1)
    if not topology_score:
        return None
    return topology_score


def reference_skips(pod: Pod, all_nodes: Sequence,
                    namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES,
                    args: InterPodAffinityArgs = InterPodAffinityArgs()) -> bool:
    """Whether ``PreScore`` returns Skip."""
    return _reference_pre_score(pod, all_nodes, namespaces, args) is None


def reference_score(pod: Pod, node_info: object, all_nodes: Sequence,
                    namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES,
                    args: InterPodAffinityArgs = InterPodAffinityArgs()) -> int:
    """``PreScore`` (over ``all_nodes``) then ``Score`` of one NodeInfo.

    Call only when :func:`reference_skips` is false.
    """
    topology_score = _reference_pre_score(pod, all_nodes, namespaces, args)
    score = 0
    for key, values in topology_score.items():
        if key in node_info.node.labels:
            score += values.get(node_info.node.labels[key], 0)
    return score


def reference_normalize(scores: Sequence[int]) -> list[int]:
    """``NormalizeScore`` of the raw scores of the scored nodes (PreScore did not skip)."""
    min_count, max_count = 2**63 - 1, -(2**63)
    for s in scores:
        if s > max_count:
            max_count = s
        if s < min_count:
            min_count = s
    diff = max_count - min_count
    out = []
    for s in scores:
        f_score = 0.0
        if diff > 0:
            f_score = float(MAX_NODE_SCORE) * (float(s - min_count) / float(diff))
        out.append(int(f_score))
    return out
