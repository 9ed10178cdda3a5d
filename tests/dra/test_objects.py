"""resource.k8s.io/v1 objects read and validated (ksched.dra.objects)."""

from __future__ import annotations

import pytest

from conftest import claim, device_class, exact, gpu, resource_slice
from ksched.errors import InvalidObjectError
from ksched.io import read_objects


def test_objects_are_read_into_the_state() -> None:
    objects = read_objects([device_class("gpu", 'device.driver == "gpu.example.com"'),
                            resource_slice("s", "gpu.example.com", "n1", [gpu("gpu-0", index=0)],
                                           node_name="n1"),
                            claim("c", [exact("g", "gpu", 2)])])
    dra = objects.dra
    assert dra.device_class("gpu").selectors[0].expression == 'device.driver == "gpu.example.com"'
    assert dra.resource_slices[0].devices[0].attributes == {"index": ("int", 0)}
    assert dra.claim("default", "c").spec.requests[0].exactly.count == 2


@pytest.mark.parametrize("obj, message", [
    (device_class("gpu", "device.driver =="),
     "deviceclass gpu: spec.selectors[0].cel.expression: Invalid value: "),
    (device_class("gpu", '"gpu"'),
     'deviceclass gpu: spec.selectors[0].cel.expression: Invalid value: "\\"gpu\\"": '
     "must evaluate to bool or the unknown type, not string"),
    (claim("c", [exact("g", "gpu", 0)]),
     "resourceclaim default/c: spec.devices.requests[0].exactly.count: Invalid value: 0: "
     "must be greater than zero"),
    (claim("c", [{"name": "g"}]),
     "resourceclaim default/c: spec.devices.requests[0]: Required value: exactly one of "
     "`exactly` or `firstAvailable` is required"),
    (claim("c", [exact("g", "gpu")], constraints=[{"matchAttribute": "gpu.example.com/x",
                                                   "requests": ["h"]}]),
     'resourceclaim default/c: spec.devices.constraints[0].requests[0]: Invalid value: "h": '
     "must be the name of a request in the claim"),
    (resource_slice("s", "gpu.example.com", "n1", [gpu("gpu-0"), gpu("gpu-0")], node_name="n1"),
     'resourceslice s: spec.devices[1]: Duplicate value: "gpu-0"'),
    (resource_slice("s", "gpu.example.com", "n1", [gpu("gpu-0", driverVersion="1.2")],
                    node_name="n1"),
     'resourceslice s: spec.devices[0].attributes[driverVersion].version: Invalid value: "1.2": '
     "must be a string compatible with semver.org spec 2.0.0"),
    (resource_slice("s", "gpu.example.com", "n1", []),
     "resourceslice s: spec: Required value: exactly one of `nodeName`, `nodeSelector`, "
     "`allNodes`, `perDeviceNodeSelection` is required"),
])
def test_invalid_objects_are_refused_naming_the_field(obj: dict, message: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        read_objects([obj])
    assert str(info.value).startswith(message)


def test_a_claim_given_twice_is_refused() -> None:
    with pytest.raises(InvalidObjectError, match="resourceclaim default/c: metadata.name"):
        read_objects([claim("c", [exact("g", "gpu")]), claim("c", [exact("g", "gpu")])]).dra


def _held(name: str, device: str) -> dict:
    """A claim named ``name`` allocated device ``device`` of pool n1."""
    return claim(name, [exact("g", "gpu")], status={"allocation": {"devices": {"results": [
        {"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": device}]}}})


def test_claim_versions_are_independent_and_keep_the_claims_in_order() -> None:
    base = read_objects([_held("a", "gpu-0"), claim("b", [exact("g", "gpu")]),
                         _held("c", "gpu-2")]).dra
    assert set(base.allocated_devices()) == {("gpu.example.com", "n1", "gpu-0"),
                                             ("gpu.example.com", "n1", "gpu-2")}
    b_held = read_objects([_held("b", "gpu-1")]).dra.claim("default", "b")
    d = read_objects([_held("d", "gpu-3")]).dra.claim("default", "d")
    new = base.updated([d, b_held], deleted=[("default", "a")])
    assert [c.name for c in new.resource_claims] == ["b", "c", "d"]
    assert new.claim("default", "a") is None and new.claim("default", "b") is b_held
    assert sorted(dev for _, _, dev in new.allocated_devices()) == ["gpu-1", "gpu-2", "gpu-3"]
    # the older version is unchanged
    assert [c.name for c in base.resource_claims] == ["a", "b", "c"]
    assert base.claim("default", "b").allocation is None
    assert sorted(dev for _, _, dev in base.allocated_devices()) == ["gpu-0", "gpu-2"]
    again = new.updated([base.claim("default", "a")])
    assert [c.name for c in again.resource_claims] == ["b", "c", "d", "a"]
    assert new.changes_since(base) == [((base.claim("default", "a"), base.claim("default", "b")),
                                        (d, b_held))]
