"""Sweep metrics with DRA: ``devices.<class>.*`` per DeviceClass matching some device, in the
schedule, capacity, headroom and simulate studies (issue 25 item 5)."""

from __future__ import annotations

import pytest

import ksched
from ksched.sweep import Scenario
from ksched.sweep.studies import check_metric
from tests.planning.dra_cluster import classes, cluster, gpus, node, pod, pod_record

MODELS = ["small", "big", "small", "big"]
API = "resource.k8s.io/v1"


def unallocated(name: str, cls: str) -> dict:
    return {"apiVersion": API, "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": cls}}]}}}


def base(pods: list) -> Scenario:
    objects = classes() + [node("n0"), node("n1")] + [gpus(f"n{i}", MODELS) for i in range(2)]
    objects += [unallocated("big-0", "big-gpu"), unallocated("big-1", "big-gpu")]
    return Scenario(cluster(objects), pods=pods)


def row(study: str, pods: list) -> dict:
    grid = {"seed": [0]} if study == "simulate" else {"strategy": ["LeastAllocated"]}
    return ksched.sweep(base(pods), grid, study, executor="inline", progress=False).rows[0]


def metrics(found: dict, cls: str) -> tuple:
    return tuple(found[f"devices.{cls}.{m}"]
                 for m in ("allocatable", "allocated", "free", "utilisation"))


def test_schedule_allocates_the_claims_the_pods_name():
    pods = [pod_record(pod(f"p{i}", templates=(), claims=(f"big-{i}",))) for i in range(2)]
    found = row("schedule", pods)
    assert found["placed"] == 2
    assert metrics(found, "big-gpu") == (4, 2, 2, 0.5)
    assert metrics(found, "gpu") == (8, 2, 6, 0.25)
    assert "devices.tpu.allocatable" not in found  # a class matching no device


def test_capacity_fills_the_devices_and_headroom_sees_none_taken():
    template = [pod_record(pod("web", templates=("one-big",)))]
    found = row("capacity", template)
    assert found["replicas"] == 4
    assert metrics(found, "big-gpu") == (4, 4, 0, 1.0)
    assert metrics(row("headroom", template), "big-gpu") == (4, 0, 4, 0.0)


def test_simulate_reports_the_devices_at_the_end():
    pods = [pod_record(pod(f"p{i}", templates=("two-gpu",))) for i in range(3)]
    found = row("simulate", pods)
    assert found["pods_scheduled"] == 3
    assert metrics(found, "gpu") == (8, 6, 2, 0.75)


@pytest.mark.parametrize("study", ["schedule", "capacity", "headroom", "simulate"])
def test_device_metrics_are_known_to_the_metric_check(study):
    check_metric(study, "devices.gpu.utilisation", False)
