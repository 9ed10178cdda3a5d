"""The inter-pod affinity kernels (:mod:`ksched.kernels.inter_pod_affinity`) on the rows the
fused loop keeps (:class:`ksched.domain_counts.DomainCounts`, seeded from the plugin's counts),
against InterPodAffinity's reference on the same nodes and the same feasible set; and the rows
after a pod is placed (the plugin's ``filter_increments`` / ``score_increments``) against the
reference on the cluster with that pod bound."""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import PodAffinity, WeightedPodAffinityTerm
from ksched.domain_counts import AffinityEntries, DomainCounts
from ksched.kernels import inter_pod_affinity as kernels
from ksched.plugins.inter_pod_affinity import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    InterPodAffinity,
    InterPodAffinityArgs,
)
from ksched.plugins.reference.inter_pod_affinity import (
    reference_filter,
    reference_normalize,
    reference_pre_filter,
    reference_score,
    reference_skips,
)
from ksched.status import Status
from tests.strategies import (
    AffinityScenario,
    affinity_scenarios,
    build_affinity_scenario,
    pod_affinity_terms,
    with_pod_affinity,
)

SETTINGS = settings(max_examples=150, deadline=None)
_CODES = {REASON_AFFINITY: kernels.AFFINITY, REASON_ANTI_AFFINITY: kernels.ANTI_AFFINITY}

_required = st.lists(pod_affinity_terms(invalid_percent=0), min_size=1, max_size=2)
_preferred = st.lists(st.builds(WeightedPodAffinityTerm, st.sampled_from((1, 3, 29, 100)),
                                pod_affinity_terms(invalid_percent=0)), min_size=1, max_size=2)


@st.composite
def incoming(draw: st.DrawFn) -> AffinityScenario:
    """Running pods often with terms of their own, and an incoming pod with required and
    preferred (anti-)affinity, or none (then the running pods' terms are all that count)."""
    s = draw(affinity_scenarios(bound_percent=60, incoming_percent=0))
    affinity = anti = None
    if draw(st.booleans()):
        affinity = PodAffinity(draw(st.one_of(st.just(()), _required)),
                               draw(st.one_of(st.just(()), _preferred)))
    if draw(st.booleans()):
        anti = PodAffinity(draw(st.one_of(st.just(()), _required)),
                           draw(st.one_of(st.just(()), _preferred)))
    pod = attrs.evolve(s.pod, pod_affinity=affinity, pod_anti_affinity=anti)
    return build_affinity_scenario(s.nodes, s.bound, pod, s.namespaces)


def seeded(s: AffinityScenario, args: InterPodAffinityArgs, pending: tuple = ()
           ) -> tuple[DomainCounts, AffinityEntries] | None:
    """The class's rows as the loop seeds them, knowing the ``pending`` pods to come (their
    terms' keys get rows); ``None``: PreFilter rejects the pod."""
    plugin = InterPodAffinity(args)
    cycle = s.cycle()
    filter_counts = plugin.filter_counts(cycle)
    score_counts = plugin.score_counts(cycle) if plugin.may_score(s.pod) else None
    if isinstance(filter_counts, Status) or isinstance(score_counts, Status):
        return None
    counts = DomainCounts(s.state, pending, plugin)
    score_counts = False if score_counts is None and plugin.may_score(s.pod) else score_counts
    return counts, counts.add_class(s.pod, filter_counts, score_counts, s.state)


def pairs(entries: list) -> np.ndarray:
    return np.array(entries, dtype=np.int64).reshape(-1, 2)


def loop_codes(s: AffinityScenario, counts: DomainCounts, e: AffinityEntries) -> list[int]:
    first = bool(counts.affinity_empty[0] and e.self_match)
    return kernels.pod_affinity_codes(s.indices, pairs(e.affinity), pairs(e.anti),
                                      pairs(e.existing), first, s.state.labels,
                                      counts.rows).tolist()


def expected_codes(s: AffinityScenario) -> list[int]:
    out = []
    for info in s.infos:
        status = reference_filter(s.pod, info, s.infos, s.namespaces)
        out.append(0 if status.is_success
                   else _CODES.get(status.reasons[0], kernels.EXISTING_ANTI_AFFINITY))
    return out


def loop_scores(s: AffinityScenario, counts: DomainCounts, e: AffinityEntries,
                feasible: np.ndarray) -> list[int]:
    scores = kernels.pod_affinity_scores(feasible, pairs(e.score), s.state.labels, counts.rows)
    kernels.normalize_pod_affinity_scores(scores)
    return scores.tolist()


def expected_scores(s: AffinityScenario, feasible: np.ndarray,
                    args: InterPodAffinityArgs) -> list[int] | None:
    if reference_skips(s.pod, s.infos, s.namespaces, args):
        return None
    return reference_normalize([reference_score(s.pod, s.infos[i], s.infos, s.namespaces, args)
                                for i in feasible])


@SETTINGS
@given(incoming(), st.sampled_from((InterPodAffinityArgs(), InterPodAffinityArgs(5, False),
                                    InterPodAffinityArgs(0, True))), st.data())
def test_codes_and_scores_match_the_reference(s: AffinityScenario, args: InterPodAffinityArgs,
                                              data: st.DataObject) -> None:
    found = seeded(s, args)
    pre = reference_pre_filter(s.pod, s.infos, s.namespaces)
    assert (found is None) == (pre is not None and not pre.is_skip)
    if found is None:
        return
    counts, e = found
    assert loop_codes(s, counts, e) == expected_codes(s)
    keep = data.draw(st.lists(st.booleans(), min_size=len(s.nodes), max_size=len(s.nodes))
                     .filter(any))
    feasible = s.indices[np.array(keep)]
    want = expected_scores(s, feasible, args)
    if want is not None:
        assert loop_scores(s, counts, e, feasible) == want
    elif e.score:
        assert set(loop_scores(s, counts, e, feasible)) == {0}


@SETTINGS
@given(incoming(), st.data())
def test_rows_after_a_placement_match_the_reference(s: AffinityScenario,
                                                    data: st.DataObject) -> None:
    args = InterPodAffinityArgs()
    node = data.draw(st.integers(0, len(s.nodes) - 1))
    placed = attrs.evolve(data.draw(with_pod_affinity(attrs.evolve(s.pod, name="placed"), 50)),
                          node_name=s.nodes[node].name,
                          labels=data.draw(st.sampled_from((s.pod.labels, {}))))
    found = seeded(s, args, (placed,))
    if found is None:
        return
    counts, e = found
    counts.note_placement(placed, node, s.state)
    after = build_affinity_scenario(s.nodes, s.bound + (placed,), s.pod, s.namespaces)
    if reference_pre_filter(after.pod, after.infos, after.namespaces) is None:
        assert loop_codes(after, counts, e) == expected_codes(after)
    want = expected_scores(after, after.indices, args)
    if want is not None:
        assert loop_scores(after, counts, e, after.indices) == want
