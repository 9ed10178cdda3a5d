"""The runtime's own rules: first failing plugin, Skip, weights, range checks, the node walk."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
import pytest

from ksched.api import Container, Node, Pod, Taint
from ksched.framework.interfaces import FilterResult
from ksched.framework.registry import Registry
from ksched.framework.runtime import Framework, SchedulingError
from ksched.plugins import IN_TREE_REGISTRY
from ksched.profile import Profile, default_profile, num_feasible_nodes_to_find
from ksched.state import ClusterState
from ksched.status import Status, unresolvable, unschedulable


def node(name: str, cpu: int = 4000, **kw) -> Node:
    return Node(name, allocatable={"cpu": cpu, "memory": 8 << 30, "pods": 110}, **kw)


def pod(cpu: int = 1000) -> Pod:
    return Pod("p", containers=[Container("c", requests={"cpu": cpu})])


def test_first_failing_plugin_wins_in_profile_order() -> None:
    # node a fails both TaintToleration and NodeResourcesFit: TaintToleration comes first.
    state = ClusterState.from_records([
        node("a", cpu=500, taints=[Taint("k", "v", "NoSchedule")]),
        node("b", cpu=500), node("c")])
    result = Framework(default_profile()).schedule_one(state, pod())
    failures = {state.nodes[i].name: s for i, s in result.failures.items()}
    assert failures["a"].plugin == "TaintToleration"
    assert failures["a"].reasons == ("node(s) had untolerated taint(s)",)
    assert failures["b"].plugin == "NodeResourcesFit"
    assert failures["b"].reasons == ("Insufficient cpu",)
    assert result.node == 2
    assert result.message == ""


def test_fit_error_message_is_sorted_as_strings() -> None:
    nodes = [node(f"n{i}", cpu=500) for i in range(10)] + [
        node("t0", taints=[Taint("k", "", "NoExecute")]),
        node("t1", taints=[Taint("k", "", "NoExecute")])]
    result = Framework(default_profile()).schedule_one(ClusterState.from_records(nodes), pod())
    assert result.node is None
    assert result.message == ("0/12 nodes are available: 10 Insufficient cpu, "
                              "2 node(s) had untolerated taint(s).")


def test_single_feasible_node_skips_scoring() -> None:
    state = ClusterState.from_records([node("a", cpu=500), node("b")])
    result = Framework(default_profile()).schedule_one(state, pod())
    assert result.node == 1 and result.scores == {}
    scored = Framework(default_profile()).schedule_one(state, pod(), always_score=True)
    # LeastAllocated: cpu (4000-1000)*100/4000 = 75, memory (8Gi-200Mi)*100/8Gi = 97 -> 86
    assert scored.scores["NodeResourcesFit"].tolist() == [86]


@attrs.frozen
class _Fixed:
    NAME: ClassVar[str] = "Fixed"
    args: object = None

    def score(self, cycle, nodes):
        return np.full(len(nodes), 101, dtype=np.int64)


def test_out_of_range_score_is_an_error() -> None:
    registry = IN_TREE_REGISTRY.merged({"Fixed": _Fixed})
    profile = Profile(plugins={"preFilter": (), "filter": (), "preScore": (), "score": ("Fixed",)},
                      weights={"Fixed": 1})
    state = ClusterState.from_records([node("a"), node("b")])
    with pytest.raises(SchedulingError, match='plugin "Fixed" returns an invalid score 101'):
        Framework(profile, registry).schedule_one(state, pod())


@attrs.frozen
class _RejectOdd:
    NAME: ClassVar[str] = "RejectOdd"
    args: object = None

    def filter(self, cycle, nodes):
        return FilterResult.from_mask(nodes % 2 == 0, unschedulable("odd"))


def test_custom_filter_and_weights() -> None:
    registry = Registry({"RejectOdd": _RejectOdd, **dict(IN_TREE_REGISTRY)})
    profile = Profile(plugins={"preFilter": ("NodeResourcesFit",),
                               "filter": ("RejectOdd", "NodeResourcesFit"),
                               "preScore": ("NodeResourcesFit",),
                               "score": ("NodeResourcesFit",)},
                      weights={"NodeResourcesFit": 7})
    state = ClusterState.from_records([node("a"), node("b"), node("c", cpu=8000)])
    result = Framework(profile, registry).schedule_one(state, pod())
    assert {state.nodes[i].name: s.reasons for i, s in result.failures.items()} == {"b": ("odd",)}
    # LeastAllocated: a = (75 + 100 - 200Mi/8Gi...) -> weighted by 7
    assert result.scores["NodeResourcesFit"].tolist() == [
        7 * int(result.raw_scores["NodeResourcesFit"][0]),
        7 * int(result.raw_scores["NodeResourcesFit"][1])]
    assert state.nodes[result.node].name == "c"


@pytest.mark.parametrize("nodes, percentage, expected", [
    (10, 0, 10), (99, 50, 99), (100, 0, 100), (1000, 0, 420), (5000, 0, 500), (6000, 0, 300),
    (15000, 0, 750), (5000, 100, 5000), (5000, 1, 100), (200, 30, 100),
])
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_walk_stops_after_enough_feasible_nodes_and_rotates() -> None:
    state = ClusterState.from_records([node(f"n{i:03d}") for i in range(300)])
    framework = Framework(default_profile())
    first = framework.schedule_one(state, pod(), percentage_of_nodes_to_score=10)
    assert first.num_nodes_to_find == 100
    assert len(first.feasible) == 100 and len(first.evaluated) == 100
    assert first.next_start_index == 100
    second = framework.schedule_one(state, pod(), next_start_index=first.next_start_index,
                                    percentage_of_nodes_to_score=10)
    assert [state.nodes[i].name for i in second.evaluated[:2]] == ["n100", "n101"]
    assert second.next_start_index == 200


def test_skip_at_pre_filter_skips_the_filter() -> None:
    state = ClusterState.from_records([node("a"), node("b")])
    result = Framework(default_profile()).schedule_one(state, pod())
    assert {"NodeAffinity", "NodePorts", "PodTopologySpread", "InterPodAffinity",
            "VolumeBinding", "DynamicResources"} <= result.pre_filter_skipped
    assert "NodeResourcesFit" not in result.pre_filter_skipped


def test_pre_score_skip_leaves_the_plugin_out() -> None:
    state = ClusterState.from_records([node("a"), node("b")])
    best_effort = Pod("be", containers=[Container("c")])
    result = Framework(default_profile()).schedule_one(state, best_effort)
    assert "NodeResourcesBalancedAllocation" in result.pre_score_skipped
    assert "NodeResourcesBalancedAllocation" not in result.scores
    assert result.scores["DynamicResources"].tolist() == [0, 0]
    # A best-effort pod is still scored with the 100m / 200Mi non-zero defaults.
    # cpu (4000-100)*100/4000 = 97, memory (8Gi-200Mi)*100/8Gi = 97
    assert result.raw_scores["NodeResourcesFit"].tolist() == [97, 97]


def test_status_names_match_go() -> None:
    assert Status(3).code.upstream_name == "UnschedulableAndUnresolvable"


def test_a_resource_no_node_has_is_insufficient_everywhere() -> None:
    state = ClusterState.from_records([node("a"), node("b")])
    gpu_pod = Pod("g", containers=[Container("c", requests={"cpu": 100, "nvidia.com/gpu": 1})])
    result = Framework(default_profile()).schedule_one(state, gpu_pod)
    assert result.node is None
    assert {s.reasons for s in result.failures.values()} == {("Insufficient nvidia.com/gpu",)}
    assert {s.code for s in result.failures.values()} == {Status(3).code}
    assert result.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


def _without_scoring() -> Profile:
    """The default profile with ``score.disabled: ['*']`` (its PreScore plugins stay)."""
    profile = default_profile(100)
    return attrs.evolve(profile, plugins={**profile.plugins, "score": ()})


def test_single_feasible_node_without_score_plugins_totals_zero() -> None:
    """``schedulePod`` places a lone feasible node unscored; its informational total is the
    Score plugins' sum, 0 when there are none (as the traces record it), not the 1 that
    ``prioritizeNodes`` gives every node of several."""
    state = ClusterState.from_records([node("a", cpu=500), node("b")])
    result = Framework(_without_scoring()).schedule_one(state, pod(), always_score=True)
    assert result.node == 1 and result.totals.tolist() == [0] and result.scores == {}
    assert result.pre_score_skipped == frozenset()  # no PreScore runs without Score plugins
    # No Score plugins: the walk stops at the first feasible node (numFeasibleNodesToFind 1).
    state = ClusterState.from_records([node("a"), node("b")])
    result = Framework(_without_scoring()).schedule_one(state, pod(), always_score=True)
    assert result.feasible.tolist() == [0] and result.totals.tolist() == [0]


def test_several_feasible_nodes_without_score_plugins_score_one() -> None:
    """``prioritizeNodes`` without Score plugins: every node 1 (the walk only finds several
    through a caller's own list, so the scoring step is called directly)."""
    from ksched.framework.interfaces import Cycle

    state = ClusterState.from_records([node("a"), node("b")])
    result = Framework(_without_scoring())._score(
        Cycle(state, pod()), dict(_base(state), feasible=np.array([0, 1])), None, True)
    assert result.totals.tolist() == [1, 1] and result.pre_score_skipped == frozenset()


def _base(state: ClusterState) -> dict:
    empty = np.zeros(0, dtype=np.int64)
    return dict(pod=pod(), node=None, feasible=empty, evaluated=empty, failures={},
                pre_filter_status=None, pre_filter_nodes=None, pre_filter_skipped=frozenset(),
                pre_score_skipped=frozenset(), raw_scores={}, normalized_scores={}, scores={},
                totals=empty, max_nodes=empty, num_nodes_to_find=2, next_start_index=0)


def test_pre_score_error_on_a_single_feasible_node_still_places_it() -> None:
    """Upstream never runs PreScore for one feasible node, so an invalid ScheduleAnyway
    selector does not stop it; with two nodes the PreScore error fails the cycle."""
    from ksched.api import LabelSelector, LabelSelectorRequirement, TopologySpreadConstraint

    bad = LabelSelector(match_expressions=[LabelSelectorRequirement("app", "In", ())])
    spread = attrs.evolve(pod(), topology_spread_constraints=(
        TopologySpreadConstraint(1, "zone", "ScheduleAnyway", bad),))
    state = ClusterState.from_records([node("a", cpu=500), node("b")])
    result = Framework(default_profile()).schedule_one(state, spread, always_score=True)
    assert result.node == 1 and result.scores == {}
    state = ClusterState.from_records([node("a"), node("b")])
    with pytest.raises(SchedulingError) as caught:
        Framework(default_profile()).schedule_one(state, spread)
    assert str(caught.value) == (
        'running PreScore plugin "PodTopologySpread": calculating preScoreState: obtaining '
        "pod's soft topology spread constraints: values: Invalid value: null: for 'in', "
        "'notin' operators, values set can't be empty")


def _pinned(*names: str):
    """Required node affinity on ``metadata.name`` (NodeAffinity's PreFilter node subset)."""
    from ksched.api import NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm

    return NodeAffinity(required=tuple(NodeSelectorTerm(match_fields=(
        NodeSelectorRequirement("metadata.name", "In", (name,)),)) for name in names))


def test_unschedulable_plugins_include_the_pre_filter_that_narrowed_the_nodes() -> None:
    """``findNodesThatFitPod`` starts the diagnosis set from ``RunPreFilterPlugins``' plugins
    with a node subset: NodeAffinity counts even though no node failed its Filter."""
    state = ClusterState.from_records([node("a", cpu=500), node("b"), node("c")])
    pinned = attrs.evolve(pod(), node_affinity=_pinned("a", "b"))
    result = Framework(default_profile()).schedule_one(state, pinned)
    assert result.node == 1 and result.pre_filter_plugins == {"NodeAffinity"}
    assert result.unschedulable_plugins == {"NodeAffinity", "NodeResourcesFit"}
    failing = attrs.evolve(pod(), node_affinity=_pinned("a"))
    result = Framework(default_profile()).schedule_one(state, failing)
    assert result.node is None and result.unschedulable_plugins == {"NodeAffinity",
                                                                    "NodeResourcesFit"}
    assert result.message == ("0/3 nodes are available: 1 Insufficient cpu, "
                              "2 node(s) didn't satisfy plugin(s) [NodeAffinity].")
    plain = Framework(default_profile()).schedule_one(state, pod())
    assert plain.pre_filter_plugins == frozenset()
    assert plain.unschedulable_plugins == {"NodeResourcesFit"}


def _subset_plugin(name: str, nodes: frozenset[str]):
    """A PreFilter plugin that narrows the nodes to ``nodes``."""
    from ksched.framework.interfaces import PreFilterResult

    @attrs.frozen
    class Narrowing:
        NAME: ClassVar[str] = name
        args: object = None

        def pre_filter(self, cycle):
            return PreFilterResult(nodes)

    return Narrowing


def test_empty_node_subset_names_the_plugins_sorted_without_a_plugin() -> None:
    """``RunPreFilterPlugins``: when the merged subsets leave no node, the status is
    UnschedulableAndUnresolvable, names the plugins sorted, and carries no plugin; the
    diagnosis set is the narrowing plugins."""
    registry = IN_TREE_REGISTRY.merged({"Zeta": _subset_plugin("Zeta", frozenset({"a"})),
                                        "Alpha": _subset_plugin("Alpha", frozenset({"b"}))})
    base = default_profile(100)
    profile = attrs.evolve(base, plugins={**base.plugins,
                                          "preFilter": ("Zeta", "Alpha")})
    state = ClusterState.from_records([node("a"), node("b")])
    result = Framework(profile, registry).schedule_one(state, pod())
    assert result.pre_filter_status == unresolvable(
        "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously")
    assert result.pre_filter_status.plugin == ""
    assert result.unschedulable_plugins == {"Alpha", "Zeta"}
    assert result.message == ("0/2 nodes are available: "
                              "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously.")
