"""Hypothesis strategies for random but valid clusters, and the helpers the kernel tests share.

Every strategy draws from small pools of label keys and values, taint keys, image names and
resource amounts, so that matches, conflicts, ties and overflows of capacity happen often.
:func:`build_scenario` turns drawn records into the two views the tests compare: the columnar
:class:`~ksched.state.ClusterState` (widened for the incoming pod as the engine's ``Assumer``
does) that the plugins' kernels read, and per-node :class:`~ksched.framework.node_info.NodeInfo`
records built straight from the input lists, which the ``reference_*`` functions read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt
from hypothesis import strategies as st

from ksched.api import (
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Workload,
)
from ksched.constants import (
    CPU,
    EPHEMERAL_STORAGE,
    LABEL_HOSTNAME,
    LABEL_REGION,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    MB,
    MEMORY,
    PODS,
)
from ksched.framework.interfaces import Cycle, FilterResult
from ksched.framework.node_info import NodeInfo
from ksched.state import ClusterState, host_ports
from ksched.status import Status

MI = 1024 * 1024
GI = 1024 * MI
GPU = "nvidia.com/gpu"
FOO = "example.com/foo"
HUGEPAGES = "hugepages-2Mi"
#: An unprefixed, unknown resource name: kube-scheduler drops it from every sum.
UNTRACKED = "foo"

# --------------------------------------------------------------------------- pools

LABEL_POOL: dict[str, tuple[str, ...]] = {
    LABEL_ZONE: ("z1", "z2", "z3", ""),
    LABEL_REGION: ("r1", "r2"),
    LABEL_ZONE_BETA: ("z1", "z9"),
    "disk": ("ssd", "hdd"),
    "gen": ("1", "2", "10", "-3", "+4", "007", "x"),
    "team": ("a", "b", ""),
}
LABEL_KEYS = (LABEL_HOSTNAME, *LABEL_POOL)
TAINT_KEYS = ("k1", "k2", "dedicated")
TAINT_VALUES = ("", "v1", "v2")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_KEYS = ("", "k1", "k2", "dedicated", "node.kubernetes.io/unschedulable", "absent")
TOLERATION_VALUES = ("", "v1", "v2", "zz")
NODE_IMAGES = ("nginx:latest", "nginx:1.25", "redis:7", "busybox:latest", "reg:5000/app",
               "reg:5000/app:latest", "gcr.io/x/y@sha256:abc")
POD_IMAGES = ("nginx", "nginx:latest", "nginx:1.25", "redis", "redis:7", "busybox",
              "reg:5000/app", "gcr.io/x/y@sha256:abc", "unknown:1")
HOST_IPS = ("", "0.0.0.0", "10.0.0.1", "10.0.0.2")
HOST_PORTS = (0, 80, 443, 8080)
PROTOCOLS = ("TCP", "UDP", "SCTP")
POD_LABELS: dict[str, tuple[str, ...]] = {"app": ("web", "db"), "tier": ("fe", "be"),
                                          "team": ("a", "b")}
NAMESPACES = ("default", "default", "default", "other")


_PERCENT = st.integers(0, 99)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``None`` or a draw of ``strategy`` (hypothesis shrinks towards ``None``)."""
    return st.one_of(st.none(), strategy)


def _chance(draw: st.DrawFn, percent: int) -> bool:
    """True in about ``percent`` % of draws."""
    return draw(_PERCENT) < percent


def _subset_dict(pool: dict[str, tuple[str, ...]], percent: int) -> st.SearchStrategy[dict]:
    """Dicts with each key of ``pool`` present in about ``percent`` % of draws.

    Strategies are built once, here: hypothesis validates every new strategy object on its
    first draw, which would dominate the run time if composites built them per draw.
    """
    values = {k: st.sampled_from(v) for k, v in pool.items()}

    @st.composite
    def draw_dict(draw: st.DrawFn) -> dict[str, str]:
        return {k: draw(v) for k, v in values.items() if _chance(draw, percent)}

    return draw_dict()


def _sparse_amounts(amounts: dict[str, st.SearchStrategy[int]], percent: dict[str, int],
                    zero_percent: int = 0) -> st.SearchStrategy[dict[str, int]]:
    """Resource lists: each key present with its probability, sometimes an explicit 0."""

    @st.composite
    def draw_amounts(draw: st.DrawFn) -> dict[str, int]:
        out = {}
        for name, amount in amounts.items():
            if _chance(draw, percent[name]):
                out[name] = 0 if _chance(draw, zero_percent) else draw(amount)
        return out

    return draw_amounts()


# --------------------------------------------------------------------------- nodes

taints = st.builds(Taint, st.sampled_from(TAINT_KEYS), st.sampled_from(TAINT_VALUES),
                   st.sampled_from(TAINT_EFFECTS))
tolerations = st.builds(Toleration, st.sampled_from(TOLERATION_KEYS),
                        st.sampled_from(("", "Equal", "Exists")),
                        st.sampled_from(TOLERATION_VALUES),
                        st.sampled_from(("",) + TAINT_EFFECTS))

#: Allocatable with keys sometimes missing and sometimes an explicit 0.
node_allocatable = _sparse_amounts(
    {CPU: st.integers(0, 16).map(lambda k: k * 500),
     MEMORY: st.integers(0, 32).map(lambda k: k * 512 * MI),
     EPHEMERAL_STORAGE: st.integers(0, 4).map(lambda k: k * GI),
     PODS: st.integers(1, 12),
     GPU: st.integers(0, 4),
     FOO: st.integers(0, 3),
     HUGEPAGES: st.integers(0, 4).map(lambda k: k * 2 * MI)},
    {CPU: 92, MEMORY: 92, PODS: 92, EPHEMERAL_STORAGE: 50, GPU: 40, FOO: 30, HUGEPAGES: 20},
    zero_percent=5)
_node_label_subsets = _subset_dict(LABEL_POOL, 45)
_images = st.lists(st.builds(ContainerImage,
                             st.lists(st.sampled_from(NODE_IMAGES), min_size=1, max_size=2),
                             st.integers(0, 1500).map(lambda k: k * MB)), max_size=3)
_taint_lists = st.lists(taints, max_size=4)


@st.composite
def _nodes(draw: st.DrawFn) -> Node:
    labels = draw(_node_label_subsets)
    if _chance(draw, 85):
        labels[LABEL_HOSTNAME] = "?"  # replaced by the node's name
    return Node(
        name="?",
        labels=labels,
        unschedulable=_chance(draw, 15),
        taints=draw(_taint_lists),
        allocatable=draw(node_allocatable),
        images=draw(_images),
    )


_nodes_strategy = _nodes()


def named_node(node: Node, name: str) -> Node:
    labels = dict(node.labels)
    if LABEL_HOSTNAME in labels:
        labels[LABEL_HOSTNAME] = name
    return attrs.evolve(node, name=name, labels=labels)


def nodes(name: str) -> st.SearchStrategy[Node]:
    """A node: labels (usually with its hostname), taints, allocatable and images."""
    return _nodes_strategy.map(lambda node: named_node(node, name))


# --------------------------------------------------------------------------- pods

#: Container requests: each key present with some probability, sometimes an explicit 0.
requests = _sparse_amounts(
    {CPU: st.integers(0, 20).map(lambda k: k * 50),
     MEMORY: st.integers(0, 8).map(lambda k: k * 128 * MI),
     EPHEMERAL_STORAGE: st.integers(0, 3).map(lambda k: k * GI),
     GPU: st.integers(0, 2),
     FOO: st.integers(0, 2),
     HUGEPAGES: st.integers(0, 2).map(lambda k: k * 2 * MI),
     UNTRACKED: st.integers(0, 3)},
    {CPU: 60, MEMORY: 60, EPHEMERAL_STORAGE: 10, GPU: 8, FOO: 6, HUGEPAGES: 5, UNTRACKED: 8},
    zero_percent=15)

ports = st.builds(ContainerPort, st.just(8000), st.sampled_from(HOST_PORTS),
                  st.sampled_from(PROTOCOLS), st.sampled_from(HOST_IPS))
_port_lists = st.lists(ports, max_size=2)
_pod_images = st.sampled_from(POD_IMAGES)


@st.composite
def containers(draw: st.DrawFn, name: str, sidecars: bool = False) -> Container:
    return Container(
        name=name,
        image=draw(_pod_images),
        requests=draw(requests),
        ports=draw(_port_lists) if _chance(draw, 40) else (),
        restart_policy="Always" if sidecars and _chance(draw, 50) else "",
    )


# Node selector terms ---------------------------------------------------------

_GT_LT_VALUES = st.sampled_from(("0", "1", "2", "5", "10"))
#: Bounds that parse as Go ints but are no valid label values, and one that is not a number.
_BAD_GT_LT_VALUES = st.sampled_from(("-5", "+5", "x"))
_REQ_KEYS = st.sampled_from(LABEL_KEYS + ("gen", "gen", "absent"))
_REQ_OPS = st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
_REQ_VALUES = {key: st.lists(st.sampled_from(LABEL_POOL.get(key, ("n0", "n1", "a", ""))
                                             if key != LABEL_HOSTNAME else
                                             ("n0", "n1", "n2", "n9")),
                             min_size=1, max_size=3)
               for key in LABEL_KEYS + ("absent", "bad key!")}


@st.composite
def node_selector_requirements(draw: st.DrawFn) -> NodeSelectorRequirement:
    """Every operator; rarely an invalid one (bad key, bad bound, wrong value count)."""
    key, op = draw(_REQ_KEYS), draw(_REQ_OPS)
    if op in ("Gt", "Lt") and _chance(draw, 75):
        key = "gen"  # the key with numeric values
    if _chance(draw, 2):
        key = "bad key!"
    if op in ("In", "NotIn"):
        values = draw(_REQ_VALUES[key])
    elif op in ("Exists", "DoesNotExist"):
        values = []
    else:
        values = [draw(_BAD_GT_LT_VALUES if _chance(draw, 5) else _GT_LT_VALUES)]
    if _chance(draw, 3):  # an invalid value count
        values = [] if values else ["1", "2"]
    return NodeSelectorRequirement(key, op, tuple(values))


_FIELD_KEYS = st.sampled_from(("metadata.name", "metadata.name", "metadata.name",
                               "metadata.uid"))
_FIELD_OPS = st.sampled_from(("In", "NotIn"))
_FIELD_NAMES = st.sampled_from([f"n{i}" for i in range(12)] + ["nope", ""])


@st.composite
def field_requirements(draw: st.DrawFn) -> NodeSelectorRequirement:
    """``matchFields``: mostly ``metadata.name In/NotIn [name]``; rarely invalid."""
    op = "Exists" if _chance(draw, 5) else draw(_FIELD_OPS)
    values = [draw(_FIELD_NAMES)]
    if _chance(draw, 8):
        values.append(draw(_FIELD_NAMES))
    return NodeSelectorRequirement(draw(_FIELD_KEYS), op, tuple(values))


node_selector_terms = st.builds(NodeSelectorTerm,
                                st.lists(node_selector_requirements(), max_size=2),
                                st.one_of(st.just(()), st.just(()),
                                          st.lists(field_requirements(), min_size=1,
                                                   max_size=1)))
preferred_terms = st.builds(PreferredSchedulingTerm, st.sampled_from((0, 1, 2, 5, 50, 100)),
                            node_selector_terms)
node_affinities = st.builds(
    NodeAffinity,
    required=_maybe(st.lists(node_selector_terms, max_size=3).map(tuple)),
    preferred=_maybe(st.lists(preferred_terms, max_size=4).map(tuple)),
)


# Topology spread ---------------------------------------------------------------

label_selector_requirements = st.sampled_from(sorted(POD_LABELS)).flatmap(
    lambda key: st.one_of(
        st.builds(LabelSelectorRequirement, st.just(key), st.sampled_from(("In", "NotIn")),
                  st.lists(st.sampled_from(POD_LABELS[key]), min_size=1, max_size=2)),
        st.builds(LabelSelectorRequirement, st.just(key),
                  st.sampled_from(("Exists", "DoesNotExist")), st.just(())),
    ))
_pod_label_subsets = _subset_dict(POD_LABELS, 50)
label_selectors = st.builds(LabelSelector, _pod_label_subsets,
                            st.lists(label_selector_requirements, max_size=2))

spread_constraints = st.builds(
    TopologySpreadConstraint,
    max_skew=st.integers(1, 3),
    # "absent": a key no node has, so the state has no label column for it.
    topology_key=st.sampled_from((LABEL_HOSTNAME, LABEL_ZONE, LABEL_ZONE, "disk", "team",
                                  "absent")),
    when_unsatisfiable=st.sampled_from(("DoNotSchedule", "ScheduleAnyway")),
    label_selector=st.one_of(st.none(), label_selectors, label_selectors, label_selectors),
    min_domains=st.one_of(st.none(), st.none(), st.integers(1, 4)),
    node_affinity_policy=st.sampled_from((None, "Honor", "Ignore")),
    node_taints_policy=st.sampled_from((None, "Honor", "Ignore")),
    match_label_keys=st.lists(st.sampled_from(("app", "tier", "absent")), max_size=2,
                              unique=True),
)
_map_selectors = st.builds(LabelSelector, _pod_label_subsets)
_namespaces = st.sampled_from(NAMESPACES)


@st.composite
def workloads(draw: st.DrawFn) -> tuple[Workload, ...]:
    """Services, a ReplicationController, a ReplicaSet and a StatefulSet."""
    out = [Workload("Service", f"svc{i}", draw(_namespaces), draw(_maybe(_map_selectors)))
           for i in range(draw(st.integers(0, 2)))]
    out.append(Workload("ReplicationController", "rc", "default", draw(_maybe(_map_selectors))))
    out.append(Workload("ReplicaSet", "rs", "default", draw(_maybe(label_selectors))))
    out.append(Workload("StatefulSet", "ss", "default", draw(_maybe(label_selectors))))
    return tuple(out)


controllers = st.sampled_from((
    None, None, ("v1", "ReplicationController", "rc"), ("apps/v1", "ReplicaSet", "rs"),
    ("apps/v1", "StatefulSet", "ss"), ("apps/v1", "Deployment", "rs"),
    ("extensions/v1beta1", "ReplicaSet", "rs"), ("apps/v1", "ReplicaSet", "missing"),
))


# Whole pods --------------------------------------------------------------------

_overheads = st.fixed_dictionaries({CPU: st.integers(0, 4).map(lambda k: k * 50),
                                    MEMORY: st.just(64 * MI)})
_pod_level = st.fixed_dictionaries({}, optional={
    CPU: st.integers(0, 20).map(lambda k: k * 100),
    MEMORY: st.integers(0, 8).map(lambda k: k * 256 * MI)})
_node_selectors = _subset_dict(LABEL_POOL, 12)
_toleration_lists = st.lists(tolerations, max_size=3)
_spread_lists = st.lists(spread_constraints, max_size=3)
_small = st.integers(0, 2)
_containers = [containers(f"c{i}") for i in range(3)]
_init_containers = [containers(f"init{i}", sidecars=True) for i in range(2)]


@st.composite
def _pods(draw: st.DrawFn, name: str = "incoming", scheduling: bool = True) -> Pod:
    """A pod: labels, containers, init containers (some sidecars), overhead, pod-level
    requests, host ports, and with ``scheduling`` also tolerations, node selector and
    affinity, topology spread constraints and a controller."""
    pod = Pod(
        name=name,
        namespace=draw(_namespaces),
        labels=draw(_pod_label_subsets),
        containers=[draw(c) for c in _containers[:1 + draw(_small)]],
        init_containers=[draw(c) for c in _init_containers[:draw(_small)]],
        overhead=draw(_overheads) if _chance(draw, 20) else {},
        pod_requests=draw(_pod_level) if _chance(draw, 15) else None,
    )
    if not scheduling:
        return pod
    return attrs.evolve(
        pod,
        node_selector=draw(_node_selectors) if _chance(draw, 35) else None,
        node_affinity=draw(node_affinities) if _chance(draw, 60) else None,
        tolerations=draw(_toleration_lists),
        topology_spread_constraints=draw(_spread_lists),
        controller=draw(controllers),
    )


_incoming_pods = _pods()
_plain_pods = _pods("bound", scheduling=False)


def pods(name: str = "incoming", scheduling: bool = True) -> st.SearchStrategy[Pod]:
    """A pod: labels, containers, init containers (some sidecars), overhead, pod-level
    requests, host ports, and with ``scheduling`` also tolerations, node selector and
    affinity, topology spread constraints and a controller."""
    base = _incoming_pods if scheduling else _plain_pods
    return base if name == "incoming" else base.map(lambda p: attrs.evolve(p, name=name))


_PHASES = st.sampled_from(("Running",) * 8 + ("Succeeded", "Failed"))


@st.composite
def bound_pods(draw: st.DrawFn, node_names: Sequence[str], max_size: int = 15) -> list[Pod]:
    """Pods already on nodes: some terminating, some terminal (never counted)."""
    where = st.sampled_from(tuple(node_names))
    out = []
    for i in range(draw(st.integers(0, max_size))):
        pod = draw(_plain_pods)
        out.append(attrs.evolve(pod, name=f"b{i}", node_name=draw(where),
                                deleting=_chance(draw, 10), phase=draw(_PHASES)))
    return out


# --------------------------------------------------------------------------- scenarios


@attrs.frozen(eq=False)
class Scenario:
    """A cluster, the incoming pod, and both views of the cluster."""

    nodes: tuple[Node, ...]
    bound: tuple[Pod, ...]
    pod: Pod
    workloads: tuple[Workload, ...]
    state: ClusterState
    infos: tuple[NodeInfo, ...]

    @property
    def indices(self) -> npt.NDArray[np.int64]:
        return np.arange(len(self.nodes), dtype=np.int64)

    def cycle(self) -> Cycle:
        return Cycle(self.state, self.pod)


def build_scenario(nodes: Sequence[Node], bound: Sequence[Pod], pod: Pod,
                   workloads: Sequence[Workload] = ()) -> Scenario:
    """Build the ClusterState (``ClusterState.from_records``, then widened for ``pod``'s
    resources and host ports as the engine's ``Assumer`` does) and, independently, one
    NodeInfo per node from the records (non-terminal pods naming the node)."""
    state = ClusterState.from_records(nodes, bound, objects={"workloads": tuple(workloads)})
    resources = {n for c in pod.containers + pod.init_containers for n in c.requests}
    resources |= set(pod.overhead)
    state = state.widened(resources=sorted(resources), ports=sorted(host_ports(pod)))
    infos = tuple(NodeInfo(node, tuple(p for p in bound
                                       if p.node_name == node.name and not p.terminal))
                  for node in nodes)
    return Scenario(tuple(nodes), tuple(bound), pod, tuple(workloads), state, infos)


@st.composite
def scenarios(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 12, max_pods: int = 15,
              spread: bool = True, with_workloads: bool = False,
              pod_strategy: st.SearchStrategy[Pod] | None = None,
              ) -> Scenario:
    """``min_nodes``-``max_nodes`` nodes named ``n0``, ``n1``, ..., up to ``max_pods`` bound
    pods on them, an incoming pod (``pod_strategy``, by default :func:`pods`; without spread
    constraints unless ``spread``; naming a node in 10 % of draws) and, with
    ``with_workloads``, Services / controllers for PodTopologySpread's default selector."""
    count = draw(st.integers(min_nodes, max_nodes))
    names = [f"n{i}" for i in range(count)]
    node_list = [named_node(draw(_nodes_strategy), name) for name in names]
    bound = draw(bound_pods(names, max_pods))
    pod = draw(pod_strategy if pod_strategy is not None else pods())
    if not spread:
        pod = attrs.evolve(pod, topology_spread_constraints=())
    if _chance(draw, 10):
        pod = attrs.evolve(pod, node_name=draw(st.sampled_from((*names, "nope"))))
    extra = draw(workloads()) if with_workloads else ()
    return build_scenario(node_list, bound, pod, extra)


# --------------------------------------------------------------------------- assertions


def assert_filter_equal(result: FilterResult, expected: Sequence[Status],
                        nodes: Sequence[Node] = (),
                        canonical: Callable[[tuple[str, ...]], tuple[str, ...]] = tuple) -> None:
    """The mask and, on each failing node, the status (code and reasons) match the reference."""
    assert len(result.passed) == len(expected)
    for i, want in enumerate(expected):
        name = nodes[i].name if nodes else i
        got_passed = bool(result.passed[i])
        assert got_passed == want.is_success, (name, got_passed, want)
        if not got_passed:
            got = result.status_at(i)
            assert (got.code, canonical(got.reasons)) == (want.code, canonical(want.reasons)), (
                name, got, want)


def go_div(a: int, b: int) -> int:
    """Go's truncating int64 division."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def reference_default_normalize(scores: Sequence[int], max_priority: int,
                                reverse: bool) -> list[int]:
    """``helper.DefaultNormalizeScore``, written out plainly."""
    max_count = 0
    for s in scores:
        if s > max_count:
            max_count = s
    if max_count == 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    out = []
    for s in scores:
        value = go_div(max_priority * s, max_count)
        out.append(max_priority - value if reverse else value)
    return out


# --------------------------------------------------------------------------- inter-pod affinity

from ksched.api import (  # noqa: E402  (this section was appended; keep the above untouched)
    FrozenDict,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)

#: Namespace objects (name -> labels); ``nowhere`` has none (its labels read as empty).
NAMESPACE_LABELS: dict[str, dict[str, str]] = {
    "default": {"kubernetes.io/metadata.name": "default"},
    "other": {"kubernetes.io/metadata.name": "other", "env": "prod"},
    "third": {"kubernetes.io/metadata.name": "third", "env": "dev", "team": "a"},
}
AFFINITY_NAMESPACES = ("default", "other", "third", "nowhere")
#: Topology keys: present on most nodes, on some, or on none (``absent``).
AFFINITY_TOPOLOGY_KEYS = (LABEL_HOSTNAME, LABEL_ZONE, LABEL_ZONE, "disk", "team", "absent")
#: A requirement ``LabelSelectorAsSelector`` rejects (``In`` with no values).
INVALID_REQUIREMENT = LabelSelectorRequirement("app", "In", ())

_namespace_selectors = st.sampled_from((
    LabelSelector(),
    LabelSelector({"env": "prod"}),
    LabelSelector(match_expressions=[LabelSelectorRequirement("env", "In", ("prod", "dev"))]),
    LabelSelector(match_expressions=[LabelSelectorRequirement("team", "DoesNotExist")]),
    LabelSelector({"kubernetes.io/metadata.name": "default"}),
))
#: Selectors that many pods match (``label_selectors`` rarely match a random pod).
_simple_selectors = st.sampled_from((
    LabelSelector({"app": "web"}), LabelSelector({"app": "db"}), LabelSelector({"tier": "fe"}),
    LabelSelector({"team": "a"}),
    LabelSelector(match_expressions=[LabelSelectorRequirement("app", "Exists")]),
    LabelSelector(match_expressions=[LabelSelectorRequirement("tier", "NotIn", ("be",))]),
))
_term_namespaces = st.lists(st.sampled_from(AFFINITY_NAMESPACES), min_size=1, max_size=2)
_topology_keys = st.sampled_from(AFFINITY_TOPOLOGY_KEYS)
_weights = st.sampled_from((1, 2, 5, 29, 50, 100))


def _rarely(draw: st.DrawFn, percent: int) -> bool:
    """True in about ``percent`` % of draws: hypothesis favours the ends of a range (which
    makes :func:`_chance` with a small percent far likelier than it says), so take a slice
    from its middle."""
    return 40 <= draw(_PERCENT) < 40 + percent


@st.composite
def pod_affinity_terms(draw: st.DrawFn, invalid_percent: int = 2) -> PodAffinityTerm:
    """A term: mostly a small label selector (sometimes none, ``{}`` or rarely an invalid
    one), the pod's own namespace or a list, sometimes a namespace selector (``{}`` too)."""
    roll = draw(_PERCENT)
    if 40 <= roll < 45:
        selector = None
    elif 45 <= roll < 52:
        selector = LabelSelector()
    elif roll < 80:
        selector = draw(_simple_selectors)
    else:
        selector = draw(label_selectors)
    namespaces = draw(_term_namespaces) if _chance(draw, 30) else ()
    ns_selector = draw(_namespace_selectors) if _chance(draw, 30) else None
    if _rarely(draw, invalid_percent):
        if _chance(draw, 50) or selector is None:
            selector = LabelSelector(match_expressions=[INVALID_REQUIREMENT])
        else:
            ns_selector = LabelSelector(match_expressions=[INVALID_REQUIREMENT])
    return PodAffinityTerm(draw(_topology_keys), selector, tuple(namespaces), ns_selector)


_affinity_terms = pod_affinity_terms()
_weighted_terms = st.builds(WeightedPodAffinityTerm, _weights, _affinity_terms)
_some_terms = st.lists(_affinity_terms, min_size=1, max_size=2)
_some_weighted_terms = st.lists(_weighted_terms, min_size=1, max_size=2)
_term_lists = st.one_of(st.just(()), _some_terms, _some_terms)
_weighted_lists = st.one_of(st.just(()), _some_weighted_terms, _some_weighted_terms)
pod_affinities = st.builds(PodAffinity, _term_lists, _weighted_lists)


@st.composite
def with_pod_affinity(draw: st.DrawFn, pod: Pod, percent: int) -> Pod:
    """``pod`` given pod affinity and/or anti-affinity in about ``percent`` % of draws."""
    if not _chance(draw, percent):
        return pod
    affinity = draw(pod_affinities) if _chance(draw, 60) else None
    anti = draw(pod_affinities) if _chance(draw, 60) else None
    return attrs.evolve(pod, pod_affinity=affinity, pod_anti_affinity=anti)


@attrs.frozen(eq=False)
class AffinityScenario(Scenario):
    """A :class:`Scenario` whose cluster also has namespace objects (name -> labels)."""

    namespaces: FrozenDict = attrs.field(factory=FrozenDict)


def build_affinity_scenario(nodes: Sequence[Node], bound: Sequence[Pod], pod: Pod,
                            namespaces: dict[str, dict[str, str]] | None = None
                            ) -> AffinityScenario:
    """:func:`build_scenario` with namespace objects in the ClusterState."""
    namespaces = FrozenDict({k: FrozenDict(v) for k, v in (namespaces or {}).items()})
    s = build_scenario(nodes, bound, pod)
    state = attrs.evolve(s.state, namespaces=namespaces)
    return AffinityScenario(s.nodes, s.bound, s.pod, s.workloads, state, s.infos, namespaces)


_namespace_objects = st.builds(
    lambda keep: {k: v for k, v in NAMESPACE_LABELS.items() if keep.get(k, True)},
    st.fixed_dictionaries({k: st.sampled_from((True, True, True, False))
                           for k in NAMESPACE_LABELS}))
#: Pod namespaces: mostly ``default``, so that default terms (the owner's namespace) match.
_affinity_namespaces = st.sampled_from(("default",) * 6 + ("other", "other", "third", "nowhere"))


@st.composite
def _affinity_nodes(draw: st.DrawFn, name: str) -> Node:
    """A node with labels only (usually its hostname; 10 % have none at all): all
    InterPodAffinity reads of it."""
    if _rarely(draw, 10):
        return Node(name)
    labels = draw(_node_label_subsets)
    if _chance(draw, 85):
        labels[LABEL_HOSTNAME] = name
    return Node(name, labels=labels)


@st.composite
def _affinity_pods(draw: st.DrawFn, name: str, percent: int, node_names: Sequence[str] = ()
                   ) -> Pod:
    """A pod with a namespace, labels and, in ``percent`` % of draws, pod (anti-)affinity;
    with ``node_names``, bound to one of them (10 % terminating)."""
    pod = Pod(name, namespace=draw(_affinity_namespaces), labels=draw(_pod_label_subsets),
              containers=[Container("c")])
    if node_names:
        pod = attrs.evolve(pod, node_name=draw(st.sampled_from(tuple(node_names))),
                           deleting=_rarely(draw, 10))
    return draw(with_pod_affinity(pod, percent))


@st.composite
def affinity_scenarios(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 8,
                       max_pods: int = 12, bound_percent: int = 40,
                       incoming_percent: int = 85) -> AffinityScenario:
    """Nodes (labels only), bound pods (``bound_percent`` % with pod (anti-)affinity, in four
    namespaces, some terminating), namespace objects (each usually present) and an incoming
    pod with pod (anti-)affinity in ``incoming_percent`` % of draws.

    Nodes and pods carry only what InterPodAffinity reads, which keeps the draws small and
    varied."""
    count = draw(st.integers(min_nodes, max_nodes))
    names = [f"n{i}" for i in range(count)]
    node_list = [draw(_affinity_nodes(name)) for name in names]
    bound = [draw(_affinity_pods(f"b{i}", bound_percent, names))
             for i in range(draw(st.integers(0, max_pods)))]
    pod = draw(_affinity_pods("incoming", incoming_percent))
    return build_affinity_scenario(node_list, bound, pod, draw(_namespace_objects))


@st.composite
def placement_clusters(draw: st.DrawFn, min_nodes: int = 2, max_nodes: int = 8,
                       max_pods: int = 10) -> tuple[ClusterState, Pod]:
    """A cluster whose nodes have room for many small pods and carry only labels (often
    lacking a topology key; the keys ``absent`` no node has), bound pods with their own
    (anti-)affinity, namespace objects, and a small pod with topology spread constraints
    and pod (anti-)affinity: most draws place several replicas, so whole batches can be
    compared between the compiled loop and the framework."""
    count = draw(st.integers(min_nodes, max_nodes))
    names = [f"n{i}" for i in range(count)]
    node_list = [attrs.evolve(draw(_affinity_nodes(name)),
                              allocatable={CPU: 4000, MEMORY: 8 * GI, PODS: 20})
                 for name in names]
    bound = [draw(_affinity_pods(f"b{i}", 40, names))
             for i in range(draw(st.integers(0, max_pods)))]
    pod = attrs.evolve(draw(_affinity_pods("incoming", 50)),
                       containers=[Container("c", requests={CPU: 100})],
                       topology_spread_constraints=draw(_spread_lists))
    namespaces = {k: dict(v) for k, v in draw(_namespace_objects).items()}
    return ClusterState.from_records(node_list, bound, namespaces=namespaces), pod
