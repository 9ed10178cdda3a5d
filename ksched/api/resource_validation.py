"""Resource lists as the API server checks them (``pkg/apis/core/validation``:
``ValidateResourceQuantityValue``, ``validateResourceRequirements``, the resource-name checks;
``pkg/apis/core/helper``: native, extended and integer resources): each quantity's amount in
scheduler units, or the first error, in the API server's words.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ksched import quantity as _quantity
from ksched import validation as _v
from ksched.api.fields import error_body
from ksched.api.records import HUGEPAGES_PREFIX, is_pod_level_resource
from ksched.constants import CPU, MEMORY


@functools.lru_cache(maxsize=65536)
def checked_quantity(name: str, text: str | float, path: str,
                      names: Callable[[str, str], list[_v.FieldError]] | None
                      ) -> tuple[int, tuple[str, str] | None]:
    """One quantity of a resource list checked (memoized: pods repeat them): its amount in
    scheduler units, or the (path, problem) of its first error. ``names``: the resource-name
    check of a pod's resource requirements (``validateResourceRequirements``, which also
    wants whole hugepages); ``None`` for a node's capacity (``ValidateNodeResources``, which
    does not)."""
    try:
        exact = _quantity.parse_quantity(text)
    except _quantity.QuantityError as exc:
        return 0, (path, str(exc))
    errors = _quantity_value_errors(name, text, exact, path)
    if names is not None:
        errors = names(name, path) + errors + _hugepage_value_errors(name, text, exact, path)
    if errors:
        return 0, (errors[0].field, error_body(errors[0]))
    try:
        return _quantity.scheduler_amount(name, text), None
    except _quantity.QuantityError as exc:
        return 0, (path, str(exc))


def _quantity_value_errors(name: str, text: str | float, exact: Fraction,
                           path: str) -> list[_v.FieldError]:
    """``ValidateResourceQuantityValue``: not negative, whole for integer resources."""
    if exact < 0:
        return [_v.invalid(path, _quantity.canonical(text), "must be greater than or equal to 0")]
    if _is_integer_resource(name) and (exact * 1000).__ceil__() % 1000:
        return [_v.invalid(path, _quantity.canonical(text), "must be an integer")]
    return []


def _hugepage_value_errors(name: str, text: str | float, exact: Fraction,
                           path: str) -> list[_v.FieldError]:
    """``validateResourceQuantityHugePageValue``: a whole number of pages (pod resource
    requirements only)."""
    if name.startswith(HUGEPAGES_PREFIX) and not _hugepages_divisible(name, exact):
        shown = _quantity.canonical(text)
        return [_v.invalid(path, shown, f"{shown} is not positive integer multiple of {name}")]
    return []


def _hugepages_divisible(name: str, exact: Fraction) -> bool:
    """``IsHugePageResourceValueDivisible``: a whole number of pages of the name's size."""
    try:
        size = _quantity.parse_quantity(name[len(HUGEPAGES_PREFIX):])
    except _quantity.QuantityError:
        return False
    if size <= 0 or size.denominator != 1:
        return False
    return _quantity.value(exact) % int(size) == 0


#: ``integerResources`` of ``pkg/apis/core/helper`` (besides extended resources).
_INTEGER_RESOURCES = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers",
                                "secrets", "configmaps", "persistentvolumeclaims",
                                "services.nodeports", "services.loadbalancers"})
_STANDARD_CONTAINER_RESOURCES = frozenset({CPU, MEMORY, "ephemeral-storage"})
#: ``standardResources`` of ``pkg/apis/core/helper``.
_STANDARD_RESOURCES = frozenset({
    CPU, MEMORY, "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers"})


def _is_native_resource(name: str) -> bool:
    """``IsNativeResource``: no domain, or in ``kubernetes.io/``."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``."""
    if _is_native_resource(name) or name.startswith("requests."):
        return False
    return not _v.label_key_messages("requests." + name)


def _is_integer_resource(name: str) -> bool:
    """``IsIntegerResourceName``."""
    return name in _INTEGER_RESOURCES or is_extended_resource_name(name)


def _overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not hugepages."""
    return _is_native_resource(name) and not name.startswith(HUGEPAGES_PREFIX)


def _resource_name_errors(name: str, path: str) -> list[_v.FieldError]:
    """``validateResourceName``."""
    errs = [_v.invalid(path, name, msg) for msg in _v.label_key_messages(name)]
    if not errs and "/" not in name and not (name in _STANDARD_RESOURCES
                                             or name.startswith((HUGEPAGES_PREFIX,
                                                                 "requests.hugepages-"))):
        errs.append(_v.invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def container_resource_name_errors(name: str, path: str) -> list[_v.FieldError]:
    """``validateContainerResourceName``."""
    errs = _resource_name_errors(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or name.startswith(HUGEPAGES_PREFIX)):
            errs.append(_v.invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native_resource(name) and not is_extended_resource_name(name):
        errs.append(_v.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def pod_resource_name_errors(name: str, path: str) -> list[_v.FieldError]:
    """``validatePodResourceName``."""
    errs = _resource_name_errors(name, path)
    if not errs and not is_pod_level_resource(name):
        errs.append(_v.not_supported(path, name, ["cpu", "hugepages-", "memory"]))
    return errs


@functools.lru_cache(maxsize=65536)
def _milli(text: str | float) -> Fraction:
    """A quantity as the API server compares it: rounded up to milli-units
    (``SetDefaults_ResourceList``)."""
    return _quantity.round_up_milli(_quantity.parse_quantity(text))


_OVERCOMMITTED_NATIVE = frozenset({CPU, MEMORY, "ephemeral-storage"})


def resource_requirements_errors(requests: Mapping[str, tuple[int, Any]],
                         limits: Mapping[str, tuple[int, Any]],
                         path: str) -> list[_v.FieldError]:
    """The cross-field rules of ``validateResourceRequirements``: a request at most its limit
    (equal for resources that cannot be overcommitted, which need a limit), and hugepages
    only beside cpu or memory."""
    if not limits and requests.keys() <= _OVERCOMMITTED_NATIVE:
        return []  # the common case: nothing to compare
    errs = []
    for name, (_, text) in requests.items():
        if name in limits:
            limit = limits[name][1]
            request_q, limit_q = _milli(text), _milli(limit)
            if request_q != limit_q and not _overcommit_allowed(name):
                errs.append(_v.invalid(f"{path}.requests", _quantity.canonical(text),
                                       f"must be equal to {name} limit of "
                                       f"{_quantity.canonical(limit)}"))
            elif request_q > limit_q:
                errs.append(_v.invalid(f"{path}.requests", _quantity.canonical(text),
                                       f"must be less than or equal to {name} limit of "
                                       f"{_quantity.canonical(limit)}"))
        elif not _overcommit_allowed(name):
            errs.append(_v.required(f"{path}.limits",
                                    "Limit must be set for non overcommitable resources"))
    names = requests.keys() | limits.keys()
    if not names & {CPU, MEMORY} and any(n.startswith(HUGEPAGES_PREFIX) for n in names):
        errs.append(_v.forbidden(path, "HugePages require cpu or memory"))
    return errs
