"""Hostile resource.k8s.io objects: each refused with one error naming the object and the
field, in the words of v1.35's ``pkg/apis/resource/validation`` (or the decoder's, for wrong
types), never a traceback or a silent load."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conftest import claim, device_class, exact, gpu, resource_slice
from ksched.errors import InvalidObjectError, KschedError, UnsupportedFeatureError
from ksched.io import read_objects

CLASS = device_class("gpu", 'device.driver == "gpu.example.com"')
SLICE = resource_slice("s", "gpu.example.com", "n1", [gpu("gpu-0", model="h100")],
                       node_name="n1")
CLAIM = claim("c", [exact("g", "gpu")])
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [exact("g", "gpu")]}}}}


def edit(obj: dict, path: str, value: Any) -> dict:
    """A copy of ``obj`` with the dotted ``path`` (list indices as numbers) set to ``value``
    (``DELETE``: removed)."""
    out = copy.deepcopy(obj)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    here = out
    for p in parents:
        here = here[p]
    if value is DELETE:
        del here[last]
    else:
        here[last] = value
    return out


DELETE = object()
SEL = 'device.driver == "gpu.example.com"'
R = "spec.devices.requests.0"
E = "spec.devices.requests.0.exactly"

CASES = [
    # ------------------------------------------------------------------ DeviceClass
    (edit(CLASS, "metadata.name", "GPU"),
     'deviceclass GPU: metadata.name: Invalid value: "GPU": a lowercase RFC 1123 subdomain '
     "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    (edit(CLASS, "spec", "gpus"),
     "deviceclass gpu: spec: expected an object, got a string"),
    (edit(CLASS, "spec.selectors", {"cel": {}}),
     "deviceclass gpu: spec.selectors: expected a list, got an object"),
    (edit(CLASS, "spec.selectors", [{}]),
     "deviceclass gpu: spec.selectors[0].cel: Required value"),
    (edit(CLASS, "spec.selectors", [{"cel": {"expression": 7}}]),
     "deviceclass gpu: spec.selectors[0].cel.expression: expected a string, got an integer"),
    (edit(CLASS, "spec.selectors", [{"cel": {"expression": "device.driver.size()"}}]),
     'deviceclass gpu: spec.selectors[0].cel.expression: Invalid value: '
     '"device.driver.size()": must evaluate to bool or the unknown type, not int'),
    (edit(CLASS, "spec.selectors", [{"cel": {"expression": SEL}}] * 33),
     "deviceclass gpu: spec.selectors: Too many: 33: must have at most 32 items"),
    (edit(CLASS, "spec.selectors", [{"cel": {"expression": "true || " * 1300 + "true"}}]),
     "deviceclass gpu: spec.selectors[0].cel.expression: Too long: may not be more than "
     "10240 bytes"),
    (edit(CLASS, "spec.config", [{}]),
     "deviceclass gpu: spec.config[0].opaque: Required value"),
    (edit(CLASS, "spec.config", [{"opaque": {"driver": "Gpu_Example", "parameters": {}}}]),
     'deviceclass gpu: spec.config[0].opaque.driver: Invalid value: "Gpu_Example": a '
     "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
     "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
     "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    (edit(CLASS, "spec.config", [{"opaque": {"driver": "gpu.example.com"}}]),
     "deviceclass gpu: spec.config[0].opaque.parameters: Required value"),
    (edit(CLASS, "spec.config", [{"opaque": {"driver": "gpu.example.com",
                                             "parameters": [1]}}]),
     'deviceclass gpu: spec.config[0].opaque.parameters: Invalid value: "<value omitted>": '
     "must be a valid JSON object"),
    # ------------------------------------------------------------------ ResourceSlice
    (edit(SLICE, "spec.driver", ""),
     "resourceslice s: spec.driver: Required value"),
    (edit(SLICE, "spec.driver", "d" * 64),
     "resourceslice s: spec.driver: Too long: may not be more than 63 bytes"),
    (edit(SLICE, "spec.pool.name", ""),
     "resourceslice s: spec.pool.name: Required value"),
    (edit(SLICE, "spec.pool.name", "a//b"),
     'resourceslice s: spec.pool.name: Invalid value: "": a lowercase RFC 1123 subdomain '
     "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    (edit(SLICE, "spec.pool.resourceSliceCount", 0),
     "resourceslice s: spec.pool.resourceSliceCount: Invalid value: 0: must be greater than "
     "zero"),
    (edit(SLICE, "spec.pool.generation", -1),
     "resourceslice s: spec.pool.generation: Invalid value: -1: must be greater than or equal "
     "to zero"),
    (edit(SLICE, "spec.pool.generation", "1"),
     "resourceslice s: spec.pool.generation: expected an integer, got a string"),
    (edit(SLICE, "spec.nodeName", ""),
     'resourceslice s: spec.nodeName: Invalid value: "": must be either unset or set to a '
     "non-empty string"),
    (edit(SLICE, "spec.allNodes", True),
     'resourceslice s: spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of '
     "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but "
     "multiple fields are set"),
    (edit(edit(SLICE, "spec.nodeName", DELETE), "spec.allNodes", False),
     "resourceslice s: spec.allNodes: Invalid value: false: must be either unset or set to "
     "true"),
    (edit(edit(SLICE, "spec.nodeName", DELETE), "spec.nodeSelector", {"nodeSelectorTerms": []}),
     "resourceslice s: spec.nodeSelector.nodeSelectorTerms: Required value: must have at "
     "least one node selector term"),
    (edit(edit(SLICE, "spec.nodeName", DELETE), "spec.nodeSelector", {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}),
     'resourceslice s: spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: '
     'Invalid value: "Near": not a valid selector operator'),
    (edit(SLICE, "spec.perDeviceNodeSelection", True),
     "resourceslice s: spec.perDeviceNodeSelection: its feature gate is off in v1.35.4 (not "
     "modelled)"),
    (edit(SLICE, "spec.devices", [gpu(f"gpu-{i}") for i in range(129)]),
     "resourceslice s: spec.devices: Too many: 129: must have at most 128 items"),
    (edit(SLICE, "spec.devices", [gpu("gpu-0"), gpu("gpu-0")]),
     'resourceslice s: spec.devices[1]: Duplicate value: "gpu-0"'),
    (edit(SLICE, "spec.devices.0.name", "GPU_0"),
     'resourceslice s: spec.devices[0].name: Invalid value: "GPU_0": a lowercase RFC 1123 '
     "label must consist of lower case alphanumeric characters or '-', and must start and end "
     "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
    (edit(SLICE, "spec.devices.0.name", ""),
     "resourceslice s: spec.devices[0].name: Required value"),
    (edit(SLICE, "spec.devices.0.attributes", {"model": {}}),
     'resourceslice s: spec.devices[0].attributes[model]: Invalid value: "": exactly one '
     "value must be specified"),
    (edit(SLICE, "spec.devices.0.attributes", {"model": {"string": "a", "int": 1}}),
     'resourceslice s: spec.devices[0].attributes[model]: Invalid value: {"string":"a",'
     '"int":1}: exactly one value must be specified'),
    (edit(SLICE, "spec.devices.0.attributes", {"model": {"string": "x" * 65}}),
     "resourceslice s: spec.devices[0].attributes[model].string: Too long: may not be more "
     "than 64 bytes"),
    (edit(SLICE, "spec.devices.0.attributes", {"v": {"version": "1.2"}}),
     'resourceslice s: spec.devices[0].attributes[v].version: Invalid value: "1.2": must be '
     "a string compatible with semver.org spec 2.0.0"),
    (edit(SLICE, "spec.devices.0.attributes", {"n": {"int": 1.5}}),
     "resourceslice s: spec.devices[0].attributes[n].int: expected an integer, got a number"),
    (edit(SLICE, "spec.devices.0.attributes", {"1model": {"string": "a"}}),
     'resourceslice s: spec.devices[0].attributes: Invalid value: "1model": a valid C '
     "identifier must start with alphabetic character or '_', followed by a string of "
     "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex "
     "used for validation is '[A-Za-z_][A-Za-z0-9_]*')"),
    (edit(SLICE, "spec.devices.0.attributes", {"/model": {"string": "a"}}),
     'resourceslice s: spec.devices[0].attributes: Invalid value: "": the domain must not '
     "be empty"),
    (edit(SLICE, "spec.devices.0.attributes", {"a/b/c": {"string": "a"}}),
     'resourceslice s: spec.devices[0].attributes: Invalid value: "a/b/c": must not contain '
     "more than one slash"),
    (edit(SLICE, "spec.devices.0.attributes", {"x" * 33: {"string": "a"}}),
     "resourceslice s: spec.devices[0].attributes: Too long: may not be more than 32 bytes"),
    (edit(SLICE, "spec.devices.0.attributes", {f"a{i}": {"int": i} for i in range(33)}),
     "resourceslice s: spec.devices[0]: Invalid value: 34: the total number of attributes "
     "and capacities must not exceed 32"),
    (edit(SLICE, "spec.devices.0.capacity", {"memory": {"value": "lots"}}),
     'resourceslice s: spec.devices[0].capacity[memory].value: Invalid value: "lots": '
     "quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (edit(SLICE, "spec.devices.0.taints", [{"key": "k", "effect": "NoSchedule"}]),
     "resourceslice s: spec.devices[0].taints: its feature gate is off in v1.35.4 (not "
     "modelled)"),
    # ------------------------------------------------------------------ ResourceClaim
    (edit(CLAIM, "metadata.namespace", "Bad_NS"),
     'resourceclaim Bad_NS/c: metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC '
     "1123 label must consist of lower case alphanumeric characters or '-', and must start "
     "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
    (edit(CLAIM, "spec.devices.requests", {"name": "g"}),
     "resourceclaim default/c: spec.devices.requests: expected a list, got an object"),
    (edit(CLAIM, "spec.devices.requests", [exact(f"g{i}", "gpu") for i in range(33)]),
     "resourceclaim default/c: spec.devices.requests: Too many: 33: must have at most 32 "
     "items"),
    (edit(CLAIM, "spec.devices.requests", [exact("g", "gpu"), exact("g", "gpu")]),
     'resourceclaim default/c: spec.devices.requests[1]: Duplicate value: "g"'),
    (edit(CLAIM, f"{R}.name", "G"),
     'resourceclaim default/c: spec.devices.requests[0].name: Invalid value: "G": a '
     "lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
     "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
     "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
    (edit(CLAIM, f"{R}.exactly", DELETE),
     "resourceclaim default/c: spec.devices.requests[0]: Required value: exactly one of "
     "`exactly` or `firstAvailable` is required"),
    (edit(CLAIM, f"{R}.firstAvailable", [{"name": "a", "deviceClassName": "gpu"}]),
     "resourceclaim default/c: spec.devices.requests[0]: Invalid value: null: exactly one of "
     "`exactly` or `firstAvailable` is required, but multiple fields are set"),
    (edit(CLAIM, f"{E}.deviceClassName", ""),
     "resourceclaim default/c: spec.devices.requests[0].exactly.deviceClassName: Required "
     "value"),
    (edit(CLAIM, f"{E}.allocationMode", "Some"),
     'resourceclaim default/c: spec.devices.requests[0].exactly.allocationMode: Unsupported '
     'value: "Some": supported values: "All", "ExactCount"'),
    (edit(CLAIM, f"{E}.count", -3),
     "resourceclaim default/c: spec.devices.requests[0].exactly.count: Invalid value: -3: must "
     "be greater than zero"),
    (edit(edit(CLAIM, f"{E}.allocationMode", "All"), f"{E}.count", 2),
     "resourceclaim default/c: spec.devices.requests[0].exactly.count: Invalid value: 2: must "
     "not be specified when allocationMode is 'All'"),
    (edit(CLAIM, f"{E}.count", "2"),
     "resourceclaim default/c: spec.devices.requests[0].exactly.count: expected an integer, "
     "got a string"),
    (edit(CLAIM, f"{E}.adminAccess", "yes"),
     "resourceclaim default/c: spec.devices.requests[0].exactly.adminAccess: expected a "
     "boolean, got a string"),
    (edit(CLAIM, f"{E}.selectors", [{"cel": {"expression": "device.nope("}}]),
     "resourceclaim default/c: spec.devices.requests[0].exactly.selectors[0].cel.expression: "
     'Invalid value: "device.nope(": compilation failed: ERROR: <input>:1:13: Syntax error:'),
    (edit(CLAIM, f"{R}.exactly", DELETE) | {"spec": {"devices": {"requests": [
        {"name": "g", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "gpu"}
                                         for i in range(9)]}]}}},
     "resourceclaim default/c: spec.devices.requests[0].firstAvailable: Too many: 9: must "
     "have at most 8 items"),
    (edit(CLAIM, "spec.devices.requests", [{"name": "g", "firstAvailable": [
        {"name": "s", "deviceClassName": "gpu"}, {"name": "s", "deviceClassName": "gpu"}]}]),
     'resourceclaim default/c: spec.devices.requests[0].firstAvailable[1]: Duplicate value: '
     '"s"'),
    (edit(CLAIM, "spec.devices.constraints", [{"requests": ["g"]}]),
     "resourceclaim default/c: spec.devices.constraints[0].matchAttribute: Required value"),
    (edit(CLAIM, "spec.devices.constraints", [{"matchAttribute": "numa"}]),
     'resourceclaim default/c: spec.devices.constraints[0].matchAttribute: Invalid value: '
     '"numa": a fully qualified name must be a domain and a name separated by a slash'),
    (edit(CLAIM, "spec.devices.constraints", [{"matchAttribute": "gpu.example.com/n",
                                               "requests": ["g/x"]}]),
     'resourceclaim default/c: spec.devices.constraints[0].requests[0]: Invalid value: '
     '"g/x": must be the name of a request in the claim or the name of a request and a '
     "subrequest separated by '/'"),
    (edit(CLAIM, "spec.devices.constraints", [{"matchAttribute": "gpu.example.com/n",
                                               "requests": ["g", "g"]}]),
     'resourceclaim default/c: spec.devices.constraints[0].requests[1]: Duplicate value: '
     '"g"'),
    (edit(CLAIM, "spec.devices.config", [{"requests": ["h"], "opaque": {
        "driver": "gpu.example.com", "parameters": {}}}]),
     'resourceclaim default/c: spec.devices.config[0].requests[0]: Invalid value: "h": must '
     "be the name of a request in the claim or the name of a request and a subrequest "
     "separated by '/'"),
    (edit(CLAIM, "status", {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}),
     "resourceclaim default/c: status.reservedFor: Forbidden: may not be specified when "
     "`allocated` is not set"),
    (edit(CLAIM, "status", {"reservedFor": [{"resource": "pods", "name": "p"}]}),
     "resourceclaim default/c: status.reservedFor[0].uid: Required value"),
    (edit(CLAIM, "status", {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}] * 2}),
     'resourceclaim default/c: status.reservedFor[1]: Duplicate value: "u"'),
    (edit(CLAIM, "status", {"allocation": {"devices": {"results": [
        {"request": "h", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}}),
     'resourceclaim default/c: status.allocation.devices.results[0].request: Invalid value: '
     '"h": must be the name of a request in the claim or the name of a request and a '
     "subrequest separated by '/'"),
    (edit(CLAIM, "status", {"allocation": {"devices": {"results": [
        {"request": "g", "driver": "gpu.example.com", "pool": "n1"}]}}}),
     "resourceclaim default/c: status.allocation.devices.results[0].device: Required value"),
    (edit(CLAIM, "status", {"allocation": {"devices": {"config": [{"source": "FromPod"}]}}}),
     'resourceclaim default/c: status.allocation.devices.config[0].source: Unsupported '
     'value: "FromPod": supported values: "FromClaim", "FromClass"'),
    # ------------------------------------------------------------------ ResourceClaimTemplate
    (edit(TEMPLATE, "spec", []),
     "resourceclaimtemplate default/t: spec: expected an object, got a list"),
    (edit(TEMPLATE, "spec.spec.devices.requests.0.exactly.count", 0),
     "resourceclaimtemplate default/t: spec.spec.devices.requests[0].exactly.count: Invalid "
     "value: 0: must be greater than zero"),
    (edit(TEMPLATE, "spec.spec.devices.requests.0.exactly.deviceClassName", "Nope!"),
     'resourceclaimtemplate default/t: spec.spec.devices.requests[0].exactly.deviceClassName: '
     'Invalid value: "Nope!": a lowercase RFC 1123 subdomain must consist of lower case '
     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    (edit(TEMPLATE, "metadata.name", ""),
     "resourceclaimtemplate <unnamed>: metadata.name: Required value: name or generateName is "
     "required"),
]


@pytest.mark.parametrize("obj, message", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_hostile_objects_are_refused_naming_the_field(obj: dict, message: str) -> None:
    with pytest.raises(KschedError) as info:
        read_objects([obj])
    assert isinstance(info.value, InvalidObjectError | UnsupportedFeatureError)
    text = str(info.value)
    if message.endswith("Syntax error:"):  # the parser's own rest of the line
        assert text.startswith(message)
    else:
        assert text == message


def test_the_good_objects_load() -> None:
    dra = read_objects([CLASS, SLICE, CLAIM, TEMPLATE]).dra
    assert (len(dra.device_classes), len(dra.resource_slices), len(dra.resource_claims),
            len(dra.resource_claim_templates)) == (1, 1, 1, 1)
