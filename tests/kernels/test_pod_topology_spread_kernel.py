"""The topology spread kernels (:mod:`ksched.kernels.pod_topology_spread`) on the counters the
fused loop keeps (:class:`ksched.domain_counts.DomainCounts`, seeded from the plugin's counts),
against PodTopologySpread's reference on the same nodes and the same feasible set; and the
counters after a pod is placed against the reference on the cluster with that pod bound."""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Container, Node, Pod, TopologySpreadConstraint
from ksched.domain_counts import DomainCounts
from ksched.kernels import pod_topology_spread as kernels
from ksched.plugins.pod_topology_spread import (
    LIST,
    REASON_MISSING_LABEL,
    FilterCounts,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from ksched.plugins.reference.pod_topology_spread import (
    reference_filter,
    reference_normalize,
    reference_score,
    reference_skips,
)
from ksched.status import Status
from tests.strategies import Scenario, build_scenario, scenarios, spread_constraints

SETTINGS = settings(max_examples=60, deadline=None)

spread_args = st.one_of(
    st.just(PodTopologySpreadArgs()),
    st.builds(PodTopologySpreadArgs, st.lists(st.builds(
        TopologySpreadConstraint, st.integers(1, 3), st.sampled_from(
            ("kubernetes.io/hostname", "topology.kubernetes.io/zone")),
        st.sampled_from(("DoNotSchedule", "ScheduleAnyway"))), max_size=2).map(tuple),
        st.just(LIST)))


def with_action(action: str) -> st.SearchStrategy[Scenario]:
    """Nodes with bound pods and workloads (the default selector), and a pod with 1-3
    constraints, the first for ``action``, or none (the defaults)."""
    constraints = st.lists(spread_constraints, min_size=1, max_size=3).map(lambda cs: (
        attrs.evolve(cs[0], when_unsatisfiable=action), *cs[1:]))

    def build(s: Scenario, chosen: tuple | None) -> Scenario:
        pod = s.pod if chosen is None else attrs.evolve(s.pod, topology_spread_constraints=chosen)
        return build_scenario(s.nodes, s.bound, pod, s.workloads)

    return st.builds(build, scenarios(min_nodes=2, max_nodes=8, with_workloads=True),
                     st.one_of(st.none(), constraints))


def loop_filter_codes(s: Scenario, args: PodTopologySpreadArgs,
                      counts: DomainCounts | None = None) -> np.ndarray | None:
    """Filter codes of every node as the loop judges them: counters seeded from the
    plugin's PreFilter counts (``None`` when the pod has no hard constraints)."""
    hard = PodTopologySpread(args).filter_counts(s.cycle())
    if not isinstance(hard, FilterCounts):
        return None
    counts = counts or DomainCounts(s.state, (), None)
    entries = np.array(counts.hard_spread(s.pod, hard), dtype=np.int64).reshape(-1, 4)
    return codes_of(counts, entries, s)


def codes_of(counts: DomainCounts, entries: np.ndarray, s: Scenario) -> np.ndarray:
    arrays = counts.counter_arrays([], s.state.num_nodes)
    minimum = kernels.spread_minimums(entries, arrays["counter_domain_indptr"],
                                      arrays["counter_domains"], counts.counter_counts)
    return kernels.spread_filter_codes(s.indices, entries, minimum, s.state.labels,
                                       arrays["counter_column"], counts.counter_counts)


def expected_codes(s: Scenario, args: PodTopologySpreadArgs) -> list[int]:
    out = []
    for info in s.infos:
        status = reference_filter(s.pod, info, s.infos, args, s.workloads)
        out.append(0 if status.is_success else kernels.MISSING_LABEL
                   if status.reasons == (REASON_MISSING_LABEL,) else kernels.SKEWED)
    return out


@SETTINGS
@given(with_action("DoNotSchedule"), spread_args)
def test_filter_codes_match_the_reference(s: Scenario, args: PodTopologySpreadArgs) -> None:
    codes = loop_filter_codes(s, args)
    if codes is not None:
        assert codes.tolist() == expected_codes(s, args)


@SETTINGS
@given(with_action("DoNotSchedule"), st.data())
def test_counters_after_a_placement_match_the_reference(s: Scenario,
                                                        data: st.DataObject) -> None:
    args = PodTopologySpreadArgs()
    hard = PodTopologySpread(args).filter_counts(s.cycle())
    if not isinstance(hard, FilterCounts):
        return
    counts = DomainCounts(s.state, (), None)
    entries = np.array(counts.hard_spread(s.pod, hard), dtype=np.int64).reshape(-1, 4)
    node = data.draw(st.integers(0, len(s.nodes) - 1))
    placed = attrs.evolve(s.pod, name="placed", node_name=s.nodes[node].name)
    counts.note_placement(placed, node, s.state)
    after = build_scenario(s.nodes, s.bound + (placed,), s.pod, s.workloads)
    assert codes_of(counts, entries, after).tolist() == expected_codes(after, args)


@SETTINGS
@given(with_action("ScheduleAnyway"), spread_args, st.data())
def test_scores_over_the_feasible_nodes_match_the_reference(
        s: Scenario, args: PodTopologySpreadArgs, data: st.DataObject) -> None:
    keep = data.draw(st.lists(st.booleans(), min_size=len(s.nodes), max_size=len(s.nodes))
                     .filter(any))
    feasible = s.indices[np.array(keep)]
    soft = PodTopologySpread(args).soft_constraints(s.cycle())
    if isinstance(soft, Status) or reference_skips(s.pod, s.infos, args, s.workloads):
        return
    counts = DomainCounts(s.state, (), None)
    entries = np.array(counts.soft_spread(s.pod, soft, s.state), dtype=np.int64).reshape(-1, 3)
    arrays = counts.counter_arrays([], s.state.num_nodes)
    seen = np.zeros(counts.domain_space, dtype=np.bool_)
    got = kernels.spread_scores(feasible, entries, soft.require_all, s.state.labels,
                                arrays["counter_column"], arrays["counter_kind"],
                                counts.counter_counts, arrays["empty_id"], arrays["empty_slot"],
                                seen)
    infos = [s.infos[i] for i in feasible]
    raw = [reference_score(s.pod, s.infos[i], infos, s.infos, args, s.workloads)
           for i in feasible]
    assert got.tolist() == reference_normalize(s.pod, infos, raw, args, s.workloads)
    assert not seen.any()


def test_a_key_no_node_has_is_a_missing_label() -> None:
    entries = np.array([[0, 1, 1, 1]], dtype=np.int64)
    labels = np.array([[3], [-1]], dtype=np.int32)
    codes = kernels.spread_filter_codes(np.array([0, 1]), entries, np.zeros(1, np.int64), labels,
                                        np.array([-1]), np.zeros((1, 5), np.int64))
    assert codes.tolist() == [kernels.MISSING_LABEL] * 2


def test_pod_without_constraints_has_no_counters() -> None:
    s = build_scenario([Node("a", labels={"zone": "1"})], [], Pod("p", containers=[Container("c")]))
    assert loop_filter_codes(s, PodTopologySpreadArgs()) is None
