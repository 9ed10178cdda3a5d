"""Versions of the DRA objects: the running device count of :class:`DeviceColumns` against a
fresh count, the claim assume cache sharing one version while nothing is assumed, and
:func:`evolved` against ``attrs.evolve``."""

from __future__ import annotations

import attrs
import numpy as np
from conftest import device_class, exact, gpu, node, resource_slice

from ksched import cluster_from_objects
from ksched.dra.claims import AllocationResult, DeviceResult, ResourceClaim
from ksched.dra.compiled import DeviceColumns
from ksched.dra.state import ClaimCache, dra_objects, evolved, with_dra
from ksched.dra.workloads import template_pod
from ksched.io import read_objects

A = "a.example.com"


def cluster(nodes: int = 3, devices: int = 3):
    objects = [node(f"n{i}") for i in range(nodes)]
    objects.append(device_class("gpu", f'device.driver == "{A}"'))
    objects += [resource_slice(f"n{i}", A, f"n{i}", [gpu(f"g{d}") for d in range(devices)],
                               node_name=f"n{i}") for i in range(nodes)]
    state = cluster_from_objects(read_objects(objects))
    spec = read_objects([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": "c", "namespace": "default"},
                          "spec": {"devices": {"requests": [exact("gpu", "gpu")]}}}]
                        ).dra.resource_claims[0].spec
    return state, spec


def claim(name: str, spec, device: tuple[str, str] | None = None) -> ResourceClaim:
    made = ResourceClaim(name, "default", f"uid-{name}", spec)
    if device is None:
        return made
    results = (DeviceResult("gpu", A, device[0], device[1], False),)
    return attrs.evolve(made, allocation=AllocationResult(results))


def fresh(state) -> np.ndarray:
    """The taken devices counted from scratch (a new DeviceColumns)."""
    columns = DeviceColumns(state)
    columns._column(("gpu", ()), dra_objects(state))
    return columns.table(state)[1]


def test_the_running_count_is_a_fresh_count_after_branches_and_restores() -> None:
    state, spec = cluster()
    columns = DeviceColumns.of(state)
    assert columns._column(("gpu", ()), dra_objects(state)) == 0
    base = dra_objects(state)
    v1 = base.updated([claim("a", spec, ("n0", "g0")), claim("b", spec, ("n1", "g0"))])
    v2 = v1.updated([claim("c", spec, ("n0", "g1"))], [("default", "b")])
    v3 = v2.updated([claim("a", spec)])  # deallocated
    branch = v1.updated([claim("d", spec, ("n2", "g2"))])  # v1 is not its line's tip
    versions = [base, v1, v2, v3, v1, branch, v3, base, v2, branch, branch]
    for dra in versions:
        s = with_dra(state, dra)
        limits, taken = columns.table(s)
        assert (taken == fresh(s)).all()
        assert (limits == [[3]] * 3).all()
        taken[:] = 99  # the caller's own: the next count does not see it
        limits[:] = 99
    assert (columns.table(with_dra(state, v3))[1] == fresh(with_dra(state, v3))).all()
    assert (columns.table(with_dra(state, v3))[0] == 3).all()


def test_the_claim_cache_shares_one_version_while_nothing_is_assumed() -> None:
    state, spec = cluster()
    cache = ClaimCache(dra_objects(state))
    a = claim("a", spec)
    cache.write([a])
    assert cache.api is cache.current and cache.current.claim("default", "a") is a
    reserved = claim("a", spec, ("n0", "g0"))
    cache.assume([reserved])
    assert cache.api.claim("default", "a") is a
    assert cache.current.claim("default", "a") is reserved
    other = claim("b", spec)
    cache.write([other])  # the controller writes while "a" is assumed
    assert cache.api is not cache.current
    assert cache.api.claim("default", "b") is other is cache.current.claim("default", "b")
    assert cache.current.claim("default", "a") is reserved
    current = cache.current
    cache.write([reserved])  # PreBind: the assumed version, written
    assert cache.current is current and cache.api is current
    assert list(cache.api.allocated_devices()) == [(A, "n0", "g0")]
    cache.assume([claim("b", spec, ("n1", "g0"))])
    cache.restore([("default", "b")])
    assert cache.current.claim("default", "b") is other
    cache.write([], [("default", "a")])
    assert cache.api is cache.current
    assert [c.name for c in cache.current.resource_claims] == ["b"]
    assert not list(cache.current.allocated_devices())


def test_a_claim_assumed_before_the_api_has_it_keeps_the_versions_apart() -> None:
    state, spec = cluster()
    cache = ClaimCache(dra_objects(state))
    early = claim("early", spec, ("n0", "g0"))
    cache.assume([early])
    cache.write([claim("x", spec)])
    cache.write([early])
    assert [c.name for c in cache.api.resource_claims] == ["x", "early"]
    assert [c.name for c in cache.current.resource_claims] == ["early", "x"]


def test_evolved_is_attrs_evolve() -> None:
    state, spec = cluster()
    pod = read_objects([template_pod(1)]).pods[0]
    for obj, changes in ((state, {"objects": state.objects}),
                         (pod, {"claim_statuses": (("gpu", "x"),), "name": "other"}),
                         (claim("a", spec), {"reserved_for": (("pods", "p", "u"),)})):
        made, expected = evolved(obj, **changes), attrs.evolve(obj, **changes)
        assert type(made) is type(expected)
        for f in attrs.fields(type(obj)):
            left, right = getattr(made, f.name), getattr(expected, f.name)
            assert left is right or np.array_equal(left, right) or left == right, f.name
