"""A result's final state is freed as soon as nothing holds the result: no reference cycle
keeps its arrays (a million nodes' requests: hundreds of MB) waiting for the garbage
collector, so a sweep of calls reuses the memory the last one let go."""

from __future__ import annotations

import gc
import weakref

import ksched
from ksched.api import Container, Node, Pod, PodAffinity, PodAffinityTerm, LabelSelector


def _cluster() -> ksched.ClusterState:
    return ksched.ClusterState.from_records([
        Node(f"n{i}", allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110},
             labels={"kubernetes.io/hostname": f"n{i}"}) for i in range(20)])


def _dropped_state_is_freed(pods: list[Pod]) -> bool:
    gc.collect()
    gc.disable()
    try:
        result = ksched.schedule_batch(_cluster(), pods)
        assert all(p.node is not None for p in result.placements)
        state = weakref.ref(result.state)
        del result
        return state() is None
    finally:
        gc.enable()


def test_a_dropped_result_frees_its_state_at_once() -> None:
    pods = [Pod(f"web-{i}", containers=[Container("c", requests={"cpu": 100})])
            for i in range(30)]
    assert _dropped_state_is_freed(pods)


def test_the_same_for_pods_the_framework_schedules() -> None:
    """Pods with anti-affinity go through the object-level framework's cycles too."""
    term = PodAffinityTerm("kubernetes.io/hostname", LabelSelector({"app": "db"}))
    pods = [Pod(f"db-{i}", labels={"app": "db"}, pod_anti_affinity=PodAffinity(required=(term,)),
                containers=[Container("c", requests={"cpu": 100})]) for i in range(10)]
    assert _dropped_state_is_freed(pods)
