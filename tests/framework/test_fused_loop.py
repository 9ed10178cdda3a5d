"""The compiled loop and the object-level framework place every pod identically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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

TRACES = conformance.trace_files([Path(__file__).parent.parent / "conformance"])
#: Pods of a batch trace run through both paths (the object-level path takes about 20 ms a pod
#: on those clusters; the loop replays every pod in tests/test_conformance.py).
BATCH_PREFIX = 150


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
    pending = inputs["pending_pods"]
    if trace.get("family") == "batch":  # whole batches replay in test_conformance; here the
        pending = pending[:BATCH_PREFIX]  # framework path checks the loop on a prefix
    pods = ksched.load_pods(pending)
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
    pending = inputs["pending_pods"]
    if trace.get("family") == "batch":  # whole batches replay in test_conformance; here the
        pending = pending[:BATCH_PREFIX]  # framework path checks the loop on a prefix
    pods = ksched.load_pods(pending)
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
                # "rack": a key no node has (no label column at all).
                str(rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname", "tier",
                                "rack"])),
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
                str(rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname",
                                "rack"])),
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
    keys = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "tier", "rack"]

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


# --------------------------------------------------------------- topology keys no node has

_MISSING = ("0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints "
            "(missing required label).")


def _keyed_nodes(zones: tuple[str | None, ...], pods: int = 110) -> ksched.ClusterState:
    """Nodes n0, n1, ... with a ``zone`` label where ``zones`` gives one."""
    return ksched.ClusterState.from_records([
        Node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}", **({"zone": z} if z else {})},
             allocatable={"cpu": 4000, "memory": 8 << 30, "pods": pods})
        for i, z in enumerate(zones)])


def _web(name: str = "p", **kw) -> Pod:
    return Pod(name, labels={"app": "web"}, containers=[Container("c", requests={"cpu": 100})],
               **kw)


def _replicas(template: Pod, count: int) -> list[Pod]:
    import attrs

    return [attrs.evolve(template, name=f"p{i}") for i in range(count)]


def _spread(key: str, action: str = "DoNotSchedule"):
    from ksched.api import LabelSelector, TopologySpreadConstraint

    return (TopologySpreadConstraint(1, key, action, LabelSelector({"app": "web"})),)


def _term(key: str):
    from ksched.api import LabelSelector, PodAffinityTerm

    return PodAffinityTerm(key, LabelSelector({"app": "web"}))


@pytest.mark.parametrize("zones", [(None, None, None), ("a", "b", "c")],
                         ids=["no-zone-label", "zone-label-but-other-key"])
def test_hard_spread_on_a_key_no_node_has_fails_in_both_paths(zones) -> None:
    """The key is no label column of the state (``label_column`` -1): every node fails
    PodTopologySpread as unresolvable, in the loop as in the framework."""
    cluster = _keyed_nodes(zones)
    fast, slow = _both(cluster, _replicas(_web(topology_spread_constraints=_spread("rack")), 3))
    _assert_same(fast, slow)
    assert [(p.node, p.reason) for p in fast.placements] == [(None, _MISSING)] * 3


def test_hard_spread_when_nodes_have_no_labels_at_all() -> None:
    cluster = ksched.ClusterState.from_records([
        Node(f"m{i}", allocatable={"cpu": 4000, "pods": 110}) for i in range(3)])
    fast, slow = _both(cluster, _replicas(_web(topology_spread_constraints=_spread("zone")), 2))
    _assert_same(fast, slow)
    assert [p.reason for p in fast.placements] == [_MISSING] * 2


def test_hard_spread_on_a_key_some_nodes_have() -> None:
    """Only n0 and n2 have the zone: n1 never gets a pod; once n0 and n2 are full the
    message counts n1 as missing the label."""
    cluster = _keyed_nodes(("a", None, "b"), pods=2)
    fast, slow = _both(cluster, _replicas(_web(topology_spread_constraints=_spread("zone")), 5))
    _assert_same(fast, slow)
    assert sorted(p.node for p in fast.placements[:4]) == ["n0", "n0", "n2", "n2"]
    assert fast.placements[4].reason == (
        "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints "
        "(missing required label), 2 Too many pods.")


@pytest.mark.parametrize("key", ["rack", "zone"])
def test_soft_spread_on_a_missing_key_scores_like_the_framework(key: str) -> None:
    """ScheduleAnyway on a key no node (or only some nodes) has: nodes without it are
    ignored by the score; both paths choose the same nodes."""
    cluster = _keyed_nodes(("a", None, "b", None))
    pods = _replicas(_web(topology_spread_constraints=_spread(key, "ScheduleAnyway")), 8)
    fast, slow = _both(cluster, pods)
    _assert_same(fast, slow)
    assert len(fast.scheduled) == 8


def test_required_pod_affinity_on_a_key_no_node_has() -> None:
    from ksched.api import PodAffinity

    cluster = _keyed_nodes(("a", "b", "c"))
    pods = _replicas(_web(pod_affinity=PodAffinity(required=(_term("rack"),))), 2)
    fast, slow = _both(cluster, pods)
    _assert_same(fast, slow)
    assert [p.reason for p in fast.placements] == [
        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules."] * 2


def test_required_pod_affinity_on_a_key_some_nodes_have() -> None:
    """The first pod of a self-affine group may go to any node with the key, the next ones
    to its zone: never to n1, which lacks it."""
    from ksched.api import PodAffinity

    cluster = _keyed_nodes(("a", None, "b"))
    pods = _replicas(_web(pod_affinity=PodAffinity(required=(_term("zone"),))), 4)
    fast, slow = _both(cluster, pods)
    _assert_same(fast, slow)
    assert len({p.node for p in fast.placements}) == 1
    assert fast.placements[0].node in ("n0", "n2")


@pytest.mark.parametrize("where", ["anti-affinity", "preferred", "preferred-anti",
                                   "running-anti-affinity"])
def test_pod_affinity_terms_on_a_key_no_node_has_change_nothing(where: str) -> None:
    """Anti-affinity and preferred terms on a key no node has never match a domain: the pods
    spread as plain pods do, and both paths agree."""
    import attrs

    from ksched.api import PodAffinity, WeightedPodAffinityTerm

    term, weighted = _term("rack"), (WeightedPodAffinityTerm(50, _term("rack")),)
    spec = {"anti-affinity": dict(pod_anti_affinity=PodAffinity(required=(term,))),
            "preferred": dict(pod_affinity=PodAffinity(preferred=weighted)),
            "preferred-anti": dict(pod_anti_affinity=PodAffinity(preferred=weighted)),
            "running-anti-affinity": {}}[where]
    bound = []
    if where == "running-anti-affinity":
        bound = [attrs.evolve(_web("b"), node_name="n0",
                              pod_anti_affinity=PodAffinity(required=(term,)))]
    cluster = ksched.ClusterState.from_records(list(_keyed_nodes(("a", "b", "c")).nodes), bound)
    fast, slow = _both(cluster, _replicas(_web(**spec), 6))
    _assert_same(fast, slow)
    plain, _ = _both(cluster, _replicas(_web(), 6))
    assert [p.node for p in fast.placements] == [p.node for p in plain.placements]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_drawn_clusters_place_identically(data: st.DataObject) -> None:
    """Drawn clusters (tests/strategies.py): nodes often lack a topology key, spread and
    affinity terms name keys no node has, bound pods carry their own terms. Replicas of a
    drawn pod land on the same nodes, with the same messages, in both paths."""
    import attrs

    from tests.strategies import placement_clusters

    cluster, pod = data.draw(placement_clusters())
    pods = [attrs.evolve(pod, name=f"r{i}") for i in range(data.draw(st.integers(1, 6)))]
    fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=100)
    _assert_same(fast, slow)


@pytest.mark.parametrize("kind", ["anti-affinity", "affinity", "preferred"])
def test_pod_affinity_when_nodes_have_no_labels_at_all(kind: str) -> None:
    """A state with no label column: placing a pod must not file its terms under any column
    (the loop once read column -1 of an empty label table)."""
    from ksched.api import PodAffinity, WeightedPodAffinityTerm

    cluster = ksched.ClusterState.from_records([
        Node(f"m{i}", allocatable={"cpu": 4000, "pods": 110}) for i in range(3)])
    term = _term("rack")
    spec = {"anti-affinity": dict(pod_anti_affinity=PodAffinity(required=(term,))),
            "affinity": dict(pod_affinity=PodAffinity(required=(term,))),
            "preferred": dict(pod_affinity=PodAffinity(
                preferred=(WeightedPodAffinityTerm(5, term),)))}[kind]
    fast, slow = _both(cluster, _replicas(_web(**spec), 4))
    _assert_same(fast, slow)
    if kind == "affinity":
        assert [p.reason for p in fast.placements] == [
            "0/3 nodes are available: 3 node(s) didn't match pod affinity rules."] * 4
    else:
        assert len(fast.scheduled) == 4


def test_an_empty_spread_selector_counts_no_pods_on_both_paths() -> None:
    """``countPodsMatchSelector`` returns 0 for an empty selector: ``labelSelector: {}``
    never blocks a domain, on the loop as in the framework (hypothesis found the loop
    counting the placed replicas)."""
    from ksched.api import LabelSelector, TopologySpreadConstraint

    disks = {"n0": None, "n1": "ssd", "n2": "ssd", "n3": "hdd"}
    nodes = [Node(n, labels={"kubernetes.io/hostname": n, **({"disk": d} if d else {})},
                  allocatable={"cpu": 4000, "memory": 8 * 2**30, "pods": 20})
             for n, d in disks.items()]
    spread = TopologySpreadConstraint(max_skew=1, topology_key="disk",
                                      when_unsatisfiable="DoNotSchedule",
                                      label_selector=LabelSelector({}, []))
    pods = [Pod(f"r{i}", labels={"app": "web"}, containers=[Container("c", requests={"cpu": 100})],
                topology_spread_constraints=[spread]) for i in range(4)]
    fast, slow = _both(ksched.ClusterState.from_records(nodes), pods)
    _assert_same(fast, slow)
    # ssd 2, hdd 1 after three: a counting selector would send the fourth to hdd (n3)
    assert [p.node for p in fast.placements] == ["n1", "n3", "n2", "n1"]


def test_weights_whose_totals_pass_int32_place_identically() -> None:
    """The loop's score caches are int32: weights of a billion (upstream checks only that
    the int64 sum cannot overflow) are left to the framework, which places as upstream."""
    rng = np.random.default_rng(7)
    cluster = random_cluster(rng, 60)
    templates = [random_pod(rng, i) for i in range(4)]
    pods = [Pod(f"p{i}", containers=templates[i % 4].containers,
                tolerations=templates[i % 4].tolerations) for i in range(80)]
    config = ksched.load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
            {"name": "NodeResourcesBalancedAllocation", "weight": 1_000_000_000},
            {"name": "TaintToleration", "weight": 700_000_000}]}}}]})
    fast, slow = _both(cluster, pods, profile=config, percentage_of_nodes_to_score=100)
    _assert_same(fast, slow)
    assert len({p.node for p in fast.placements if p.node}) > 1
