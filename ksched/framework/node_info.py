"""``NodeInfo``: one node and its pods, with the aggregates upstream keeps (object level).

Used by the reference implementations; the engine keeps the same numbers as columns in
:class:`~ksched.state.ClusterState`. Mirrors ``pkg/scheduler/framework/types.go``.
"""

from __future__ import annotations

from functools import cached_property

import attrs

from ksched.api import Node, Pod
from ksched.constants import PODS
from ksched.resources import is_tracked_resource, node_info_non_zero, pod_requests
from ksched.state import ClusterState, host_ports


@attrs.frozen
class NodeInfo:
    node: Node
    pods: tuple[Pod, ...] = ()

    @cached_property
    def requested(self) -> dict[str, int]:
        """``NodeInfo.Requested``: the pods' effective requests, summed."""
        total: dict[str, int] = {}
        for pod in self.pods:
            for name, amount in pod_requests(pod).items():
                if is_tracked_resource(name) and name != PODS:
                    total[name] = total.get(name, 0) + amount
        return total

    @cached_property
    def non_zero_requested(self) -> tuple[int, int]:
        """``NodeInfo.NonZeroRequested`` (cpu, memory)."""
        cpu = mem = 0
        for pod in self.pods:
            c, m = node_info_non_zero(pod, pod_requests(pod))
            cpu, mem = cpu + c, mem + m
        return cpu, mem

    @cached_property
    def used_ports(self) -> set[tuple[str, str, int]]:
        """``NodeInfo.UsedPorts`` as a set of sanitised (ip, protocol, port)."""
        return {p for pod in self.pods for p in host_ports(pod)}


def node_infos(state: ClusterState) -> list[NodeInfo]:
    """One NodeInfo per node of ``state``, in node order."""
    pods: list[list[Pod]] = [[] for _ in state.nodes]
    for pod, node in zip(state.pods, state.pod_node):
        pods[node].append(pod)
    return [NodeInfo(node, tuple(p)) for node, p in zip(state.nodes, pods)]
