"""The compiled loop and the object-level framework place every pod identically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ksched
from ksched import conformance
from ksched.api import (
    Container,
    ContainerImage,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from ksched.errors import UnsupportedFeatureError

TRACES = conformance.trace_files([Path(__file__).parent / "conformance"])


def _both(cluster, pods, **kw):
    fast = ksched.schedule_batch(cluster, pods, **kw)
    slow = ksched.schedule_batch(cluster, pods, fast_path=False, **kw)
    return fast, slow


def _assert_same(fast, slow) -> None:
    assert [(p.pod.key, p.node, p.reason) for p in fast.placements] == \
           [(p.pod.key, p.node, p.reason) for p in slow.placements]
    assert np.array_equal(fast.state.requested, slow.state.requested)
    assert np.array_equal(fast.state.nonzero_requested, slow.state.nonzero_requested)
    assert [p.key for p in fast.state.pods] == [p.key for p in slow.state.pods]


@pytest.mark.parametrize("path", [p for p in TRACES if "config" not in p.name
                                  and "preempt" not in p.name],
                         ids=lambda p: p.name.removesuffix(".json.gz"))
def test_conformance_inputs_place_identically(path: Path) -> None:
    trace = conformance.load_trace(path)
    inputs = trace["input"]
    objects = (inputs["nodes"] + inputs["existing_pods"] + inputs.get("namespaces", [])
               + [o for k in ("services", "replica_sets", "stateful_sets",
                              "replication_controllers") for o in inputs.get(k, [])])
    cluster = ksched.load_cluster(objects)
    pods = ksched.load_pods(inputs["pending_pods"])
    try:
        fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=30)
    except UnsupportedFeatureError:
        pytest.skip("uses features not supported yet")
    _assert_same(fast, slow)


ZONES = ("a", "b", "c")
IMAGES = ("img/a:1", "img/b:1", "img/c")


def random_cluster(rng: np.random.Generator, num_nodes: int) -> ksched.ClusterState:
    nodes = []
    for i in range(num_nodes):
        taints = []
        if rng.random() < 0.2:
            taints.append(Taint("dedicated", str(rng.choice(["gpu", "db"])),
                                str(rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"]))))
        if rng.random() < 0.2:
            taints.append(Taint("soft", "", "PreferNoSchedule"))
        images = [ContainerImage((name,), int(rng.integers(1, 2000)) << 20)
                  for name in IMAGES if rng.random() < 0.3]
        nodes.append(Node(
            f"n{i:03d}",
            labels={"kubernetes.io/hostname": f"n{i:03d}",
                    "topology.kubernetes.io/zone": str(rng.choice(ZONES)),
                    "tier": str(rng.integers(0, 4))},
            unschedulable=bool(rng.random() < 0.05), taints=taints, images=images,
            allocatable={"cpu": int(rng.choice([2000, 4000, 8000])),
                         "memory": int(rng.choice([4, 8, 16])) << 30,
                         "pods": int(rng.choice([3, 10, 110])),
                         "example.com/gpu": int(rng.choice([0, 0, 2]))}))
    return ksched.ClusterState.from_records(nodes)


def random_pod(rng: np.random.Generator, i: int) -> Pod:
    requests = {"cpu": int(rng.choice([0, 100, 500, 1500])),
                "memory": int(rng.choice([0, 256, 1024])) << 20}
    if rng.random() < 0.2:
        requests["example.com/gpu"] = 1
    if rng.random() < 0.2:
        requests.pop("memory")
    ports = [ContainerPort(80, int(rng.choice([8080, 9100])))] if rng.random() < 0.2 else []
    tolerations = [Toleration("dedicated", "Exists")] if rng.random() < 0.3 else []
    affinity = None
    if rng.random() < 0.3:
        affinity = NodeAffinity(
            required=(NodeSelectorTerm((NodeSelectorRequirement(
                "topology.kubernetes.io/zone", "In", tuple(rng.choice(ZONES, 2))),)),)
            if rng.random() < 0.5 else None,
            preferred=(PreferredSchedulingTerm(int(rng.integers(1, 100)), NodeSelectorTerm((
                NodeSelectorRequirement("tier", "Gt", (str(rng.integers(0, 3)),)),))),))
    return Pod(f"p{i}", containers=[Container("c", str(rng.choice(IMAGES)), requests=requests,
                                              ports=ports)],
               tolerations=tolerations, node_affinity=affinity,
               node_selector={"tier": "1"} if rng.random() < 0.1 else None)


@pytest.mark.parametrize("seed", range(12))
def test_random_clusters_place_identically(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cluster = random_cluster(rng, int(rng.choice([5, 40, 150, 260])))
    templates = [random_pod(rng, i) for i in range(6)]
    pods = [templates[int(rng.integers(len(templates)))] for _ in range(120)]
    pods = [Pod(f"p{i}", containers=t.containers, tolerations=t.tolerations,
                node_affinity=t.node_affinity, node_selector=t.node_selector)
            for i, t in enumerate(pods)]
    percentage = int(rng.choice([0, 10, 50, 100]))
    tie_break = str(rng.choice(["round-robin", "random"]))
    fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=percentage,
                       tie_break=tie_break, seed=seed)
    _assert_same(fast, slow)
    assert fast.unschedulable or len(fast.scheduled) == len(pods)


@pytest.mark.parametrize("path", [p for p in TRACES if p.name.startswith("config-")
                                  and "invalid" not in p.name],
                         ids=lambda p: p.name.removesuffix(".json.gz"))
def test_configured_profiles_place_identically(path: Path) -> None:
    """Weights, strategies, args and several profiles: the loop follows the configuration."""
    from ksched.config import load_config

    trace = conformance.load_trace(path)
    inputs = trace["input"]
    config = load_config(inputs["scheduler_config"])
    objects = (inputs["nodes"] + inputs["existing_pods"] + inputs.get("namespaces", [])
               + [o for k in ("services", "replica_sets", "stateful_sets",
                              "replication_controllers") for o in inputs.get(k, [])])
    cluster = ksched.load_cluster(objects)
    pods = ksched.load_pods(inputs["pending_pods"])
    try:
        fast, slow = _both(cluster, pods, profile=config)
    except UnsupportedFeatureError:
        pytest.skip("uses features not supported yet")
    _assert_same(fast, slow)


def rich_pod(rng: np.random.Generator, i: int, node_names: list[str]) -> Pod:
    """Init containers, sidecars, overhead, pod-level requests, host IPs, node names."""
    base = random_pod(rng, i)
    init = []
    if rng.random() < 0.4:
        init.append(Container("init", "img/a:1", requests={"cpu": int(rng.choice([200, 3000]))}))
    if rng.random() < 0.3:
        init.append(Container("sidecar", "img/b:1", requests={"memory": 64 << 20},
                              restart_policy="Always",
                              ports=[ContainerPort(53, 53, "UDP", str(rng.choice(
                                  ["", "10.0.0.1", "127.0.0.1"])))]))
    extra = {}
    if rng.random() < 0.2:
        extra["overhead"] = {"cpu": 50, "memory": 32 << 20}
    if rng.random() < 0.15:
        extra["pod_requests"] = {"cpu": 700}
    if rng.random() < 0.05:
        extra["node_name"] = str(rng.choice(node_names))
    if rng.random() < 0.1:
        extra["node_affinity"] = NodeAffinity(preferred=(PreferredSchedulingTerm(
            10, NodeSelectorTerm((NodeSelectorRequirement(
                "kubernetes.io/hostname", "In", (str(rng.choice(node_names)),)),))),))
    return Pod(f"r{i}", containers=base.containers, init_containers=init,
               tolerations=base.tolerations, node_selector=base.node_selector,
               **{"node_affinity": base.node_affinity, **extra})


@pytest.mark.parametrize("seed", range(8))
def test_rich_pods_place_identically(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    cluster = random_cluster(rng, int(rng.choice([8, 60, 180])))
    names = list(cluster.node_names)
    templates = [rich_pod(rng, i, names) for i in range(8)]
    pods = [attrs_evolve_name(templates[int(rng.integers(len(templates)))], f"p{i}")
            for i in range(150)]
    fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=int(rng.choice([0, 100])))
    _assert_same(fast, slow)


def attrs_evolve_name(pod: Pod, name: str) -> Pod:
    import attrs

    return attrs.evolve(pod, name=name)


@pytest.mark.parametrize("seed", range(10))
def test_hard_spread_constraints_place_identically(seed: int) -> None:
    """DoNotSchedule topology spread in the loop: counts kept per domain as pods land."""
    import attrs

    from ksched.api import LabelSelector, TopologySpreadConstraint

    rng = np.random.default_rng(200 + seed)
    cluster = random_cluster(rng, int(rng.choice([6, 30, 130])))
    templates = []
    for i in range(5):
        app = str(rng.choice(["web", "db"]))
        constraints = tuple(
            TopologySpreadConstraint(
                int(rng.integers(1, 3)),
                str(rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname", "tier"])),
                "DoNotSchedule", LabelSelector({"app": app}) if rng.random() < 0.9 else None,
                min_domains=int(rng.integers(1, 5)) if rng.random() < 0.3 else None,
                node_affinity_policy=str(rng.choice(["Honor", "Ignore"])),
                node_taints_policy=str(rng.choice(["Honor", "Ignore"])))
            for _ in range(int(rng.integers(0, 3))))
        base = random_pod(rng, i)
        templates.append(attrs.evolve(base, labels={"app": app},
                                      namespace=str(rng.choice(["default", "other"])),
                                      topology_spread_constraints=constraints))
    pods = [attrs.evolve(templates[int(rng.integers(len(templates)))], name=f"s{i}")
            for i in range(120)]
    fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=int(rng.choice([0, 100])))
    _assert_same(fast, slow)


@pytest.mark.parametrize("seed", range(10))
def test_soft_and_default_spreading_place_identically(seed: int) -> None:
    """ScheduleAnyway constraints and the system defaults (from a Service) in the loop."""
    import attrs

    from ksched.api import LabelSelector, TopologySpreadConstraint, Workload

    rng = np.random.default_rng(300 + seed)
    base = random_cluster(rng, int(rng.choice([6, 40, 140])))
    nodes = list(base.nodes)
    if rng.random() < 0.5:  # some nodes without a zone
        nodes = [attrs.evolve(n, labels={k: v for k, v in n.labels.items()
                                         if k != "topology.kubernetes.io/zone"})
                 if i % 5 == 0 else n for i, n in enumerate(nodes)]
    service = Workload("Service", "web", "default", LabelSelector({"app": "web"}))
    bound = [attrs.evolve(random_pod(rng, 900 + i), labels={"app": "web"},
                          node_name=nodes[int(rng.integers(len(nodes)))].name)
             for i in range(int(rng.integers(0, 20)))]
    cluster = ksched.ClusterState.from_records(nodes, bound, objects={"workloads": (service,)})
    templates = []
    for i in range(5):
        constraints = tuple(
            TopologySpreadConstraint(
                int(rng.integers(1, 4)),
                str(rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"])),
                str(rng.choice(["ScheduleAnyway", "DoNotSchedule"])),
                LabelSelector({"app": "web"}))
            for _ in range(int(rng.integers(0, 3))))
        templates.append(attrs.evolve(random_pod(rng, i), labels={"app": "web"},
                                      topology_spread_constraints=constraints))
    pods = [attrs.evolve(templates[int(rng.integers(len(templates)))], name=f"d{i}")
            for i in range(100)]
    fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=int(rng.choice([0, 100])))
    _assert_same(fast, slow)


def test_pods_differing_only_by_owner_get_their_own_default_spreading() -> None:
    """The system default constraints take their selector from the owning ReplicaSet, so two
    otherwise identical pods with different owners must not share a compiled class."""
    import attrs

    from ksched.api import LabelSelector, Workload

    rng = np.random.default_rng(7)
    cluster = random_cluster(rng, 30)
    owners = (Workload("ReplicaSet", "rs-a", "default", LabelSelector({"tier": "a"})),
              Workload("ReplicaSet", "rs-b", "default", LabelSelector({"team": "b"})))
    bound = [Pod(f"b{i}", labels={"tier": "a"} if i % 3 else {"team": "b"},
                 node_name=f"n{i % 7:03d}" if i % 3 else f"n{20 + i % 5:03d}",
                 containers=[Container("c", requests={"cpu": 100})]) for i in range(30)]
    cluster = ksched.ClusterState.from_records(list(cluster.nodes), bound,
                                               objects={"workloads": owners})
    template = Pod("p", labels={"tier": "a", "team": "b"},
                   containers=[Container("c", requests={"cpu": 100})])
    pods = [attrs.evolve(template, name=f"p{i}",
                         controller=("apps/v1", "ReplicaSet", "rs-a" if i % 2 else "rs-b"))
            for i in range(40)]
    fast, slow = _both(cluster, pods)
    _assert_same(fast, slow)


@pytest.mark.parametrize("seed", range(12))
def test_pod_affinity_places_identically(seed: int) -> None:
    """Required and preferred (anti-)affinity, running pods' terms, namespaces: in the loop."""
    import attrs

    from ksched.api import LabelSelector, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm

    rng = np.random.default_rng(400 + seed)
    keys = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "tier"]

    def term() -> PodAffinityTerm:
        selector = LabelSelector({"app": str(rng.choice(["web", "db", "cache"]))})
        namespaces = tuple(rng.choice(["default", "other"], int(rng.integers(0, 3))))
        ns_selector = LabelSelector({}) if rng.random() < 0.15 else None
        return PodAffinityTerm(str(rng.choice(keys)), selector, namespaces, ns_selector)

    def affinity() -> PodAffinity | None:
        if rng.random() < 0.4:
            return None
        return PodAffinity(
            required=tuple(term() for _ in range(int(rng.integers(0, 2)))),
            preferred=tuple(WeightedPodAffinityTerm(int(rng.integers(1, 100)), term())
                            for _ in range(int(rng.integers(0, 3)))))

    def decorate(pod: Pod, name: str, **extra) -> Pod:
        return attrs.evolve(pod, name=name, labels={"app": str(rng.choice(["web", "db"]))},
                            namespace=str(rng.choice(["default", "other"])),
                            pod_affinity=affinity(), pod_anti_affinity=affinity(), **extra)

    base = random_cluster(rng, int(rng.choice([8, 40, 120])))
    nodes = list(base.nodes)
    bound = [decorate(random_pod(rng, 900 + i), f"b{i}",
                      node_name=nodes[int(rng.integers(len(nodes)))].name)
             for i in range(int(rng.integers(0, 25)))]
    cluster = ksched.ClusterState.from_records(
        nodes, bound, namespaces={"default": {"env": "prod"}, "other": {"env": "dev"}})
    templates = [decorate(random_pod(rng, i), f"t{i}") for i in range(5)]
    pods = [attrs.evolve(templates[int(rng.integers(len(templates)))], name=f"a{i}")
            for i in range(100)]
    args = {"hard_pod_affinity_weight": int(rng.choice([0, 1, 5]))}
    from ksched.plugins.inter_pod_affinity import InterPodAffinityArgs
    from ksched.profile import default_profile
    import attrs as _attrs
    profile = _attrs.evolve(default_profile(int(rng.choice([0, 100]))),
                            args={"InterPodAffinity": InterPodAffinityArgs(**args)})
    fast, slow = _both(cluster, pods, profile=profile)
    _assert_same(fast, slow)
