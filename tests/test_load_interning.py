"""Loading reads the parts that pods and nodes repeat once (:class:`ksched.api.ManifestMemo`):
the records and the errors are those of reading every manifest afresh.

Pods of one template differ in their names, node names and volumes; a remembered spec comes
back only for a spec that reads alike in everything :func:`~ksched.api.pods.read_pod_spec`
reads, and never when the pod's labels or uid reach its spec (``matchLabelKeys``). These tests draw
manifests that share templates and differ in one field the shared parts depend on
(``hostNetwork``, limits or requests, pod-level resources, labels, uid), valid and not, and
compare the memo's answers with a fresh read of each manifest, record by record and error by
error.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import InvalidObjectError, Node, Pod
from ksched.api import ManifestMemo, ManifestReader
from ksched.api.kinds import NODE_PARTS as _NODE_PARTS
from ksched.api.kinds import read_node_parts as _node_parts
from ksched.api.pods import CONTAINER_KEYS as _CONTAINER_KEYS
from ksched.api.pods import POD_SPEC_KEYS as _POD_SPEC_KEYS
from ksched.api.pods import read_pod_spec as _pod_spec
from ksched.io import admit_priorities, read_objects

ABSENT = object()


@attrs.frozen
class Bad:
    """A value of a pool that makes the manifest invalid (drawn rarely)."""

    value: Any

# --------------------------------------------------------------------------- pools

_APP = {"name": "app", "image": "nginx", "ports": [{"containerPort": 80}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
CONTAINERS = [
    _APP,
    {**_APP, "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}},  # requests default
    {**_APP, "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}}},
    {**_APP, "resources": {"requests": {"cpu": 1}}},
    {**_APP, "resources": {"requests": {"cpu": 1.0}}},
    {**_APP, "volumeMounts": [{"name": "kube-api-access-x1", "mountPath": "/x"}]},  # unread
    {"name": "proxy", "ports": [{"containerPort": 9000, "hostPort": 9000}]},
    {"name": "proxy", "ports": [{"containerPort": 9000, "hostPort": 9001}]},  # not hostNetwork
    {"name": "gpu", "resources": {"limits": {"nvidia.com/gpu": "1"}}},
    Bad({"name": "app", "resources": {"requests": {"cpu": "1.5.0"}}}),
    Bad({"name": "app", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}),
    Bad({"name": "Bad_Name"}),
    Bad({"name": "app", "ports": [{"containerPort": "80"}]}),
]
INIT_CONTAINERS = [
    ABSENT, ABSENT, ABSENT, ABSENT,
    [{"name": "init", "restartPolicy": "Always", "ports": [{"containerPort": 80}]}],
    [{"name": "init", "resources": {"limits": {"memory": "1Gi"}}}],
    [{"name": "app"}],  # a name the app container may have
    Bad([{"name": "init", "restartPolicy": "Sometimes"}]),
]
POD_RESOURCES = [
    ABSENT, ABSENT, ABSENT, ABSENT,
    {"limits": {"cpu": "2", "memory": "1Gi"}},
    {"requests": {"cpu": "100m"}},  # below the containers' aggregate when they request more
    {"requests": {"cpu": "4"}},
    Bad({"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}),
    {"limits": {"hugepages-2Mi": "2Mi", "memory": "1Gi"}},
]
_SELECT_APP = {"matchLabels": {"app": "web"}}
AFFINITIES = [
    ABSENT, ABSENT,
    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchLabels": {"tier": "fe"}},
         "matchLabelKeys": ["app"]}]}},
    {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": _SELECT_APP,
                                           "mismatchLabelKeys": ["app"]}}]}},
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": _SELECT_APP}]}},
    {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}},
    {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}},
    Bad({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": []}}}),
    Bad({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "", "labelSelector": _SELECT_APP}]}}),
]
SPREAD = [
    ABSENT, ABSENT, ABSENT, ABSENT,
    # labels-dependent: with no uid and an "app" label, the merged key counts twice
    [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
      "labelSelector": _SELECT_APP, "matchLabelKeys": ["app"]}],
    [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
      "labelSelector": {"matchLabels": {"tier": "fe"}}, "matchLabelKeys": ["app"]}],
    [{"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
      "labelSelector": _SELECT_APP}],
    Bad([{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
]
TOLERATIONS = [
    ABSENT,
    [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
      "tolerationSeconds": 300}],
    [{"key": "dedicated", "operator": "Equal", "value": "batch"}],
    Bad([{"operator": "Equal", "value": "x"}]),  # no key: must be Exists
]
SPEC_SCALARS: dict[str, list[Any]] = {
    "hostNetwork": [ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, True, False, Bad("yes")],
    "priority": [ABSENT, ABSENT, 0, 5, Bad(2**31), Bad("high")],
    "preemptionPolicy": [ABSENT, ABSENT, "Never", Bad("Sometimes")],
    "schedulerName": [ABSENT, ABSENT, "my-scheduler", Bad("Bad_Scheduler")],
    "priorityClassName": [ABSENT, ABSENT, "system-node-critical", Bad("Bad_Class")],
    "nodeSelector": [ABSENT, ABSENT, None, {}, {"zone": "a"}, Bad({"zone": "bad value!"})],
    "overhead": [ABSENT, ABSENT, {"cpu": "10m"}, Bad({"cpu": "-1"})],
    "schedulingGates": [ABSENT, ABSENT, [{"name": "example.com/gate"}],
                        Bad([{"name": "a b"}])],
    "resourceClaims": [ABSENT, ABSENT, [{"name": "gpu", "resourceClaimName": "gpu"}],
                       Bad([{"name": 3}]), Bad([{"name": "gpu"}])],
}
PRIORITIES = [0, 1, None]
# per pod
NAMES = ["web-1", "web-2", "web-3", "web-4", Bad("Bad_Pod")]
NAMESPACES = [ABSENT, "default", "team-a", Bad("Bad_NS")]
LABELS = [ABSENT, {}, {"app": "web"}, {"app": "web", "tier": "fe"}, {"app": "db"},
          Bad({"app": "bad value!"}), Bad({"app": 3}), Bad({"bad key!": "web"})]
UIDS = [ABSENT, ABSENT, "u1", "u2", Bad(7)]
OWNERS = [ABSENT, [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                    "uid": "rs", "controller": True}],
          [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}],
          Bad([{"controller": "yes"}])]
TIMES = [ABSENT, ABSENT, "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.5+01:00",
         Bad("yesterday")]
NODE_NAMES = [ABSENT, "n1", "n2", Bad("Bad_Node")]
VOLUMES = [ABSENT, [{"name": "kube-api-access-x1", "projected": {}}],
           [{"name": "kube-api-access-x2", "projected": {}}],
           [{"name": "data", "persistentVolumeClaim": {"claimName": "c1"}}],
           Bad([{"name": "data", "persistentVolumeClaim": {"claimName": 5}}])]
PHASES = [ABSENT, "Running", "Pending", Bad(1)]
CONDITIONS = [ABSENT, [{"type": "Ready", "status": "True"}], [{"type": "Ready"}], Bad("ready")]

#: The chance (in percent) that a field takes one of its pool's invalid values.
BAD_PERCENT = 1
_PERCENT = st.integers(0, 99)
_STRATEGIES: dict[int, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any] | None]] = {}


def _pick(draw: st.DrawFn, pool: list[Any]) -> Any:
    """A value of ``pool``: an invalid one (:class:`Bad`) now and then."""
    if id(pool) not in _STRATEGIES:  # strategies built once: hypothesis checks each new one
        bad = [v.value for v in pool if isinstance(v, Bad)]
        _STRATEGIES[id(pool)] = (st.sampled_from([v for v in pool if not isinstance(v, Bad)]),
                                 st.sampled_from(bad) if bad else None)
    good, bad = _STRATEGIES[id(pool)]
    if bad is not None and draw(_PERCENT) < BAD_PERCENT:
        return draw(bad)
    return draw(good)


def _put(out: dict, key: str, value: Any) -> None:
    if value is not ABSENT:
        out[key] = value
    else:
        out.pop(key, None)


@st.composite
def pod_specs(draw: st.DrawFn) -> dict[str, Any]:
    """A pod template's spec (without nodeName and volumes)."""
    spec: dict[str, Any] = {}
    spec["containers"] = [_pick(draw, CONTAINERS) for _ in range(draw(st.integers(1, 2)))]
    if len(spec["containers"]) == 2 and draw(_PERCENT) >= BAD_PERCENT:  # else: one name twice
        spec["containers"][1] = {**spec["containers"][1], "name": "second"}
    _put(spec, "initContainers", _pick(draw, INIT_CONTAINERS))
    _put(spec, "resources", _pick(draw, POD_RESOURCES))
    _put(spec, "affinity", _pick(draw, AFFINITIES))
    _put(spec, "topologySpreadConstraints", _pick(draw, SPREAD))
    _put(spec, "tolerations", _pick(draw, TOLERATIONS))
    for key, pool in SPEC_SCALARS.items():
        _put(spec, key, _pick(draw, pool))
    return spec


_CHANGES = st.sampled_from([None] * 7 + ["hostNetwork", "containers", "resources",
                                         "initContainers", "topologySpreadConstraints",
                                         "priority", "affinity", "affinity"])


@st.composite
def variants(draw: st.DrawFn, spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` as it is (mostly), or with one field changed."""
    change = draw(_CHANGES)
    spec = dict(spec)
    if change == "hostNetwork":
        spec["hostNetwork"] = not spec.get("hostNetwork")
    elif change == "containers":
        spec["containers"] = [_pick(draw, CONTAINERS)] + spec["containers"][1:]
    elif change == "resources":
        _put(spec, "resources", _pick(draw, POD_RESOURCES))
    elif change == "initContainers":
        _put(spec, "initContainers", _pick(draw, INIT_CONTAINERS))
    elif change == "topologySpreadConstraints":
        _put(spec, "topologySpreadConstraints", _pick(draw, SPREAD))
    elif change == "affinity":
        _put(spec, "affinity", _pick(draw, AFFINITIES))
    elif change == "priority":
        spec["priority"] = _pick(draw, PRIORITIES)
    return spec


@st.composite
def pod_manifests(draw: st.DrawFn, templates: list[dict[str, Any]]) -> dict[str, Any]:
    spec = draw(variants(draw(st.sampled_from(templates))))
    _put(spec, "nodeName", _pick(draw, NODE_NAMES))
    _put(spec, "volumes", _pick(draw, VOLUMES))
    meta: dict[str, Any] = {"name": _pick(draw, NAMES)}
    for key, pool in (("namespace", NAMESPACES), ("labels", LABELS), ("uid", UIDS),
                      ("ownerReferences", OWNERS), ("creationTimestamp", TIMES)):
        _put(meta, key, _pick(draw, pool))
    status: dict[str, Any] = {}
    for key, pool in (("phase", PHASES), ("startTime", TIMES), ("conditions", CONDITIONS)):
        _put(status, key, _pick(draw, pool))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": status}


@st.composite
def pod_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    templates = draw(st.lists(pod_specs(), min_size=1, max_size=3))
    return draw(st.lists(pod_manifests(templates), min_size=2, max_size=12))


NODE_POOLS: dict[str, list[Any]] = {
    "taints": [ABSENT, [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}],
               Bad([{"key": "k", "effect": "Sometimes"}]),
               Bad([{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}])],
    "unschedulable": [ABSENT, True, False, Bad("no")],
    "capacity": [ABSENT, {"cpu": "8", "memory": "32Gi", "pods": "110"}, Bad({"cpu": "x"})],
    "allocatable": [ABSENT, {"cpu": "7910m", "memory": "31Gi", "pods": "110"},
                    Bad({"cpu": "7910m", "pods": "110.5"}), {"cpu": 8}, {"cpu": 8.0}, None],
    "images": [ABSENT, [{"names": ["nginx:1", "nginx@sha256:00"], "sizeBytes": 1000}],
               Bad([{"names": ["nginx:1"], "sizeBytes": "big"}]), Bad([{"names": "nginx"}])],
}
NODE_LABELS = [ABSENT, {"zone": "a"}, {"zone": "a", "disk": "ssd"}, {"zone": None},
               Bad({"zone": "bad value!"}), Bad({"bad key!": "a"})]


@st.composite
def node_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    templates = [{key: _pick(draw, pool) for key, pool in NODE_POOLS.items()}
                 for _ in range(draw(st.integers(1, 3)))]
    out = []
    for i in range(draw(st.integers(1, 10))):
        parts = dict(draw(st.sampled_from(templates)))
        if draw(st.booleans()):
            key = draw(st.sampled_from(sorted(NODE_POOLS)))
            parts[key] = _pick(draw, NODE_POOLS[key])
        name = "Bad_Node" if draw(_PERCENT) < BAD_PERCENT else f"n{i}"
        labels = _pick(draw, NODE_LABELS)
        if labels is not ABSENT:
            labels = {**labels, "kubernetes.io/hostname": name}
        meta: dict[str, Any] = {"name": name}
        _put(meta, "labels", labels)
        spec: dict[str, Any] = {}
        status: dict[str, Any] = {}
        for key in ("taints", "unschedulable"):
            _put(spec, key, parts[key])
        for key in ("capacity", "allocatable", "images"):
            _put(status, key, parts[key])
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
                    "status": status})
    return out


# --------------------------------------------------------------------------- comparisons


def plain(obj: Any) -> Any:
    """``obj`` as orjson parses it from text (what loading gives the memo)."""
    return orjson.loads(orjson.dumps(obj))


def outcome(read: Any, manifest: Mapping[str, Any]) -> Any:
    """The record ``read`` makes of ``manifest``, or the text of its error."""
    try:
        return read(manifest)
    except InvalidObjectError as exc:
        return f"error: {exc}"


def assert_same(got: Any, expected: Any) -> None:
    """Equal records whose fields are equal and of the same types (or the same error)."""
    assert got == expected
    if attrs.has(type(expected)):
        for field in attrs.fields(type(expected)):
            a, b = getattr(got, field.name), getattr(expected, field.name)
            assert a == b and type(a) is type(b), field.name


def assert_memo_reads_afresh(manifests: list[dict[str, Any]], read_fresh: Any,
                             read_memo: Any) -> None:
    """Each manifest (parsed as JSON) read through one memo, in order, gives what reading it
    alone gives."""
    for manifest in manifests:
        manifest = plain(manifest)
        assert_same(outcome(read_memo, manifest), outcome(read_fresh, manifest))


@settings(max_examples=150, deadline=None)
@given(pod_lists())
def test_pods_read_through_the_memo_as_afresh(manifests: list[dict[str, Any]]) -> None:
    memo = ManifestMemo()
    assert_memo_reads_afresh(manifests, Pod.from_manifest, memo.pod)


@settings(max_examples=100, deadline=None)
@given(node_lists())
def test_nodes_read_through_the_memo_as_afresh(manifests: list[dict[str, Any]]) -> None:
    memo = ManifestMemo()
    assert_memo_reads_afresh(manifests, Node.from_manifest, memo.node)


@settings(max_examples=60, deadline=None)
@given(pod_lists(), node_lists())
def test_loading_json_text_as_reading_each_manifest(pods: list[dict[str, Any]],
                                                    nodes: list[dict[str, Any]]) -> None:
    """A ``kubectl get -o json`` List loads as its items read one by one: the same records,
    or the error of the first item that has one."""
    items = nodes + pods
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()
    expected = [outcome(Node.from_manifest if i["kind"] == "Node" else Pod.from_manifest,
                        plain(i)) for i in items]
    errors = [e for e in expected if isinstance(e, str)]
    if not errors:
        expected[len(nodes):] = [outcome(lambda p: admit_priorities(p, ()),
                                         expected[len(nodes):])]
        errors = [e for e in expected[len(nodes):] if isinstance(e, str)]
        expected[len(nodes):] = [] if errors else expected[-1]
    if errors:
        with pytest.raises(InvalidObjectError) as caught:
            read_objects(io.BytesIO(text))
        assert f"error: {caught.value}" == errors[0]
        return
    objects = read_objects(io.BytesIO(text))
    got = list(objects.nodes) + list(objects.pods)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert_same(a, b)


# --------------------------------------------------------------------------- named cases

_BASE_SPEC = {"containers": [{"name": "app", "image": "nginx",
                              "ports": [{"containerPort": 80}],
                              "resources": {"requests": {"cpu": "100m"}}}]}


def _pod(name: str = "web-1", labels: Any = ABSENT, uid: Any = ABSENT,
         **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    _put(meta, "labels", labels)
    _put(meta, "uid", uid)
    return {"kind": "Pod", "metadata": meta, "spec": {**_BASE_SPEC, **spec}}


_SPREAD_APP = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": _SELECT_APP, "matchLabelKeys": ["app"]}]
_AFFINITY_APP = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"tier": "fe"}},
     "matchLabelKeys": ["app"]}]}}
def _on_node(name: str) -> dict[str, Any]:
    """A DaemonSet pod's affinity: its node, by name."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": [name]}]}]}}}


_LIMITS_ONLY = [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]
_REQUESTS_ONLY = [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
_HOST_PORT = [{"name": "app", "ports": [{"containerPort": 80, "hostPort": 8080}]}]

PAIRS = {
    "hostNetwork then not": (_pod(hostNetwork=True), _pod()),
    "not then hostNetwork": (_pod(), _pod(hostNetwork=True)),
    "hostNetwork false then absent": (_pod(hostNetwork=False), _pod()),
    "host port, then hostNetwork (mismatch)": (_pod(containers=_HOST_PORT),
                                               _pod(containers=_HOST_PORT, hostNetwork=True)),
    "limits then requests": (_pod(containers=_LIMITS_ONLY), _pod(containers=_REQUESTS_ONLY)),
    "requests then limits": (_pod(containers=_REQUESTS_ONLY), _pod(containers=_LIMITS_ONLY)),
    "pod-level limits then none": (_pod(resources={"limits": {"cpu": "2"}}), _pod()),
    "pod-level requests below the containers'": (
        _pod(resources={"requests": {"cpu": "1"}}),
        _pod(resources={"requests": {"cpu": "10m"}})),
    "priority 0 then absent": (_pod(priority=0), _pod()),
    "priority null then absent": (_pod(priority=None), _pod()),
    "nodeSelector {} then absent": (_pod(nodeSelector={}), _pod()),
    "cpu 1 then 1.0": (_pod(containers=[{"name": "app", "resources": {"requests": {"cpu": 1}}}]),
                       _pod(containers=[{"name": "app",
                                         "resources": {"requests": {"cpu": 1.0}}}])),
    "spread matchLabelKeys, labels differ": (
        _pod(labels={"tier": "fe"}, topologySpreadConstraints=_SPREAD_APP),
        _pod(labels={"app": "web"}, topologySpreadConstraints=_SPREAD_APP)),
    "spread matchLabelKeys, uid then none": (
        _pod(labels={"app": "web"}, uid="u1", topologySpreadConstraints=_SPREAD_APP),
        _pod(labels={"app": "web"}, topologySpreadConstraints=_SPREAD_APP)),
    "affinity matchLabelKeys, labels differ": (
        _pod(labels={"app": "web"}, affinity=_AFFINITY_APP),
        _pod(labels={"app": "db"}, affinity=_AFFINITY_APP)),
    "affinity matchLabelKeys, uid then none": (
        _pod(labels={"app": "web"}, uid="u1", affinity=_AFFINITY_APP),
        _pod(labels={"app": "web"}, affinity=_AFFINITY_APP)),
    "same spec, bad node name": (_pod(nodeName="n1"), _pod(nodeName="Bad_Node")),
    "same spec, bad labels": (_pod(labels={"app": "web"}), _pod(labels={"app": "a b"})),
    "same spec, label not a string": (_pod(labels={"app": "web"}), _pod(labels={"app": 1})),
    "same spec, bad label key": (_pod(labels={"app": "web"}), _pod(labels={"a b": "web"})),
    "same spec, label value null": (_pod(labels={"app": "web"}), _pod(labels={"app": None})),
    "other owners": (
        {**_pod(), "metadata": {"name": "a", "ownerReferences": [
            {"controller": True, "kind": "ReplicaSet"}]}},
        {**_pod(), "metadata": {"name": "a", "ownerReferences": [
            {"controller": True, "kind": "Job"}]}}),
    "same spec, bad uid": (_pod(uid="u1"), _pod(uid=1)),
    "same owners, then bad ones": (
        {**_pod(), "metadata": {"name": "a", "ownerReferences": [{"controller": True}]}},
        {**_pod(), "metadata": {"name": "a", "ownerReferences": [{"controller": 1}]}}),
    "same spec, bad volume": (
        _pod(volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]),
        _pod(volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": 1}}])),
    "unread container field differs": (
        _pod(containers=[{"name": "app", "volumeMounts": [{"name": "a"}]}]),
        _pod(containers=[{"name": "app", "volumeMounts": [{"name": "b"}]}])),
    "a container that is no object": (_pod(containers=[{"name": "app"}]),
                                      _pod(containers=[["app"]])),
    "DaemonSet pods: one spec, node affinities differ": (
        _pod(affinity=_on_node("n1")), _pod(affinity=_on_node("n2"))),
    "one affinity, specs differ": (_pod(affinity=_on_node("n1")),
                                   _pod(affinity=_on_node("n1"), hostNetwork=True)),
    "one spec, then an invalid node affinity": (_pod(affinity=_on_node("n1")),
                                                _pod(affinity=_on_node("N_1"))),
    "one spec, then an affinity invalid across its fields": (
        _pod(affinity=_on_node("n1")),
        _pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": []}}})),
    "one spec, affinity invalid and a bad volume": (
        _pod(affinity=_on_node("n1")),
        _pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": []}}}, volumes=[{"name": 1}])),
}


@pytest.mark.parametrize("first,second", PAIRS.values(), ids=PAIRS.keys())
def test_pods_differing_in_what_the_shared_parts_depend_on(first: dict, second: dict) -> None:
    memo = ManifestMemo()
    assert_memo_reads_afresh([first, second, first, second], Pod.from_manifest, memo.pod)


NODE_PAIRS = {
    "allocatable then none (capacity)": (
        {"status": {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "7"}}},
        {"status": {"capacity": {"cpu": "8"}}}),
    "allocatable null": ({"status": {"allocatable": {"cpu": "7"}}},
                         {"status": {"allocatable": None, "capacity": {"cpu": "2"}}}),
    "then a bad taint": ({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
                         {"spec": {"taints": [{"key": "k", "effect": "Never"}]}}),
    "then bad labels": ({"metadata": {"labels": {"zone": "a"}}},
                        {"metadata": {"labels": {"zone": "a", "disk": "s s"}}}),
    "then a label that is no string": ({"metadata": {"labels": {"zone": "a"}}},
                                       {"metadata": {"labels": {"zone": None}}}),
}


@pytest.mark.parametrize("first,second", NODE_PAIRS.values(), ids=NODE_PAIRS.keys())
def test_nodes_differing_in_one_part(first: dict, second: dict) -> None:
    def manifest(parts: dict, name: str) -> dict:
        return {"kind": "Node", **parts, "metadata": {**parts.get("metadata", {}), "name": name}}

    memo = ManifestMemo()
    assert_memo_reads_afresh([manifest(first, "n1"), manifest(second, "n2"),
                              manifest(first, "n3")], Node.from_manifest, memo.node)


def test_pods_of_one_template_share_their_spec_records() -> None:
    """Loading JSON text goes through the memo: the pods of one template hold one spec."""
    pods = [_pod(f"web-{i}", tolerations=[{"operator": "Exists"}], nodeName=f"n{i}")
            for i in range(3)]
    text = json.dumps({"kind": "List", "items": pods}).encode()
    loaded = read_objects(io.BytesIO(text)).pods
    assert [p.node_name for p in loaded] == ["n0", "n1", "n2"]
    assert loaded[0].tolerations is loaded[1].tolerations is loaded[2].tolerations
    fresh = read_objects(pods).pods  # dicts: read afresh
    assert fresh == loaded and fresh[0].tolerations is not fresh[1].tolerations


# --------------------------------------------------------------------------- what is keyed


class Recording(dict):
    """A dict that notes the keys read from it."""

    def __init__(self, data: Mapping[str, Any], seen: set[str]) -> None:
        super().__init__(data)
        self.seen = seen

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.seen.add(str(key))
        return super().__contains__(key)

    def items(self) -> Any:
        self.seen.add("*")
        return super().items()


RICH_SPEC = {
    "hostNetwork": True, "nodeName": "n1", "restartPolicy": "Always", "hostname": "h",
    "containers": [{"name": "app", "image": "nginx", "restartPolicy": "Always",
                    "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}],
                    "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                    "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}],
    "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Always",
                        "resources": {"requests": {"memory": "1Gi"}}}],
    "affinity": {**AFFINITIES[5], **AFFINITIES[4]}, "resources": {"limits": {"cpu": "4"}},
    "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}], "nodeSelector": {"zone": "a"},
    "schedulerName": "s", "priorityClassName": "gold", "priority": 1, "overhead": {"cpu": "1m"},
    "tolerations": TOLERATIONS[1], "topologySpreadConstraints": SPREAD[4],
    "preemptionPolicy": "Never", "schedulingGates": [{"name": "example.com/g"}],
    "volumes": [{"name": "v", "emptyDir": {}}],
}


def test_the_spec_key_holds_every_field_the_spec_reading_reads() -> None:
    """What :class:`ManifestMemo` tells pod specs apart by covers every spec field (and
    container field) that :func:`ksched.api.pods.read_pod_spec` reads: a field read but not keyed
    would let a pod take another's."""
    spec_seen: set[str] = set()
    container_seen: set[str] = set()
    spec = Recording({**RICH_SPEC, **{
        field: [Recording(c, container_seen) for c in RICH_SPEC[field]]
        for field in ("containers", "initContainers")}}, spec_seen)
    _pod_spec(ManifestReader("pod default/p"), spec)
    assert spec_seen <= set(_POD_SPEC_KEYS)
    assert container_seen <= set(_CONTAINER_KEYS)
    assert spec_seen >= {"containers", "hostNetwork", "tolerations"}  # the recording works


def test_the_node_key_holds_every_field_the_node_reading_reads() -> None:
    spec_seen: set[str] = set()
    status_seen: set[str] = set()
    spec = Recording({"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True,
                      "podCIDR": "10.0.0.0/24"}, spec_seen)
    status = Recording({"capacity": {"cpu": "2"}, "allocatable": {"cpu": "1"},
                        "images": [{"names": ["a"], "sizeBytes": 1}],
                        "conditions": [{"type": "Ready", "status": "True"}],
                        "nodeInfo": {}}, status_seen)
    parts = _node_parts(ManifestReader("node n"), spec, status)
    assert spec_seen <= {"taints", "unschedulable"}
    assert status_seen <= {"capacity", "allocatable", "images"}
    assert set(parts) == set(_NODE_PARTS)
