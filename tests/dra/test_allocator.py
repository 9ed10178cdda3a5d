"""The structured allocator (ksched.dra.allocator): named edge cases with exact results."""

from __future__ import annotations

import pytest

from conftest import claim, device_class, exact, gpu, resource_slice
from ksched.api import Node
from ksched.dra.allocator import AllocationError, InvalidPoolsError, allocate, gather_pools
from ksched.io import read_objects

N1 = Node("n1", labels={"kubernetes.io/hostname": "n1", "zone": "a"})
GPU = device_class("gpu", 'device.driver == "gpu.example.com"')
SLICE = resource_slice("s1", "gpu.example.com", "n1",
                       [gpu("gpu-0", numaNode=0, model="h100"),
                        gpu("gpu-1", numaNode=1, model="h100"),
                        gpu("gpu-2", numaNode=1, model="a100")], node_name="n1")


def run(claims: list[dict], slices: list[dict] = (SLICE,), used: frozenset = frozenset()):
    dra = read_objects([GPU, *slices, *claims]).dra
    return allocate(N1, list(dra.resource_claims), dra.classes,
                    gather_pools(dra.resource_slices, N1), used)


def devices(found) -> list[list[tuple[str, str]]]:
    return [[(r.request, r.device) for r in a.results] for a in found]


def test_exact_count_takes_devices_in_slice_order_skipping_those_in_use() -> None:
    found = run([claim("c", [exact("g", "gpu", 2)])],
                used=frozenset({("gpu.example.com", "n1", "gpu-0")}))
    assert devices(found) == [[("g", "gpu-1"), ("g", "gpu-2")]]
    assert found[0].node_selector_wire == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}


def test_match_attribute_backtracks_to_the_first_complete_solution() -> None:
    found = run([claim("c", [exact("g", "gpu", 2)],
                       constraints=[{"matchAttribute": "gpu.example.com/numaNode"}])])
    assert devices(found) == [[("g", "gpu-1"), ("g", "gpu-2")]]


def test_no_solution_is_none() -> None:
    assert run([claim("c", [exact("g", "gpu", 4)])]) is None
    assert run([claim("c", [exact("g", "gpu", 1, 'device.attributes["gpu.example.com"]'
                                                 '.model == "b200"')])]) is None


def test_first_available_uses_the_first_subrequest_that_completes() -> None:
    request = {"name": "g", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 3,
         "selectors": [{"cel": {"expression":
                                'device.attributes["gpu.example.com"].model == "h100"'}}]},
        {"name": "one", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}]}
    assert devices(run([claim("c", [request])])) == [[("g/one", "gpu-0")]]


def test_all_takes_every_matching_device_or_fails_when_one_is_in_use() -> None:
    all_h100 = exact("g", "gpu", 0, 'device.attributes["gpu.example.com"].model == "h100"',
                     mode="All")
    assert devices(run([claim("c", [all_h100])])) == [[("g", "gpu-0"), ("g", "gpu-1")]]
    assert run([claim("c", [all_h100])],
               used=frozenset({("gpu.example.com", "n1", "gpu-1")})) is None
    admin = exact("g", "gpu", 0, mode="All", admin=True)
    found = run([claim("c", [admin])], used=frozenset({("gpu.example.com", "n1", "gpu-1")}))
    assert [r.admin_access for r in found[0].results] == [True, True, True]


def test_two_claims_do_not_share_a_device() -> None:
    found = run([claim("a", [exact("g", "gpu", 2)]), claim("b", [exact("g", "gpu", 1)])])
    assert devices(found) == [[("g", "gpu-0"), ("g", "gpu-1")], [("g", "gpu-2")]]


def test_pools_newest_generation_incomplete_and_invalid() -> None:
    old = resource_slice("old", "gpu.example.com", "n1", [gpu("gpu-9")], node_name="n1")
    new = resource_slice("new", "gpu.example.com", "n1", [gpu("gpu-0")], node_name="n1",
                         generation=2)
    assert devices(run([claim("c", [exact("g", "gpu")])], [old, new])) == [[("g", "gpu-0")]]
    part = resource_slice("part", "gpu.example.com", "n1", [gpu("gpu-0")], node_name="n1",
                          count=2)
    pools = gather_pools(read_objects([part]).dra.resource_slices, N1)
    assert [(p.incomplete, p.invalid) for p in pools] == [(True, False)]
    assert run([claim("c", [exact("g", "gpu")])], [part]) is None
    dup = [resource_slice(f"d{i}", "gpu.example.com", "n1", [gpu("gpu-0")], node_name="n1",
                          count=2) for i in range(2)]
    with pytest.raises(InvalidPoolsError, match="invalid resource pools were encountered"):
        run([claim("c", [exact("g", "gpu")])], dup)
    with pytest.raises(AllocationError, match="asks for all devices, but resource pool "
                                              "gpu.example.com/n1 is currently being updated"):
        run([claim("c", [exact("g", "gpu", mode="All")])], [part])


def test_node_selector_of_network_attached_devices() -> None:
    shared = resource_slice("net", "gpu.example.com", "fabric", [gpu("acc-0")], selector={
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a"]}]}]})
    found = run([claim("c", [exact("g", "gpu")])], [shared])
    assert found[0].node_selector_wire == {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}
    everywhere = resource_slice("all", "gpu.example.com", "global", [gpu("seat-0")],
                                all_nodes=True)
    assert run([claim("c", [exact("g", "gpu")])], [everywhere])[0].node_selector_wire is None
