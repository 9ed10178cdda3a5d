"""InterPodAffinity: the plugin over a Cycle against the per-node ``reference_*`` functions
(``inter_pod_affinity.reference_filter`` / ``reference_score`` / ``reference_normalize``)."""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import (
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from ksched.constants import LABEL_HOSTNAME, LABEL_ZONE
from ksched.plugins.inter_pod_affinity import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
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
from ksched.status import Code, unresolvable, unschedulable
from tests.strategies import (
    NAMESPACE_LABELS,
    AffinityScenario,
    affinity_scenarios,
    assert_filter_equal,
    build_affinity_scenario,
    pod_affinity_terms,
)

SETTINGS = settings(max_examples=400, deadline=None)

affinity_args = st.builds(InterPodAffinityArgs, st.sampled_from((1, 1, 0, 5, 100)),
                          st.sampled_from((False, False, True)))


def check_filter(s: AffinityScenario) -> list[bool] | None:
    """Compare PreFilter's outcome and every node's Filter status; the mask, or ``None`` when
    PreFilter skipped or rejected the pod."""
    plugin = InterPodAffinity()
    cycle = s.cycle()
    pre = plugin.pre_filter(cycle)
    want_pre = reference_pre_filter(s.pod, s.infos, s.namespaces)
    if want_pre is not None:
        assert pre is not None and (pre.code, pre.reasons) == (want_pre.code, want_pre.reasons)
        return None
    assert pre is None
    expected = [reference_filter(s.pod, info, s.infos, s.namespaces) for info in s.infos]
    result = plugin.filter(cycle, s.indices)
    assert_filter_equal(result, expected, s.nodes)
    return result.passed.tolist()


def check_score(s: AffinityScenario, feasible: np.ndarray,
                args: InterPodAffinityArgs = InterPodAffinityArgs()
                ) -> tuple[list[int], list[int]] | None:
    """Compare PreScore's Skip, raw and normalised scores over ``feasible`` node indices."""
    plugin = InterPodAffinity(args)
    cycle = s.cycle()
    status = plugin.pre_score(cycle, feasible)
    if reference_skips(s.pod, s.infos, s.namespaces, args):
        assert status is not None and status.is_skip
        return None
    assert status is None
    raw = plugin.score(cycle, feasible)
    assert raw.dtype == np.int64
    expected = [reference_score(s.pod, s.infos[i], s.infos, s.namespaces, args)
                for i in feasible]
    assert raw.tolist() == expected
    normalised = raw.copy()
    plugin.normalize_score(cycle, normalised)
    want = reference_normalize(expected)
    assert normalised.tolist() == want
    assert all(0 <= v <= 100 for v in want)
    return expected, want


def _valid(s: AffinityScenario) -> bool:
    """PreFilter would not reject the pod (a parse error stops the cycle before scoring)."""
    pre = reference_pre_filter(s.pod, s.infos, s.namespaces)
    return pre is None or pre.is_skip


_required_terms = st.lists(pod_affinity_terms(), min_size=1, max_size=2)
_preferred_terms = st.lists(st.builds(WeightedPodAffinityTerm, st.sampled_from((1, 3, 29, 100)),
                                      pod_affinity_terms()), min_size=1, max_size=3)
_which = st.sampled_from(("affinity", "anti", "both", "neither"))


@st.composite
def filter_scenarios(draw: st.DrawFn) -> AffinityScenario:
    """An incoming pod with required affinity, anti-affinity, both or neither (then the
    running pods' anti-affinity is all there is to check), over running pods that often
    have terms of their own."""
    s = draw(affinity_scenarios(bound_percent=60, incoming_percent=0))
    which = draw(_which)
    affinity = PodAffinity(draw(_required_terms)) if which in ("affinity", "both") else None
    anti = PodAffinity(draw(_required_terms)) if which in ("anti", "both") else None
    pod = attrs.evolve(s.pod, pod_affinity=affinity, pod_anti_affinity=anti)
    return build_affinity_scenario(s.nodes, s.bound, pod, s.namespaces)


@st.composite
def score_scenarios(draw: st.DrawFn) -> AffinityScenario:
    """An incoming pod with preferred affinity, anti-affinity, both or neither (then only the
    running pods' terms score), at least two nodes."""
    s = draw(affinity_scenarios(min_nodes=2, bound_percent=70, incoming_percent=0))
    which = draw(_which)
    affinity = (PodAffinity(preferred=draw(_preferred_terms))
                if which in ("affinity", "both") else None)
    anti = (PodAffinity(preferred=draw(_preferred_terms))
            if which in ("anti", "both") else None)
    pod = attrs.evolve(s.pod, pod_affinity=affinity, pod_anti_affinity=anti)
    return build_affinity_scenario(s.nodes, s.bound, pod, s.namespaces)


@SETTINGS
@given(filter_scenarios())
def test_filter_matches_reference(s: AffinityScenario) -> None:
    check_filter(s)


@SETTINGS
@given(score_scenarios().filter(_valid), affinity_args, st.data())
def test_score_matches_reference(s: AffinityScenario, args: InterPodAffinityArgs,
                                 data: st.DataObject) -> None:
    # PreScore sees only the feasible nodes; the accumulation still walks every node.
    keep = data.draw(st.lists(st.booleans(), min_size=len(s.nodes), max_size=len(s.nodes))
                     .filter(any))
    check_score(s, s.indices[np.array(keep)], args)


# --------------------------------------------------------------------------- edge cases


def _node(name: str, zone: str | None = None, **labels: str) -> Node:
    node_labels = {LABEL_HOSTNAME: name, **labels}
    if zone is not None:
        node_labels[LABEL_ZONE] = zone
    return Node(name, labels=node_labels)


def _pod(name: str, node: str = "", labels: dict | None = None, namespace: str = "default",
         affinity: PodAffinity | None = None, anti: PodAffinity | None = None,
         **kw: object) -> Pod:
    return Pod(name, namespace=namespace, node_name=node, labels=labels or {},
               containers=[Container("c")], pod_affinity=affinity, pod_anti_affinity=anti,
               **kw)


def _term(key: str = LABEL_ZONE, selector: LabelSelector | None = None,
          **kw: object) -> PodAffinityTerm:
    return PodAffinityTerm(key, selector if selector is not None else DB, **kw)


def _required(*terms: PodAffinityTerm) -> PodAffinity:
    return PodAffinity(required=terms)


def _preferred(*weighted: tuple[int, PodAffinityTerm]) -> PodAffinity:
    return PodAffinity(preferred=[WeightedPodAffinityTerm(w, t) for w, t in weighted])


DB = LabelSelector({"app": "db"})
WEB = {"app": "web"}
NODES = [_node("a", "z1"), _node("b", "z1"), _node("c", "z2"), _node("d")]


def _scenario(bound: list[Pod], pod: Pod, nodes: list[Node] = NODES,
              namespaces: dict | None = None) -> AffinityScenario:
    return build_affinity_scenario(nodes, bound, pod,
                                   NAMESPACE_LABELS if namespaces is None else namespaces)


def _statuses(s: AffinityScenario) -> list:
    result = InterPodAffinity().filter(s.cycle(), s.indices)
    return [None if result.passed[i] else result.status_at(i) for i in range(len(s.nodes))]


def test_affinity_follows_the_matching_pod_and_needs_the_key() -> None:
    bound = [_pod("db", "b", {"app": "db"})]
    s = _scenario(bound, _pod("p", affinity=_required(_term())))
    assert check_filter(s) == [True, True, False, False]
    assert _statuses(s)[2] == unresolvable(REASON_AFFINITY)
    assert _statuses(s)[3] == unresolvable(REASON_AFFINITY)


def test_first_pod_of_a_self_affine_group() -> None:
    # No pod matches: a pod matching its own terms may go to any node with the keys ...
    pod = _pod("p", labels={"app": "db"}, affinity=_required(_term()))
    assert check_filter(_scenario([], pod)) == [True, True, True, False]
    # ... one that does not match them goes nowhere ...
    pod = _pod("p", labels=WEB, affinity=_required(_term()))
    assert check_filter(_scenario([], pod)) == [False] * 4
    # ... and once a matching pod runs, only its domain will do.
    pod = _pod("p", labels={"app": "db"}, affinity=_required(_term()))
    assert check_filter(_scenario([_pod("db", "c", {"app": "db"})], pod)) == [
        False, False, True, False]


def test_matching_pod_on_a_node_without_the_key_still_counts_as_existing() -> None:
    # The only matching pod runs on d, which has no zone label: affinityCounts is empty,
    # so the self-affinity rule applies even though a pod matches.
    pod = _pod("p", labels={"app": "db"}, affinity=_required(_term()))
    s = _scenario([_pod("db", "d", {"app": "db"})], pod)
    assert check_filter(s) == [True, True, True, False]


def test_affinity_pod_must_match_all_terms() -> None:
    terms = _required(_term(), _term(LABEL_HOSTNAME, LabelSelector({"tier": "be"})))
    bound = [_pod("db", "a", {"app": "db"}), _pod("be", "b", {"tier": "be"}),
             _pod("both", "c", {"app": "db", "tier": "be"})]
    assert check_filter(_scenario(bound, _pod("p", affinity=terms))) == [
        False, False, True, False]


def test_anti_affinity_and_reason_order() -> None:
    bound = [_pod("db", "a", {"app": "db"})]
    s = _scenario(bound, _pod("p", anti=_required(_term())))
    assert check_filter(s) == [False, False, True, True]
    assert _statuses(s)[0] == unschedulable(REASON_ANTI_AFFINITY)
    # Failing both affinity and anti-affinity reads as the affinity failure.
    pod = _pod("p", affinity=_required(_term(LABEL_HOSTNAME, LabelSelector({"x": "y"}))),
               anti=_required(_term()))
    s = _scenario(bound, pod)
    assert check_filter(s) == [False] * 4
    assert _statuses(s)[0] == unresolvable(REASON_AFFINITY)


def test_existing_pods_anti_affinity_is_symmetric() -> None:
    bound = [_pod("db", "a", {"app": "db"}, anti=_required(_term(selector=LabelSelector(WEB))))]
    s = _scenario(bound, _pod("p", labels=WEB))
    assert InterPodAffinity().pre_filter(s.cycle()) is None
    assert check_filter(s) == [False, False, True, True]
    assert _statuses(s)[1] == unschedulable(REASON_EXISTING_ANTI_AFFINITY)
    # A pod the term does not match: nothing to check, PreFilter skips.
    s = _scenario(bound, _pod("p", labels={"app": "other"}))
    assert InterPodAffinity().pre_filter(s.cycle()).is_skip
    assert check_filter(s) is None


def test_terminating_pods_count() -> None:
    bound = [_pod("db", "c", {"app": "db"}, deleting=True)]
    s = _scenario(bound, _pod("p", anti=_required(_term())))
    assert check_filter(s) == [True, True, False, True]


def test_namespaces_and_namespace_selectors() -> None:
    bound = [_pod("db", "a", {"app": "db"}, namespace="other")]
    # By default a term covers only the pod's own namespace.
    assert check_filter(_scenario(bound, _pod("p", anti=_required(_term())))) == [True] * 4
    # A namespace list, a selector resolved against the namespace objects, and {}.
    for term in (_term(namespaces=("other",)),
                 _term(namespace_selector=LabelSelector({"env": "prod"})),
                 _term(namespace_selector=LabelSelector())):
        s = _scenario(bound, _pod("p", anti=_required(term)))
        assert check_filter(s) == [False, False, True, True], term
    # Without the namespace object the selector selects nothing; {} still selects all.
    missing = {"default": NAMESPACE_LABELS["default"]}
    s = _scenario(bound, _pod("p", anti=_required(
        _term(namespace_selector=LabelSelector({"env": "prod"})))), namespaces=missing)
    assert check_filter(s) == [True] * 4
    s = _scenario(bound, _pod("p", anti=_required(
        _term(namespace_selector=LabelSelector()))), namespaces=missing)
    assert check_filter(s) == [False, False, True, True]


def test_existing_pods_namespace_selector_reads_the_incoming_namespace_labels() -> None:
    term = _term(selector=LabelSelector(WEB), namespace_selector=LabelSelector({"env": "prod"}))
    bound = [_pod("db", "a", {"app": "db"}, anti=_required(term))]
    s = _scenario(bound, _pod("p", labels=WEB, namespace="other"))
    assert check_filter(s) == [False, False, True, True]
    s = _scenario(bound, _pod("p", labels=WEB, namespace="other"),
                  namespaces={"default": {}})
    assert check_filter(s) is None  # other's labels are unknown: the term matches nothing


def test_invalid_selectors() -> None:
    bad = LabelSelector(match_expressions=[LabelSelectorRequirement("app", "In", ())])
    pod = _pod("p", affinity=_required(_term(selector=bad)))
    s = _scenario([], pod)
    status = InterPodAffinity().pre_filter(s.cycle())
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == ("parsing pod: requiredAffinityTerms: values: Invalid value: "
                              "null: for 'in', 'notin' operators, values set can't be empty")
    assert check_filter(s) is None
    # A running pod's invalid list is dropped; its other lists still apply.
    other = _pod("db", "a", {"app": "db"}, anti=PodAffinity(
        required=[_term(selector=LabelSelector(WEB))],
        preferred=[WeightedPodAffinityTerm(1, _term(selector=bad))]))
    assert check_filter(_scenario([other], _pod("p", labels=WEB))) == [False, False, True, True]
    other = _pod("db", "a", {"app": "db"}, anti=PodAffinity(
        required=[_term(selector=LabelSelector(WEB)), _term(selector=bad)]))
    s = _scenario([other], _pod("p", labels=WEB))
    assert check_filter(s) is None


def test_no_label_selector_matches_nothing_and_empty_matches_all() -> None:
    bound = [_pod("db", "a", {"app": "db"}), _pod("x", "c")]
    pod = _pod("p", anti=_required(PodAffinityTerm(LABEL_ZONE, None)))
    assert check_filter(_scenario(bound, pod)) == [True] * 4
    pod = _pod("p", anti=_required(PodAffinityTerm(LABEL_ZONE, LabelSelector())))
    assert check_filter(_scenario(bound, pod)) == [False, False, False, True]


def test_score_preferred_terms_and_float_truncation() -> None:
    # Raw scores 100 on a, 29 on b, 0 on c: 100 * (29 / 100) is 28.999999999999996 -> 28.
    bound = [_pod("db", "a", {"app": "db"}), _pod("web", "b", WEB)]
    pod = _pod("p", affinity=_preferred((100, _term(LABEL_HOSTNAME)),
                                        (29, _term(LABEL_HOSTNAME, LabelSelector(WEB)))))
    s = _scenario(bound, pod)
    raw, normalised = check_score(s, s.indices[:3])
    assert raw == [100, 29, 0]
    assert normalised == [100, 28, 0]


def test_score_anti_affinity_goes_negative() -> None:
    bound = [_pod("db", "a", {"app": "db"})]
    pod = _pod("p", anti=_preferred((10, _term())))
    s = _scenario(bound, pod)
    raw, normalised = check_score(s, s.indices)
    assert raw == [-10, -10, 0, 0]
    assert normalised == [0, 0, 100, 100]


def test_score_existing_pods_terms_and_hard_weight() -> None:
    web = LabelSelector(WEB)
    bound = [_pod("db", "a", {"app": "db"}, affinity=PodAffinity(
        required=[_term(LABEL_HOSTNAME, web)], preferred=[
            WeightedPodAffinityTerm(7, _term(selector=web))])),
             _pod("x", "c", anti=_preferred((3, _term(LABEL_HOSTNAME, web))))]
    s = _scenario(bound, _pod("p", labels=WEB))
    assert check_score(s, s.indices) == ([8, 7, -3, 0], [100, 90, 0, 27])
    s = _scenario(bound, _pod("p", labels=WEB))
    assert check_score(s, s.indices, InterPodAffinityArgs(hard_pod_affinity_weight=0)) == (
        [7, 7, -3, 0], [100, 100, 0, 30])
    # ignorePreferredTermsOfExistingPods: a pod without preferred terms skips.
    assert check_score(s, s.indices, InterPodAffinityArgs(
        ignore_preferred_terms_of_existing_pods=True)) is None


def test_score_skips_without_contributions_and_equal_scores_give_zero() -> None:
    bound = [_pod("db", "a", {"app": "db"})]
    s = _scenario(bound, _pod("p", affinity=_preferred((5, _term(selector=LabelSelector(WEB))))))
    assert check_score(s, s.indices) is None
    assert InterPodAffinity().pre_score(s.cycle(), s.indices).is_skip
    # Only a and b are feasible, both in z1: equal scores normalise to 0.
    s = _scenario(bound, _pod("p", affinity=_preferred((5, _term()))))
    assert check_score(s, s.indices[:2]) == ([5, 5], [0, 0])


def test_score_ignores_pods_on_unlabelled_nodes() -> None:
    nodes = NODES + [Node("bare")]
    bound = [_pod("db", "bare", {"app": "db"}, affinity=_preferred(
        (4, _term(selector=LabelSelector())))), _pod("db2", "c", {"app": "db"})]
    pod = _pod("p", affinity=_preferred((5, _term())))
    s = _scenario(bound, pod, nodes=nodes)
    assert check_score(s, s.indices) == ([0, 0, 5, 0, 0], [0, 0, 100, 0, 0])
