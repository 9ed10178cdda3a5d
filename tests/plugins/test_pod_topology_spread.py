"""PodTopologySpread: the plugin over a Cycle against the per-node ``reference_*`` functions
(``pod_topology_spread.reference_filter`` / ``reference_score`` / ``reference_normalize``)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import (
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    Taint,
    TopologySpreadConstraint,
    Workload,
)
from ksched.constants import LABEL_HOSTNAME, LABEL_ZONE
from ksched.plugins.pod_topology_spread import (
    LIST,
    REASON_MISSING_LABEL,
    REASON_SKEW,
    SYSTEM,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from ksched.plugins.reference.pod_topology_spread import (
    reference_constraints,
    reference_filter,
    reference_normalize,
    reference_score,
    reference_skips,
)
from ksched.status import Code, unresolvable, unschedulable
from tests.strategies import (
    Scenario,
    assert_filter_equal,
    build_scenario,
    scenarios,
    spread_constraints,
)

SETTINGS = settings(max_examples=60, deadline=None)

#: Default constraints: no label selector (validation forbids one), either action.
default_constraints = st.builds(
    TopologySpreadConstraint,
    max_skew=st.integers(1, 3),
    topology_key=st.sampled_from((LABEL_HOSTNAME, LABEL_ZONE, "disk")),
    when_unsatisfiable=st.sampled_from(("DoNotSchedule", "ScheduleAnyway")),
    min_domains=st.one_of(st.none(), st.integers(1, 3)),
    node_affinity_policy=st.sampled_from((None, "Honor", "Ignore")),
    node_taints_policy=st.sampled_from((None, "Honor", "Ignore")),
)
spread_args = st.one_of(
    st.just(PodTopologySpreadArgs()),
    st.builds(PodTopologySpreadArgs, st.lists(default_constraints, max_size=2).map(tuple),
              st.just(LIST)),
)


def check_filter(s: Scenario, args: PodTopologySpreadArgs = PodTopologySpreadArgs()
                 ) -> list[bool] | None:
    """Compare PreFilter's outcome and every node's Filter status; the mask, or ``None`` when
    PreFilter skipped or failed."""
    plugin = PodTopologySpread(args)
    cycle = s.cycle()
    expected = [reference_filter(s.pod, info, s.infos, args, s.workloads) for info in s.infos]
    pre = plugin.pre_filter(cycle)
    if any(e.code == Code.ERROR for e in expected):
        assert pre is not None and pre.code == Code.ERROR
        return None
    if not reference_constraints(s.pod, "DoNotSchedule", args, s.workloads):
        assert pre is not None and pre.is_skip
        assert all(e.is_success for e in expected)
        return None
    assert pre is None
    result = plugin.filter(cycle, s.indices)
    assert_filter_equal(result, expected, s.nodes)
    return result.passed.tolist()


def check_score(s: Scenario, feasible: np.ndarray,
                args: PodTopologySpreadArgs = PodTopologySpreadArgs()
                ) -> tuple[list[int], list[int]] | None:
    """Compare PreScore's Skip, raw and normalised scores over ``feasible`` node indices."""
    plugin = PodTopologySpread(args)
    cycle = s.cycle()
    status = plugin.pre_score(cycle, feasible)
    if reference_skips(s.pod, s.infos, args, s.workloads):
        assert status is not None and status.is_skip
        return None
    assert status is None
    raw = plugin.score(cycle, feasible)
    assert raw.dtype == np.int64
    infos = [s.infos[i] for i in feasible]
    expected = [reference_score(s.pod, s.infos[i], infos, s.infos, args, s.workloads)
                for i in feasible]
    assert raw.tolist() == expected
    normalised = raw.copy()
    plugin.normalize_score(cycle, normalised)
    want = reference_normalize(s.pod, infos, expected, args, s.workloads)
    assert normalised.tolist() == want
    assert all(0 <= v <= 100 for v in want)
    return expected, want


def constraints_with(action: str) -> st.SearchStrategy[tuple[TopologySpreadConstraint, ...]]:
    """1-3 constraints, the first one with ``action`` (so the extension point has work)."""
    return st.lists(spread_constraints, min_size=1, max_size=3).map(lambda cs: (
        attrs.evolve(cs[0], when_unsatisfiable=action), *cs[1:]))


def spread_scenarios(action: str) -> st.SearchStrategy[Scenario]:
    """2-8 nodes (several pods per node), workloads for the default selector, and a pod that
    mostly has a constraint for ``action`` (else its own, possibly none: the defaults)."""
    def with_constraints(s: Scenario, constraints: tuple | None) -> Scenario:
        if constraints is None:
            return s
        return attrs.evolve(s, pod=attrs.evolve(s.pod, topology_spread_constraints=constraints))

    return st.builds(with_constraints, scenarios(min_nodes=2, max_nodes=8, with_workloads=True),
                     st.one_of(st.none(), constraints_with(action), constraints_with(action)))


@SETTINGS
@given(spread_scenarios("DoNotSchedule"), spread_args)
def test_filter_matches_reference(s: Scenario, args: PodTopologySpreadArgs) -> None:
    check_filter(s, args)


@SETTINGS
@given(spread_scenarios("ScheduleAnyway"), spread_args, st.data())
def test_score_matches_reference(s: Scenario, args: PodTopologySpreadArgs,
                                 data: st.DataObject) -> None:
    # PreScore sees only the feasible nodes; counting still walks every node.
    keep = data.draw(st.lists(st.booleans(), min_size=len(s.nodes), max_size=len(s.nodes))
                     .filter(any))
    check_score(s, s.indices[np.array(keep)], args)


# --------------------------------------------------------------------------- edge cases


def _pod(name: str, node: str = "", labels: dict | None = None,
         constraints: tuple = (), **kw: object) -> Pod:
    return Pod(name, node_name=node, labels=labels or {}, containers=[Container("c")],
               topology_spread_constraints=constraints, **kw)


def _node(name: str, zone: str | None = None, **kw: object) -> Node:
    labels = {LABEL_HOSTNAME: name}
    if zone is not None:
        labels[LABEL_ZONE] = zone
    return Node(name, labels=labels, **kw)


APP = LabelSelector({"app": "web"})
WEB = {"app": "web"}


def _constraint(key: str = LABEL_ZONE, skew: int = 1, action: str = "DoNotSchedule",
                **kw: object) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(skew, key, action, label_selector=APP, **kw)


NODES = [_node("a", "z1"), _node("b", "z1"), _node("c", "z2"), _node("d")]
BOUND = [_pod("w1", "a", WEB), _pod("w2", "b", WEB), _pod("x", "c", {"app": "db"})]


def test_skew_and_missing_label() -> None:
    s = build_scenario(NODES, BOUND, _pod("p", labels=WEB, constraints=(_constraint(),)))
    assert check_filter(s) == [False, False, True, False]
    result = PodTopologySpread().filter(s.cycle(), s.indices)
    assert result.status_at(0) == unschedulable(REASON_SKEW)
    assert result.status_at(3) == unresolvable(REASON_MISSING_LABEL)


def test_min_domains_raises_the_floor() -> None:
    # z1 has 2 matching pods, z2 has 1. With fewer domains than minDomains the global
    # minimum counts as 0, so even z2 is too skewed.
    bound = BOUND + [_pod("w3", "c", WEB)]
    pod = _pod("p", labels=WEB, constraints=(_constraint(min_domains=3),))
    assert check_filter(build_scenario(NODES, bound, pod)) == [False, False, False, False]
    pod = _pod("p", labels=WEB, constraints=(_constraint(),))
    assert check_filter(build_scenario(NODES, bound, pod)) == [False, False, True, False]


def test_all_nodes_infeasible() -> None:
    pod = _pod("p", labels=WEB, constraints=(_constraint(key="rack"),))
    assert check_filter(build_scenario(NODES, BOUND, pod)) == [False] * 4


def test_node_taints_policy_honor_drops_tainted_domains() -> None:
    nodes = [_node("a", "z1"), _node("c", "z2", taints=[Taint("k", "", "NoSchedule")])]
    bound = [_pod("w1", "a", WEB)]
    ignore = _pod("p", labels=WEB, constraints=(_constraint(),))
    honor = _pod("p", labels=WEB, constraints=(_constraint(node_taints_policy="Honor"),))
    # Ignore: z2 (0 pods) is the minimum, z1 has skew 2. Honor: z2 is not a domain at all.
    assert check_filter(build_scenario(nodes, bound, ignore)) == [False, True]
    assert check_filter(build_scenario(nodes, bound, honor)) == [True, True]


def test_empty_selector_counts_nothing_but_matches_itself() -> None:
    c = TopologySpreadConstraint(1, LABEL_ZONE, "DoNotSchedule", label_selector=LabelSelector())
    s = build_scenario(NODES, BOUND, _pod("p", labels=WEB, constraints=(c,)))
    assert check_filter(s) == [True, True, True, False]


def test_invalid_selector_is_an_error() -> None:
    bad = LabelSelector(match_expressions=[LabelSelectorRequirement("app", "In", ())])
    c = TopologySpreadConstraint(1, LABEL_ZONE, "DoNotSchedule", label_selector=bad)
    s = build_scenario(NODES, BOUND, _pod("p", labels=WEB, constraints=(c,)))
    status = PodTopologySpread().pre_filter(s.cycle())
    assert status is not None and status.code == Code.ERROR
    assert status.message == (
        "get constraints from pod: obtaining pod's hard topology spread constraints: values: "
        "Invalid value: null: for 'in', 'notin' operators, values set can't be empty")
    assert check_filter(s) is None


def test_score_ties_and_ignored_nodes() -> None:
    pod = _pod("p", labels=WEB, constraints=(_constraint(action="ScheduleAnyway"),))
    s = build_scenario(NODES, BOUND, pod)
    raw, normalised = check_score(s, s.indices)
    # Two zones -> weight ln(4); z1 has 2 matching pods, z2 none; d lacks the zone: ignored.
    assert raw == [3, 3, 0, 0]
    assert normalised == [0, 0, 100, 0]


def test_score_all_zero_normalises_to_max() -> None:
    pod = _pod("p", labels={"app": "other"}, constraints=(
        TopologySpreadConstraint(1, LABEL_HOSTNAME, "ScheduleAnyway",
                                 label_selector=LabelSelector({"app": "other"})),))
    s = build_scenario(NODES, BOUND, pod)
    assert check_score(s, s.indices) == ([0, 0, 0, 0], [100, 100, 100, 100])


def test_system_defaults_use_the_default_selector() -> None:
    services = (Workload("Service", "svc", "default", LabelSelector(WEB)),)
    s = build_scenario(NODES, BOUND, _pod("p", labels=WEB), services)
    raw, normalised = check_score(s, s.indices)
    # hostname (maxSkew 3): 1 pod on a, b -> 1 * ln(6) + 2; zone (maxSkew 5, a zone-less node
    # makes a "" domain: 3 domains -> ln(5)): z1 has 2 -> 2 * 1.609 + 4. d has no zone label.
    assert raw == [round(1.791759 + 2 + 3.218876 + 4), 11, round(2 + 4), 2]
    assert normalised == [100 * (11 + 2 - r) // 11 for r in raw]
    # Without a selecting Service the defaults give no constraints at all: Skip.
    assert check_score(build_scenario(NODES, BOUND, _pod("p", labels=WEB)), s.indices) is None


@pytest.mark.parametrize("args", [PodTopologySpreadArgs(defaulting_type=SYSTEM),
                                  PodTopologySpreadArgs((), LIST)])
def test_pod_without_constraints_or_workloads_skips(args: PodTopologySpreadArgs) -> None:
    s = build_scenario(NODES, BOUND, _pod("p", labels=WEB))
    assert check_filter(s, args) is None
    assert check_score(s, s.indices, args) is None
