"""Pod resource requests, as kube-scheduler adds them up.

Mirrors ``k8s.io/component-helpers/resource/helpers.go`` (``PodRequests``,
``AggregateContainerRequests``) and the resource-name classes of
``pkg/apis/core/v1/helper/helpers.go``. Values are integers in scheduler units: cpu in
milli-cores, everything else in units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ksched.constants import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
)

if TYPE_CHECKING:  # annotations only: the records' defaulting uses this module
    from ksched.api import Container, Pod

#: ``NonMissingContainerRequests`` used for scoring: a container that states no cpu (memory)
#: request counts as 100m (200Mi).
NON_ZERO_DEFAULTS: Mapping[str, int] = {CPU: DEFAULT_MILLI_CPU_REQUEST,
                                        MEMORY: DEFAULT_MEMORY_REQUEST}


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: no domain prefix, or in the ``kubernetes.io/`` domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io/``."""
    return not is_native_resource(name) and not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: the names NodeInfo keeps besides cpu, memory and storage."""
    return (is_extended_resource(name) or name.startswith("hugepages-")
            or "kubernetes.io/" in name or name.startswith("attachable-volumes-"))


def is_tracked_resource(name: str) -> bool:
    """Whether ``framework.Resource.Add`` keeps this resource at all."""
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar_resource(name)


def _is_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``."""
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def _add(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) + amount


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def _container_requests(c: Container, non_missing: Mapping[str, int] | None
                        ) -> Mapping[str, int]:
    """The container's requests (read, never written), ``non_missing`` filling the gaps."""
    if not non_missing:
        return c.requests
    requests = dict(c.requests.items())
    for name, amount in non_missing.items():
        requests.setdefault(name, amount)
    return requests


def pod_requests(pod: Pod, non_missing: Mapping[str, int] | None = None,
                 *, use_pod_level: bool = True) -> dict[str, int]:
    """The pod's effective requests: ``PodRequests``.

    App containers add up; each init container needs its own request plus the sidecars started
    before it; sidecars also run beside the app containers; the result is the larger of the two,
    per resource. Pod-level requests (cpu, memory, hugepages) replace the container sum, then
    ``spec.overhead`` is added. ``non_missing`` gives each container that lacks a resource key
    that amount (``NonMissingContainerRequests``).
    """
    total: dict[str, int] = {}
    for c in pod.containers:
        _add(total, _container_requests(c, non_missing))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in pod.init_containers:
        requests = _container_requests(c, non_missing)
        if c.is_sidecar:
            _add(total, requests)
            _add(sidecars, requests)
            _max(init_max, sidecars)
        else:
            with_sidecars = dict(requests.items())
            _add(with_sidecars, sidecars)
            _max(init_max, with_sidecars)
    _max(total, init_max)
    if use_pod_level and is_pod_level_set(pod):
        for name, amount in pod.pod_requests.items():
            if _is_pod_level_resource(name):
                total[name] = amount
    _add(total, pod.overhead)
    return total


def is_pod_level_set(pod: Pod) -> bool:
    """``IsPodLevelRequestsSet``."""
    return bool(pod.pod_requests) and any(_is_pod_level_resource(n) for n in pod.pod_requests)


def node_info_non_zero(pod: Pod, requests: Mapping[str, int],
                       non_zero: Mapping[str, int] | None = None) -> tuple[int, int]:
    """The (cpu, memory) a pod adds to ``NodeInfo.NonZeroRequested`` (``CalculateResource``)
    (``non_zero``: its :func:`pod_requests` with :data:`NON_ZERO_DEFAULTS`, where known).

    Without pod-level requests every container lacking a cpu (memory) key counts 100m (200Mi).
    With them, the defaults apply only to a resource absent from the whole pod request.
    """
    if is_pod_level_set(pod):
        non_missing = {n: v for n, v in NON_ZERO_DEFAULTS.items() if n not in requests}
    else:
        non_missing = NON_ZERO_DEFAULTS
        if non_zero is not None:
            return non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)
    found = pod_requests(pod, non_missing) if non_missing else requests
    return found.get(CPU, 0), found.get(MEMORY, 0)


def cycle_requests(data: dict, pod: Pod, non_zero: bool = False) -> dict[str, int]:
    """:func:`pod_requests` of a cycle's pod (``non_zero``: with :data:`NON_ZERO_DEFAULTS`, as
    the resource scores take them), computed once per cycle and kept in its ``data``
    (``CycleState``): the fit filter and both resource scores read them."""
    key = "requests/non-zero" if non_zero else "requests"
    found = data.get(key)
    if found is None:
        found = data[key] = pod_requests(pod, NON_ZERO_DEFAULTS if non_zero else None)
    return found


def request_vector(requests: Mapping[str, int], resource_names: Sequence[str],
                   pod_count: int = 1) -> npt.NDArray[np.int64]:
    """int64[len(resource_names)]: ``requests`` (of :func:`pod_requests`) over a resource
    matrix's columns, the ``pods`` column set to ``pod_count``: 1 for what a placed pod adds
    to its node's ``requested`` row (``NodeInfo.AddPod``), 0 for what a fit check compares.
    Resources without a column are left out."""
    return np.array([requests.get(name, 0) if name != PODS else pod_count
                     for name in resource_names], dtype=np.int64)
