"""``ksched perf`` on scheduler_perf's EventHandling/PodAdd and PodUpdate at a small scale
(tests/perf/configs/event_handling): pods rejected by PodTopologySpread and InterPodAffinity are
retried when the bound pods they wait for arrive (AssignedPodAdd, ``addAssignedPodToCache`` in
v1.35.4's ``pkg/scheduler/eventhandlers.go``) or change in place (AssignedPodUpdate,
``updatePodInCache``), so every pod is scheduled long before the 5-minute leftover flush, as
upstream schedules them all.
"""

from __future__ import annotations

from pathlib import Path

from ksched.perf import load_workloads, run_workloads

CONFIG = Path(__file__).parent / "configs" / "event_handling" / "performance-config.yaml"


def workload(name: str):
    [run] = run_workloads([w for w in load_workloads(CONFIG) if w.full_name == name])
    return run


def test_pod_add_schedules_every_pod_the_added_pods_unblock():
    run = workload("EventHandlingPodAdd/6Pods")
    assert (run.status, run.path, run.scheduled, run.unscheduled, run.notes) == (
        "ok", "simulator", 25, 0, ())
    [window] = run.measurements
    # 6 spread and 6 affinity pods: one spread pod fits at once, the other 11 are rejected
    # once, then bound after the pods they wait for.
    assert window.scheduled == 12
    assert window.attempt_results.count("unschedulable") == 11
    assert window.duration < 1.0  # virtual seconds: no 5-minute flush was needed


def test_pod_update_schedules_every_pod_the_updated_bound_pods_unblock():
    run = workload("EventHandlingPodUpdate/1Node_10Pods")
    # 10 blockers, then 10 anti-affinity, 10 memory and 10 spreading pods.
    assert (run.status, run.path, run.scheduled, run.unscheduled, run.notes) == (
        "ok", "simulator", 40, 0, ())
    [window] = run.measurements
    # Each measured pod is rejected once, then bound after the update that unblocks it: the
    # label update does not retry the memory pods (NodeResourcesFit registers no
    # UpdatePodLabel), the resize does.
    assert window.scheduled == 30
    assert window.attempt_results.count("unschedulable") == 30
    assert len(window.attempt_results) == 60
    assert window.duration < 1.0  # virtual seconds: no 5-minute flush was needed
