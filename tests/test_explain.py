"""``explain``: the same inputs and defaults as ``schedule_batch``, the same choice, and the
node walk, PreFilter result and unschedulable plugins of the cycle it ran."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

import ksched
from ksched import (
    ClusterState,
    Container,
    KschedError,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    explain,
    load_config,
    schedule_batch,
)
from ksched.framework import Registry
from ksched.framework.runtime import Framework
from ksched.plugins import IN_TREE_REGISTRY
from ksched.profile import default_profile, num_feasible_nodes_to_find

GI = 1024**3
CONFIG_HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1",
               "kind": "KubeSchedulerConfiguration"}


def node(name: str, cpu: int = 4000, **kw: Any) -> Node:
    return Node(name, allocatable={"cpu": cpu, "memory": 8 * GI, "pods": 110}, **kw)


def pod(name: str, cpu: int = 100, **kw: Any) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu, "memory": GI})], **kw)


def big_cluster(count: int = 300, seed: int = 7) -> ClusterState:
    """Nodes of random sizes in three zones, some too small for 3-cpu pods, some tainted."""
    rng = np.random.default_rng(seed)
    nodes = []
    for i in range(count):
        taints = [Taint("dedicated", "x")] if rng.random() < 0.1 else []
        nodes.append(node(f"n{i:03d}", int(rng.choice([1000, 2000, 4000, 8000, 16000])),
                          labels={"topology.kubernetes.io/zone": f"z{i % 3}"}, taints=taints))
    return ClusterState.from_records(nodes)


# --------------------------------------------------------------------------- the same choice


@pytest.mark.parametrize("cpu", [100, 3000, 12000, 20000])
def test_chosen_node_is_schedule_batchs_at_the_default_percentage(cpu: int) -> None:
    """On more than 100 nodes the default (adaptive) walk stops early; explain walks the
    same nodes and picks the same one as a batch of this pod alone."""
    cluster = big_cluster()
    incoming = pod("web", cpu)
    why = explain(cluster, incoming)
    result = schedule_batch(cluster, [incoming])
    placed = result.placements[0]
    assert why.chosen == placed.node
    assert why.nodes_evaluated == result.nodes_evaluated
    if placed.node is None:
        assert why.message == placed.reason
    if cpu <= 3000:  # enough feasible nodes: the walk was cut
        assert why.nodes_evaluated < cluster.num_nodes
    for tie_break, seed in [("random", 3), ("random", 11)]:
        assert explain(cluster, incoming, tie_break=tie_break, seed=seed).chosen == \
            schedule_batch(cluster, [incoming], tie_break=tie_break, seed=seed
                           ).placements[0].node


def test_percentage_passes_through_like_schedule_batchs() -> None:
    cluster = big_cluster()
    for percentage in (1, 30, 100):
        why = explain(cluster, pod("web"), percentage_of_nodes_to_score=percentage)
        assert why.num_nodes_to_find == num_feasible_nodes_to_find(percentage, 300)
        assert why.chosen == schedule_batch(cluster, [pod("web")],
                                            percentage_of_nodes_to_score=percentage
                                            ).placements[0].node
    every = explain(cluster, pod("web"), percentage_of_nodes_to_score=100)
    assert every.nodes_evaluated == 300
    assert not any("not evaluated" in n.reasons for n in every.nodes)


def test_a_configurations_percentage_is_the_default() -> None:
    config = load_config({**CONFIG_HEAD, "percentageOfNodesToScore": 40})
    why = explain(big_cluster(), pod("web"), profile=config)
    assert why.num_nodes_to_find == 120
    explicit = explain(big_cluster(), pod("web"), profile=config,
                       percentage_of_nodes_to_score=100)
    assert explicit.num_nodes_to_find == 300


# --------------------------------------------------------------------------- the node walk


def test_node_walk_fields_are_what_the_cycle_did() -> None:
    cluster = big_cluster()
    incoming = pod("web", 3000)
    why = explain(cluster, incoming)
    state = ksched.engine.Assumer(cluster, [incoming]).state
    cycle = Framework(default_profile()).schedule_one(state, incoming, always_score=True)
    names = state.node_names
    adaptive = num_feasible_nodes_to_find(0, 300)  # 50 - 300 // 125 = 48 %: 144 nodes
    assert (why.start_index, why.num_nodes_to_find) == (0, adaptive) == (0, 144)
    assert why.evaluated == tuple(names[i] for i in cycle.evaluated)
    assert why.nodes_evaluated == len(cycle.evaluated) == cycle.next_start_index
    assert why.next_start_index == cycle.next_start_index
    # The walk goes in snapshot order from the start, and stops at the 145th feasible node
    # (it found the 144 it looked for and one more): infeasible nodes make it longer.
    in_order = [names[i] for i in state.tree_order]
    assert why.evaluated == tuple(in_order[:why.nodes_evaluated])
    assert len(why.feasible) == 144
    assert why.nodes_evaluated > 144
    rows = {n.node: n for n in why.nodes}
    assert all(rows[name].reasons == ("not evaluated",)
               for name in in_order[why.nodes_evaluated:])
    assert why.pre_filter_nodes is None and why.pre_filter_plugin == ""
    assert why.unschedulable_plugins == frozenset()  # placed: no FitError
    assert why.to_dict()["num_nodes_to_find"] == 144


def test_pre_filter_node_subset() -> None:
    """NodeAffinity's PreFilter narrows the walk to the nodes named by metadata.name."""
    cluster = ClusterState.from_records([node(f"n{i}") for i in range(6)])
    affinity = NodeAffinity(required=(NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement("metadata.name", "In", ["n4", "n1"])]),))
    why = explain(cluster, pod("web", node_affinity=affinity))
    assert why.pre_filter_nodes == ("n1", "n4")
    assert why.evaluated == ("n1", "n4") and why.nodes_evaluated == 2
    assert why.num_nodes_to_find == 2
    assert {n.node for n in why.nodes if n.reasons == ("not evaluated",)} == {
        "n0", "n2", "n3", "n5"}


def test_pre_filter_rejection_and_unschedulable_plugins() -> None:
    cluster = ClusterState.from_records([node(f"n{i}") for i in range(3)])
    conflict = NodeAffinity(required=(NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement("metadata.name", "In", ["n1"]),
        NodeSelectorRequirement("metadata.name", "In", ["n2"])]),))
    why = explain(cluster, pod("web", node_affinity=conflict))
    assert why.chosen is None
    assert (why.pre_filter_plugin, why.pre_filter_code, why.pre_filter_reasons) == (
        "NodeAffinity", "UnschedulableAndUnresolvable", ("pod affinity terms conflict",))
    assert why.unschedulable_plugins == {"NodeAffinity"}
    assert why.nodes_evaluated == 0 and why.evaluated == ()
    assert why.message == "0/3 nodes are available: pod affinity terms conflict." == \
        schedule_batch(cluster, [pod("web", node_affinity=conflict)]).placements[0].reason


def test_pre_filter_subset_of_unknown_nodes() -> None:
    cluster = ClusterState.from_records([node(f"n{i}") for i in range(3)])
    elsewhere = NodeAffinity(required=(NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement("metadata.name", "In", ["elsewhere"])]),))
    why = explain(cluster, pod("web", node_affinity=elsewhere))
    assert (why.chosen, why.pre_filter_nodes, why.pre_filter_plugin) == (
        None, ("elsewhere",), "")
    assert why.nodes_evaluated == 0
    assert why.message == "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) " \
        "[NodeAffinity]."


def test_unschedulable_plugins_of_a_failed_filter_walk() -> None:
    cluster = ClusterState.from_records([node("small", 500), node("tainted",
                                                                   taints=[Taint("k", "v")])])
    why = explain(cluster, pod("web", 1000))
    assert why.chosen is None
    assert why.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration"}
    assert why.message == ("0/2 nodes are available: 1 Insufficient cpu, "
                           "1 node(s) had untolerated taint(s).")


# --------------------------------------------------------------------------- profiles


def test_a_configuration_routes_by_scheduler_name() -> None:
    config = load_config({**CONFIG_HEAD, "profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated"}}}]}]})
    cluster = ClusterState.from_records([node("roomy", 8000), node("snug", 2000)])
    spreading, packing = pod("a", 500), pod("b", 500, scheduler_name="packer")
    assert explain(cluster, spreading, profile=config).chosen == "roomy"
    why = explain(cluster, packing, profile=config)
    assert (why.chosen, why.profile) == ("snug", "packer")
    assert why.chosen == schedule_batch(cluster, [packing], profile=config).placements[0].node


def test_a_pod_naming_no_profile_is_refused() -> None:
    config = load_config(CONFIG_HEAD)
    cluster = ClusterState.from_records([node("a")])
    with pytest.raises(KschedError) as info:
        explain(cluster, pod("x", scheduler_name="nobody"), profile=config)
    assert str(info.value) == ('pod default/x: spec.schedulerName: no scheduler profile named '
                               '"nobody"')
    # schedule_batch leaves such a pod unplaced, with the reason.
    assert schedule_batch(cluster, [pod("x", scheduler_name="nobody")], profile=config
                          ).placements[0].reason.startswith('no scheduler profile named "nobody"')


@attrs.frozen
class PreferLabelled:
    """The README's custom plugin: 100 on nodes carrying the label in its args."""

    NAME = "PreferLabelled"
    args: dict | None = None

    def score(self, cycle: Any, nodes: Any) -> Any:
        column = cycle.state.label_column(self.args["label"])
        if column < 0:
            return np.zeros(len(nodes), dtype=np.int64)
        return np.where(cycle.state.labels[nodes, column] >= 0, 100, 0).astype(np.int64)


def custom_config(registry: Registry) -> Any:
    return load_config({**CONFIG_HEAD, "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": "PreferLabelled", "weight": 5}]}},
        "pluginConfig": [{"name": "PreferLabelled", "args": {"label": "ssd"}}]}]},
        registry=registry)


def test_the_readmes_custom_plugin_profile_is_explained() -> None:
    registry = IN_TREE_REGISTRY.merged({"PreferLabelled": PreferLabelled})
    config = custom_config(registry)
    cluster = ClusterState.from_records([node("plain"), node("fast", labels={"ssd": "true"})])
    web = pod("web")
    why = explain(cluster, web, profile=config)
    assert why.chosen == "fast" == schedule_batch(cluster, [web], profile=config
                                                  ).placements[0].node
    rows = {n.node: n for n in why.nodes}
    assert rows["fast"].scores["PreferLabelled"] == (100, 100, 500)
    assert rows["plain"].scores["PreferLabelled"] == (0, 0, 0)
    # Its profile alone, with the registry given beside it.
    alone = explain(cluster, web, profile=config.profiles[0], registry=registry)
    assert alone.chosen == "fast"
    assert schedule_batch(cluster, [web], profile=config.profiles[0], registry=registry
                          ).placements[0].node == "fast"
    # Without the registry the plugin does not exist.
    with pytest.raises(KschedError, match="PreferLabelled does not exist"):
        explain(cluster, web, profile=config.profiles[0])


# --------------------------------------------------------------------------- inputs


def test_explain_takes_every_pod_form_and_cluster_form(tmp_path: Any) -> None:
    import json

    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    nodes = [{"kind": "Node", "metadata": {"name": n},
              "status": {"allocatable": {"cpu": c, "memory": "8Gi", "pods": "110"}}}
             for n, c in [("small", "500m"), ("big", "4")]]
    (tmp_path / "pod.json").write_text(json.dumps(manifest))
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "items": nodes}))
    for cluster in (nodes, str(tmp_path / "cluster.json"), ksched.load_cluster(nodes)):
        for source in (manifest, [manifest], str(tmp_path / "pod.json"),
                       Pod.from_manifest(manifest)):
            why = explain(cluster, source)
            assert (why.chosen, why.pod.name) == ("big", "web")


@pytest.mark.parametrize("source, count", [([], 0), ([pod("a"), pod("b")], 2)])
def test_explain_takes_exactly_one_pod(source: Any, count: int) -> None:
    cluster = ClusterState.from_records([node("a")])
    with pytest.raises(KschedError) as info:
        explain(cluster, source)
    assert str(info.value) == f"pod: explain takes one pod, got {count}"
