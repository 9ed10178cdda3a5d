"""``ksched perf`` on scheduler_perf's EventHandling/PodAdd at a small scale
(tests/perf/configs/event_handling): pods rejected by PodTopologySpread and InterPodAffinity are
retried when the bound pods they wait for arrive (AssignedPodAdd, ``addAssignedPodToCache`` in
v1.35.4's ``pkg/scheduler/eventhandlers.go``), so every pod is scheduled long before the
5-minute leftover flush, as upstream schedules them all.
"""

from __future__ import annotations

from pathlib import Path

from ksched.perf import load_workloads, run_workloads

CONFIG = Path(__file__).parent / "configs" / "event_handling" / "performance-config.yaml"


def test_pod_add_schedules_every_pod_the_added_pods_unblock():
    [run] = run_workloads(load_workloads(CONFIG))
    assert (run.status, run.path, run.scheduled, run.unscheduled, run.notes) == (
        "ok", "simulator", 25, 0, ())
    [window] = run.measurements
    # 6 spread and 6 affinity pods: one spread pod fits at once, the other 11 are rejected
    # once, then bound after the pods they wait for.
    assert window.scheduled == 12
    assert window.attempt_results.count("unschedulable") == 11
    assert window.duration < 1.0  # virtual seconds: no 5-minute flush was needed
