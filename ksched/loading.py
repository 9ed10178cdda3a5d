"""Loading a cluster and pending pods the way users have them, and warming the kernels up:
the entry points ``ksched.load_cluster``, ``ksched.load_pods``, ``ksched.cluster_from_objects``
and ``ksched.warmup``."""

from __future__ import annotations

import os
import warnings
from typing import Any


from ksched.engine import schedule_batch
from ksched.api.schema import strict_fields
from ksched.errors import ArgumentError
from ksched.inputs import check_flag
from ksched.io import IgnoredObjectsWarning, Objects, read_objects, without_orphans
from ksched.pod_loading import pending_table_of_file
from ksched.pod_table import PodTable
from ksched.state import ClusterState

__all__ = ["IgnoredObjectsWarning", "cluster_from_objects", "load_cluster", "load_pods",
           "warmup"]


def cluster_from_objects(objects: Objects) -> ClusterState:
    """The cluster of parsed objects: nodes, the pods bound to them, namespaces, workloads,
    storage objects. Pods bound to a node that is not among the nodes are left out with an
    :class:`~ksched.io.IgnoredObjectsWarning` (:func:`~ksched.io.without_orphans`)."""
    return ClusterState.from_objects(without_orphans(objects))


def _warn_pending(objects: Objects) -> None:
    count = len(objects.pending_pods)
    if count:
        warnings.warn(f"{count} pending pod(s) (no spec.nodeName) in the snapshot are not "
                      "part of the cluster; schedule them with ksched.load_pods(source) and "
                      "schedule_batch", IgnoredObjectsWarning, stacklevel=4)


def load_cluster(source: Any = None, *, kubeconfig: Any = None,
                 context: str | None = None, strict: bool = True) -> ClusterState:
    """Read a cluster from files, a directory, a file's content as bytes, dicts or
    kubernetes-client objects (:mod:`ksched.io`), or, with
    ``kubeconfig=`` and/or ``context=`` (and no ``source``), from a live cluster through the
    kubernetes client (see :func:`ksched.live.load_live`; ``pip install ksched[cluster]``).

    Pods with ``spec.nodeName`` run on that node; Succeeded and Failed pods are ignored, as
    upstream's cache does; pods without a node are left out (see :func:`load_pods`).
    A field that the object's Kubernetes v1.35 API type does not have is refused
    (``strict decoding error: unknown field "spec.x"``, as kubectl says), or, with
    ``strict=False``, ignored with a :class:`~ksched.api.schema.UnknownFieldWarning`.
    """
    with strict_fields(check_flag(strict, "strict")):
        return _load_cluster(source, kubeconfig, context)


def _load_cluster(source: Any, kubeconfig: Any, context: str | None) -> ClusterState:
    if kubeconfig is not None or context is not None:
        if source is not None:
            raise ArgumentError("load_cluster: give a source or kubeconfig=/context=, not both")
        from ksched.live import load_live

        objects = load_live(kubeconfig, context)
    elif source is None:
        raise ArgumentError("load_cluster: source: required (or kubeconfig=/context=)")
    else:
        objects = read_objects(source)
    _warn_pending(objects)
    return cluster_from_objects(objects)


def warmup() -> float:
    """Compile (or load from numba's disk cache) every kernel and the fused scheduling loop;
    returns the seconds it took. Call it before timing anything."""
    import time

    from ksched import kernels
    from ksched.workloads import scheduling_basic

    started = time.perf_counter()
    kernels.warmup()
    cluster, pods = scheduling_basic(3, 1, 4)
    schedule_batch(cluster, pods)
    schedule_batch(cluster, pods, tie_break="random", seed=0)
    return time.perf_counter() - started


def load_pods(source: Any, *, strict: bool = True) -> PodTable:
    """The pending pods (no ``spec.nodeName``, not terminal) of ``source``, in input order,
    as a :class:`~ksched.pod_table.PodTable` (a sequence of pods that
    :func:`~ksched.schedule_batch` takes without per-pod work); two with one namespace/name
    are refused (``metadata.name: Duplicate value``). ``strict``: as :func:`load_cluster`'s."""
    with strict_fields(check_flag(strict, "strict")):
        return _load_pods(source)


def _load_pods(source: Any) -> PodTable:
    if isinstance(source, str | os.PathLike):
        table = pending_table_of_file(source)  # kubectl's List of pods, read by template
        if table is not None:
            return table
    return PodTable.of(read_objects(source).pending_pods)
