"""Invalid label selectors and topology keys no node has, in upstream's words.

The cases come from kube-scheduler v1.35's own plugin tests (``interpodaffinity/
filtering_test.go`` ``TestRequiredAffinitySingleNode`` / ``TestRequiredAffinityMultipleNodes``,
``scoring_test.go`` ``TestPreferredAffinity``: same pods, nodes, status codes and messages),
plus variations built the way apimachinery builds the errors (``metav1.LabelSelectorAsSelector``
-> ``labels.NewRequirement`` field errors, aggregated; ``framework.NewPodInfo`` prefixes the
term list). Each runs through the plugin, then through ``schedule_batch`` on both paths (the
compiled loop must hand such pods to the framework), ``explain`` and the simulator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

import ksched
from ksched.api import (
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from ksched.framework.runtime import SchedulingError
from ksched.plugins.inter_pod_affinity import InterPodAffinity
from ksched.plugins.pod_topology_spread import PodTopologySpread
from ksched.profile import default_profile
from ksched.status import Code
from tests.strategies import build_affinity_scenario

# ----------------------------------------------------------------- upstream's builders

#: ``content.IsLabelValue``'s regex message, and ``content.IsLabelKey``'s for the name part.
VALUE_RULE = ("a valid label must be an empty string or consist of alphanumeric characters, "
              "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
              "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
              "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
NAME_RULE = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
BAD = "{{.bad-value.}}"

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = Node("node1", labels={"region": "r1", "zone": "z11"},
             allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})
NODE2 = attrs.evolve(NODE1, name="node2")
NAMESPACES = {"default": {}, "subteam1.team1": {"team": "team1"}}


def _in(key: str, values: Sequence[str], operator: str = "In") -> LabelSelector:
    return LabelSelector(match_expressions=[LabelSelectorRequirement(key, operator, values)])


def make_pod(name: str = "p", labels: dict | None = None, node: str = "",
             namespace: str = "default", affinity: Sequence[PodAffinityTerm] = (),
             anti: Sequence[PodAffinityTerm] = (),
             preferred: Sequence[PodAffinityTerm] = (),
             preferred_anti: Sequence[PodAffinityTerm] = (), **kw: Any) -> Pod:
    """``st.MakePod()`` with ``PodAffinity*`` / ``PodAntiAffinity*`` (preferred terms get
    weight 1, as its ``PodAffinityWithPreferredReq``)."""
    def group(required: Sequence[PodAffinityTerm], weighted: Sequence[PodAffinityTerm]):
        if not required and not weighted:
            return None
        return PodAffinity(required=tuple(required),
                           preferred=tuple(WeightedPodAffinityTerm(1, t) for t in weighted))

    return Pod(name, namespace=namespace, labels=labels or {}, node_name=node,
               containers=[Container("c", requests={"cpu": 100})],
               pod_affinity=group(affinity, preferred),
               pod_anti_affinity=group(anti, preferred_anti), **kw)


def term_in(key: str, topology: str, values: Sequence[str], **kw: Any) -> PodAffinityTerm:
    """``PodAffinityIn(key, topologyKey, values, ...)``'s term."""
    return PodAffinityTerm(topology, _in(key, values), **kw)


def term_exists(key: str, topology: str) -> PodAffinityTerm:
    return PodAffinityTerm(topology, _in(key, (), "Exists"))


# ------------------------------------------------------------------- InterPodAffinity PreFilter

#: (id, incoming pod, the ``parsing pod: ...`` text after the prefix).
PRE_FILTER_CASES = [
    # filtering_test.go: "PodAffinity fails PreFilter with an invalid affinity label syntax"
    ("upstream-invalid-affinity-label-syntax",
     make_pod(labels=POD_LABEL, affinity=[term_in("service", "region", [BAD]),
                                          term_in("service", "node", ["antivirusscan", "value2"])]),
     f'requiredAffinityTerms: values[0][service]: Invalid value: "{BAD}": {VALUE_RULE}'),
    # filtering_test.go: "PodAntiAffinity fails PreFilter with an invalid antiaffinity label
    # syntax" (its pod carries both terms as affinity, so the list named is the same)
    ("upstream-invalid-second-term",
     make_pod(labels=POD_LABEL, affinity=[term_in("service", "region", ["foo"]),
                                          term_in("service", "node", [BAD])]),
     f'requiredAffinityTerms: values[0][service]: Invalid value: "{BAD}": {VALUE_RULE}'),
    ("anti-affinity-invalid-key",
     make_pod(labels=POD_LABEL, anti=[term_in("invalid key", "zone", ["a"])]),
     f'requiredAntiAffinityTerms: key: Invalid value: "invalid key": {NAME_RULE}'),
    ("key-and-value-aggregated",
     make_pod(anti=[term_in("bad key", "zone", ["b v"])]),
     f'requiredAntiAffinityTerms: [key: Invalid value: "bad key": {NAME_RULE}, '
     f'values[0][bad key]: Invalid value: "b v": {VALUE_RULE}]'),
    ("prefix-without-name",
     make_pod(affinity=[term_in("example.com/", "zone", ["a"])]),
     f'requiredAffinityTerms: key: Invalid value: "example.com/": name part must be '
     f"non-empty; {NAME_RULE}"),
    ("value-too-long",
     make_pod(affinity=[term_in("service", "zone", ["v" * 64])]),
     f'requiredAffinityTerms: values[0][service]: Invalid value: "{"v" * 64}": must be no more '
     "than 63 bytes"),
    ("in-without-values",
     make_pod(affinity=[PodAffinityTerm("zone", _in("service", ()))]),
     "requiredAffinityTerms: values: Invalid value: null: for 'in', 'notin' operators, values "
     "set can't be empty"),
    ("exists-with-values",
     make_pod(anti=[PodAffinityTerm("zone", _in("service", ("x",), "Exists"))]),
     'requiredAntiAffinityTerms: values: Invalid value: ["x"]: values set must be empty for '
     "exists and does not exist"),
    ("operator-not-for-label-selectors",
     make_pod(affinity=[PodAffinityTerm("zone", _in("service", ("1",), "Gt"))]),
     'requiredAffinityTerms: "Gt" is not a valid label selector operator'),
    ("match-labels-value",
     make_pod(affinity=[PodAffinityTerm("zone", LabelSelector({"service": "a b"}))]),
     f'requiredAffinityTerms: values[0][service]: Invalid value: "a b": {VALUE_RULE}'),
    ("namespace-selector",
     make_pod(affinity=[term_in("service", "zone", ["securityscan"],
                                namespace_selector=_in("team", [BAD]))]),
     f'requiredAffinityTerms: values[0][team]: Invalid value: "{BAD}": {VALUE_RULE}'),
    ("affinity-and-anti-affinity",
     make_pod(affinity=[term_in("service", "zone", [BAD])],
              anti=[term_in("invalid key", "zone", ["a"])]),
     f'[requiredAffinityTerms: values[0][service]: Invalid value: "{BAD}": {VALUE_RULE}, '
     f'requiredAntiAffinityTerms: key: Invalid value: "invalid key": {NAME_RULE}]'),
    # NewPodInfo parses the preferred terms too: PreFilter fails for them as well.
    ("preferred-term",
     make_pod(preferred=[term_in("security", "region", [BAD])]),
     f'preferredAffinityTerms: values[0][security]: Invalid value: "{BAD}": {VALUE_RULE}'),
]


def _scenario(pod: Pod, nodes: Sequence[Node] = (NODE1,), bound: Sequence[Pod] = ()):
    return build_affinity_scenario(list(nodes), list(bound), pod, NAMESPACES)


def _cluster(nodes: Sequence[Node], bound: Sequence[Pod] = ()) -> ksched.ClusterState:
    return ksched.ClusterState.from_records(list(nodes), list(bound), namespaces=NAMESPACES)


def _reasons(cluster: ksched.ClusterState, pods: Sequence[Pod], **kw: Any) -> list[tuple]:
    """``schedule_batch``'s (node, reason) per pod; both paths must give the same."""
    fast = ksched.schedule_batch(cluster, list(pods), **kw)
    slow = ksched.schedule_batch(cluster, list(pods), fast_path=False, **kw)
    got = [(p.node, p.reason) for p in fast.placements]
    assert got == [(p.node, p.reason) for p in slow.placements]
    return got


@pytest.mark.parametrize("pod, message", [c[1:] for c in PRE_FILTER_CASES],
                         ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter_rejects_invalid_terms_in_upstream_words(pod: Pod, message: str) -> None:
    status = InterPodAffinity().pre_filter(_scenario(pod).cycle())
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == f"parsing pod: {message}"
    fit_error = f"0/2 nodes are available: parsing pod: {message}."
    replicas = [attrs.evolve(pod, name=f"p{i}") for i in range(2)]
    assert _reasons(_cluster([NODE1, NODE2]), replicas) == [(None, fit_error)] * 2
    assert ksched.explain(_cluster([NODE1, NODE2]), pod).message == fit_error
    simulated = ksched.Simulator(_cluster([NODE1, NODE2])).run(
        [ksched.Event(0.0, "create", pod=pod)])
    assert simulated.decisions[0].outcome == "unschedulable"
    assert simulated.decisions[0].reason.startswith(fit_error + " ")


# -------------------------------------------------------------------- InterPodAffinity PreScore

#: scoring_test.go ``TestPreferredAffinity``: "invalid Affinity fails PreScore" and
#: "invalid AntiAffinity fails PreScore" (upstream checks that the Error status contains
#: ``Invalid value: "{{.bad-value.}}"``; here the whole text).
PRE_SCORE_CASES = [
    ("upstream-invalid-affinity", make_pod(preferred=[term_in("security", "region", [BAD])]),
     f'failed to parse pod: preferredAffinityTerms: values[0][security]: Invalid value: '
     f'"{BAD}": {VALUE_RULE}'),
    ("upstream-invalid-anti-affinity",
     make_pod(preferred_anti=[term_in("security", "az", [BAD])]),
     f'failed to parse pod: preferredAntiAffinityTerms: values[0][security]: Invalid value: '
     f'"{BAD}": {VALUE_RULE}'),
]
CHINA = Node("node1", labels={"region": "China"},
             allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})


def _score_only_profile():
    """The default profile with InterPodAffinity at PreScore / Score only, so a pod with
    invalid terms gets that far (upstream's scoring test calls PreScore directly)."""
    profile = default_profile()
    plugins = {point: tuple(n for n in names if n != "InterPodAffinity")
               if point in ("preFilter", "filter") else names
               for point, names in profile.plugins.items()}
    return attrs.evolve(profile, plugins=plugins)


@pytest.mark.parametrize("pod, message", [c[1:] for c in PRE_SCORE_CASES],
                         ids=[c[0] for c in PRE_SCORE_CASES])
def test_pre_score_fails_on_invalid_terms_in_upstream_words(pod: Pod, message: str) -> None:
    nodes = [CHINA, attrs.evolve(CHINA, name="node2")]
    s = _scenario(pod, nodes)
    status = InterPodAffinity().pre_score(s.cycle(), s.indices)
    assert status.code == Code.ERROR and status.message == message
    error = f'running PreScore plugin "InterPodAffinity": {message}'
    profile = _score_only_profile()
    assert _reasons(_cluster(nodes), [pod], profile=profile) == [(None, error)]
    with pytest.raises(SchedulingError) as caught:
        ksched.explain(_cluster(nodes), pod, profile=profile)
    assert str(caught.value) == error


# ----------------------------------------------------- running pods whose terms do not parse


def test_running_pods_invalid_list_is_dropped_and_the_others_apply() -> None:
    """``NodeInfo.AddPod`` ignores the parse error: a running pod whose required
    anti-affinity holds an invalid term has no required anti-affinity at all, while its
    other lists still count."""
    blocking = term_in("service", "region", ["securityscan"])
    dropped = make_pod("b", POD_LABEL2, node="node1",
                       anti=[blocking, term_in("service", "region", [BAD])])
    kept = make_pod("b", POD_LABEL2, node="node1", anti=[blocking],
                    preferred_anti=[term_in("service", "region", [BAD])])
    incoming = make_pod("p", POD_LABEL)
    s = _scenario(incoming, [NODE1], [dropped])
    assert InterPodAffinity().pre_filter(s.cycle()).code == Code.SKIP
    assert _reasons(_cluster([NODE1], [dropped]), [incoming]) == [("node1", "")]
    s = _scenario(incoming, [NODE1], [kept])
    cycle = s.cycle()
    assert InterPodAffinity().pre_filter(cycle) is None
    assert InterPodAffinity().filter(cycle, s.indices).status_at(0).message == (
        "node(s) didn't satisfy existing pods anti-affinity rules")
    assert _reasons(_cluster([NODE1], [kept]), [incoming]) == [(None, (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity "
        "rules."))]


# --------------------------------------------------------- topology keys no node has (upstream)

NODE_A = Node("nodeA", labels={"region": "r1", "zone": "z1", "hostname": "nodeA"},
              allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})
NODE_B = Node("nodeB", labels={"region": "r1", "zone": "z1", "hostname": "nodeB"},
              allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})


def test_existing_anti_affinity_on_an_invalid_topology_key_skips() -> None:
    """filtering_test.go: "Test existing pod's anti-affinity: if an existing pod has a term
    with invalid topologyKey, labelSelector of the term is firstly checked, and then
    topologyKey of the term is also checked": PreFilter Skip, both nodes pass."""
    existing = make_pod("e", node="nodeA", anti=[term_exists("foo", "invalid-node-label")])
    incoming = make_pod("p", {"foo": ""})
    s = _scenario(incoming, [NODE_A, NODE_B], [existing])
    assert InterPodAffinity().pre_filter(s.cycle()).code == Code.SKIP
    cluster = _cluster([NODE_A, NODE_B], [existing])
    placed = _reasons(cluster, [attrs.evolve(incoming, name=f"p{i}") for i in range(4)])
    assert {node for node, _ in placed} == {"nodeA", "nodeB"}  # nodeA is no less eligible


def test_incoming_anti_affinity_checks_the_topology_key() -> None:
    """filtering_test.go: "Test incoming pod's anti-affinity: even if labelSelector matches,
    we still check if topologyKey matches": both nodes pass."""
    existing = make_pod("e", {"foo": ""}, node="nodeA")
    incoming = make_pod("p", anti=[term_exists("foo", "invalid-node-label")])
    s = _scenario(incoming, [NODE_A, NODE_B], [existing])
    cycle = s.cycle()
    assert InterPodAffinity().pre_filter(cycle) is None
    assert InterPodAffinity().filter(cycle, s.indices).passed.tolist() == [True, True]
    cluster = _cluster([NODE_A, NODE_B], [existing])
    assert [node for node, _ in _reasons(cluster, [incoming])] in (["nodeA"], ["nodeB"])


def test_first_pod_of_a_group_needs_the_topology_keys() -> None:
    """filtering_test.go ``TestRequiredAffinityMultipleNodes``: "The first pod of the
    collection can only be scheduled on nodes labelled with the requested topology keys"."""
    incoming = make_pod("p", {"foo": "bar", "service": "securityscan"},
                        affinity=[term_in("foo", "zone", ["bar"]),
                                  term_in("service", "zone", ["securityscan"])])
    existing = make_pod("p1", {"foo": "bar"}, node="nodeA")
    nodes = [Node(n, labels={"zoneLabel": z, "hostname": h},
                  allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})
             for n, z, h in (("nodeA", "az1", "h1"), ("nodeB", "az2", "h2"))]
    s = _scenario(incoming, nodes, [existing])
    cycle = s.cycle()
    assert InterPodAffinity().pre_filter(cycle) is None
    result = InterPodAffinity().filter(cycle, s.indices)
    assert [(result.status_at(i).code, result.status_at(i).message) for i in range(2)] == [
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match pod affinity rules")] * 2
    assert _reasons(_cluster(nodes, [existing]), [incoming]) == [
        (None, "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.")]


# ------------------------------------------------------------- PodTopologySpread's selectors

#: (id, constraint action, selector, where it fails, the status text). Upstream wraps
#: ``LabelSelectorAsSelector``'s error in ``getConstraints`` / ``calPreFilterState`` (hard)
#: and ``initPreScoreState`` / ``PreScore`` (soft); both are Error statuses.
SPREAD_CASES = [
    ("hard-invalid-value", "DoNotSchedule", _in("foo", [BAD]), "PreFilter",
     "get constraints from pod: obtaining pod's hard topology spread constraints: "
     f'values[0][foo]: Invalid value: "{BAD}": {VALUE_RULE}'),
    ("hard-invalid-key", "DoNotSchedule", LabelSelector({"invalid key": "a"}), "PreFilter",
     "get constraints from pod: obtaining pod's hard topology spread constraints: "
     f'key: Invalid value: "invalid key": {NAME_RULE}'),
    ("soft-invalid-value", "ScheduleAnyway", _in("foo", [BAD]), "PreScore",
     "calculating preScoreState: obtaining pod's soft topology spread constraints: "
     f'values[0][foo]: Invalid value: "{BAD}": {VALUE_RULE}'),
    ("soft-empty-in", "ScheduleAnyway", _in("foo", ()), "PreScore",
     "calculating preScoreState: obtaining pod's soft topology spread constraints: "
     "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
]


@pytest.mark.parametrize("action, selector, point, message", [c[1:] for c in SPREAD_CASES],
                         ids=[c[0] for c in SPREAD_CASES])
def test_spread_selectors_fail_in_upstream_words(action: str, selector: LabelSelector,
                                                 point: str, message: str) -> None:
    pod = make_pod(labels={"foo": "bar"}, topology_spread_constraints=(
        TopologySpreadConstraint(1, "zone", action, selector),))
    s = _scenario(pod, [NODE1, NODE2])
    plugin = PodTopologySpread()
    status = plugin.pre_filter(s.cycle()) if point == "PreFilter" else \
        plugin.pre_score(s.cycle(), s.indices)
    assert status.code == Code.ERROR and status.message == message
    error = f'running {point} plugin "PodTopologySpread": {message}'
    assert _reasons(_cluster([NODE1, NODE2]), [pod]) == [(None, error)]
    simulated = ksched.Simulator(_cluster([NODE1, NODE2])).run(
        [ksched.Event(0.0, "create", pod=pod)])
    assert (simulated.decisions[0].outcome, simulated.decisions[0].reason) == (
        "unschedulable", error)
    if point == "PreScore":  # one feasible node: upstream places it without PreScore
        assert _reasons(_cluster([NODE1]), [pod]) == [("node1", "")]


def test_manifest_pods_with_invalid_selectors_are_refused() -> None:
    """A pod manifest with ``{{.bad-value.}}`` in an affinity term is refused as the API
    server's ``ValidatePodAffinityTermSelector`` refuses it on create (only records reach the
    plugins' wording above)."""
    manifest = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "labels": POD_LABEL},
                "spec": {"containers": [{"name": "c", "image": "nginx"}], "affinity": {
                    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchExpressions": [
                            {"key": "service", "operator": "In", "values": [BAD]}]},
                         "topologyKey": "region"}]}}}}
    with pytest.raises(ksched.InvalidObjectError) as info:
        ksched.load_pods([manifest])
    assert str(info.value) == (
        "pod default/p: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        f'[0].labelSelector.matchExpressions[0].values[0]: Invalid value: "{BAD}": {VALUE_RULE}')


@pytest.mark.parametrize("pod", [
    PRE_FILTER_CASES[0][1], PRE_SCORE_CASES[0][1],
    make_pod(topology_spread_constraints=(
        TopologySpreadConstraint(1, "zone", "DoNotSchedule", _in("foo", [BAD])),)),
    make_pod(topology_spread_constraints=(
        TopologySpreadConstraint(1, "zone", "ScheduleAnyway", _in("foo", ())),)),
], ids=["affinity", "preferred", "hard-spread", "soft-spread"])
def test_the_compiled_loop_hands_such_pods_to_the_framework(pod: Pod) -> None:
    """The fused loop models no error path: pods whose selectors do not parse have no class
    there, so every entry point reports the framework's status."""
    from ksched.fused_loop import FusedLoop
    from ksched.framework.runtime import Framework

    state = _scenario(pod, [NODE1, NODE2]).state
    assert FusedLoop(Framework(default_profile()), state).class_of(pod, state) is None
