"""Compiled device counts (:mod:`ksched.dra.compiled`): the fused loop and the object-level
allocator (the reference) agree on every pod's node, reason and allocation, on random device
clusters."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import device_class, exact, gpu, node, pod, resource_slice
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import cluster_from_objects
from ksched.dra.allocator import allocate, node_pools
from ksched.dra.compiled import DeviceColumns, DeviceNeed
from ksched.dra.controller import generate_claims
from ksched.dra.state import dra_objects, with_dra
from ksched.engine import schedule_batch
from ksched.io import read_objects
from ksched.plugins import dynamic_resources

A, B = "a.example.com", "b.example.com"
CLASSES = {
    "any-a": f'device.driver == "{A}"',
    "any-b": f'device.driver == "{B}"',
    "a-x": f'device.driver == "{A}" && device.attributes["{A}"].model == "x"',
    "all": "true",
    # a runtime error on b's devices (no model attribute): never compiled
    "model-x": f'device.attributes["{A}"].model == "x"',
}
REQUEST_SELECTORS = ("", "", "", f'"model" in device.attributes["{A}"] && '
                        f'device.attributes["{A}"].model == "y"')


def template(name: str, requests: list) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": requests}}}}


def first_available(name: str, cls: str) -> dict:
    return {"name": name, "firstAvailable": [{"name": "one", "deviceClassName": cls}]}


def cpu_pod(name: str, claims: dict[str, str], cpu: str) -> dict:
    made = pod(name, claims)
    made["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    return made


def build(objects: list[dict], pods: list[dict]) -> tuple[Any, list]:
    """The cluster of ``objects`` and the pending ``pods``, their claims generated as the
    resourceclaim controller does."""
    loaded = read_objects(objects + pods)
    pending, claims = [], []
    for p in loaded.pods:
        p, made = generate_claims(p, loaded.dra)
        pending.append(p)
        claims += made
    cluster = cluster_from_objects(read_objects(objects)).widened(resources=["cpu"])
    return with_dra(cluster, dra_objects(cluster).updated(claims)), pending


def outcome(result: Any) -> tuple[list, dict]:
    """Each pod's (node, reason), and each claim's allocation, reservations, finalizers."""
    claims = {(c.namespace, c.name): (c.allocation.wire() if c.allocation else None,
                                      c.reserved_for, c.finalizers)
              for c in dra_objects(result.state).resource_claims}
    return [(p.node, p.reason) for p in result.placements], claims


@st.composite
def device_clusters(draw: Any) -> tuple[Any, list]:
    nodes = draw(st.integers(1, 4))
    objects: list[dict] = [node(f"n{i}") for i in range(nodes)]
    objects += [device_class(n, e) for n, e in CLASSES.items()]
    for i in range(nodes):
        for k in range(draw(st.integers(0, 2))):
            driver = draw(st.sampled_from([A, B]))
            devices = [gpu(f"d{j}", model=draw(st.sampled_from("xy")))
                       for j in range(draw(st.integers(0, 4)))]
            incomplete = draw(st.integers(0, 9)) == 0
            objects.append(resource_slice(f"n{i}-s{k}", driver, f"n{i}-p{k}", devices,
                                          node_name=f"n{i}", count=2 if incomplete else 1))
    if draw(st.integers(0, 3)) == 0:
        objects.append(resource_slice("shared", draw(st.sampled_from([A, B])), "shared",
                                      [gpu(f"s{j}", model="x") for j in range(2)],
                                      all_nodes=True))
    common = sorted(CLASSES)[:3] * 3 + sorted(CLASSES)  # mostly classes the loop may count
    templates = []
    for t in range(draw(st.integers(1, 3))):
        requests = []
        cls = draw(st.sampled_from(common))
        selector = draw(st.sampled_from(REQUEST_SELECTORS))
        for q in range(draw(st.sampled_from([1, 1, 1, 2]))):
            if draw(st.integers(0, 2)) == 0:  # another class and selector
                cls = draw(st.sampled_from(common))
                selector = draw(st.sampled_from(REQUEST_SELECTORS))
            kind = draw(st.sampled_from(["exact"] * 8 + ["all", "admin", "first"]))
            if kind == "first":
                requests.append(first_available(f"r{q}", cls))
                continue
            requests.append(exact(f"r{q}", cls, draw(st.sampled_from([1, 1, 2, 3])),
                                  *([selector] if selector else []),
                                  mode="All" if kind == "all" else "ExactCount",
                                  admin=kind == "admin"))
        objects.append(template(f"t{t}", requests))
        templates.append(f"t{t}")
    pods = []
    for i in range(draw(st.integers(1, 12))):
        names = [draw(st.sampled_from(templates))
                 for _ in range(draw(st.sampled_from([1, 1, 1, 2])))]
        cpu = draw(st.sampled_from(["100m"] * 5 + ["9"]))  # 9 CPUs fit on no node
        pods.append(cpu_pod(f"p{i}", {f"g{k}": f"template:{t}" for k, t in enumerate(names)},
                            cpu))
    return build(objects, pods)


@settings(max_examples=100, deadline=None)
@given(device_clusters())
def test_the_compiled_path_agrees_with_the_allocator(case: tuple[Any, list]) -> None:
    cluster, pending = case
    fast = schedule_batch(cluster, pending)
    reference = schedule_batch(cluster, pending, fast_path=False)
    assert outcome(fast) == outcome(reference)


@settings(max_examples=100, deadline=None)
@given(device_clusters())
def test_a_counted_pod_gets_the_allocators_devices_on_every_node(case: tuple[Any, list]) -> None:
    """What Reserve takes for a pod the loop placed (:meth:`DeviceColumns.allocations`) is
    the allocator's solution on that node, with half the pods' devices taken already."""
    cluster, pending = case
    half = len(pending) // 2
    state = schedule_batch(cluster, pending[:half]).state
    dra = dra_objects(state)
    columns = DeviceColumns.of(state)
    for p in pending[half:]:
        for row, n in enumerate(state.nodes):
            found = columns.allocations(p, row, dra)
            if found is None:
                continue
            claims = [c for _, _, c in found[0]]
            expected = allocate(n, claims, dra.classes, node_pools(dra, n),
                                dra.allocated_devices())
            assert [a.wire() for a in found[1]] == [a.wire() for a in expected]


def claim_template_cluster(nodes: int, pods: int, devices: int = 2) -> tuple[Any, list]:
    objects = [node(f"n{i}") for i in range(nodes)]
    objects += [device_class("gpu", f'device.driver == "{A}"'),
                template("one", [exact("gpu", "gpu")])]
    objects += [resource_slice(f"n{i}", A, f"n{i}", [gpu(f"gpu-{d}") for d in range(devices)],
                               node_name=f"n{i}") for i in range(nodes)]
    return build(objects, [pod(f"p{i}", {"g": "template:one"}) for i in range(pods)])


def test_template_pods_take_the_first_free_devices_without_the_allocator(monkeypatch) -> None:
    cluster, pending = claim_template_cluster(2, 5)

    def refused(*args: Any) -> None:
        raise AssertionError("the allocator ran for a pod the loop counts devices for")

    monkeypatch.setattr(dynamic_resources, "allocate", refused)
    result = schedule_batch(cluster, pending[:4])
    assert [p.node for p in result.placements] == ["n0", "n1", "n0", "n1"]
    dra = dra_objects(result.state)
    taken = [[(r.pool, r.device) for r in dra.claim("default", c).allocation.results]
             for c in (dict(p.claim_statuses)["g"] for p in pending[:4])]
    assert taken == [[("n0", "gpu-0")], [("n1", "gpu-0")], [("n0", "gpu-1")],
                     [("n1", "gpu-1")]]
    monkeypatch.undo()
    full = schedule_batch(cluster, pending)
    assert full.placements[4].reason == \
        "0/2 nodes are available: 2 cannot allocate all claims."
    first = dict(pending[0].claim_statuses)["g"]
    assert dra_objects(cluster).claim("default", first).allocation is None  # input unchanged


@pytest.mark.parametrize("claims, expected", [
    ({"g": "template:one"}, DeviceNeed(0, 1)),
    ({"g": "template:one", "h": "template:two"}, DeviceNeed(0, 3)),
    ({"g": "template:other"}, None),  # its class matches a device of a slice for all nodes
    ({"g": "template:one", "h": "template:other"}, None),  # two groups
    ({"g": "template:all"}, None),
    ({"g": "template:first"}, None),
])
def test_which_pods_the_loop_counts(claims: dict[str, str], expected: Any) -> None:
    objects = [node("n0"), device_class("gpu", f'device.driver == "{A}"'),
               device_class("other", "true"),
               resource_slice("n0", A, "n0", [gpu("gpu-0")], node_name="n0"),
               resource_slice("everywhere", B, "everywhere", [gpu("x")], all_nodes=True),
               template("one", [exact("gpu", "gpu")]),
               template("two", [exact("a", "gpu"), exact("b", "gpu")]),
               template("other", [exact("gpu", "other")]),
               template("all", [exact("gpu", "gpu", mode="All")]),
               template("first", [first_available("gpu", "gpu")])]
    cluster, (pending,) = build(objects, [pod("p", claims)])
    assert DeviceColumns(cluster).need(pending, cluster) == expected
