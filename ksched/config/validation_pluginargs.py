"""The plugin-args validators ``validatePluginConfig`` runs
(``pkg/scheduler/apis/config/validation/validation_pluginargs.go``), with v1.35.4's default
feature gates, and NodeResourcesFit's (:func:`validate_fit_args`), which only ``NewFit`` runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ksched.labels import API_OPERATORS, NODE_SELECTOR_OPERATORS, requirement_errors
from ksched.validation import AsJSON as _AsJSON
from ksched.validation import FieldError, go_duration
from ksched.validation import child as _child
from ksched.validation import duplicate as _duplicate
from ksched.validation import forbidden as _forbidden
from ksched.validation import invalid as _invalid
from ksched.validation import label_name_errors as _label_name_errors
from ksched.validation import not_supported as _not_supported
from ksched.validation import required as _required

__all__ = ["ARGS_VALIDATORS", "validate_fit_args"]

_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def _validate_default_preemption(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateDefaultPreemptionArgs``."""
    pct, absolute = args.get("minCandidateNodesPercentage", 0), args.get(
        "minCandidateNodesAbsolute", 0)
    pct_path, abs_path = f"{path}.minCandidateNodesPercentage", f"{path}.minCandidateNodesAbsolute"
    errs = []
    if not 0 <= pct <= 100:
        errs.append(_invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(_invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs += [_invalid(pct_path, pct, "cannot be zero at the same time as "
                                         "minCandidateNodesAbsolute"),
                 _invalid(abs_path, absolute, "cannot be zero at the same time as "
                                              "minCandidateNodesPercentage")]
    return errs


def _validate_inter_pod_affinity(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateInterPodAffinityArgs``."""
    weight = args.get("hardPodAffinityWeight", 0)
    if not 0 <= weight <= 100:
        return [_invalid(f"{path}.hardPodAffinityWeight", weight, "not in valid range [0, 100]")]
    return []


def _validate_pod_topology_spread(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodTopologySpreadArgs``."""
    errs = []
    constraints = args.get("defaultConstraints") or []
    kind = args.get("defaultingType", "")
    if kind not in ("System", "List"):
        errs.append(_not_supported(f"{path}.defaultingType", _AsJSON(kind), ("System", "List")))
    elif kind == "System" and constraints:
        errs.append(_invalid(f"{path}.defaultingType", _AsJSON(kind),
                             "when .defaultConstraints are not empty"))
    for i in range(len(constraints)):
        errs += _spread_constraint_errors(f"{path}.defaultConstraints", constraints, i)
    return errs


def _spread_constraint_errors(list_path: str, constraints: Sequence[Mapping], i: int
                              ) -> list[FieldError]:
    c, path = constraints[i], f"{list_path}[{i}]"
    errs = []
    if c.get("maxSkew", 0) <= 0:
        errs.append(_invalid(f"{path}.maxSkew", c.get("maxSkew", 0), "not in valid range (0, inf)"))
    key = c.get("topologyKey", "")
    if not key:
        errs.append(_required(f"{path}.topologyKey", "can not be empty"))
    else:
        errs += _label_name_errors(key, f"{path}.topologyKey")
    action = c.get("whenUnsatisfiable", "")
    if not action:
        errs.append(_required(f"{path}.whenUnsatisfiable", "can not be empty"))
    elif action not in ("DoNotSchedule", "ScheduleAnyway"):
        errs.append(_not_supported(f"{path}.whenUnsatisfiable", _AsJSON(action),
                                   ("DoNotSchedule", "ScheduleAnyway")))
    if c.get("labelSelector") is not None:
        errs.append(_forbidden(f"{path}.labelSelector",
                               "constraint must not define a selector, as they deduced for each "
                               "pod"))
    for other in constraints[:i]:
        if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
            errs.append(_duplicate(path, f"{{{key}, {action}}}"))
            break
    return errs


def _validate_balanced_allocation(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNodeResourcesBalancedAllocationArgs``."""
    errs, seen = [], set()
    for i, res in enumerate(args.get("resources") or ()):
        name, weight = res.get("name", ""), res.get("weight", 0)
        if name in seen:
            errs.append(_duplicate(f"{path}.resources[{i}].name", name))
        seen.add(name)
        if weight != 1:
            errs.append(_invalid(f"{path}.resources[{i}].weight", weight, "must be 1"))
    return errs


def _validate_node_affinity(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNodeAffinityArgs``: the added affinity must parse
    (``nodeaffinity.NewNodeSelector`` / ``NewPreferredSchedulingTerms``)."""
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs = []
    base = f"{path}.addedAffinity"
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms_path = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(required.get("nodeSelectorTerms") or ()):
            if _term_is_empty(term):
                continue
            errs += _node_selector_term_errors(term, f"{terms_path}[{i}]")
    preferred_path = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
                             or ()):
        preference = term.get("preference") or {}
        if term.get("weight", 0) == 0 or _term_is_empty(preference):
            continue
        # Upstream parses the preference under the term's own path (no ".preference").
        errs += _node_selector_term_errors(preference, f"{preferred_path}[{i}]")
    return errs


def _term_is_empty(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _node_selector_term_errors(term: Mapping[str, Any], path: str) -> list[FieldError]:
    """``newNodeSelectorTerm``'s parse errors."""
    errs = []
    for i, req in enumerate(term.get("matchExpressions") or ()):
        rpath, op = f"{path}.matchExpressions[{i}]", req.get("operator", "")
        if op not in NODE_SELECTOR_OPERATORS:
            errs.append(_not_supported(f"{rpath}.operator", _AsJSON(op), NODE_SELECTOR_OPERATORS))
            continue
        errs += requirement_errors(req.get("key", ""), API_OPERATORS[op], req.get("values"),
                                   rpath)
    for i, req in enumerate(term.get("matchFields") or ()):
        rpath, op, values = f"{path}.matchFields[{i}]", req.get("operator", ""), req.get("values")
        if op in ("In", "NotIn"):
            if len(values or ()) != 1:
                errs.append(_invalid(f"{rpath}.values", values, "must have one element"))
        else:
            errs.append(_not_supported(f"{rpath}.operator", _AsJSON(op), ("In", "NotIn")))
    return errs


def _validate_volume_binding(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateVolumeBindingArgs`` with StorageCapacityScoring off."""
    errs = []
    if args.get("bindTimeoutSeconds", 0) < 0:
        errs.append(_invalid(f"{path}.bindTimeoutSeconds", args["bindTimeoutSeconds"],
                             "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.get("shape") is not None:
        shape = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)}
                 for p in args["shape"]]
        errs.append(_invalid(f"{path}.shape", _AsJSON(shape),
                             "unexpected field `shape`, remove it or turn on the feature gate "
                             "StorageCapacityScoring"))
    return errs


def _validate_dynamic_resources(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateDynamicResourcesArgs`` (filter timeout gate on, binding conditions off)."""
    errs = []
    timeout = args.get("filterTimeout")
    if timeout is not None and timeout < 0:
        errs.append(_invalid(f"{path}.filterTimeout", _AsJSON(go_duration(timeout)),
                             "must be zero or positive"))
    if args.get("bindingTimeout") is not None:
        errs.append(_forbidden(f"{path}.bindingTimeout", "DRADeviceBindingConditions or "
                               "DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errs


def validate_fit_args(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNodeResourcesFitArgs`` (run only by ``NewFit``, with a nil path)."""
    errs = []
    for i, name in enumerate(args.get("ignoredResources") or ()):
        errs += _label_name_errors(name, f"{_child(path, 'ignoredResources')}[{i}]")
    for i, group in enumerate(args.get("ignoredResourceGroups") or ()):
        gpath = f"{_child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errs.append(_invalid(gpath, group, "resource group name can't contain '/'"))
        errs += _label_name_errors(group, gpath)
    strategy = args.get("scoringStrategy")
    if strategy is not None:
        spath = _child(path, "scoringStrategy")
        kind = strategy.get("type", "")
        if kind not in _STRATEGIES:
            errs.append(_not_supported(f"{spath}.type", _AsJSON(kind), _STRATEGIES))
        for i, res in enumerate(strategy.get("resources") or ()):
            weight = res.get("weight", 0)
            if not 0 < weight <= 100:
                errs.append(_invalid(f"{spath}.resources[{i}].weight", weight,
                                     f"resource weight of {res.get('name', '')} not in valid "
                                     "range (0, 100]"))
        ratio = strategy.get("requestedToCapacityRatio")
        if ratio is not None:
            errs += _function_shape_errors(ratio.get("shape") or [], f"{spath}.shape")
    return errs


def _function_shape_errors(shape: Sequence[Mapping[str, int]], path: str) -> list[FieldError]:
    """``validateFunctionShape``."""
    if not shape:
        return [_required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(_invalid(f"{path}[{i}].utilization", shape[i].get("utilization", 0),
                                 "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if not 0 <= utilization <= 100:
            errs.append(_invalid(f"{path}[{i}].utilization", utilization,
                                 "not in valid range [0, 100]"))
        if not 0 <= score <= 10:
            errs.append(_invalid(f"{path}[{i}].score", score, "not in valid range [0, 10]"))
    return errs


#: ``validatePluginConfig``'s table. NodeResourcesFit is missing on purpose: upstream keys its
#: validator as "NodeResourcesFitArgs", so Fit's args are only checked by ``NewFit``.
ARGS_VALIDATORS: dict[str, Callable[[str, Mapping[str, Any]], list[FieldError]]] = {
    "DefaultPreemption": _validate_default_preemption,
    "InterPodAffinity": _validate_inter_pod_affinity,
    "NodeAffinity": _validate_node_affinity,
    "NodeResourcesBalancedAllocation": _validate_balanced_allocation,
    "PodTopologySpread": _validate_pod_topology_spread,
    "VolumeBinding": _validate_volume_binding,
    "DynamicResources": _validate_dynamic_resources,
}
