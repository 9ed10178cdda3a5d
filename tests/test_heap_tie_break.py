"""``tie_break="heap"`` end to end: BATCH.md's worked example (four equal nodes, A with two
pods, B with one, C and D empty) through the compiled loop, the object-level framework,
``explain``, the simulator and the option checks; kube-scheduler v1.35.4 put the first pod on
D and the next on C."""

from __future__ import annotations

import pytest

import ksched
from ksched import ClusterState, Container, Node, Pod
from ksched.constants import TIE_BREAKS
from ksched.decisions import BOUND
from ksched.engine import WALK_COLUMNS
from ksched.errors import ArgumentError
from ksched.inputs import check_tie_break
from ksched.simulator import Simulator
from ksched.sweep.params import check_grid
from ksched.sweep.scenario import Scenario
from ksched.timeline import arrivals_at_once

GI = 2**30


def _cluster() -> ClusterState:
    nodes = [Node(name, allocatable={"cpu": 4000, "memory": 8 * GI, "pods": 110})
             for name in "ABCD"]
    running = [Pod(f"r{i}", node_name=node, containers=[
        Container("c", requests={"cpu": 1000, "memory": GI})])
        for i, node in enumerate("AAB")]
    return ClusterState.from_records(nodes, running)


def _pods(count: int = 2) -> list[Pod]:
    return [Pod(f"p{i}", containers=[Container("c", requests={"cpu": 100, "memory": GI // 8})])
            for i in range(count)]


@pytest.mark.parametrize("fast_path", [True, False])
def test_the_worked_example_goes_to_d_then_c(fast_path: bool) -> None:
    result = ksched.schedule_batch(_cluster(), _pods(), tie_break="heap", fast_path=fast_path)
    assert [p.node for p in result.placements] == ["D", "C"]
    walks = result.walk_columns()
    assert walks["start_index"] == [0, 0]
    assert walks["evaluated_nodes"] == [4, 4]
    assert walks["feasible_nodes"] == [4, 4]
    assert walks["max_nodes_count"] == [2, 1]
    why = ksched.explain(_cluster(), _pods(1)[0], tie_break="heap")
    assert walks["max_score"][0] == max(n.total for n in why.nodes if n.feasible)
    assert result.walks.shape == (2, len(WALK_COLUMNS))


def test_both_paths_report_the_same_walks() -> None:
    fast = ksched.schedule_batch(_cluster(), _pods(6), tie_break="heap")
    slow = ksched.schedule_batch(_cluster(), _pods(6), tie_break="heap", fast_path=False)
    assert [p.node for p in fast.placements] == [p.node for p in slow.placements]
    assert fast.walks.tolist() == slow.walks.tolist()


def test_round_robin_takes_the_first_tied_node_instead() -> None:
    result = ksched.schedule_batch(_cluster(), _pods(), tie_break="round-robin")
    assert [p.node for p in result.placements] == ["C", "D"]


def test_explain_says_the_heap_chose() -> None:
    why = ksched.explain(_cluster(), _pods(1)[0], tie_break="heap")
    assert why.chosen == "D"
    assert why.max_nodes == ("C", "D")
    top = max(n.total for n in why.nodes if n.feasible)
    assert why.choice == (
        "the top of the score heap (kube-scheduler v1.35's container/heap over the 4 feasible "
        f"nodes in walk order, where it is 4.) among the 2 nodes tied at the top total score "
        f"{top}")
    assert ksched.explain(_cluster(), _pods(1)[0]).chosen == "C"


def test_the_simulator_breaks_ties_by_the_heap() -> None:
    simulation = Simulator(_cluster(), tie_break="heap").run(arrivals_at_once(_pods()))
    assert [(d.pod, d.node) for d in simulation.decisions if d.outcome == BOUND] == [
        ("default/p0", "D"), ("default/p1", "C")]


def test_heap_is_valid_wherever_tie_break_is_checked() -> None:
    assert TIE_BREAKS == ("round-robin", "random", "heap")
    assert check_tie_break("heap") == "heap"
    with pytest.raises(ArgumentError, match="heap"):
        check_tie_break("first")
    check_grid(Scenario(_cluster(), pods=_pods()), "schedule",
               [{"tie_break": mode} for mode in TIE_BREAKS])
