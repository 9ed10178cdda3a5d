"""Bad simulator inputs: events, timelines (objects and files), Simulator arguments and
``run``'s. Each is refused with a KschedError naming the event (or line) and the field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.simulator import Event, Simulator
from ksched.timeline import day_of_churn, event_from_record, load_events, parse_events
from tests.refusals import refused

POD = Pod("web", containers=[Container("c", requests={"cpu": 100})])
NODE = Node("n1", allocatable={"cpu": 4000, "memory": 2**34, "pods": 110})
MANIFEST = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c"}]}}


def cluster() -> ClusterState:
    running = Pod("old", containers=[Container("c", requests={"cpu": 100})], node_name="n1")
    return ClusterState.from_records([NODE], [running])


EVENTS: list[tuple[dict[str, Any], str]] = [
    ({"time": -1, "kind": "create", "pod": POD},
     "create event: time: must be a finite number of seconds >= 0, got -1"),
    ({"time": float("nan"), "kind": "delete", "name": "web"},
     "delete event: time: must be a finite number of seconds >= 0, got nan"),
    ({"time": float("inf"), "kind": "cordon", "name": "n1"},
     "cordon event: time: must be a finite number of seconds >= 0, got inf"),
    ({"time": "10", "kind": "delete", "name": "web"},
     "delete event: time: must be a number of seconds, got '10'"),
    ({"time": True, "kind": "delete", "name": "web"},
     "delete event: time: must be a number of seconds, got True"),
    ({"time": None, "kind": "delete", "name": "web"},
     "delete event: time: must be a number of seconds, got None"),
    ({"time": 0, "kind": "launch", "pod": POD},
     "event: kind: must be one of create, update, delete, finish, node-add, node-remove, "
     "cordon, uncordon, got 'launch'"),
    ({"time": 0, "kind": ["create"], "pod": POD},
     "event: kind: must be one of create, update, delete, finish, node-add, node-remove, "
     "cordon, uncordon, got ['create']"),
    ({"time": 0, "kind": {"create": 1}, "pod": POD}, "event: kind: must be one of create, "),
    ({"time": 0, "kind": "create"},
     "create event: pod: required: a Pod, a v1 Pod manifest or a kubernetes-client V1Pod"),
    ({"time": 0, "kind": "update"}, "update event: pod: required: a Pod"),
    ({"time": 0, "kind": "create", "pod": POD, "name": "web"},
     "create event: name: not taken by create events, which take pod"),
    ({"time": 0, "kind": "create", "pod": POD, "node": NODE},
     "create event: node: not taken by create events, which take pod"),
    ({"time": 0, "kind": "create", "pod": 42}, "pod: expected a Pod"),
    ({"time": 0, "kind": "create", "pod": "default/web"}, "pod: expected a Pod"),
    ({"time": 0, "kind": "create", "pod": {**MANIFEST, "kind": "Node"}},
     'pod: expected a Pod, got a Node "web"'),
    ({"time": 0, "kind": "create", "pod": {"metadata": {"name": "web"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "1.5.0"}}}]}}},
     'pod default/web: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"'),
    ({"time": 0, "kind": "create", "pod": POD, "duration": -5},
     "create event: duration: must be a finite number of seconds >= 0, got -5"),
    ({"time": 0, "kind": "create", "pod": POD, "duration": float("inf")},
     "create event: duration: must be a finite number of seconds >= 0, got inf"),
    ({"time": 0, "kind": "create", "pod": POD, "duration": "1h"},
     "create event: duration: must be a number of seconds, got '1h'"),
    ({"time": 0, "kind": "update", "pod": POD, "duration": 5},
     "update event: duration: only create events take one"),
    ({"time": 0, "kind": "delete", "name": "web", "duration": 5},
     "delete event: duration: only create events take one"),
    ({"time": 0, "kind": "delete"}, "delete event: name: required: the pod as namespace/name"),
    ({"time": 0, "kind": "finish", "name": ""}, "finish event: name: required: the pod as "),
    ({"time": 0, "kind": "delete", "pod": POD}, "delete event: pod: not taken by delete events, "
                                           "which take name"),
    ({"time": 0, "kind": "delete", "name": "a/b/c"},
     "delete event: name: must be a pod as namespace/name, got 'a/b/c'"),
    ({"time": 0, "kind": "delete", "name": "/web"},
     "delete event: name: must be a pod as namespace/name, got '/web'"),
    ({"time": 0, "kind": "delete", "name": 7}, "delete event: name: must be a string, got int"),
    ({"time": 0, "kind": "node-add"}, "node-add event: node: required: a Node or a v1 Node "),
    ({"time": 0, "kind": "node-add", "node": "n2"},
     "event: node: expected a Node record or a v1 Node manifest, got str 'n2'"),
    ({"time": 0, "kind": "node-add", "node": NODE, "name": "n2"},
     "node-add event: name: not taken by node-add events, which take node"),
    ({"time": 0, "kind": "cordon"}, "cordon event: name: required: the node's name"),
    ({"time": 0, "kind": "uncordon", "node": NODE},
     "uncordon event: node: not taken by uncordon events, which take name"),
    ({"time": 0, "kind": "node-remove", "name": ["n1"]},
     "node-remove event: name: must be a string, got list"),
]


@pytest.mark.parametrize("fields, message", EVENTS, ids=[m for _, m in EVENTS])
def test_bad_event(fields: dict[str, Any], message: str) -> None:
    refused(Event, match=message, **fields)


SIMULATORS: list[tuple[dict[str, Any], str]] = [
    ({"sample_every": 0}, "Simulator: sample_every: must be a finite number of seconds > 0, "
                           "got 0"),
    ({"sample_every": -60}, "Simulator: sample_every: must be a finite number of seconds > 0"),
    ({"sample_every": float("nan")}, "sample_every: must be a finite number of seconds > 0"),
    ({"sample_every": "60"}, "sample_every: must be a number of seconds, got '60'"),
    ({"seed": -1}, "seed: Invalid value: -1: must be non-negative"),
    ({"seed": 1.5}, "seed: must be None, a non-negative integer or a numpy.random.Generator"),
    ({"tie_break": "coin"}, 'tie_break: Unsupported value: "coin": supported values: '
                             '"round-robin", "random"'),
    ({"percentage_of_nodes_to_score": 101},
     "percentage_of_nodes_to_score: Invalid value: 101: not in valid range [0-100]"),
    ({"percentage_of_nodes_to_score": -1}, "percentage_of_nodes_to_score: Invalid value: -1"),
    ({"percentage_of_nodes_to_score": 50.0}, "percentage_of_nodes_to_score: must be an integer"),
    ({"profile": "default-scheduler"}, "profile: must be a Profile, a SchedulerConfig or None"),
    ({"start_time": float("inf")}, "Simulator: start_time: must be a finite number, got inf"),
    ({"fast_path": "yes"}, "fast_path: must be True or False"),
]


@pytest.mark.parametrize("kwargs, message", SIMULATORS, ids=[m for _, m in SIMULATORS])
def test_bad_simulator_argument(kwargs: dict[str, Any], message: str) -> None:
    refused(Simulator, cluster(), match=message, **kwargs)


def test_bad_cluster() -> None:
    refused(Simulator, "no-such-cluster.yaml",
            match="cluster: no-such-cluster.yaml: no such file or directory")


def create(at: float, pod: Pod = POD, **kw: Any) -> Event:
    return Event(at, "create", pod=pod, **kw)


RUNS: list[tuple[Any, dict[str, Any], str]] = [
    ([create(0)], {"until": -1}, "Simulator.run: until: must be a finite number of seconds "
                                  ">= 0, got -1"),
    ([create(0)], {"until": float("inf")}, "Simulator.run: until: must be a finite number"),
    ([create(0)], {"until": float("nan")}, "Simulator.run: until: must be a finite number"),
    ([create(0)], {"until": "noon"}, "Simulator.run: until: must be a number of seconds"),
    ([create(0)], {"progress": 5}, "progress: must be a callable"),
    (create(0), {}, "Simulator.run: events: expected a sequence of events, got Event"),
    ("events.jsonl", {}, "Simulator.run: events: expected a sequence of events, got str"),
    ([create(0), 5], {}, "event 1: expected an Event or a dict, got int"),
    ([{"time": 0, "kind": "cordon"}], {}, "event 0: node: required: the node's name"),
    ([{"time": 0, "kind": ["create"], "pod": MANIFEST}], {},
     "event 0: kind: must be one of create, update, delete, finish, node-add, node-remove, "
     "cordon, uncordon, got ['create']"),
    ([{"time": 0, "kind": {"k": "create"}, "node": "n1"}], {}, "event 0: kind: must be one of"),
    ([create(0, Pod("p", node_name="ghost"))], {},
     'event 0: pod.spec.nodeName: node "ghost" not found (pod default/p)'),
    ([Event(0, "node-remove", name="n1"), create(1, Pod("p", node_name="n1"))], {},
     'event 1: pod.spec.nodeName: node "n1" not found (pod default/p)'),
    ([create(0), Event(1, "update", pod=Pod("web", node_name="n9"))], {},
     'event 1: pod.spec.nodeName: node "n9" not found (pod default/web)'),
    ([{"time": 0, "kind": "cordon", "node": "n1", "when": 3}], {},
     'event 0: unknown field "when"'),
    ([create(0), create(10)], {},
     'event 1: pod: pods "web" already exists (pod default/web)'),
    ([create(0, Pod("old"))], {}, 'event 0: pod: pods "old" already exists (pod default/old)'),
    ([Event(5, "delete", name="web")], {}, 'event 0: name: pods "web" not found (pod '
                                           'default/web)'),
    ([create(10), Event(5, "finish", name="web")], {}, 'event 1: name: pods "web" not found'),
    ([create(0), Event(5, "delete", name="web"), Event(6, "delete", name="web")], {},
     'event 2: name: pods "web" not found'),
    ([Event(0, "update", pod=POD)], {}, 'event 0: pod: pods "web" not found'),
    ([Event(0, "node-add", node=NODE)], {}, 'event 0: node: nodes "n1" already exists'),
    ([Event(0, "cordon", name="n2")], {}, 'event 0: name: nodes "n2" not found'),
    ([Event(0, "node-remove", name="n1"), Event(1, "uncordon", name="n1")], {},
     'event 1: name: nodes "n1" not found'),
]


@pytest.mark.parametrize("events, kwargs, message", RUNS, ids=[m for *_, m in RUNS])
def test_bad_run(events: Any, kwargs: dict[str, Any], message: str) -> None:
    refused(Simulator(cluster()).run, events, match=message, **kwargs)


FILES: list[tuple[str, str | bytes, str]] = [
    ("empty.jsonl", "", "timeline {path}: no events"),
    ("blank.yaml", "\n\n   \n", "timeline {path}: no events"),
    ("bad.jsonl", '{"time": 0, "kind": "cordon", "node": "n1"}\n\n{"time": 1,\n',
     "timeline {path}: line 3: cannot parse: Expecting property name enclosed in double "
     "quotes"),
    ("bad.json", '[{"time": 0}', "timeline {path}: cannot parse: Expecting "),
    ("bad.yaml", "- time: 0\n  kind: [\n", "timeline {path}: cannot parse: while parsing"),
    ("scalar.yaml", "42\n", "timeline {path}: expected a list of events, got int"),
    ("object.json", '{"events": []}', "timeline {path}: line 1: unknown field \"events\""),
    ("pretty.json", '{\n  "time": 0,\n  "kind": "cordon"\n}\n',
     "timeline {path}: event 0: node: required: the node's name"),
    ("items.yaml", "- [0, create]\n", "timeline {path}: event 0: expected an object with time "
                                       "and kind, got list"),
    ("second.jsonl", '{"time": 0, "kind": "cordon", "node": "n1"}\n'
                     '{"time": 1, "kind": "cordon", "node": {"name": "n1"}}\n',
     "timeline {path}: line 2: node: must name the node, got dict"),
    ("key.jsonl", '{"time": 0, "kind": "delete", "pod": "a/b/c"}\n',
     "timeline {path}: line 1: pod: must be a pod as namespace/name, got 'a/b/c'"),
    ("stray.jsonl", '{"time": 0, "kind": "delete", "pod": "web", "node": "n1"}\n',
     "timeline {path}: line 1: node: not taken by delete events, which take pod"),
    ("missing-kind.yaml", "- time: 0\n  pod: web\n",
     "timeline {path}: event 0: kind: must be one of create, update"),
    ("missing-time.yaml", "- kind: cordon\n  node: n1\n",
     "timeline {path}: event 0: time: must be a number of seconds, got None"),
    ("yaml-string-time.yaml", "- time: 1e3\n  kind: cordon\n  node: n1\n",
     "timeline {path}: event 0: time: must be a number of seconds, got '1e3'"),
    ("bad-node.yaml", "- time: 0\n  kind: node-add\n  node: {metadata: {name: n2}, status: "
                      "{allocatable: {cpu: lots}}}\n", "timeline {path}: event 0: node n2: "),
    ("not-utf8.jsonl", b'\xff{"time": 0}', "timeline {path}: cannot read: 'utf-8' codec"),
    ("not-gzip.jsonl.gz", b"plain", "timeline {path}: cannot read: Not a gzipped file"),
    ("truncated.jsonl.gz", gzip.compress(b'{"time": 0, "kind": "cordon", "node": "n1"}\n')[:-8],
     "timeline {path}: cannot read: Compressed file ended before"),
]


@pytest.mark.parametrize("name, content, message", FILES, ids=[f[0] for f in FILES])
def test_bad_timeline_file(tmp_path: Path, name: str, content: str | bytes,
                           message: str) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    refused(load_events, path, match=message.format(path=path))


def test_missing_timeline_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_events(tmp_path / "nope.jsonl")


def test_bad_record_and_text() -> None:
    refused(event_from_record, [0, "create"], 4, match="event 4: expected an object with time "
                                                       "and kind, got list")
    refused(parse_events, "[1]", "my timeline",
            match="my timeline: event 0: expected an object with time and kind, got int")


CHURN: list[tuple[dict[str, Any], str]] = [
    ({"nodes": 0}, "day_of_churn: nodes: expected an integer from 1 to 1,000,000, got 0"),
    ({"arrivals": -1}, "day_of_churn: arrivals: expected an integer from 1 to 10,000,000, "
                       "got -1"),
    ({"nodes": 2.5}, "day_of_churn: nodes: expected an integer from 1 to 1,000,000, got 2.5"),
    ({"nodes": 10**12}, "day_of_churn: nodes: expected an integer from 1 to 1,000,000, got "
                        "1000000000000"),
    ({"arrivals": 10**10}, "day_of_churn: arrivals: expected an integer from 1 to 10,000,000"),
    ({"seed": -3}, "day_of_churn: seed: must be an integer >= 0, got -3"),
    ({"seconds": 0}, "day_of_churn: seconds: must be a finite number of seconds > 0, got 0"),
    ({"median_duration": float("inf")}, "day_of_churn: median_duration: must be a finite"),
]


@pytest.mark.parametrize("kwargs, message", CHURN, ids=[m for _, m in CHURN])
def test_bad_day_of_churn(kwargs: dict[str, Any], message: str) -> None:
    refused(day_of_churn, match=message, **{"nodes": 2, "arrivals": 3, **kwargs})


def test_a_pod_bound_to_a_node_added_before_it_is_created_runs_there() -> None:
    bound = Pod("p", containers=[Container("c", requests={"cpu": 100})], node_name="n2")
    events = [Event(0, "node-add", node=Node("n2", allocatable={"cpu": 1000, "pods": 10})),
              create(1, bound)]
    result = Simulator(cluster()).run(events)
    assert [(d.pod, d.outcome, d.node) for d in result.decisions] == [
        ("default/p", "bound", "n2")]


def test_inputs_are_not_mutated_and_good_ones_still_run() -> None:
    records = [{"time": 0, "kind": "create", "pod": json.loads(json.dumps(MANIFEST)),
                "duration": 5}]
    before = json.dumps(records)
    result = Simulator(cluster(), seed=np.uint8(3)).run(records, until=100)
    assert json.dumps(records) == before
    assert [(d.time, d.outcome) for d in result.decisions] == [(0.0, "bound"), (5.0, "finished")]
