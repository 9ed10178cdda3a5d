"""The arguments of :func:`ksched.planning.capacity.capacity` checked and made ready: the pod
templates with their limits and the copy numbers pods of the cluster hold already, how the copies
are scheduled, and the what-if node changes (``exclude_nodes``, ``add_nodes``)."""

from __future__ import annotations

import collections
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.client_wire import is_client_model
from ksched.errors import ArgumentError
from ksched.inputs import admitted, as_node, as_pod, node_from_template
from ksched.limits import MAX_NODES, MAX_PODS, check_count
from ksched.state import ClusterState

__all__ = ["CapacityRun", "CopyTemplate", "admitted_templates", "check_limit",
           "copy_templates", "with_added_nodes", "with_taken", "without_nodes"]


@attrs.frozen
class CopyTemplate:
    """A template, its limit, and the copy numbers whose names pods of the cluster hold."""

    pod: Pod
    limit: int | None
    taken: npt.NDArray[np.int64] = attrs.field(factory=lambda: np.zeros(0, np.int64))

    def suffixes(self, count: int) -> npt.NDArray[np.int64]:
        """int64[count]: the numbers of the first ``count`` copies (taken ones skipped)."""
        numbers = np.arange(count + len(self.taken), dtype=np.int64)
        return numbers[~np.isin(numbers, self.taken)][:count]

    def copy(self, k: int) -> Pod:
        """The ``k``-th copy (from 0), named ``<name>-<number>``."""
        return self.pod.renamed(f"{self.pod.name}-{int(self.suffixes(k + 1)[k])}")


@attrs.frozen
class CapacityRun:
    """How the copies are scheduled: as ``schedule_batch`` takes it, and the ``by`` label."""

    profile: Any
    tie_break: str
    seed: Any
    by: str | None
    progress: Callable[[int], None] | None


def with_taken(state: ClusterState, items: Sequence[CopyTemplate]) -> list[CopyTemplate]:
    """``items`` with the copy numbers that running pods' names hold (``web-3`` holds 3 for
    a template ``web`` in its namespace)."""
    wanted = {(t.pod.namespace, f"{t.pod.name}-") for t in items}
    taken: dict[tuple[str, str], set[int]] = collections.defaultdict(set)
    for pod in state.pods:
        head, sep, tail = pod.name.rpartition("-")
        if sep and (pod.namespace, head + "-") in wanted and tail.isascii() \
                and tail.isdigit() and str(int(tail)) == tail:
            taken[(pod.namespace, head + "-")].add(int(tail))
    return [attrs.evolve(t, taken=np.array(sorted(taken[(t.pod.namespace, f"{t.pod.name}-")]),
                                           dtype=np.int64)) for t in items]


def check_limit(value: Any, where: str) -> int | None:
    """A copy limit: ``None`` (none) or a count up to :data:`~ksched.limits.MAX_PODS`."""
    return None if value is None else check_count(value, where, MAX_PODS)


def _is_pair(item: Any) -> bool:
    return (isinstance(item, tuple) and len(item) == 2 and not isinstance(item[1], Mapping)
            and (item[1] is None or isinstance(item[1], numbers.Number)))


def _is_single(templates: Any) -> bool:
    """Whether ``templates`` is one template (a pod in any form, or a pair), not a list."""
    return (isinstance(templates, Pod | Mapping | str | bytes) or is_client_model(templates)
            or _is_pair(templates) or not isinstance(templates, Iterable))


def _pending(pod: Pod) -> Pod:
    """The template as cluster-capacity's pod generator copies it: no node, no status."""
    if not pod.node_name and pod.start_time is None and not pod.nominated_node_name:
        return pod
    return attrs.evolve(pod.with_status(None, ""), node_name="")


def copy_templates(templates: Any, max_limit: int | None) -> list[CopyTemplate]:
    """``templates`` as (pod, limit) pairs; a template without a limit gets ``max_limit``."""
    if _is_single(templates):
        templates = [templates]
    out = []
    for i, item in enumerate(templates):
        where = f"templates[{i}]"
        pod, limit = item if _is_pair(item) else (item, None)
        pod = _pending(as_pod(pod, where))
        limit = check_limit(limit, f"{where} limit")
        out.append(CopyTemplate(pod, max_limit if limit is None else limit))
    if not out:
        raise ArgumentError("templates: expected at least one pod template")
    names = collections.Counter(t.pod.key for t in out)
    if (dup := next((k for k, c in names.items() if c > 1), None)) is not None:
        raise ArgumentError(f"templates: two templates named {dup}: copies would clash")
    return out


def admitted_templates(items: Sequence[CopyTemplate], state: ClusterState
                       ) -> list[CopyTemplate]:
    """``items`` with their pods admitted as :func:`ksched.schedule_batch` admits pending
    pods (:func:`ksched.inputs.admitted`): a template naming a PriorityClass of the cluster
    gets its value and preemption policy; one naming a class nobody holds is refused."""
    pods = admitted([t.pod for t in items], state)
    return [t if pod is t.pod else attrs.evolve(t, pod=pod) for t, pod in zip(items, pods)]


def without_nodes(cluster: ClusterState, exclude: Any) -> ClusterState:
    """``cluster`` without the nodes ``exclude`` names and their pods, rebuilt from its
    records (namespaces and other objects kept)."""
    if isinstance(exclude, str):
        exclude = [exclude]
    if not isinstance(exclude, Iterable):
        raise ArgumentError(f"exclude_nodes: expected node names, got {type(exclude).__name__}")
    exclude = list(exclude)
    for name in exclude:
        if not isinstance(name, str) or name not in cluster.node_index:
            raise ArgumentError(f"exclude_nodes: no node named {name!r} in the cluster")
    if not exclude:
        return cluster
    gone = set(exclude)
    nodes = [n for n in cluster.nodes if n.name not in gone]
    pods = [p for p in cluster.pods if p.node_name not in gone]
    return ClusterState.from_records(nodes, pods, namespaces=dict(cluster.namespaces),
                                     objects=dict(cluster.objects))


def with_added_nodes(cluster: ClusterState, add_nodes: Any) -> ClusterState:
    """``cluster`` with the new nodes of ``add_nodes`` (``(template, count)`` pairs)."""
    if isinstance(add_nodes, str | bytes | Mapping) or not isinstance(add_nodes, Iterable):
        raise ArgumentError(f"add_nodes: expected (node, count) pairs, "
                            f"got {type(add_nodes).__name__}")
    pairs = []
    for i, item in enumerate(add_nodes):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ArgumentError(f"add_nodes[{i}]: expected a (node, count) pair, "
                                f"got {type(item).__name__}")
        pairs.append((as_node(item[0], f"add_nodes[{i}]"),
                      check_count(item[1], f"add_nodes[{i}]: count", MAX_NODES)))
    check_count(sum(count for _, count in pairs), "add_nodes: nodes in all", MAX_NODES)
    new = [node_from_template(template, f"{template.name}-{k}")
           for template, count in pairs for k in range(count)]
    if not new:
        return cluster
    taken = set(cluster.node_index).intersection(n.name for n in new)
    if taken:
        raise ArgumentError(f"add_nodes: node {sorted(taken)[0]!r} is in the cluster already")
    return ClusterState.from_records([*cluster.nodes, *new], list(cluster.pods),
                                     namespaces=dict(cluster.namespaces),
                                     objects=dict(cluster.objects))

