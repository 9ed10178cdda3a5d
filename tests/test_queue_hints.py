"""AssignedPodAdd: the event a bound pod sends the queue, and its queueing hint.

Upstream v1.35.4: ``addAssignedPodToCache`` (``pkg/scheduler/eventhandlers.go``) calls
``MoveAllToActiveOrBackoffQueue(EventAssignedPodAdd, nil, pod, nil)`` with SchedulerQueueingHints
on; ``isPodWorthRequeuing`` (``backend/queue/scheduling_queue.go``) asks only the rejecting plugins
registered for Pod/Add: InterPodAffinity and PodTopologySpread (``EventsToRegister`` and
``isSchedulableAfterPodChange`` in ``plugins/interpodaffinity/plugin.go`` and
``plugins/podtopologyspread/plugin.go``). A pod whose rejectors registered none is skipped
(``queueSkip``). The event is recorded for the pods in flight (``addEventIfAnyInFlight``).
"""

from __future__ import annotations

from ksched import ClusterState, Node
from ksched.api import LabelSelector, Pod, PodAffinity, PodAffinityTerm, TopologySpreadConstraint
from ksched.plugins.inter_pod_affinity import InterPodAffinity
from ksched.plugins.node_resources_fit import NodeResourcesFit
from ksched.plugins.pod_topology_spread import PodTopologySpread
from ksched.queue import QueuedPodInfo, SchedulingQueue
from ksched.queue.hints import PodAddHints
from ksched.queue.rejected_by import RejectedBy

IPA, PTS, FIT = "InterPodAffinity", "PodTopologySpread", "NodeResourcesFit"
HOST = "kubernetes.io/hostname"
STATE = ClusterState.from_records([Node("n1", labels={HOST: "n1"})])


def wants(name: str, **labels: str) -> Pod:
    """A pod with required pod affinity to pods labelled ``labels`` on the same node."""
    term = PodAffinityTerm(HOST, LabelSelector(match_labels=labels))
    return Pod(name=name, pod_affinity=PodAffinity(required=(term,)))


def spread(name: str, action: str = "DoNotSchedule", **labels: str) -> Pod:
    constraint = TopologySpreadConstraint(1, HOST, action, LabelSelector(match_labels=labels))
    return Pod(name=name, labels=labels, topology_spread_constraints=(constraint,))


def bound(name: str, node: str = "n1", namespace: str = "default", **labels: str) -> Pod:
    return Pod(name=name, namespace=namespace, labels=labels, node_name=node)


def hints() -> PodAddHints:
    return PodAddHints({"default-scheduler": {IPA: InterPodAffinity(), PTS: PodTopologySpread(),
                                              FIT: NodeResourcesFit()}})


def parked(q: SchedulingQueue, pod: Pod, *plugins: str) -> QueuedPodInfo:
    """Add, pop and fail ``pod`` (rejected by ``plugins``): it waits in unschedulablePods."""
    q.add(pod)
    info = q.pop()
    assert info is not None and info.pod is pod
    info.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    return info


def where(q: SchedulingQueue) -> dict[str, str]:
    return {pod.name: sub for pod, sub in q.pending_pods()}


# ------------------------------------------------------------------ the plugins' hints


def test_inter_pod_affinity_queues_for_a_bound_pod_matching_all_its_required_terms():
    plugin, pod = InterPodAffinity(), wants("p", app="db")
    assert plugin.schedulable_after_pod_added(pod, bound("db", app="db"), STATE)
    assert not plugin.schedulable_after_pod_added(pod, bound("web", app="web"), STATE)
    assert not plugin.schedulable_after_pod_added(pod, bound("db", node="", app="db"), STATE)
    # The term covers the pod's own namespace only.
    assert not plugin.schedulable_after_pod_added(
        pod, bound("db", namespace="other", app="db"), STATE)
    # No required affinity: an added pod never helps (only anti-affinity rejected it).
    assert not plugin.schedulable_after_pod_added(Pod(name="q"), bound("db", app="db"), STATE)


def test_inter_pod_affinity_queues_when_its_terms_do_not_parse():
    bad = PodAffinityTerm(HOST, LabelSelector(match_labels={"app": "-bad value"}))
    pod = Pod(name="p", pod_affinity=PodAffinity(required=(bad,)))
    assert InterPodAffinity().schedulable_after_pod_added(pod, bound("x"), STATE)


def test_pod_topology_spread_queues_for_a_bound_pod_its_hard_constraints_select():
    plugin, pod = PodTopologySpread(), spread("p", app="web")
    assert plugin.schedulable_after_pod_added(pod, bound("w", app="web"), STATE)
    assert not plugin.schedulable_after_pod_added(pod, bound("d", app="db"), STATE)
    assert not plugin.schedulable_after_pod_added(
        pod, bound("w", namespace="other", app="web"), STATE)
    assert not plugin.schedulable_after_pod_added(pod, bound("w", node="", app="web"), STATE)
    soft = spread("s", "ScheduleAnyway", app="web")  # getConstraints: DoNotSchedule only
    assert not plugin.schedulable_after_pod_added(soft, bound("w", app="web"), STATE)


# ------------------------------------------------------------------ the queue


def test_a_bound_pod_moves_only_the_pods_its_rejectors_queue_for():
    q, h = SchedulingQueue(), hints()
    parked(q, wants("needs-db", app="db"), IPA)
    parked(q, wants("needs-cache", app="cache"), IPA)
    parked(q, Pod(name="big"), FIT)
    parked(q, spread("web", app="web"), PTS, "TaintToleration")
    q.advance(5.0)  # backoff over: a moved pod goes straight to activeQ
    h.send(q, bound("db", app="db"), "n1", STATE)
    assert where(q) == {"needs-db": "activeQ", "needs-cache": "unschedulable",
                        "big": "unschedulable", "web": "unschedulable"}
    h.send(q, Pod(name="w2", labels={"app": "web"}), "n1", STATE)  # bound by the event
    assert where(q)["web"] == "activeQ"
    assert where(q)["big"] == "unschedulable"  # NodeResourcesFit registered no Pod/Add


def test_a_pod_still_backing_off_goes_to_backoff_q():
    q = SchedulingQueue()
    parked(q, wants("needs-db", app="db"), IPA)
    hints().send(q, bound("db", app="db"), "n1", STATE)
    assert where(q) == {"needs-db": "backoffQ"}


def test_the_event_is_recorded_for_pods_in_flight():
    """``addEventIfAnyInFlight``: a pod failing after a bound pod it wanted arrived is
    retried; after one it does not want, or rejected by a plugin not registered, it parks."""
    h = hints()
    for plugin, labels, expected in ((IPA, {"app": "db"}, "backoffQ"),
                                     (IPA, {"app": "web"}, "unschedulable"),
                                     (FIT, {"app": "db"}, "unschedulable")):
        q = SchedulingQueue()
        q.add(wants("p", app="db"))
        info = q.pop()
        h.send(q, bound("other", **labels), "n1", STATE)
        info.unschedulable_plugins = {plugin}
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
        assert where(q) == {"p": expected}, (plugin, labels)


def test_gated_pods_are_left_alone():
    """SchedulingGates registers no assigned-pod event: a gated pod waits for its update."""
    q = SchedulingQueue()
    q.add(Pod(name="g", scheduling_gates=("wait",)))
    hints().send(q, bound("db", app="db"), "n1", STATE)
    assert where(q) == {"g": "gated"}


def test_rejected_by_drops_pods_that_left_or_were_parked_by_others():
    index = RejectedBy()
    a = QueuedPodInfo(pod=Pod(name="a"), timestamp=0.0, unschedulable_plugins={IPA})
    b = QueuedPodInfo(pod=Pod(name="b"), timestamp=0.0, pending_plugins={PTS})
    pool = {a.key: a, b.key: b}
    assert [i.key for i in index.pods([IPA, PTS], pool)] == ["default/a", "default/b"]
    a.unschedulable_plugins = frozenset({FIT})  # back in the pool, rejected by another
    index.add(a)
    del pool[b.key]
    assert index.pods([IPA, PTS], pool) == []
    a.unschedulable_plugins = frozenset({IPA})
    index.add(a)
    assert [i.key for i in index.pods([IPA], pool)] == ["default/a"]
