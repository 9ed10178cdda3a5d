"""Bad arguments to the library functions (``schedule_batch``, ``explain``,
``ClusterState.bind`` / ``unbind``): each refused with a ``KschedError`` naming the argument or
the object and field, never a raw Python error, a hang or a silent change. Plus fuzzing of
``schedule_batch``'s arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ksched
from ksched import ClusterState, Container, KschedError, Node, Pod, explain, schedule_batch
from ksched.profile import default_profile
from tests.refusals import refused

kubernetes = pytest.importorskip("kubernetes")

NODES = [Node(f"n{i}", allocatable={"cpu": 2000, "memory": 4 << 30, "pods": 110})
         for i in range(3)]
CLUSTER = ClusterState.from_records(NODES, [Pod("old", node_name="n1")])
POD = Pod("web", containers=[Container("c", requests={"cpu": 100})])
POD_DICT = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c"}]}}
NODE_DICT = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n9"},
             "status": {"allocatable": {"cpu": "2"}}}
POD_HINT = ("pods: expected a Pod, a Pod manifest dict, a kubernetes-client V1Pod, a path or an "
            "iterable of these, got ")
ITEM_HINT = "expected a Pod, a Pod manifest dict or a kubernetes-client V1Pod or a path, got "
CLUSTER_HINT = ("cluster: expected a ClusterState, a path, Kubernetes object dicts or "
                "kubernetes-client objects, got ")


def _generator(*items: Any) -> Any:
    yield from items


def _named(name: str, namespace: str = "default", node: str = "") -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c"}], **({"nodeName": node} if node else {})}}


BAD_PODS = {
    "None": (None, POD_HINT + "None"),
    "int": (5, POD_HINT + "int 5"),
    "float": (2.5, POD_HINT + "float 2.5"),
    "bool": (True, POD_HINT + "bool True"),
    "bytes": (b"kind: Pod", POD_HINT + "bytes"),
    "str not a path": ("web-1", "pods: web-1: no such file or directory"),
    "missing file": ("/no/such/pods.yaml", "pods: /no/such/pods.yaml: no such file or directory"),
    "a ClusterState": (CLUSTER, POD_HINT + "ClusterState"),
    "a Node record": (NODES[0], POD_HINT + "Node"),
    "a Node dict": (NODE_DICT, 'pods: expected a Pod, got a Node "n9"'),
    "a Deployment dict": ({"kind": "Deployment", "metadata": {"name": "d"}},
                          'pods: expected a Pod, got a Deployment "d"'),
    "a non-string kind": ({"kind": 5, "metadata": {"name": "x"}},
                          "pods: expected a Pod, got kind int 5"),
    "a client V1Node": (kubernetes.client.V1Node(metadata=kubernetes.client.V1ObjectMeta(
        name="n9")), "pods: expected a Pod, got a kubernetes-client V1Node"),
    "list with a Node dict": ([POD, NODE_DICT], 'pods[1]: expected a Pod, got a Node "n9"'),
    "list with an int": ([POD, 7], "pods[1]: " + ITEM_HINT + "int 7"),
    "list with None": ([None], "pods[0]: " + ITEM_HINT + "None"),
    "nested list": ([[POD]], "pods[0]: " + ITEM_HINT + "list"),
    "list with a missing path": ([POD_DICT, "nope.yaml"],
                                 "pods[1]: nope.yaml: no such file or directory"),
    "generator with a float": (_generator(POD, 1.5), "pods[1]: " + ITEM_HINT + "float 1.5"),
    "PodList with a Node": ({"kind": "List", "items": [POD_DICT, NODE_DICT]},
                            'pods.items[1]: expected a Pod, got a Node "n9"'),
    "dict without metadata": ({"spec": {}}, "metadata"),
    "two records, one name": ([POD, POD],
                              'pod default/web: metadata.name: Duplicate value: "web"'),
    "two dicts, one name": ([_named("a", "team"), _named("b", "team"), _named("a", "team")],
                            'pod team/a: metadata.name: Duplicate value: "a"'),
    "record and dict, one name": ([POD, POD_DICT],
                                  'pod default/web: metadata.name: Duplicate value: "web"'),
    "already running": ([POD, Pod("old")], 'pod default/old: metadata.name: Duplicate value: '
                                           '"old": already bound to node "n1"'),
}


@pytest.mark.parametrize("pods, match", BAD_PODS.values(), ids=BAD_PODS)
def test_bad_pods(pods: Any, match: str) -> None:
    refused(schedule_batch, CLUSTER, pods, match=match)


BAD_CLUSTERS = {
    "None": (None, CLUSTER_HINT + "None"),
    "int": (3, CLUSTER_HINT + "int 3"),
    "bytes": (b"{}", CLUSTER_HINT + "bytes"),
    "a Pod record": (POD, CLUSTER_HINT + "Pod"),
    "a Node record": (NODES[0], CLUSTER_HINT + "Node"),
    "missing file": ("/no/such/cluster.json",
                     "cluster: /no/such/cluster.json: no such file or directory"),
    "list of Node records": (NODES, "cluster: cannot read Kubernetes objects from Node"),
    "list with None": ([NODE_DICT, None], "cluster: cannot read Kubernetes objects from NoneType"),
    "one running pod twice": ([NODE_DICT, _named("x", node="n9"), _named("x", node="n9")],
                              'pod default/x: metadata.name: Duplicate value: "x"'),
}


@pytest.mark.parametrize("cluster, match", BAD_CLUSTERS.values(), ids=BAD_CLUSTERS)
def test_bad_clusters(cluster: Any, match: str) -> None:
    refused(schedule_batch, cluster, [POD], match=match)


BAD_OPTIONS = {
    "percentage 101": ({"percentage_of_nodes_to_score": 101},
                       "percentage_of_nodes_to_score: Invalid value: 101: not in valid range "
                       "[0-100]"),
    "percentage -1": ({"percentage_of_nodes_to_score": -1},
                      "percentage_of_nodes_to_score: Invalid value: -1: not in valid range"),
    "percentage float": ({"percentage_of_nodes_to_score": 50.0},
                         "percentage_of_nodes_to_score: must be an integer from 0 to 100 or "
                         "None, got float 50.0"),
    "percentage str": ({"percentage_of_nodes_to_score": "50"},
                       "percentage_of_nodes_to_score: must be an integer from 0 to 100 or None, "
                       "got str '50'"),
    "percentage bool": ({"percentage_of_nodes_to_score": True},
                        "percentage_of_nodes_to_score: must be an integer from 0 to 100 or "
                        "None, got bool True"),
    "tie_break unknown": ({"tie_break": "first"}, 'tie_break: Unsupported value: "first": '
                                                  'supported values: "round-robin", "random"'),
    "tie_break case": ({"tie_break": "Random"}, 'tie_break: Unsupported value: "Random"'),
    "tie_break None": ({"tie_break": None},
                       "tie_break: must be one of round-robin, random, heap, got None"),
    "seed negative": ({"seed": -1}, "seed: Invalid value: -1: must be non-negative"),
    "seed float": ({"seed": 1.5}, "seed: must be None, a non-negative integer or a "
                                  "numpy.random.Generator, got float 1.5"),
    "seed str": ({"seed": "42"}, "seed: must be None, a non-negative integer or a "
                                 "numpy.random.Generator, got str '42'"),
    "seed bool": ({"seed": True}, "seed: must be None, a non-negative integer"),
    "seed legacy RandomState": ({"seed": np.random.RandomState(0)}, "got RandomState"),
    "progress int": ({"progress": 5}, "progress: must be a callable (e.g. a tqdm bar's update) "
                                      "or None, got int 5"),
    "progress str": ({"progress": "bar"}, "progress: must be a callable"),
    "profile dict": ({"profile": {"kind": "KubeSchedulerConfiguration"}},
                     "profile: must be a Profile, a SchedulerConfig or None, got dict (load it "
                     "with ksched.load_config)"),
    "profile path": ({"profile": "scheduler-config.yaml"},
                     "got str 'scheduler-config.yaml' (load it with ksched.load_config)"),
    "profile function": ({"profile": default_profile},
                         "profile: must be a Profile, a SchedulerConfig or None, got function"),
    "registry int": ({"registry": 5}, "registry: must be a Registry (plugin name -> factory) "
                                      "or None, got int 5"),
    "registry list": ({"registry": ["NodeName"]}, "registry: must be a Registry"),
    "fast_path str": ({"fast_path": "yes"}, "fast_path: must be True or False, got str 'yes'"),
    "fast_path None": ({"fast_path": None}, "fast_path: must be True or False, got None"),
}


@pytest.mark.parametrize("options, match", BAD_OPTIONS.values(), ids=BAD_OPTIONS)
def test_bad_options(options: dict[str, Any], match: str) -> None:
    refused(schedule_batch, CLUSTER, [POD], match=match, **options)


def _config() -> Any:
    return ksched.load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                               "kind": "KubeSchedulerConfiguration"})


BAD_EXPLAIN: dict[str, tuple[Callable[[], Any], str]] = {
    "unknown schedulerName": (
        lambda: explain(CLUSTER, Pod("x", scheduler_name="nobody"), profile=_config()),
        'pod default/x: spec.schedulerName: no scheduler profile named "nobody"'),
    "two pods": (lambda: explain(CLUSTER, [POD, Pod("b")]),
                 "pod: explain takes one pod, got 2"),
    "no pod": (lambda: explain(CLUSTER, []), "pod: explain takes one pod, got 0"),
    "None pod": (lambda: explain(CLUSTER, None), "pod: expected a Pod"),
    "a Node as the pod": (lambda: explain(CLUSTER, NODE_DICT),
                          'pod: expected a Pod, got a Node "n9"'),
    "a running pod": (lambda: explain(CLUSTER, Pod("old")),
                      'pod default/old: metadata.name: Duplicate value: "old"'),
    "bad cluster": (lambda: explain("nope.json", POD),
                    "cluster: nope.json: no such file or directory"),
    "bad percentage": (lambda: explain(CLUSTER, POD, percentage_of_nodes_to_score=200),
                       "percentage_of_nodes_to_score: Invalid value: 200"),
    "bad tie_break": (lambda: explain(CLUSTER, POD, tie_break="lowest"),
                      'tie_break: Unsupported value: "lowest"'),
    "bad profile": (lambda: explain(CLUSTER, POD, profile="default"),
                    "profile: must be a Profile, a SchedulerConfig or None"),
    "bad registry": (lambda: explain(CLUSTER, POD, registry=object()),
                     "registry: must be a Registry"),
}


@pytest.mark.parametrize("call, match", BAD_EXPLAIN.values(), ids=BAD_EXPLAIN)
def test_bad_explain(call: Callable[[], Any], match: str) -> None:
    refused(call, match=match)


BAD_BINDS: dict[str, tuple[Callable[[ClusterState], Any], str]] = {
    "bind None": (lambda s: s.bind(None), "pods: expected pods with spec.nodeName or (pod, node "
                                          "name) pairs, got NoneType"),
    "bind int": (lambda s: s.bind(3), "pods: expected pods with spec.nodeName"),
    "bind str": (lambda s: s.bind("n1"), "pods: expected pods with spec.nodeName"),
    "bind pair without a node name": (lambda s: s.bind([(POD, 5)]),
                                      "pods[0]: expected a Pod, a Pod manifest dict or a "
                                      "kubernetes-client V1Pod, got tuple"),
    "bind unknown node": (lambda s: s.bind([(POD, "n7")]),
                          'pod default/web: spec.nodeName: node "n7" not found'),
    "bind a pod without a node": (lambda s: s.bind([POD]),
                                  "pod default/web: spec.nodeName: Required value"),
    "bind a running pod": (lambda s: s.bind([(Pod("old"), "n0")]),
                           'pod default/old: pod old is already assigned to node "n1"'),
    "bind one pod twice": (lambda s: s.bind([(POD, "n0"), (POD, "n2")]),
                           'pod default/web: metadata.name: Duplicate value: "web"'),
    "bind a Node dict": (lambda s: s.bind([NODE_DICT]), 'pods[0]: expected a Pod, got a Node'),
    "bind to another node than its own": (
        lambda s: s.bind([(Pod("x", node_name="n0"), "n2")]),
        'pod default/x: pod x is already assigned to node "n0"'),
    "bind a terminating pod": (lambda s: s.bind([(Pod("x", deleting=True), "n0")]),
                               "pod x is being deleted, cannot be assigned to a host"),
    "unbind None": (lambda s: s.unbind(None), "keys: expected pod keys (namespace/name) or "
                                              "pods, got NoneType"),
    "unbind int": (lambda s: s.unbind(4), "keys: expected pod keys"),
    "unbind a list with an int": (lambda s: s.unbind([4]), "keys[0]: expected a pod key "
                                                           "(namespace/name) or a Pod, got int"),
    "unbind unknown key": (lambda s: s.unbind(["default/ghost"]),
                           'pod default/ghost: pods "ghost" not found'),
    "unbind a pending pod": (lambda s: s.unbind([POD]), 'pod default/web: pods "web" not found'),
    "unbind twice": (lambda s: s.unbind(["default/old", "old"]),
                     'pod default/old: metadata.name: Duplicate value: "old"'),
    "with_pods a row past the nodes": (lambda s: s.with_pods(added=[(POD, 3)]),
                                       "added[0]: no node at row 3 (the state has 3)"),
    "with_pods a negative row": (lambda s: s.with_pods(added=[(POD, -1)]),
                                 "added[0]: no node at row -1"),
    "with_pods a dict for a pod": (lambda s: s.with_pods(added=[(POD_DICT, 0)]),
                                   "added[0]: expected a (Pod, node row) pair, got dict"),
    "with_pods a removed row past the pods": (lambda s: s.with_pods(removed=[1]),
                                              "removed: no bound pod at row 1 (the state has 1)"),
    "templates of a string": (lambda s: ClusterState.from_node_templates("m5"),
                              "templates: expected a list of (Node, count) pairs, got str"),
    "templates of a name": (lambda s: ClusterState.from_node_templates([("m5", 3)]),
                            "templates[0]: expected a Node, got str"),
    "templates with a negative count": (
        lambda s: ClusterState.from_node_templates([(NODES[0], -1)]),
        "templates[0]: count: expected an integer from 0 to 1,000,000, got -1"),
    "templates with a float count": (
        lambda s: ClusterState.from_node_templates([(NODES[0], 2.5)]),
        "templates[0]: count: expected an integer from 0 to 1,000,000, got 2.5"),
    "templates with an absurd count": (
        lambda s: ClusterState.from_node_templates([(NODES[0], 10**12)]),
        "templates[0]: count: expected an integer from 0 to 1,000,000, got 1000000000000"),
    "templates beyond the bound together": (
        lambda s: ClusterState.from_node_templates([(NODES[0], 600_000), (NODES[1], 600_000)]),
        "templates: nodes in all: expected an integer from 0 to 1,000,000, got 1200000"),
    "templates of bare nodes": (lambda s: ClusterState.from_node_templates(NODES),
                                "templates[0]: expected a (Node, count) pair, got Node"),
}


@pytest.mark.parametrize("call, match", BAD_BINDS.values(), ids=BAD_BINDS)
def test_bad_bind_and_unbind(call: Callable[[ClusterState], Any], match: str) -> None:
    refused(call, CLUSTER, match=match)
    assert [p.key for p in CLUSTER.pods] == ["default/old"]  # never changed


# --------------------------------------------------------------------------- fuzzing

_JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                  st.floats(allow_nan=True), st.text(max_size=8), st.binary(max_size=4),
                  st.just(object()), st.just(NODES[0]), st.just(NODE_DICT))
_PODS = st.one_of(
    _JUNK,
    st.lists(st.one_of(st.sampled_from([POD, POD_DICT, Pod("a"), Pod("b", namespace="x"),
                                        NODE_DICT, Pod("old")]), _JUNK), max_size=4),
    st.just(POD), st.just(POD_DICT))
_OPTIONS = st.fixed_dictionaries({}, optional={
    "percentage_of_nodes_to_score": st.one_of(st.none(), st.integers(-5, 105), _JUNK),
    "tie_break": st.one_of(st.sampled_from(["round-robin", "random"]), _JUNK),
    "seed": st.one_of(st.none(), st.integers(-3, 2**70), _JUNK),
    "progress": st.one_of(st.none(), st.just(lambda n: None), _JUNK),
    "profile": st.one_of(st.none(), st.just(default_profile()), _JUNK),
    "fast_path": st.one_of(st.booleans(), _JUNK),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=st.one_of(st.just(CLUSTER), st.just([NODE_DICT]), _JUNK), pods=_PODS,
       options=_OPTIONS)
def test_fuzzed_arguments_are_scheduled_or_refused(cluster: Any, pods: Any,
                                                   options: dict[str, Any]) -> None:
    """Whatever is passed, schedule_batch returns a result or raises a KschedError."""
    try:
        result = schedule_batch(cluster, pods, **options)
    except KschedError as exc:
        assert str(exc)
    else:
        assert isinstance(result, ksched.Result)
        assert all(isinstance(p.pod, Pod) for p in result.placements)
