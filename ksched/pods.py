"""Which pods the scheduler may treat alike: the signatures of pod classes.

Replicas share their spec. The fused loop compiles one *pod class* per distinct
:func:`class_signature` (every field but the pod's identity and times: labels, namespace and
owner count, as topology spreading counts pods by them and builds its default selector from
them), and the
framework keeps node-static filter verdicts per distinct :func:`filter_signature` (also
leaving out the fields no filter reads). A pod that mounts claims is classed by its
:func:`spec_signature` and what its volumes add (:mod:`ksched.volume_classes`): replicas of a
StatefulSet mount claims of their own.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import attrs

from ksched.api import Pod

#: Pod fields that name a pod rather than say what it asks for.
IDENTITY_FIELDS = frozenset({"name", "uid"})
#: Pod fields that say when a pod came: the queue orders pending pods by them and preemption
#: its victims, but no plugin of a pending pod's cycle reads them, so replicas created at
#: different times (every pod of a real snapshot has its ``creationTimestamp``) share a class.
TIME_FIELDS = frozenset({"start_time", "creation_time"})
#: Pod fields no filter reads.
UNFILTERED_FIELDS = IDENTITY_FIELDS | TIME_FIELDS | {"nominated_node_name"}


class Hashed:
    """A signature with its hash taken once: a new pod class looks its signatures up in
    several tables, and a tuple of a pod's fields hashes every field anew each time."""

    __slots__ = ("value", "_hash")

    def __init__(self, value: tuple) -> None:
        self.value, self._hash = value, hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hashed):
            return NotImplemented
        return self._hash == other._hash and self.value == other.value


def _signature(left_out: frozenset[str]) -> Callable[[Pod], tuple]:
    """A getter of every :class:`~ksched.api.Pod` field but ``left_out``, as a tuple."""
    return operator.attrgetter(*(f.name for f in attrs.fields(Pod) if f.name not in left_out))


#: ``class_signature(pod)``: what decides a pod's class in the fused loop.
class_signature = _signature(IDENTITY_FIELDS | TIME_FIELDS)
#: ``filter_signature(pod)``: what the filters read of a pod.
filter_signature = _signature(UNFILTERED_FIELDS)
#: ``spec_signature(pod)``: :func:`class_signature` but the volumes.
spec_signature = _signature(IDENTITY_FIELDS | TIME_FIELDS | {"volumes"})
#: Pod fields that say what it requests (:func:`ksched.resources.pod_requests` reads them).
REQUEST_FIELDS = frozenset({"containers", "init_containers", "overhead", "pod_requests",
                            "pod_limits"})
_unrequested = _signature(IDENTITY_FIELDS | TIME_FIELDS | REQUEST_FIELDS)


def shape_signature(pod: Pod) -> tuple:
    """:func:`class_signature` but what the pod requests (its containers' requests and
    limits, its overhead and pod-level resources): the fused loop's classes of one shape
    share their node-static verdicts and scores, which the in-tree plugins judge without
    reading requests."""
    return (_unrequested(pod), tuple(map(_container_shape, pod.containers)),
            tuple(map(_container_shape, pod.init_containers)))


#: Pod fields that say how a pod ranks: the queue and preemption read them, none of the
#: in-tree Filter, Score, PreFilter and PreScore plugins.
PRIORITY_FIELDS = frozenset({"priority", "priority_set", "priority_class_name",
                             "preemption_policy", "preemption_policy_set"})
_unranked = _signature(IDENTITY_FIELDS | TIME_FIELDS | REQUEST_FIELDS | PRIORITY_FIELDS)


def sibling_signature(pod: Pod) -> tuple:
    """:func:`shape_signature` but how the pod ranks (:data:`PRIORITY_FIELDS`): classes
    alike here differ only in what they request and how they rank, which no in-tree plugin's
    node-static verdicts or scores read."""
    return (_unranked(pod), tuple(map(_container_shape, pod.containers)),
            tuple(map(_container_shape, pod.init_containers)))


def _container_shape(container: Any) -> tuple:
    """What the shape signatures read of a container (not its requests and limits)."""
    return container.name, container.image, container.ports, container.restart_policy


def request_signature(pod: Pod) -> tuple:
    """What :func:`ksched.resources.pod_requests` reads of the pod (its containers' requests
    and limits, which init containers are sidecars, its overhead and pod-level resources):
    pods alike here have the same requests, non-zero scoring requests included."""
    container = lambda c: (c.requests, c.limits)  # noqa: E731
    init = lambda c: (c.requests, c.limits, c.restart_policy)  # noqa: E731
    return (tuple(map(container, pod.containers)), tuple(map(init, pod.init_containers)),
            pod.overhead, pod.pod_requests, pod.pod_limits)


__all__ = ["Hashed", "IDENTITY_FIELDS", "PRIORITY_FIELDS", "REQUEST_FIELDS", "TIME_FIELDS",
           "UNFILTERED_FIELDS", "class_signature", "filter_signature", "request_signature",
           "shape_signature", "sibling_signature", "spec_signature"]
