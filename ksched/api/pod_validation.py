"""The rules of ``ValidatePodSpec`` / ``ValidatePodCreate`` (``pkg/apis/core/validation``) that
span fields, run on the defaulted pod record: host-network ports, node affinity terms, pod
affinity label keys, topology spread constraints, pod-level resources; and the API server's
``mutatePodAffinity`` at creation (:func:`merge_label_keys`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ksched import quantity as _quantity
from ksched import validation as _v
from ksched.api.affinity import label_selector_errors, weight_errors
from ksched.api.reader import ManifestReader
from ksched.api.records import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
)
from ksched.constants import CPU
from ksched.resources import pod_requests as aggregate_requests

__all__ = ["check_affinities", "check_pod", "merge_label_keys", "node_selector_term_errors"]

_NODE_AFFINITY = "spec.affinity.nodeAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def check_pod(r: ManifestReader, pod: Pod) -> None:
    """The rules of ``ValidatePodSpec`` that span fields, on the defaulted record."""
    r.check(_host_network_errors(pod))
    check_affinities(r, pod)
    r.check(_spread_errors(pod, "spec.topologySpreadConstraints"))
    r.check(_pod_resource_consistency_errors(pod, "spec.resources"))


def check_affinities(r: ManifestReader, pod: Pod) -> None:
    """The rules of ``ValidatePodSpec`` across the fields of ``spec.affinity``."""
    if pod.node_affinity is not None:
        r.check(_node_affinity_errors(pod.node_affinity))
    for field, affinity in (("podAffinity", pod.pod_affinity),
                            ("podAntiAffinity", pod.pod_anti_affinity)):
        if affinity is not None:
            r.check(_pod_affinity_errors(affinity, f"spec.affinity.{field}"))


def _host_network_errors(pod: Pod) -> list[_v.FieldError]:
    """``validatePodHostNetworkDeps``: with host networking a port's host port (defaulted to
    its container port) must be its container port."""
    if not pod.host_network:
        return []
    return [_v.invalid(f"spec.containers[{i}].ports[{j}].hostPort", p.host_port,
                       "must match `containerPort` when `hostNetwork` is true")
            for i, c in enumerate(pod.containers) for j, p in enumerate(c.ports)
            if p.host_port != p.container_port]


def _node_affinity_errors(affinity: NodeAffinity) -> list[_v.FieldError]:
    """``validateNodeAffinity``: at least one required term; every requirement well formed
    (required terms' values valid label values; preferred ones may not be); weights 1-100."""
    errs = []
    if affinity.required is not None:
        path = f"{_NODE_AFFINITY}.{_REQUIRED}.nodeSelectorTerms"
        if not affinity.required:
            errs.append(_v.required(path, "must have at least one node selector term"))
        for i, term in enumerate(affinity.required):
            errs += node_selector_term_errors(term, f"{path}[{i}]", check_values=True)
    for i, term in enumerate(affinity.preferred or ()):
        path = f"{_NODE_AFFINITY}.{_PREFERRED}[{i}]"
        errs += weight_errors(term.weight, f"{path}.weight")
        errs += node_selector_term_errors(term.preference, f"{path}.preference",
                                           check_values=False)
    return errs


def node_selector_term_errors(term: NodeSelectorTerm, path: str, check_values: bool
                               ) -> list[_v.FieldError]:
    """``ValidateNodeSelectorTerm``."""
    errs = []
    for j, req in enumerate(term.match_expressions):
        errs += _node_selector_requirement_errors(req, f"{path}.matchExpressions[{j}]",
                                                  check_values)
    for j, req in enumerate(term.match_fields):
        errs += _node_field_requirement_errors(req, f"{path}.matchFields[{j}]")
    return errs


def _node_selector_requirement_errors(req: NodeSelectorRequirement, path: str,
                                      check_values: bool) -> list[_v.FieldError]:
    """``ValidateNodeSelectorRequirement``."""
    errs = _v.set_operator_errors(req.operator, req.values, path)
    if errs is None and req.operator in ("Gt", "Lt"):
        errs = [] if len(req.values) == 1 else [_v.required(
            f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")]
    elif errs is None:
        errs = [_v.invalid(f"{path}.operator", req.operator, "not a valid selector operator")]
    errs += [_v.invalid(f"{path}.key", req.key, msg) for msg in _v.label_key_messages(req.key)]
    if check_values:
        errs += _v.label_values_errors(req.values, f"{path}.values")
    return errs


def _node_field_requirement_errors(req: NodeSelectorRequirement, path: str
                                   ) -> list[_v.FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: ``metadata.name In/NotIn [one node name]``."""
    errs = []
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.append(_v.required(f"{path}.values", "must be only one value when `operator` is "
                                                      "'In' or 'NotIn' for node field selector"))
    else:
        errs.append(_v.invalid(f"{path}.operator", req.operator, "not a valid selector operator"))
    if req.key != "metadata.name":
        errs.append(_v.invalid(f"{path}.key", req.key, "not a valid field selector key"))
    else:
        for i, value in enumerate(req.values):
            errs += [_v.invalid(f"{path}.values[{i}]", value, msg)
                     for msg in _v.name_is_dns1123_subdomain(value)]
    return errs


def _pod_affinity_errors(affinity: PodAffinity, path: str) -> list[_v.FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys`` for every term (the other rules of
    ``validatePodAffinityTerm`` are checked while reading)."""
    errs = []
    for i, term in enumerate(affinity.required):
        errs += _label_keys_errors(term.match_label_keys, term.mismatch_label_keys,
                                   term.label_selector, f"{path}.{_REQUIRED}[{i}]", 0)
    for i, weighted in enumerate(affinity.preferred):
        term = weighted.term
        errs += _label_keys_errors(term.match_label_keys, term.mismatch_label_keys,
                                   term.label_selector,
                                   f"{path}.{_PREFERRED}[{i}].podAffinityTerm", 0)
    return errs


def _label_keys_errors(match: tuple[str, ...], mismatch: tuple[str, ...],
                       selector: LabelSelector | None, path: str,
                       merged: Callable[[str], int] | int) -> list[_v.FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys``: label-name keys, a label selector to
    merge into, no key of ``matchLabelKeys`` twice in the (merged) selector, none in both
    lists. ``merged(key)`` counts the requirements the API server's merge would still add."""
    errs = []
    for field, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if not keys:
            continue
        if selector is None:
            errs.append(_v.forbidden(f"{path}.{field}",
                                     "must not be specified when labelSelector is not set"))
            continue
        for i, key in enumerate(keys):
            errs += [_v.invalid(f"{path}.{field}[{i}]", key, msg)
                     for msg in _v.label_key_messages(key)]
    if selector is not None:
        keys = list(selector.match_labels) + [req.key for req in selector.match_expressions]
        for i, key in enumerate(match):
            count = keys.count(key) + (merged(key) if callable(merged) else merged)
            if count >= 2:
                errs.append(_v.invalid(f"{path}.matchLabelKeys[{i}]", key,
                                       "exists in both matchLabelKeys and labelSelector"))
    mismatched = set(mismatch)
    errs += [_v.invalid(f"{path}.matchLabelKeys[{i}]", key,
                        "exists in both matchLabelKeys and mismatchLabelKeys")
             for i, key in enumerate(match) if key in mismatched]
    return errs


def _spread_errors(pod: Pod, path: str) -> list[_v.FieldError]:
    """The rules of ``validateTopologySpreadConstraints`` across constraints and fields:
    one constraint per ``{topologyKey, whenUnsatisfiable}``, ``minDomains`` positive and only
    with ``DoNotSchedule``, ``matchLabelKeys`` (merged at creation as the API server does
    since v1.34, counted as such), and a valid label selector (``ValidateLabelSelector``)."""
    errs = []
    constraints = pod.topology_spread_constraints
    creating = not pod.uid
    for i, c in enumerate(constraints):
        cpath = f"{path}[{i}]"
        for other in constraints[i + 1:]:
            if (other.topology_key, other.when_unsatisfiable) == (c.topology_key,
                                                                  c.when_unsatisfiable):
                errs.append(_v.duplicate(f"{cpath}.{{topologyKey, whenUnsatisfiable}}",
                                         f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                break
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errs.append(_v.invalid(f"{cpath}.minDomains", c.min_domains,
                                       "must be greater than zero"))
            if c.when_unsatisfiable != "DoNotSchedule":
                errs.append(_v.invalid(f"{cpath}.minDomains", c.min_domains,
                                       "can only use minDomains if whenUnsatisfiable="
                                       f"DoNotSchedule, not {c.when_unsatisfiable}"))
        errs += _label_keys_errors(
            c.match_label_keys, (), c.label_selector, cpath,
            lambda key: int(creating and key in pod.labels))
        errs += label_selector_errors(c.label_selector, f"{cpath}.labelSelector")
    return errs


def _pod_resource_consistency_errors(pod: Pod, path: str) -> list[_v.FieldError]:
    """``validatePodResourceConsistency``: pod-level requests at least the containers'
    aggregate, in scheduler units (the API server compares milli-rounded quantities)."""
    if not pod.pod_requests:
        return []
    containers = aggregate_requests(Pod(pod.name, containers=pod.containers,
                                        init_containers=pod.init_containers),
                                    use_pod_level=False)
    errs = []
    for name, amount in containers.items():
        stated = pod.pod_requests.get(name)
        if stated is not None and amount > stated:
            errs.append(_v.invalid(f"{path}.requests.{name}", _shown(name, stated),
                                   "must be greater than or equal to aggregate container "
                                   f"requests of {_shown(name, amount)}"))
    return errs


def _shown(name: str, amount: int) -> str:
    """An amount in scheduler units as ``Quantity.String()`` prints it."""
    return _quantity.canonical(f"{amount}m" if name == CPU else str(amount))


def merge_label_keys(pod: Pod) -> Pod:
    """The API server's ``mutatePodAffinity`` at creation (``MatchLabelKeysInPodAffinity``,
    GA): each term's ``matchLabelKeys`` (``mismatchLabelKeys``) present in the pod's labels
    join its label selector as ``key In (value)`` (``key NotIn (value)``). Only for pods not
    created yet (no ``metadata.uid``): a stored pod has them merged already."""
    def term(t: PodAffinityTerm) -> PodAffinityTerm:
        if t.label_selector is None or not (t.match_label_keys or t.mismatch_label_keys):
            return t
        extra = [LabelSelectorRequirement(k, "In", (pod.labels[k],))
                 for k in t.match_label_keys if k in pod.labels]
        extra += [LabelSelectorRequirement(k, "NotIn", (pod.labels[k],))
                  for k in t.mismatch_label_keys if k in pod.labels]
        if not extra:
            return t
        selector = attrs.evolve(t.label_selector,
                                match_expressions=t.label_selector.match_expressions + tuple(extra))
        return attrs.evolve(t, label_selector=selector)

    def affinity(a: PodAffinity | None) -> PodAffinity | None:
        if a is None:
            return None
        return PodAffinity(tuple(term(t) for t in a.required),
                           tuple(attrs.evolve(w, term=term(w.term)) for w in a.preferred))

    return attrs.evolve(pod, pod_affinity=affinity(pod.pod_affinity),
                        pod_anti_affinity=affinity(pod.pod_anti_affinity))
