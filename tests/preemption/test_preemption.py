"""DefaultPreemption, rule by rule, on hand-made clusters.

Each expected outcome follows from upstream v1.35.4: ``SelectVictimsOnNode`` and
``PodEligibleToPreemptOthers`` (``plugins/defaultpreemption/default_preemption.go``),
``Preempt``, ``DryRunPreemption`` and ``pickOneNodeForPreemption``
(``framework/preemption/preemption.go``), ``filterPodsWithPDBViolation``, and
``RunFilterPluginsWithNominatedPods`` (``framework/runtime/framework.go``).
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.api import LabelSelector, PodDisruptionBudget
from ksched.cache import Assumer
from ksched.compiled_preemption import preemption_handle
from ksched.framework.interfaces import Cycle
from ksched.framework.preemption import (
    Candidate,
    Interface,
    Victims,
    pick_one_node_for_preemption,
    select_candidate,
)
from ksched.framework.runtime import Framework
from ksched.plugins import IN_TREE_REGISTRY
from ksched.plugins.default_preemption import DefaultPreemption, split_by_pdb_violation
from ksched.profile import default_profile

GI = 2**30


def node(name: str, cpu: int = 4000, pods: int = 110) -> Node:
    return Node(name, labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": cpu, "memory": 64 * GI, "pods": pods})


def pod(name: str, cpu: int, priority: int = 0, on: str = "", start: float | None = None,
        **extra) -> Pod:
    return Pod(name, node_name=on, priority=priority, start_time=start,
               containers=[Container("c", requests={"cpu": cpu})], **extra)


def preempt(nodes, bound, preemptor, pdbs=(), nominated=None):
    """One failed cycle and its PostFilter, as the scheduler runs them."""
    assumer = Assumer(ClusterState.from_records(nodes, bound), [preemptor])
    framework = Framework(default_profile())
    state = assumer.state
    rows = {state.node_index[n]: ps for n, ps in (nominated or {}).items()}
    diagnosis = framework.schedule_one(state, preemptor, nominated=rows)
    assert diagnosis.node is None
    handle = preemption_handle(framework, assumer, nominated=rows, pdbs=pdbs)
    result, status = framework.run_post_filter(Cycle(state, preemptor), diagnosis, handle)
    return result, status


def victims(result) -> list[str]:
    return [v.name for v in result.victims]


def test_lower_priority_pods_go_and_the_most_important_are_reprieved_first():
    # n1 (4 cpu) is full: 1 cpu each at priorities 5, 3, 1 (started at 20) and 1 (at 10).
    # All removed, 4 cpu are free. Reprieve, most important first: p5 back leaves 3 cpu,
    # enough for 2.5; p3 back would leave 2: a victim; so are both priority-1 pods, the
    # earlier-started one first. Victims come out most important first.
    bound = [pod("p5", 1000, 5, "n1", 1.0), pod("p3", 1000, 3, "n1", 2.0),
             pod("late", 1000, 1, "n1", 20.0), pod("early", 1000, 1, "n1", 10.0)]
    result, status = preempt([node("n1")], bound, pod("big", 2500, priority=10))
    assert status.is_success and status.message == ""
    assert result.nominated_node == "n1"
    assert victims(result) == ["p3", "early", "late"]


def test_pods_of_equal_or_higher_priority_are_never_victims():
    bound = [pod("same", 3000, 10, "n1", 1.0), pod("low", 1000, 0, "n1", 1.0)]
    result, status = preempt([node("n1")], bound, pod("big", 2000, priority=10))
    assert result.nominated_node == ""
    assert status.message == ("no new claims to deallocate, preemption: 0/1 nodes are "
                              "available: 1 Insufficient cpu.")


def test_no_lower_priority_pod_on_a_node_means_no_victims_found():
    bound = [pod("high", 3500, 100, "n1", 1.0)]
    result, status = preempt([node("n1")], bound, pod("big", 2000, priority=10))
    assert status.plugin == "DynamicResources"  # the first PostFilter plugin that rejected
    assert status.message == ("no new claims to deallocate, preemption: 0/1 nodes are "
                              "available: 1 No preemption victims found for incoming pod.")
    assert result.dry_run_failures["n1"].reasons == (
        "No preemption victims found for incoming pod",)


def test_unresolvable_nodes_are_not_worth_preempting_on():
    # A 5-cpu pod can never fit a 4-cpu node: UnschedulableAndUnresolvable, not potential.
    bound = [pod("low", 1000, 0, "n1", 1.0)]
    result, status = preempt([node("n1")], bound, pod("huge", 5000, priority=10))
    assert result.potential_nodes == ()
    assert status.message.endswith(
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_preemption_policy_never_leaves_the_nomination_alone():
    bound = [pod("low", 3000, 0, "n1", 1.0)]
    result, status = preempt([node("n1")], bound,
                             pod("polite", 2000, priority=10, preemption_policy="Never"))
    assert result is None
    assert status.message == ("no new claims to deallocate, preemption: not eligible due to "
                              "preemptionPolicy=Never.")


def test_node_choice_prefers_the_lowest_highest_victim_priority():
    bound = [pod("a", 3000, 5, "n1", 1.0), pod("b", 3000, 3, "n2", 1.0)]
    result, _ = preempt([node("n1"), node("n2")], bound, pod("big", 2000, priority=10))
    assert (result.nominated_node, victims(result)) == ("n2", ["b"])


def test_node_choice_then_prefers_the_smallest_priority_sum():
    # Both nodes' highest victim has priority 3; n1 also loses a priority-2 pod, n2 a 1.
    bound = [pod("a3", 1500, 3, "n1", 1.0), pod("a2", 1500, 2, "n1", 1.0),
             pod("b3", 1500, 3, "n2", 1.0), pod("b1", 1500, 1, "n2", 1.0)]
    result, _ = preempt([node("n1"), node("n2")], bound, pod("big", 4000, priority=10))
    assert result.nominated_node == "n2"


def test_node_choice_then_prefers_fewer_victims():
    # Equal priority sums would need equal counts, so use priority 0 pods: sums differ by
    # count too; fewer victims also means the smaller shifted sum. Same highest priority.
    bound = [pod("a", 3000, 0, "n1", 1.0), pod("b1", 1500, 0, "n2", 1.0),
             pod("b2", 1500, 0, "n2", 1.0)]
    result, _ = preempt([node("n1"), node("n2")], bound, pod("big", 3000, priority=10))
    assert (result.nominated_node, victims(result)) == ("n1", ["a"])


def test_node_choice_then_prefers_the_latest_start_of_the_most_important_victims():
    bound = [pod("old", 3000, 0, "n1", 100.0), pod("young", 3000, 0, "n2", 200.0)]
    result, _ = preempt([node("n1"), node("n2")], bound, pod("big", 2000, priority=10))
    assert (result.nominated_node, victims(result)) == ("n2", ["young"])
    assert result.tie_nodes == ("n2",)


def test_a_full_tie_goes_to_the_smallest_node_name():
    bound = [pod("x", 3000, 0, "n2", 5.0), pod("y", 3000, 0, "n1", 5.0)]
    result, _ = preempt([node("n2"), node("n1")], bound, pod("big", 2000, priority=10))
    assert result.tie_nodes == ("n1", "n2")
    assert result.nominated_node == "n1"


def test_select_candidate_applies_the_criteria_in_order():
    def cand(name, *victims, violations=0):
        return Candidate(name, tuple(Pod(v[0], priority=v[1], start_time=v[2])
                                     for v in victims), violations)

    fewer_pdb = cand("z", ("a", 100, 1.0), violations=0)
    more_pdb = cand("a", ("b", 1, 1.0), violations=1)
    assert select_candidate([more_pdb, fewer_pdb])[0].node == "z"


PDB = PodDisruptionBudget("guard", "default", LabelSelector({"app": "db"}),
                          disruptions_allowed=1)


def test_pdb_split_uses_up_the_allowance_in_order():
    pods = [Pod("db-0", labels={"app": "db"}), Pod("db-1", labels={"app": "db"}),
            Pod("web", labels={"app": "web"}), Pod("bare")]
    violating, fine = split_by_pdb_violation(pods, [PDB])
    assert [p.name for p in violating] == ["db-1"]
    assert [p.name for p in fine] == ["db-0", "web", "bare"]


def test_pdb_violating_victims_are_reprieved_first_and_counted():
    # Two db pods (the PDB allows 1 disruption) and a web pod, 1 cpu each, priority 0; the
    # 3-cpu pod needs two of them gone. In importance order (start time) db-0 uses up the
    # allowance and db-1 would violate it, so db-1 is tried first and comes back; db-0 and
    # web then cannot: two victims, neither violating.
    bound = [pod("db-0", 1000, 0, "n1", 1.0, labels={"app": "db"}),
             pod("db-1", 1000, 0, "n1", 2.0, labels={"app": "db"}),
             pod("web", 1000, 0, "n1", 3.0, labels={"app": "web"})]
    result, _ = preempt([node("n1")], bound, pod("big", 3000, priority=10), pdbs=[PDB])
    assert victims(result) == ["db-0", "web"]
    assert result.num_pdb_violations == 0


def test_a_node_whose_only_way_violates_a_pdb_loses_to_one_that_does_not():
    strict = PodDisruptionBudget("strict", "default", LabelSelector({"app": "db"}),
                                 disruptions_allowed=0)
    bound = [pod("db", 3000, 0, "n1", 1.0, labels={"app": "db"}),
             pod("web", 3000, 5, "n2", 1.0, labels={"app": "web"})]
    result, _ = preempt([node("n1"), node("n2")], bound, pod("big", 2000, priority=10),
                        pdbs=[strict])
    assert {c.node: c.num_pdb_violations for c in result.candidates} == {"n1": 1, "n2": 0}
    assert result.nominated_node == "n2"


def test_nominated_pods_of_equal_or_higher_priority_hold_their_room():
    # n1 has 3 cpu free, n2 2 cpu; a 3-cpu pod of priority 10 is nominated to n1.
    nodes = [node("n1"), node("n2")]
    bound = [pod("a", 1000, 0, "n1", 1.0), pod("b", 2000, 0, "n2", 1.0)]
    holder = pod("holder", 3000, priority=10, nominated_node_name="n1")
    state = ClusterState.from_records(nodes, bound).widened(resources=["cpu"])
    framework = Framework(default_profile())
    nominated = {state.node_index["n1"]: [holder]}
    same = framework.schedule_one(state, pod("same", 2000, priority=10), nominated=nominated)
    assert same.node == state.node_index["n2"]  # n1 failed the pass with the holder added
    assert same.failures[state.node_index["n1"]].reasons == ("Insufficient cpu",)
    lower = framework.schedule_one(state, pod("lower", 2500, priority=5), nominated=nominated)
    assert lower.node is None  # n1 is held for the holder, n2 is too small
    higher = framework.schedule_one(state, pod("higher", 2500, priority=20),
                                    nominated=nominated)
    assert higher.node == state.node_index["n1"]  # lower-priority nominations do not count


def test_a_nominated_pod_goes_to_its_node_without_a_search():
    nodes = [node("n1"), node("n2"), node("n3")]
    state = ClusterState.from_records(nodes)
    framework = Framework(default_profile())
    result = framework.schedule_one(state, pod("p", 100, nominated_node_name="n3"),
                                    next_start_index=1)
    assert result.nominated_fast_path and result.node == state.node_index["n3"]
    assert result.next_start_index == 1  # evaluateNominatedNode returns before the update
    assert len(result.evaluated) == 1


@pytest.mark.parametrize("potential, expected", [(5, 5), (100, 100), (999, 100), (1500, 150),
                                                 (10_000, 1000)])
def test_number_of_candidates_to_find(potential, expected):
    assert DefaultPreemption().num_candidates(potential) == expected


PATHS = [(True, True), (False, True), (False, False)]  # (vectorized, request arithmetic)


@pytest.mark.parametrize("vectorized, arithmetic", PATHS)
def test_nominated_pods_count_on_nodes_that_fail_anyway(vectorized, arithmetic):
    # RunFilterPluginsWithNominatedPods returns the first pass's status when it fails: n1
    # (2 pods at most, 3.5 of 4 cpu used) is too small for the pod, and with the nominated
    # pod added it also has too many pods.
    n1 = Node("n1", allocatable={"cpu": 4000, "memory": 64 * GI, "pods": 2})
    state = ClusterState.from_records([n1], [pod("old", 3500, on="n1")])
    framework = Framework(default_profile())
    framework.vectorized, framework.request_arithmetic = vectorized, arithmetic
    holder = pod("holder", 100, priority=10, nominated_node_name="n1")
    result = framework.schedule_one(state, pod("p", 1000, priority=10), nominated={0: [holder]})
    assert result.failures[0].reasons == ("Too many pods", "Insufficient cpu")
    assert result.message == "0/1 nodes are available: 1 Insufficient cpu, 1 Too many pods."


# ----------------------------------------------------------------------- preemption.Interface


@attrs.frozen
class MostVictims(DefaultPreemption):
    """DefaultPreemption's rules, but its node choice (``OrderedScoreFuncs``) takes the node
    with the most victims."""

    NAME: ClassVar[str] = "MostVictims"

    def ordered_score_funcs(self, nodes_to_victims):
        return [lambda node: len(nodes_to_victims[node].pods)]


def most_victims_framework() -> Framework:
    profile = default_profile()
    plugins = {**dict(profile.plugins), "postFilter": ("MostVictims",)}
    registry = IN_TREE_REGISTRY.merged({"MostVictims": MostVictims})
    return Framework(attrs.evolve(profile, plugins=plugins), registry)


@pytest.mark.parametrize("make, expected", [
    (lambda: Framework(default_profile()), ("n1", ["a"])),
    (most_victims_framework, ("n2", ["b1", "b2"])),
])
def test_the_evaluator_asks_the_plugin_how_to_choose_the_node(make, expected):
    # n1 frees room by evicting one pod, n2 by evicting two (equal priorities): the default
    # criteria take n1 (the lower priority sum), a plugin's own criteria may take n2. The
    # compiled dry run models DefaultPreemption only, so it steps aside for the subclass.
    bound = [pod("a", 3500, 0, "n1", 1.0), pod("b1", 1750, 0, "n2", 1.0),
             pod("b2", 1750, 0, "n2", 2.0)]
    preemptor = pod("big", 3000, priority=10)
    assumer = Assumer(ClusterState.from_records([node("n1"), node("n2")], bound), [preemptor])
    framework = make()
    diagnosis = framework.schedule_one(assumer.state, preemptor)
    handle = preemption_handle(framework, assumer)
    result, status = framework.run_post_filter(Cycle(assumer.state, preemptor), diagnosis,
                                               handle)
    assert status.is_success
    assert (result.nominated_node, sorted(victims(result))) == expected
    assert sorted(c.node for c in result.candidates) == ["n1", "n2"]


def test_default_preemption_implements_the_interface():
    plugin = DefaultPreemption()
    assert isinstance(plugin, Interface)
    offsets = {plugin.get_offset_and_num_candidates(1000, np.random.default_rng(s))[0]
               for s in range(20)}
    assert len(offsets) > 1 and all(0 <= o < 1000 for o in offsets)
    assert plugin.get_offset_and_num_candidates(1000, None) == (0, 100)
    candidates = [Candidate("n1", (Pod("a"),), 1), Candidate("n2", (Pod("b"), Pod("c")), 0)]
    victims_map = plugin.candidates_to_victims_map(candidates)
    assert victims_map == {"n1": Victims((Pod("a"),), 1),
                           "n2": Victims((Pod("b"), Pod("c")), 0)}
    assert plugin.ordered_score_funcs(victims_map) is None
    assert pick_one_node_for_preemption(victims_map) == ("n2", ("n2",))
