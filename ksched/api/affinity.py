"""Reading a pod's scheduling constraints from their wire format: node affinity and node
selector terms, label selectors, pod (anti-)affinity terms and topology spread constraints, each
field checked as ``pkg/apis/core/validation`` checks it (the rules across fields are
:mod:`ksched.api.pod_validation`'s). Public, as the configuration loader reads plugin args'
affinities and default constraints with them.
"""

from __future__ import annotations

from typing import Any

from ksched import validation as _v
from ksched.api.reader import ManifestReader
from ksched.api.records import (
    INCLUSION_POLICIES,
    UNSATISFIABLE_ACTIONS,
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)

__all__ = ["label_selector_errors", "read_label_selector", "read_node_affinity",
           "read_node_selector_term", "read_pod_affinity", "read_spread_constraints",
           "weight_errors"]


def read_node_selector_term(r: ManifestReader, value: Any, path: str) -> NodeSelectorTerm:
    """A node selector term: its requirements read, left unchecked (``ValidateNodeSelectorTerm``
    is :func:`ksched.api.pod_validation.node_selector_term_errors`)."""
    term = r.mapping(value, path)
    parts = {}
    for field in ("matchExpressions", "matchFields"):
        reqs = []
        for i, req in enumerate(r.seq(term.get(field), f"{path}.{field}")):
            rpath = f"{path}.{field}[{i}]"
            req = r.mapping(req, rpath)
            reqs.append(NodeSelectorRequirement(
                key=r.string(req.get("key"), f"{rpath}.key"),
                operator=r.string(req.get("operator"), f"{rpath}.operator"),
                values=r.strings(req.get("values"), f"{rpath}.values"),
            ))
        parts[field] = tuple(reqs)
    return NodeSelectorTerm(parts["matchExpressions"], parts["matchFields"])


def read_node_affinity(r: ManifestReader, value: Any, path: str) -> NodeAffinity | None:
    if value is None:
        return None
    value = r.mapping(value, path)
    required = None
    req = value.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        req = r.mapping(req, rpath)
        required = tuple(
            read_node_selector_term(r, t, f"{rpath}.nodeSelectorTerms[{i}]")
            for i, t in enumerate(r.seq(req.get("nodeSelectorTerms"), f"{rpath}.nodeSelectorTerms"))
        )
    preferred = None
    pfield = "preferredDuringSchedulingIgnoredDuringExecution"
    if value.get(pfield) is not None:
        preferred = []
        ppath = f"{path}.{pfield}"
        for i, t in enumerate(r.seq(value.get(pfield), ppath)):
            t = r.mapping(t, f"{ppath}[{i}]")
            preferred.append(PreferredSchedulingTerm(
                weight=r.integer(t.get("weight"), f"{ppath}[{i}].weight", bits=32),
                preference=read_node_selector_term(r, t.get("preference"),
                                                   f"{ppath}[{i}].preference"),
            ))
        preferred = tuple(preferred)
    return NodeAffinity(required, preferred)


def read_label_selector(r: ManifestReader, value: Any, path: str, validate: bool = True
                        ) -> LabelSelector | None:
    """A ``metav1.LabelSelector``, checked by :func:`label_selector_errors` unless
    ``validate`` is false (for the selectors left to their matcher)."""
    if value is None:
        return None
    value = r.mapping(value, path)
    reqs = []
    for i, req in enumerate(r.seq(value.get("matchExpressions"), f"{path}.matchExpressions")):
        rpath = f"{path}.matchExpressions[{i}]"
        req = r.mapping(req, rpath)
        reqs.append(LabelSelectorRequirement(
            key=r.string(req.get("key"), f"{rpath}.key"),
            operator=r.string(req.get("operator"), f"{rpath}.operator"),
            values=r.strings(req.get("values"), f"{rpath}.values"),
        ))
    selector = LabelSelector(r.string_map(value.get("matchLabels"), f"{path}.matchLabels"),
                             tuple(reqs))
    if validate:
        r.check(label_selector_errors(selector, path))
    return selector


def label_selector_errors(selector: LabelSelector | None, path: str) -> list[_v.FieldError]:
    """``metav1validation.ValidateLabelSelector`` as objects are created (invalid label
    values refused): ``matchLabels`` valid labels, then each requirement."""
    if selector is None:
        return []
    errs = _v.labels_errors(selector.match_labels, f"{path}.matchLabels")
    for i, req in enumerate(selector.match_expressions):
        errs += _label_requirement_errors(req, f"{path}.matchExpressions[{i}]")
    return errs


def _label_requirement_errors(req: LabelSelectorRequirement, path: str) -> list[_v.FieldError]:
    """``ValidateLabelSelectorRequirement``: In / NotIn with values, Exists / DoesNotExist
    without (no other operator), a label-name key, label values."""
    errs = _v.set_operator_errors(req.operator, req.values, path)
    if errs is None:
        errs = [_v.invalid(f"{path}.operator", req.operator, "not a valid selector operator")]
    errs += _v.label_name_errors(req.key, f"{path}.key")
    return errs + _v.label_values_errors(req.values, f"{path}.values")


def _pod_affinity_term(r: ManifestReader, value: Any, path: str) -> PodAffinityTerm:
    """A pod affinity term, checked in ``validatePodAffinityTerm``'s order (but for its
    label keys, :mod:`ksched.api.pod_validation`'s): its selectors
    (``ValidatePodAffinityTermSelector``), namespaces that are DNS labels (upstream words
    them at ``.namespace``, without an index), a topology key that is a label name."""
    value = r.mapping(value, path)
    selector = read_label_selector(r, value.get("labelSelector"), f"{path}.labelSelector")
    namespace_selector = read_label_selector(r, value.get("namespaceSelector"),
                                             f"{path}.namespaceSelector")
    namespaces = r.strings(value.get("namespaces"), f"{path}.namespaces")
    for ns in namespaces:
        r.check([_v.invalid(f"{path}.namespace", ns, msg) for msg in _v.is_dns1123_label(ns)])
    key = r.string(value.get("topologyKey"), f"{path}.topologyKey")
    if not key:
        r.check([_v.required(f"{path}.topologyKey", "can not be empty")])
    r.check([_v.invalid(f"{path}.topologyKey", key, msg) for msg in _v.label_key_messages(key)])
    return PodAffinityTerm(
        topology_key=key,
        label_selector=selector,
        namespaces=namespaces,
        namespace_selector=namespace_selector,
        match_label_keys=r.strings(value.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
        mismatch_label_keys=r.strings(value.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"),
    )


def read_pod_affinity(r: ManifestReader, value: Any, path: str) -> PodAffinity | None:
    if value is None:
        return None
    value = r.mapping(value, path)
    rfield = "requiredDuringSchedulingIgnoredDuringExecution"
    pfield = "preferredDuringSchedulingIgnoredDuringExecution"
    required = tuple(_pod_affinity_term(r, t, f"{path}.{rfield}[{i}]")
                     for i, t in enumerate(r.seq(value.get(rfield), f"{path}.{rfield}")))
    preferred = []
    for i, t in enumerate(r.seq(value.get(pfield), f"{path}.{pfield}")):
        tpath = f"{path}.{pfield}[{i}]"
        t = r.mapping(t, tpath)
        weight = r.integer(t.get("weight"), f"{tpath}.weight", bits=32)
        r.check(weight_errors(weight, f"{tpath}.weight"))
        preferred.append(WeightedPodAffinityTerm(
            weight=weight,
            term=_pod_affinity_term(r, t.get("podAffinityTerm"), f"{tpath}.podAffinityTerm"),
        ))
    return PodAffinity(required, tuple(preferred))


def weight_errors(weight: int, path: str) -> list[_v.FieldError]:
    """The weight of a preferred term (``ValidatePreferredSchedulingTerms``,
    ``validateWeightedPodAffinityTerms``)."""
    return [] if 1 <= weight <= 100 else [_v.invalid(path, weight, "must be in the range 1-100")]


def read_spread_constraints(r: ManifestReader, value: Any,
                        path: str) -> tuple[TopologySpreadConstraint, ...]:
    """Topology spread constraints, each field checked as ``validateTopologySpreadConstraints``
    does (the rules across constraints and fields, and a pod's label selectors, are checked
    by :func:`ksched.api.pod_validation.check_pod`: the configuration's default constraints
    have no selector)."""
    out = []
    for i, c in enumerate(r.seq(value, path)):
        cpath = f"{path}[{i}]"
        c = r.mapping(c, cpath)
        max_skew = r.integer(c.get("maxSkew"), f"{cpath}.maxSkew", bits=32)
        if max_skew <= 0:
            r.check([_v.invalid(f"{cpath}.maxSkew", max_skew, "must be greater than zero")])
        key = r.string(c.get("topologyKey"), f"{cpath}.topologyKey")
        if not key:
            r.check([_v.required(f"{cpath}.topologyKey", "can not be empty")])
        policies = {}
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.get(field) is not None:
                policies[field] = r.choice(c.get(field), f"{cpath}.{field}", INCLUSION_POLICIES,
                                           required=False)
        out.append(TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=key,
            when_unsatisfiable=r.choice(c.get("whenUnsatisfiable"), f"{cpath}.whenUnsatisfiable",
                                        UNSATISFIABLE_ACTIONS, shown=UNSATISFIABLE_ACTIONS),
            label_selector=read_label_selector(r, c.get("labelSelector"), f"{cpath}.labelSelector",
                                               validate=False),
            min_domains=r.integer(c.get("minDomains"), f"{cpath}.minDomains", None, bits=32),
            node_affinity_policy=policies.get("nodeAffinityPolicy"),
            node_taints_policy=policies.get("nodeTaintsPolicy"),
            match_label_keys=r.strings(c.get("matchLabelKeys"), f"{cpath}.matchLabelKeys"),
        ))
    return tuple(out)
