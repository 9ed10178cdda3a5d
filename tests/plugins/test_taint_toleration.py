"""TaintToleration: the kernel path (plugin over a Cycle) against ``reference_*`` per node."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from ksched.api import Container, Node, Pod, Taint, Toleration
from ksched.constants import MAX_NODE_SCORE
from ksched.plugins.taint_toleration import (
    REASON,
    TaintToleration,
    reference_filter,
    reference_score,
)
from ksched.status import Code, unresolvable
from tests.strategies import (
    Scenario,
    assert_filter_equal,
    build_scenario,
    reference_default_normalize,
    scenarios,
)

SETTINGS = settings(max_examples=60, deadline=None)
PLUGIN = TaintToleration()


def check(s: Scenario) -> tuple[np.ndarray, list[int], list[int]]:
    """Compare filter, raw scores and normalised scores; return (mask, raw, normalised)."""
    cycle = s.cycle()
    result = PLUGIN.filter(cycle, s.indices)
    assert_filter_equal(result, [reference_filter(s.pod, n) for n in s.nodes], s.nodes)
    assert PLUGIN.pre_score(cycle, s.indices) is None
    raw = PLUGIN.score(cycle, s.indices)
    assert raw.dtype == np.int64
    expected = [reference_score(s.pod, n) for n in s.nodes]
    assert raw.tolist() == expected
    normalised = raw.copy()
    PLUGIN.normalize_score(cycle, normalised)
    assert normalised.tolist() == reference_default_normalize(expected, MAX_NODE_SCORE, True)
    # Any node index array works (a PreFilter subset, the feasible list), in any order.
    subset = s.indices[::-2]
    assert PLUGIN.score(cycle, subset).tolist() == [expected[i] for i in subset]
    assert PLUGIN.filter(cycle, subset).passed.tolist() == result.passed[subset].tolist()
    return result.passed, expected, normalised.tolist()


@SETTINGS
@given(scenarios(spread=False))
def test_kernel_matches_reference(s: Scenario) -> None:
    check(s)


def _pod(*tolerations: Toleration) -> Pod:
    return Pod("p", containers=[Container("c")], tolerations=tolerations)


def test_empty_taint_lists() -> None:
    s = build_scenario([Node("a"), Node("b")], [], _pod())
    passed, raw, normalised = check(s)
    assert passed.tolist() == [True, True]
    assert raw == [0, 0]
    assert normalised == [MAX_NODE_SCORE, MAX_NODE_SCORE]


def test_all_nodes_infeasible() -> None:
    nodes = [Node("a", taints=[Taint("k1", "v1", "NoSchedule")]),
             Node("b", taints=[Taint("k2", "", "NoExecute"), Taint("k1", "", "NoSchedule")])]
    s = build_scenario(nodes, [], _pod(Toleration("k1", "Equal", "v2", "NoSchedule")))
    result = PLUGIN.filter(s.cycle(), s.indices)
    assert not result.passed.any()
    assert result.status_at(0) == unresolvable(REASON)
    assert result.status_at(1).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    check(s)


def test_toleration_matching_rules() -> None:
    taint = Taint("k1", "v1", "NoSchedule")
    cases = {
        Toleration("", "Exists"): True,                   # empty key + Exists: everything
        Toleration("", "Equal", "v1"): True,              # empty key + Equal: any key, same value
        Toleration("", "Equal", "v2"): False,
        Toleration("k1", "Exists", "ignored"): True,
        Toleration("k1", "", "v1"): True,                 # "" operator means Equal
        Toleration("k1", "Equal", "v1", "NoExecute"): False,
        Toleration("k1", "Equal", "v1", "PreferNoSchedule"): False,
        Toleration("absent", "Exists"): False,            # a key no node has
    }
    s = build_scenario([Node("a", taints=[taint])], [], _pod(*cases))
    for toleration, tolerated in cases.items():
        single = build_scenario(s.nodes, [], _pod(toleration))
        assert bool(PLUGIN.filter(single.cycle(), single.indices).passed[0]) is tolerated, (
            toleration)
        check(single)


def test_prefer_no_schedule_counts_and_ties() -> None:
    nodes = [Node("a", taints=[Taint("k1", "", "PreferNoSchedule"),
                               Taint("k2", "", "PreferNoSchedule")]),
             Node("b", taints=[Taint("k1", "", "PreferNoSchedule")]),
             Node("c", taints=[Taint("k2", "", "PreferNoSchedule")]),
             Node("d", taints=[Taint("k1", "", "NoSchedule")])]
    # Only tolerations with an empty or PreferNoSchedule effect count for scoring.
    pod = _pod(Toleration("k1", "Exists", effect="PreferNoSchedule"),
               Toleration("k2", "Exists", effect="NoSchedule"))
    passed, raw, normalised = check(build_scenario(nodes, [], pod))
    assert passed.tolist() == [True, True, True, False]
    assert raw == [1, 0, 1, 0]
    assert normalised == [0, 100, 0, 100]
