"""The Simulator's stretches (:mod:`ksched.sim_lane`) with pods whose claims the resourceclaim
controller makes from templates: the loop counts their devices, gives them back when the pods
leave, and the claims are made, allocated, written and released in order afterwards. Against
the same Simulator taking every event one at a time (``batched=False``): decisions, samples,
utilisation, the pods left and every claim left with its allocation and ``reservedFor``."""

from __future__ import annotations

from conftest import claim, device_class, exact, gpu, node, pod, resource_slice
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched import cluster_from_objects
from ksched.dra.state import dra_objects
from ksched.dra.workloads import steady_state_workload
from ksched.io import read_objects
from ksched.simulator import Simulator
from ksched.timeline import Event

DRIVER = "gpu.example.com"
CLAIMS = [{}, {"g": "template:one"}, {"g": "template:one"}, {"g": "template:two"},
          {"g": "template:one", "h": "template:one"}, {"g": "claim:shared"}]


def template(name: str, count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [exact("gpu", "gpu", count)]}}}}


@st.composite
def timelines(draw) -> tuple:
    objects = [device_class("gpu", f'device.driver == "{DRIVER}"'), template("one", 1),
               template("two", 2), claim("shared", [exact("gpu", "gpu")])]
    for i in range(draw(st.integers(1, 4))):
        devices = [gpu(f"gpu-{d}") for d in range(draw(st.integers(1, 3)))]
        objects += [node(f"n{i}"), resource_slice(f"s{i}", DRIVER, f"n{i}", devices,
                                                  node_name=f"n{i}")]
    events, at = [], 0.0
    for i in range(draw(st.integers(1, 30))):
        at += draw(st.sampled_from([0.0, 0.1, 0.1, 1.0, 4.0]))
        record = read_objects([pod(f"p{i}", draw(st.sampled_from(CLAIMS)))]).pods[0]
        events.append(Event(at, "create", pod=record,
                            duration=draw(st.sampled_from([None, 0.0, 0.0, 0.5, 3.0, 20.0]))))
        if draw(st.integers(0, 15)) == 0:
            events.append(Event(at + 0.3, "delete", name=f"default/p{i}"))
    until = draw(st.sampled_from([None, None, at / 2 + 0.1]))
    return cluster_from_objects(read_objects(objects)), events, until


def _outcome(result) -> dict:
    state = result.state
    claims = sorted(((c.namespace, c.name, c.allocation and c.allocation.wire(), c.reserved_for,
                      c.finalizers) for c in dra_objects(state).resource_claims), key=str)
    return dict(decisions=result.decisions, samples=result.samples, usage=result.usage,
                pods=[(p.key, p.node_name, p.claim_statuses) for p in state.pods],
                pending=[p.key for p in result.pending], claims=claims)


def _both(cluster, events, until=None) -> tuple[dict, dict]:
    return (_outcome(Simulator(cluster, batched=False).run(events, until=until)),
            _outcome(Simulator(cluster).run(events, until=until)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timelines())
def test_stretches_with_claims_leave_what_one_event_at_a_time_leaves(timeline):
    cluster, events, until = timeline
    expected, got = _both(cluster, events, until)
    assert got == expected


def test_the_steady_state_churn_runs_in_stretches(stretches):
    """scheduler_perf's steady state: each pod is deleted as it is bound. After the first
    pod (its class compiled by its own cycle) the loop takes every arrival and finish, and
    no generated claim is left."""
    cluster, events = steady_state_workload(20, 400, devices=4)
    expected, got = _both(cluster, events)
    assert got == expected
    assert sum(map(len, stretches)) == 2 * 399
    assert [d.outcome for d in got["decisions"]] == ["bound", "finished"] * 400
    assert len(got["claims"]) == 40 and all(c[0] == "init" for c in got["claims"])


def test_claims_of_pods_still_running_are_allocated_in_order():
    """Pods running past the stretch keep their claims: allocated, in the allocator's order,
    the first free devices of their nodes; the one node's four devices go one by one."""
    objects = [device_class("gpu", f'device.driver == "{DRIVER}"'), template("one", 1),
               node("n0"), resource_slice("s0", DRIVER, "n0", [gpu(f"gpu-{d}") for d in
                                                               range(4)], node_name="n0")]
    cluster = cluster_from_objects(read_objects(objects))
    pods = read_objects([pod(f"p{i}", {"g": "template:one"}) for i in range(5)]).pods
    events = [Event(float(i), "create", pod=p, duration=100.0) for i, p in enumerate(pods)]
    expected, got = _both(cluster, events, until=50.0)
    assert got == expected
    held = {c[3][0][1]: c[2]["devices"]["results"][0]["device"] for c in got["claims"]
            if c[2] is not None}
    assert held == {f"p{i}": f"gpu-{i}" for i in range(4)}
    assert got["pending"] == ["default/p4"]  # its claim made, not allocated
    assert len(got["claims"]) == 5


def test_pods_of_missing_templates_or_classes_are_left_to_the_queue():
    """A template that does not exist (PreEnqueue holds the pod) or names a device class that
    does not exist (PreFilter rejects it) keeps the pod out of a stretch; the pods around it
    still run there, and the outcome is one event at a time's."""
    objects = [device_class("gpu", f'device.driver == "{DRIVER}"'), template("one", 1),
               {**template("ghost", 1), "spec": {"spec": {"devices": {"requests": [
                   exact("gpu", "no-such-class")]}}}},
               node("n0"), resource_slice("s0", DRIVER, "n0", [gpu("g0"), gpu("g1")],
                                          node_name="n0")]
    cluster = cluster_from_objects(read_objects(objects))
    names = ["one", "nope", "one", "ghost", "one", "one"]
    pods = read_objects([pod(f"p{i}", {"g": f"template:{name}"})
                         for i, name in enumerate(names)]).pods
    events = [Event(float(i), "create", pod=p, duration=0.0) for i, p in enumerate(pods)]
    expected, got = _both(cluster, events)
    assert got == expected
    outcomes = {d.pod: d.outcome for d in got["decisions"]}
    assert outcomes == {"default/p0": "finished", "default/p2": "finished",
                        "default/p3": "unschedulable", "default/p4": "finished",
                        "default/p5": "finished"}
    assert sorted(got["pending"]) == ["default/p1", "default/p3"]
