"""Loading a cluster and pending pods the way users have them, and warming the kernels up:
the entry points ``ksched.load_cluster``, ``ksched.load_pods``, ``ksched.cluster_from_objects``
and ``ksched.warmup``."""

from __future__ import annotations

import os
from typing import Any

from ksched.engine import schedule_batch
from ksched.errors import ArgumentError
from ksched.io import Objects, read_objects
from ksched.pod_loading import pending_table_of_file
from ksched.pod_table import PodTable
from ksched.state import ClusterState

__all__ = ["cluster_from_objects", "load_cluster", "load_pods", "warmup"]


def cluster_from_objects(objects: Objects) -> ClusterState:
    """The cluster of parsed objects: nodes, the pods bound to them, namespaces, workloads,
    storage objects."""
    return ClusterState.from_objects(objects)


def load_cluster(source: Any = None, *, kubeconfig: Any = None,
                 context: str | None = None) -> ClusterState:
    """Read a cluster from files, a directory, dicts or kubernetes-client objects, or, with
    ``kubeconfig=`` and/or ``context=`` (and no ``source``), from a live cluster through the
    kubernetes client (see :func:`ksched.live.load_live`; ``pip install ksched[cluster]``).

    Pods with ``spec.nodeName`` run on that node; Succeeded and Failed pods are ignored, as
    upstream's cache does; pods without a node are left out (see :func:`load_pods`).
    """
    if kubeconfig is not None or context is not None:
        if source is not None:
            raise ArgumentError("load_cluster: give a source or kubeconfig=/context=, not both")
        from ksched.live import load_live

        return cluster_from_objects(load_live(kubeconfig, context))
    if source is None:
        raise ArgumentError("load_cluster: source: required (or kubeconfig=/context=)")
    return cluster_from_objects(read_objects(source))


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


def load_pods(source: Any) -> PodTable:
    """The pending pods (no ``spec.nodeName``, not terminal) of ``source``, in input order,
    as a :class:`~ksched.pod_table.PodTable` (a sequence of pods that
    :func:`~ksched.schedule_batch` takes without per-pod work); two with one namespace/name
    are refused (``metadata.name: Duplicate value``)."""
    if isinstance(source, str | os.PathLike):
        table = pending_table_of_file(source)  # kubectl's List of pods, read by template
        if table is not None:
            return table
    return PodTable.of(read_objects(source).pending_pods)
