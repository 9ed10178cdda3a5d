"""``capacity`` with a template pod whose claims come from ResourceClaimTemplates: each copy
gets its own generated claim, and the count and stop reason are those of scheduling the copies
one by one (issue 25 item 5)."""

from __future__ import annotations

import json

import pytest

from ksched.dra.state import dra_objects
from ksched.planning.capacity import capacity
from ksched.simulator import UNSCHEDULABLE, Simulator
from ksched.timeline import Event
from tests.planning.dra_cluster import (
    ZONE,
    claim,
    classes,
    cluster,
    gpus,
    node,
    pod,
    pod_record,
)
from tests.refusals import run_cli

MODELS = ["small", "big", "small", "big"]


def gpu_cluster(nodes: int, cpu: str = "8", extra: tuple = ()) -> object:
    objects = classes() + [node(f"n{i}", cpu if i == 0 else "8", "a" if i < 2 else "b")
                           for i in range(nodes)]
    return cluster(objects + [gpus(f"n{i}", MODELS) for i in range(nodes)] + list(extra))


def message(n: int, reasons: str, preemption: str) -> str:
    return (f"0/{n} nodes are available: {reasons}. still not schedulable, preemption: "
            f"0/{n} nodes are available: {preemption}.")


def one_by_one(state: object, manifest: dict, most: int = 64) -> tuple[int, str]:
    """Copies created one after another (each its own uid) until the first that does not
    fit: (copies bound before it, its condition message)."""
    events = []
    for k in range(most):
        copy = json.loads(json.dumps(manifest))
        copy["metadata"].update(name=f"{manifest['metadata']['name']}-{k}", uid=f"u{k}")
        events.append(Event(float(k), "create", pod=pod_record(copy)))
    decisions = Simulator(state).run(events).decisions
    failed = next(d for d in decisions if d.outcome == UNSCHEDULABLE)
    bound = [d for d in decisions if d.outcome == "bound" and d.time < failed.time]
    return len(bound), failed.reason


def test_n_nodes_with_k_devices_take_n_times_k_one_device_copies():
    state = gpu_cluster(3)
    manifest = pod("web")
    result = capacity(state, pod_record(manifest)).results[0]
    expected = message(3, "3 cannot allocate all claims",
                       "3 Preemption is not helpful for scheduling")
    assert (result.replicas, result.method, result.stop_reason) == (12, "loop", expected)
    assert result.replicas_on_nodes == {"n0": 4, "n1": 4, "n2": 4}
    assert one_by_one(state, manifest) == (12, expected)


def test_cpu_binds_first_on_a_small_node():
    state = gpu_cluster(3, cpu="1")
    manifest = pod("web", "300m")
    result = capacity(state, pod_record(manifest), by=ZONE).results[0]
    expected = message(3, "1 Insufficient cpu, 2 cannot allocate all claims",
                       "1 No preemption victims found for incoming pod, "
                       "2 Preemption is not helpful for scheduling")
    assert (result.replicas, result.stop_reason) == (11, expected)
    assert result.replicas_on_nodes == {"n0": 3, "n1": 4, "n2": 4}
    assert result.by == {"a": 7, "b": 4}
    assert one_by_one(state, manifest) == (11, expected)


@pytest.mark.parametrize(("template", "copies"), [("two-gpu", 6), ("one-big", 6)])
def test_counts_and_class_selectors(template, copies):
    state = gpu_cluster(3)
    manifest = pod("web", templates=(template,))
    result = capacity(state, pod_record(manifest)).results[0]
    expected = message(3, "3 cannot allocate all claims",
                       "3 Preemption is not helpful for scheduling")
    assert (result.replicas, result.stop_reason) == (copies, expected)
    assert one_by_one(state, manifest) == (copies, expected)


def test_devices_claims_hold_already_are_not_counted():
    held = [claim("held-0", "gpu", "n0", "gpu-0"), claim("held-1", "gpu", "n1", "gpu-3")]
    state = gpu_cluster(2, extra=tuple(held))
    result = capacity(state, pod_record(pod("web"))).results[0]
    assert (result.replicas, result.replicas_on_nodes) == (6, {"n0": 3, "n1": 3})


def test_the_cluster_after_holds_the_placed_copies_claims_and_the_input_is_kept():
    state = gpu_cluster(2)
    claims_before = dra_objects(state).resource_claims
    report = capacity(state, pod_record(pod("web")))
    assert dra_objects(state).resource_claims is claims_before == ()
    after = dra_objects(report.state)
    owners = sorted(c.owner[1] for c in after.resource_claims)
    assert owners == [f"web-{k}" for k in range(8)]  # none for web-8, which did not fit
    for c in after.resource_claims:
        assert c.name.startswith(f"{c.owner[1]}-t0-") and len(c.name) == len(c.owner[1]) + 9
        assert c.reserved_for == (("pods", c.owner[1], "uid-web"),)
    assert len(after.allocated_devices()) == 8
    assert sorted(p.name for p in report.state.pods) == [f"web-{k}" for k in range(8)]


def test_a_missing_template_lets_no_copy_in():
    result = capacity(gpu_cluster(2), pod_record(pod("web", templates=("none",)))).results[0]
    assert (result.replicas, result.stop_reason) == (
        0, 'pod "web-0": no claim status for resourceClaimTemplateName "none"')


def test_interleaved_with_a_plain_template_the_stop_is_the_cluster_then():
    state = gpu_cluster(2)
    plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cpu", "namespace":
                                                             "default"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                 "requests": {"cpu": "1"}}}]}}
    report = capacity(state, [pod_record(pod("web")), pod_record(plain)], order="interleave")
    web, cpu = report.results
    assert (web.replicas, cpu.replicas) == (8, 14)  # 8 cores a node, 0.4 of them for web
    assert web.stop_reason == message(2, "2 cannot allocate all claims",
                                      "2 Preemption is not helpful for scheduling")
    assert cpu.stop_reason == message(2, "2 Insufficient cpu",
                                      "2 No preemption victims found for incoming pod"
                                      ).replace("still not schedulable", "no new claims to "
                                                                         "deallocate")


def test_the_cli_answers_the_same(tmp_path):
    objects = classes() + [node("n0"), node("n1"), gpus("n0", MODELS), gpus("n1", MODELS)]
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "items": objects}))
    (tmp_path / "web.json").write_text(json.dumps(pod("web")))
    status, out, err = run_cli(["capacity", str(tmp_path / "cluster.json"),
                                str(tmp_path / "web.json"), "-o", "json"])
    assert status == 0, err
    got = json.loads(out)
    assert got["replicas"] == 8
    assert got["templates"][0]["stop_reason"] == message(
        2, "2 cannot allocate all claims", "2 Preemption is not helpful for scheduling")
