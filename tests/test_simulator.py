"""The Simulator: kube-scheduler's loop on a virtual clock, rule by rule.

Expected times follow upstream v1.35.4: ``scheduleOne`` / ``handleSchedulingFailure``
(``pkg/scheduler/schedule_one.go``), the PriorityQueue (``backend/queue/scheduling_queue.go``:
``MoveAllToActiveOrBackoffQueue`` on cluster events, ``flushUnschedulablePodsLeftover`` every
30 s for pods unschedulable longer than 5 minutes), ``RunPermitPlugins`` / ``WaitOnPermit``
(``framework/runtime/framework.go``, the timeout message of ``waiting_pods_map.go``) and the
SchedulingGates PreEnqueue plugin.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import attrs
import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.cli import main
from ksched.config import load_config
from ksched.plugins import IN_TREE_REGISTRY
from ksched.simulator import Event, Simulator
from ksched.status import Code, Status
from ksched.timeline import day_of_churn, load_events

GI = 2**30


def node(name: str, cpu: int = 4000, **extra) -> Node:
    return Node(name, labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": cpu, "memory": 64 * GI, "pods": 110}, **extra)


def pod(name: str, cpu: int, **extra) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **extra)


def create(at: float, p: Pod, duration: float | None = None) -> Event:
    return Event(at, "create", pod=p, duration=duration)


def history(result, key: str) -> list[tuple[float, str, str | None]]:
    return [(d.time, d.outcome, d.node) for d in result.decisions if d.pod == key]


def test_a_pod_that_runs_for_a_while_frees_its_node_and_the_waiting_pod_moves_in():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([create(0, pod("first", 3000), duration=100),
                                     create(10, pod("second", 3000))])
    assert history(result, "default/first") == [(0, "bound", "n1"), (100, "finished", "n1")]
    # second fails at 10 (unschedulable), then the AssignedPodDelete event at 100 moves it.
    assert history(result, "default/second") == [(10, "unschedulable", None),
                                                 (100, "bound", "n1")]
    assert result.summary()["time_to_schedule_p99"] == 90


def test_a_node_event_moves_unschedulable_pods():
    cluster = ClusterState.from_records([node("n1", cpu=1000)])
    result = Simulator(cluster).run([create(0, pod("p", 3000)),
                                     Event(42, "node-add", node=node("n2"))])
    assert history(result, "default/p") == [(0, "unschedulable", None), (42, "bound", "n2")]


def test_without_events_an_unschedulable_pod_is_retried_by_the_five_minute_flush():
    # Failed at 0; the 30 s leftover flush moves it once it has been unschedulable for more
    # than 5 minutes: the first tick after 300 s is 330 s (the 300 s tick is not "more").
    cluster = ClusterState.from_records([node("n1", cpu=1000)])
    result = Simulator(cluster).run([create(0, pod("p", 3000)),
                                     create(400, pod("other", 100))])
    times = [t for t, outcome, _ in history(result, "default/p") if outcome == "unschedulable"]
    assert times == [0, 330]


def test_a_cordoned_node_takes_no_pods_and_uncordoning_lets_them_in():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([Event(0, "cordon", name="n1"), create(1, pod("p", 100)),
                                     Event(7, "uncordon", name="n1")])
    assert history(result, "default/p") == [(1, "unschedulable", None), (7, "bound", "n1")]
    assert "node(s) were unschedulable" in result.decisions[0].reason


def test_removing_a_node_evicts_its_pods():
    cluster = ClusterState.from_records([node("n1"), node("n2")])
    result = Simulator(cluster).run([create(0, pod("p", 100)),
                                     Event(5, "node-remove", name="n1")])
    assert history(result, "default/p") == [(0, "bound", "n1"), (5, "evicted", "n1")]
    assert result.state.node_names == ("n2",)


def test_preemption_evicts_victims_nominates_and_binds_on_the_retry():
    cluster = ClusterState.from_records(
        [node("n1"), node("n2")],
        [pod("low-1", 3000, node_name="n1", start_time=1.0),
         pod("low-2", 3000, node_name="n2", start_time=2.0)])
    result = Simulator(cluster).run([create(0, pod("vip", 2000, priority=100))])
    # Equal victims: the latest-started one goes (pickOneNodeForPreemption criterion 5).
    assert history(result, "default/vip") == [(0, "preempting", "n2"),
                                              (0, "unschedulable", None), (0, "bound", "n2")]
    assert history(result, "default/low-2") == [(0, "preempted", "n2")]
    preempting = next(d for d in result.decisions if d.outcome == "preempting")
    assert preempting.victims == ("default/low-2",)
    assert result.summary()["preemptions"] == 1


def test_gated_pods_wait_until_their_gates_are_removed():
    cluster = ClusterState.from_records([node("n1")])
    gated = pod("g", 100, scheduling_gates=("example.com/quota",))
    result = Simulator(cluster).run([create(0, gated),
                                     Event(50, "update", pod=attrs.evolve(gated,
                                                                          scheduling_gates=()))])
    assert history(result, "default/g") == [(50, "bound", "n1")]


def test_a_pod_still_gated_at_the_end_is_pending():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([create(0, pod("g", 100, scheduling_gates=("x",)))])
    assert [p.key for p in result.pending] == ["default/g"]
    assert result.samples[-1].gated == 1


@attrs.frozen
class Gang:
    """A Permit plugin that holds pods until ``size`` of them wait, then lets all go."""

    NAME: ClassVar[str] = "Gang"
    args: Any = None
    size: int = 2

    def permit(self, cycle, node) -> tuple[Status, float]:
        waiting = cycle.data["waiting_pods"]
        if len(waiting.keys()) + 1 < self.size:
            return Status(Code.WAIT), 30.0
        for key in waiting.keys():
            waiting.allow(key)
        return Status(), 0.0


def gang_config():
    registry = IN_TREE_REGISTRY.merged({"Gang": Gang})
    return load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration",
                        "profiles": [{"schedulerName": "default-scheduler",
                                      "plugins": {"permit": {"enabled": [{"name": "Gang"}]}}}]},
                       registry=registry)


def test_permit_wait_holds_a_pod_until_a_plugin_allows_it():
    cluster = ClusterState.from_records([node("n1")])
    events = [create(0, pod("a", 100)), create(5, pod("b", 100))]
    result = Simulator(cluster, profile=gang_config()).run(events)
    assert history(result, "default/a") == [(0, "waiting", "n1"), (5, "bound", "n1")]
    assert history(result, "default/b") == [(5, "bound", "n1")]


def test_permit_wait_times_out_and_the_pod_is_unreserved_and_requeued():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster, profile=gang_config()).run([create(0, pod("a", 100))])
    assert history(result, "default/a") == [(0, "waiting", "n1"), (30, "rejected", "n1")]
    rejected = result.decisions[-1]
    assert rejected.reason == "rejected due to timeout after waiting 30s at plugin Gang"
    assert int(result.state.requested[0, 0]) == 0  # forgotten: the node is free again
    assert [p.key for p in result.pending] == ["default/a"]


@attrs.frozen
class Ledger:
    """Reserve plugins that log their calls; ``fail`` makes Reserve fail."""

    NAME: ClassVar[str] = "Ledger"
    args: Any = None
    calls: list = attrs.field(factory=list)

    def reserve(self, cycle, node):
        self.calls.append(("reserve", cycle.pod.name))
        return Status(Code.UNSCHEDULABLE, ("no budget",)) if cycle.pod.name == "poor" \
            else Status()

    def unreserve(self, cycle, node):
        self.calls.append(("unreserve", cycle.pod.name))


def test_a_reserve_failure_unreserves_and_forgets_the_pod():
    ledger = Ledger()
    registry = IN_TREE_REGISTRY.merged({"Ledger": lambda args: ledger})
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"plugins": {"reserve": {"enabled": [
                              {"name": "Ledger"}]}}}]}, registry=registry)
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster, profile=config).run([create(0, pod("poor", 100)),
                                                     create(1, pod("rich", 100))])
    assert ("unreserve", "poor") in ledger.calls
    assert history(result, "default/poor")[0] == (0, "rejected", "n1")
    assert history(result, "default/rich") == [(1, "bound", "n1")]
    assert int(result.state.requested[0, result.state.resource_column("pods")]) == 1


def test_same_placements_as_a_batch_when_everything_arrives_at_once():
    from ksched import schedule_batch
    from ksched.workloads import scheduling_basic

    cluster, pods = scheduling_basic(300, 100, 400)
    batch = schedule_batch(cluster, pods)
    simulated = Simulator(cluster).run([create(0, p) for p in pods])
    bound = {d.pod: d.node for d in simulated.decisions if d.outcome == "bound"}
    assert bound == {p.pod.key: p.node for p in batch.placements}


def test_fast_path_and_framework_agree_over_a_day_of_churn():
    # Busy enough that some pods wait and some preempt.
    cluster, events = day_of_churn(nodes=20, arrivals=600, seconds=3600, seed=3,
                                   median_duration=600)
    fast = Simulator(cluster).run(events)
    slow = Simulator(cluster, fast_path=False).run(events)
    assert [d.to_record() for d in fast.decisions] == [d.to_record() for d in slow.decisions]
    summary = fast.summary()
    assert summary["pods_scheduled"] == 600
    assert summary["unschedulable_attempts"] > 0


def test_events_from_a_file_and_the_cli(tmp_path, capsys):
    nodes = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}]}
    (tmp_path / "cluster.json").write_text(json.dumps(nodes))
    web = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]}}
    lines = [{"time": 0, "kind": "create", "pod": web, "duration": 60},
             {"time": 10, "kind": "create",
              "pod": {**web, "metadata": {"name": "api", "namespace": "default"}}}]
    (tmp_path / "events.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    assert len(load_events(tmp_path / "events.jsonl")) == 2
    code = main(["simulate", str(tmp_path / "cluster.json"), "--events",
                 str(tmp_path / "events.jsonl"), "--log", str(tmp_path / "log.jsonl"),
                 "--summary", str(tmp_path / "summary.json")])
    assert code == 0
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(r["time"], r["pod"], r["outcome"]) for r in log] == [
        (0, "default/web", "bound"), (10, "default/api", "unschedulable"),
        (60, "default/web", "finished"), (60, "default/api", "bound")]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["pods_scheduled"], summary["time_to_schedule_p50"]) == (2, 0.0)


@pytest.mark.parametrize("line, message", [
    ({"time": -1, "kind": "create"}, "line 2: time: must be a finite number of seconds >= 0, "
                                     "got -1"),
    ({"time": 0, "kind": "explode"}, "line 2: kind: must be one of create, update, delete"),
    ({"time": 0, "kind": "delete"}, "line 2: pod: required: the pod as namespace/name"),
])
def test_bad_timeline_entries_are_named(tmp_path, line, message):
    from ksched.errors import InvalidObjectError

    path = tmp_path / "events.jsonl"
    path.write_text('{"time": 0, "kind": "cordon", "node": "n1"}\n' + json.dumps(line))
    with pytest.raises(InvalidObjectError) as info:
        load_events(path)
    assert str(info.value).startswith(f"timeline {path}: {message}")


def test_events_take_manifests_and_default_the_namespace():
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    event = Event(5, "create", pod=manifest, duration=60)
    assert (event.time, event.pod.key, event.pod.containers[0].requests["cpu"]) == (
        5.0, "default/web", 1000)
    assert Event(70, "delete", name="web").name == "default/web"
    added = Event(1, "node-add", node={"metadata": {"name": "n2"},
                                       "status": {"allocatable": {"cpu": "2"}}})
    assert (added.node.name, added.node.allocatable["cpu"]) == ("n2", 2000)


def test_run_takes_timeline_dicts():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([
        {"time": 0, "kind": "create", "duration": 30,
         "pod": {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c"}]}}},
        {"time": 10, "kind": "cordon", "node": "n1"}])
    assert history(result, "default/web") == [(0, "bound", "n1"), (30, "finished", "n1")]


def test_until_stops_the_clock_there():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([create(0, pod("a", 100), duration=500),
                                     create(300, pod("b", 100))], until=200)
    assert history(result, "default/a") == [(0, "bound", "n1")]
    assert "default/b" not in result.created
    assert [s.time for s in result.samples] == [0.0, 200.0]  # nothing happened in between
    assert result.summary()["virtual_seconds"] == 200.0


def test_deleting_a_pod_of_the_cluster_frees_its_node():
    running = attrs.evolve(pod("old", 3000), node_name="n1")
    cluster = ClusterState.from_records([node("n1")], [running])
    result = Simulator(cluster).run([create(0, pod("new", 3000)),
                                     Event(50, "delete", name="default/old")])
    assert history(result, "default/old") == [(50, "deleted", "n1")]
    assert history(result, "default/new") == [(0, "unschedulable", None), (50, "bound", "n1")]


def test_a_create_while_the_pod_still_runs_is_ignored_as_the_api_server_would():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([create(0, pod("web", 100), duration=100),
                                     create(50, pod("web", 200)), create(150, pod("web", 300))])
    assert [(d.time, d.outcome, d.reason) for d in result.decisions] == [
        (0, "bound", ""), (50, "ignored", 'pods "web" already exists'), (100, "finished", ""),
        (150, "bound", "")]


def test_preemption_workload_smoke():
    """The Preemption benchmark's shape at a tiny scale: every high pod evicts three low."""
    from ksched.timeline import arrivals_at_once
    from ksched.workloads import preemption_basic

    cluster, pods = preemption_basic(50, 200, 20)
    summary = Simulator(cluster).run(arrivals_at_once(pods)).summary()
    counts = summary["pods_scheduled"], summary["preemptions"], summary["victims"]
    assert counts == (20, 20, 60)


def test_the_default_binder_records_a_binding_and_skipping_binders_pass_it_on():
    from ksched.framework.interfaces import Cycle
    from ksched.framework.runtime import Framework
    from ksched.plugins.default_binder import Binding
    from ksched.profile import Profile

    @attrs.frozen
    class Elsewhere:
        NAME: ClassVar[str] = "Elsewhere"
        args: Any = None

        def bind(self, cycle, node):
            return Status(Code.SKIP)

    registry = IN_TREE_REGISTRY.merged({"Elsewhere": Elsewhere})
    framework = Framework(Profile(plugins={"filter": ("NodeResourcesFit",),
                                           "bind": ("Elsewhere", "DefaultBinder")}), registry)
    cycle = Cycle(ClusterState.from_records([node("n1")]), pod("web", 100, uid="u-1"))
    status = framework.run_bind(cycle, "n1")
    assert (status.is_success, status.plugin) == (True, "DefaultBinder")
    assert cycle.data["DefaultBinder/binding"] == Binding("default", "web", "u-1", "n1")


def test_pods_of_a_class_that_failed_fail_again_and_then_fit_as_the_framework_finds():
    """A class whose pod fitted nowhere tries the failing cycle first next time: the pod
    after it fails with the same wording, and the retries after the running pods finish go
    where the framework sends them (the walk's start index included)."""
    cluster = ClusterState.from_records([node("n1", cpu=2000), node("n2", cpu=2000)])
    events = [create(0, pod("a", 1500), duration=10), create(0, pod("b", 1500), duration=20),
              create(1, pod("c", 1500)), create(2, pod("d", 1500)), create(3, pod("e", 1500))]
    fast = Simulator(cluster).run(events)
    slow = Simulator(cluster, fast_path=False).run(events)
    assert [d.to_record() for d in fast.decisions] == [d.to_record() for d in slow.decisions]
    failed = [d for d in fast.decisions if d.pod == "default/d"][0]
    assert failed.reason == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                             "deallocate, preemption: 0/2 nodes are available: 2 No preemption "
                             "victims found for incoming pod.")
    assert history(fast, "default/c")[-1] == (10, "bound", "n1")
    assert history(fast, "default/d")[-1] == (20, "bound", "n2")
    assert history(fast, "default/e")[0] == (3, "unschedulable", None)
