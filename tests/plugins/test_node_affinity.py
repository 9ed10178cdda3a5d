"""NodeAffinity: the kernel path (plugin over a Cycle) against ``reference_*`` per node."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Container, Node, NodeSelectorRequirement, NodeSelectorTerm, Pod
from ksched.api import NodeAffinity as NodeAffinitySpec
from ksched.api import PreferredSchedulingTerm
from ksched.constants import MAX_NODE_SCORE
from ksched.framework.interfaces import PreFilterResult
from ksched.plugins.node_affinity import (
    REASON_CONFLICT,
    REASON_ENFORCED,
    REASON_POD,
    NodeAffinity,
    NodeAffinityArgs,
    reference_filter,
    reference_score,
    term_is_valid,
)
from ksched.status import Code, Status, unresolvable
from tests.strategies import (
    Scenario,
    assert_filter_equal,
    build_scenario,
    node_selector_terms,
    preferred_terms,
    reference_default_normalize,
    scenarios,
)

SETTINGS = settings(max_examples=60, deadline=None)

# ``addedAffinity`` is validated when the profile loads (``NewNodeSelector`` fails on any bad
# term), so only valid terms reach the plugin.
_valid_terms = node_selector_terms.filter(term_is_valid)
added_affinities = st.one_of(
    st.none(),
    st.builds(NodeAffinitySpec,
              required=st.one_of(st.none(), st.lists(_valid_terms, max_size=2).map(tuple)),
              preferred=st.one_of(st.none(), st.lists(
                  preferred_terms.filter(lambda t: term_is_valid(t.preference)),
                  max_size=2).map(tuple))),
)


def _own_preferred(pod: Pod) -> tuple[PreferredSchedulingTerm, ...] | None:
    return pod.node_affinity.preferred if pod.node_affinity else None


def expect_pre_filter_skip(pod: Pod, added: NodeAffinitySpec | None) -> bool:
    """``PreFilter`` Skip: no required affinity, no added selector, no nodeSelector (nil)."""
    required = pod.node_affinity.required if pod.node_affinity else None
    added_required = added.required if added is not None else None
    return required is None and added_required is None and pod.node_selector is None


def expect_pre_score(pod: Pod, added: NodeAffinitySpec | None) -> Code | None:
    """``PreScore``: Error if a counted preferred term fails to parse; Skip without terms.

    The added terms are parsed only when the list is non-empty (``len(terms) != 0``).
    """
    own = _own_preferred(pod)
    if own is not None and not all(term_is_valid(t.preference) for t in own
                                   if t.weight != 0 and (t.preference.match_expressions
                                                         or t.preference.match_fields)):
        return Code.ERROR
    added_terms = added.preferred if added is not None and added.preferred else None
    if own is None and added_terms is None:
        return Code.SKIP
    return None


def check(s: Scenario, added: NodeAffinitySpec | None = None) -> dict[str, object]:
    plugin = NodeAffinity(NodeAffinityArgs(added) if added is not None else None)
    cycle = s.cycle()
    expected = [reference_filter(s.pod, n, added) for n in s.nodes]
    outcome: dict[str, object] = {"expected": expected}

    pre = plugin.pre_filter(cycle)
    if expect_pre_filter_skip(s.pod, added):
        assert pre is not None and pre.is_skip
        assert all(e.is_success for e in expected)
    else:
        assert not (isinstance(pre, Status) and pre.is_skip)
        if isinstance(pre, PreFilterResult):
            # Nodes left out of the PreFilter subset must fail Filter anyway.
            outside = [e for n, e in zip(s.nodes, expected) if n.name not in pre.node_names]
            assert not any(e.is_success for e in outside)
        elif isinstance(pre, Status):
            assert pre == unresolvable(REASON_CONFLICT)
            assert not any(e.is_success for e in expected)
        result = plugin.filter(cycle, s.indices)
        assert_filter_equal(result, expected, s.nodes)
        outcome["passed"] = result.passed

    status = plugin.pre_score(cycle, s.indices)
    want = expect_pre_score(s.pod, added)
    if want is not None:
        assert status is not None and status.code == want, (status, want)
        return outcome
    assert status is None
    raw = plugin.score(cycle, s.indices)
    assert raw.dtype == np.int64
    expected_scores = [reference_score(s.pod, n, added) for n in s.nodes]
    assert raw.tolist() == expected_scores
    normalised = raw.copy()
    plugin.normalize_score(cycle, normalised)
    assert normalised.tolist() == reference_default_normalize(expected_scores, MAX_NODE_SCORE,
                                                              False)
    outcome.update(raw=expected_scores, normalised=normalised.tolist())
    return outcome


@SETTINGS
@given(scenarios(spread=False))
def test_kernel_matches_reference(s: Scenario) -> None:
    check(s)


@SETTINGS
@given(scenarios(spread=False, max_pods=0),
       st.lists(node_selector_terms.filter(lambda t: t.match_expressions or t.match_fields),
                min_size=1, max_size=3))
def test_required_terms_match_reference(s: Scenario, required: list) -> None:
    affinity = s.pod.node_affinity or NodeAffinitySpec()
    pod = attrs.evolve(s.pod, node_selector=None,
                       node_affinity=attrs.evolve(affinity, required=tuple(required)))
    check(attrs.evolve(s, pod=pod))


@SETTINGS
@given(scenarios(spread=False, max_pods=0), st.lists(preferred_terms, min_size=1, max_size=4))
def test_preferred_scores_match_reference(s: Scenario, preferred: list) -> None:
    affinity = s.pod.node_affinity or NodeAffinitySpec()
    pod = attrs.evolve(s.pod, node_affinity=attrs.evolve(affinity, preferred=tuple(preferred)))
    check(attrs.evolve(s, pod=pod))


@SETTINGS
@given(scenarios(max_nodes=6, max_pods=0, spread=False), added_affinities)
def test_kernel_matches_reference_with_added_affinity(s: Scenario,
                                                      added: NodeAffinitySpec | None) -> None:
    check(s, added)


# --------------------------------------------------------------------------- edge cases

NODES = [Node("n0", labels={"zone": "a", "gen": "3"}), Node("n1", labels={"zone": "b", "gen": "x"}),
         Node("n2", labels={"gen": "10"})]


def _pod(**kw: object) -> Pod:
    return Pod("p", containers=[Container("c")], **kw)


def _req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, op, values)


def test_required_without_terms_matches_no_node() -> None:
    out = check(build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(required=()))))
    assert out["passed"].tolist() == [False, False, False]
    assert all(e == unresolvable(REASON_POD) for e in out["expected"])


def test_gt_lt_and_unparsable_label() -> None:
    terms = (NodeSelectorTerm([_req("gen", "Gt", "2")]),)
    out = check(build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(required=terms))))
    assert out["passed"].tolist() == [True, False, True]       # "x" never compares
    terms = (NodeSelectorTerm([_req("gen", "Lt", "-5")]),)        # "-5" is no label value
    out = check(build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(required=terms))))
    assert out["passed"].tolist() == [False, False, False]


def test_match_fields_node_name_subset() -> None:
    terms = (NodeSelectorTerm(match_fields=[_req("metadata.name", "In", "n1")]),
             NodeSelectorTerm([_req("zone", "In", "a")], [_req("metadata.name", "In", "n0")]))
    s = build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(required=terms)))
    assert NodeAffinity().pre_filter(s.cycle()) == PreFilterResult(frozenset({"n0", "n1"}))
    assert check(s)["passed"].tolist() == [True, True, False]


def test_conflicting_node_names() -> None:
    term = NodeSelectorTerm(match_fields=[_req("metadata.name", "In", "n0"),
                                          _req("metadata.name", "In", "n1")])
    s = build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(required=(term,))))
    assert NodeAffinity().pre_filter(s.cycle()) == unresolvable(REASON_CONFLICT)
    check(s)


def test_node_selector_and_enforced_affinity() -> None:
    added = NodeAffinitySpec(required=(NodeSelectorTerm([_req("gen", "Exists")]),))
    pod = _pod(node_selector={"zone": "a"})
    out = check(build_scenario(NODES + [Node("n3")], [], pod), added)
    assert out["passed"].tolist() == [True, False, False, False]
    assert [e.reasons for e in out["expected"]] == [
        (), (REASON_POD,), (REASON_POD,), (REASON_ENFORCED,)]


def test_explicit_empty_node_selector_is_not_skipped() -> None:
    s = build_scenario(NODES, [], _pod(node_selector={}))
    assert NodeAffinity().pre_filter(s.cycle()) is None
    assert check(s)["passed"].tolist() == [True, True, True]


def test_preferred_scores_ties_and_zero_weights() -> None:
    preferred = (PreferredSchedulingTerm(5, NodeSelectorTerm([_req("gen", "Exists")])),
                 PreferredSchedulingTerm(0, NodeSelectorTerm([_req("zone", "In", "a")])),
                 PreferredSchedulingTerm(5, NodeSelectorTerm([_req("zone", "NotIn", "a")])),
                 PreferredSchedulingTerm(7, NodeSelectorTerm()))
    out = check(build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(
        preferred=preferred))))
    assert out["raw"] == [5, 10, 10]
    assert out["normalised"] == [50, 100, 100]


def test_invalid_preferred_term_is_an_error() -> None:
    preferred = (PreferredSchedulingTerm(5, NodeSelectorTerm([_req("gen", "Gt", "x")])),)
    s = build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(preferred=preferred)))
    status = NodeAffinity().pre_score(s.cycle(), s.indices)
    assert status is not None and status.code == Code.ERROR


@pytest.mark.parametrize("preferred, skipped", [(None, True), ((), False)])
def test_pre_score_skip_needs_absent_preferred(preferred: tuple | None, skipped: bool) -> None:
    s = build_scenario(NODES, [], _pod(node_affinity=NodeAffinitySpec(preferred=preferred)))
    status = NodeAffinity().pre_score(s.cycle(), s.indices)
    assert (status is not None and status.is_skip) is skipped
    check(s)


def test_empty_added_preferred_list_is_not_parsed() -> None:
    # Go builds ``addedPrefSchedTerms`` only when ``len(terms) != 0``: an empty added list
    # leaves it nil, so a pod without preferred terms is skipped at PreScore.
    added = NodeAffinitySpec(preferred=())
    s = build_scenario(NODES, [], _pod())
    status = NodeAffinity(NodeAffinityArgs(added)).pre_score(s.cycle(), s.indices)
    assert status is not None and status.is_skip
    check(s, added)
