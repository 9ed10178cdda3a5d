"""One way in: whatever a user passes as pods or as a cluster, turned into records.

Every public function that takes pods (``schedule_batch``, ``explain``, the simulator's
events, ...) calls :func:`as_pods` / :func:`as_pod`; every one that takes a cluster calls
:func:`as_cluster`. Accepted: ``Pod`` records, Kubernetes dicts (the camelCase wire form, or
the snake_case form of the kubernetes client's ``to_dict()``), kubernetes-client objects, a
path, a single pod or any iterable of these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ksched.api import Pod
from ksched.errors import InvalidObjectError


def as_pod(obj: Any) -> Pod:
    """One pod from a record, a wire dict or a kubernetes-client object."""
    if isinstance(obj, Pod):
        return obj
    if isinstance(obj, Mapping):
        return Pod.from_manifest(obj)
    raise InvalidObjectError("pod", "", f"expected a Pod, got {type(obj).__name__}")


def as_pods(source: Any) -> tuple[Pod, ...]:
    """The pods of ``source`` in order (a single pod gives a 1-tuple)."""
    if isinstance(source, Pod | Mapping):
        return (as_pod(source),)
    if isinstance(source, Iterable) and not isinstance(source, str | bytes):
        return tuple(as_pod(p) for p in source)
    raise InvalidObjectError("pods", "", f"expected pods, got {type(source).__name__}")


def as_cluster(source: Any) -> Any:
    """A ``ClusterState``: itself, or whatever :func:`ksched.load_cluster` reads."""
    from ksched.state import ClusterState

    if isinstance(source, ClusterState):
        return source
    import ksched

    return ksched.load_cluster(source)
