"""The fused loop's tree selection against its plain node walk over long batches: the same
node for every pod, the same ``nextStartNodeIndex`` before every pod, the same round-robin
index and random draws consumed (:mod:`ksched.kernels.selection_tree`)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import ksched
from ksched.api import (
    Container,
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from ksched.cache import Assumer
from ksched.driver import Driver
from ksched.framework.runtime import Framework
from ksched.framework.tiebreak import TieBreaker
from ksched.kernels.schedule_loop import KNOWN_FAILURE, NEW_FAILURE
from ksched.profile import default_profile


def _cluster(num_nodes: int, unlabelled: bool = False) -> ksched.ClusterState:
    """Three node shapes, repeated: whole runs of nodes tie on every score. With
    ``unlabelled``, every eleventh node has no zone label (in no spreading domain)."""
    shapes = [{"cpu": 4000, "memory": 8 << 30, "pods": 30},
              {"cpu": 8000, "memory": 16 << 30, "pods": 30},
              {"cpu": 4000, "memory": 32 << 30, "pods": 12}]
    return ksched.ClusterState.from_records([
        Node(f"n{i:05d}", allocatable=shapes[i % 7 % 3],
             labels={"kubernetes.io/hostname": f"n{i:05d}"}
             | ({} if unlabelled and i % 11 == 5 else {"topology.kubernetes.io/zone": f"z{i % 3}"}))
        for i in range(num_nodes)])


def _pods(count: int, seed: int, anti_affinity: bool = False,
          spreading: bool = False, shapes: int = 0) -> list[Pod]:
    """Four templates; with ``anti_affinity`` two of them keep apart per host (a tree
    class: a hostname names one node) or per zone (the walk); with ``spreading`` two of them
    spread over zones (one tree per zone), the minimum domains of one more than there are.
    With ``shapes``, that many templates of different requests, interleaved at random: too
    far apart for trees, so their windows are read per block
    (:mod:`ksched.kernels.window_blocks`) where a class's pods come close, else walked."""
    rng = np.random.default_rng(seed)
    if shapes:
        requests = [{"cpu": 50 + 70 * k, "memory": (64 + 96 * (k % 5)) << 20}
                    for k in range(shapes)]
        picks = rng.integers(0, shapes, size=count)
        return [Pod("t", containers=[Container("c", requests=requests[k])]).renamed(f"p{i}")
                for i, k in enumerate(picks.tolist())]
    templates = [Pod("t", containers=[Container("c", requests=requests)]) for requests in
                 ({"cpu": 100, "memory": 128 << 20}, {"cpu": 250}, {"cpu": 900, "memory": 2 << 30},
                  {})]
    if anti_affinity:
        for k, key in ((0, "kubernetes.io/hostname"), (2, "topology.kubernetes.io/zone")):
            app = f"app{k}"
            term = PodAffinityTerm(key, LabelSelector({"app": app}))
            templates[k] = attrs.evolve(templates[k], labels={"app": app},
                                        pod_anti_affinity=PodAffinity(required=(term,)))
    if spreading:
        for k, skew, min_domains in ((0, 1, None), (2, 2, 4)):
            constraint = TopologySpreadConstraint(skew, "topology.kubernetes.io/zone",
                                                  "DoNotSchedule", LabelSelector({"app": "s"}),
                                                  min_domains=min_domains)
            templates[k] = attrs.evolve(templates[k], labels={"app": "s"},
                                        topology_spread_constraints=(constraint,))
    picks = rng.choice(len(templates), size=count, p=[0.5, 0.3, 0.15, 0.05])
    return [templates[k].renamed(f"p{i}") for i, k in enumerate(picks)]


def _run(cluster: ksched.ClusterState, pods: list[Pod], percentage: int, tie_break: str,
         tree: bool) -> tuple[np.ndarray, ...]:
    """The whole batch through the fused loop alone: (node per pod, start index per pod,
    counters after, requests after, each pod's walk)."""
    framework = Framework(default_profile())
    tie_breaker = TieBreaker(tie_break, 11)
    tie_breaker.reserve(len(pods))
    driver = Driver(Assumer(cluster, pods), tie_breaker, percentage, pending=pods)
    fast = driver.fast_path(framework)
    fast.tree_selection = tree
    classes = np.array([fast.class_of(p, driver.assumer.state) for p in pods], np.int64)
    out_node = np.zeros(len(pods), np.int64)
    out_start = np.zeros(len(pods), np.int64)
    out_walk = np.zeros((len(pods), 4), np.int64)
    done = 0
    while done < len(pods):
        done = driver.run_loop(fast, classes, done, out_node, out_start, out_walk)
    counters = driver.counters
    return (out_node, out_start,
            np.array([counters.next_start_index, counters.placed, counters.nodes_evaluated,
                      tie_breaker.last_node_index, tie_breaker.next_draw]),
            driver.assumer.state.requested, out_walk)


@pytest.mark.parametrize(("num_nodes", "pods", "percentage", "tie_break", "kind"), [
    (1000, 100_000, 0, "round-robin", ""),
    (240, 20_000, 100, "round-robin", ""),
    (1000, 20_000, 0, "random", ""),
    (130, 20_000, 30, "random", ""),
    (700, 20_000, 0, "round-robin", "anti-affinity"),
    (600, 20_000, 0, "round-robin", "spreading"),
    (150, 20_000, 50, "random", "spreading"),
    # Pods without spreading land on nodes in no zone between the spreading pods.
    (200, 5_000, 0, "round-robin", "spreading-unlabelled"),
    (500, 5_000, 0, "round-robin", "spreading-unlabelled"),
    (1000, 20_000, 0, "heap", ""),
    (240, 20_000, 100, "heap", ""),
    (700, 20_000, 0, "heap", "anti-affinity"),
    (600, 20_000, 0, "heap", "spreading"),
    (200, 5_000, 0, "heap", "spreading-unlabelled"),
    (1000, 20_000, 0, "round-robin", "16-shapes"),
    (1000, 20_000, 0, "random", "16-shapes"),
    (333, 10_000, 100, "round-robin", "12-shapes"),
    (130, 5_000, 30, "random", "8-shapes"),
])
def test_tree_and_walk_agree_pod_by_pod(num_nodes: int, pods: int, percentage: int,
                                        tie_break: str, kind: str) -> None:
    cluster = _cluster(num_nodes, kind == "spreading-unlabelled")
    batch = _pods(pods, num_nodes, kind == "anti-affinity", kind.startswith("spreading"),
                  int(kind.split("-")[0]) if kind.endswith("-shapes") else 0)
    tree = _run(cluster, batch, percentage, tie_break, tree=True)
    walk = _run(cluster, batch, percentage, tie_break, tree=False)
    nodes, starts, counters, requested, walks = tree
    assert np.array_equal(starts, walk[1])
    assert np.array_equal(walks, walk[4])
    assert np.array_equal(nodes, walk[0])
    assert np.array_equal(counters, walk[2])
    assert np.array_equal(requested, walk[3])
    # The batch fills the cluster: it holds placements, first failures and known failures.
    assert (nodes >= 0).sum() > pods // 10
    assert (nodes == NEW_FAILURE).any()
    assert (nodes == KNOWN_FAILURE).any() or pods < 100_000
