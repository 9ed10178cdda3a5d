"""CEL device selectors (ksched.dra.cel)."""

from __future__ import annotations

import pytest

from ksched.dra.cel import CelRuntimeError, compile_selector

DEVICE = dict(driver="gpu.example.com",
              attributes={"model": ("string", "h100"), "numaNode": ("int", 1),
                          "driverVersion": ("version", "545.1.0"), "ecc": ("bool", True),
                          "resource.kubernetes.io/pcieRoot": ("string", "pci0000:10")},
              capacity={"memory": "80Gi"})


@pytest.mark.parametrize("expression, verdict", [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model in ["a100", "h100"]', True),
    ('cel.bind(g, device.attributes["gpu.example.com"], g.model == "l4" || g.numaNode == 1)',
     True),
    ('!has(device.attributes["gpu.example.com"].ecc) || device.attributes["gpu.example.com"].ecc',
     True),
    ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("550.0.0")) >= 0',
     False),
    ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("545.1.0-rc.1")) > 0',
     True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("81920Mi"))', False),
    ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:10"', True),
    ('has(device.attributes["other.example.com"].x)', False),
])
def test_selectors_evaluate_as_upstream(expression: str, verdict: bool) -> None:
    selector = compile_selector(expression)
    assert selector.error is None
    assert selector.evaluate(**DEVICE) is verdict


def test_a_selector_is_compiled_once() -> None:
    assert compile_selector('device.driver == "a"') is compile_selector('device.driver == "a"')


def test_compile_errors_are_kept() -> None:
    assert compile_selector('"x".compareTo(semver("1.0.0")) > 0').error.startswith(
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'compareTo'")
    assert compile_selector("1").error == "must evaluate to bool or the unknown type, not int"


def test_a_missing_attribute_is_a_runtime_error() -> None:
    found = compile_selector('device.attributes["gpu.example.com"].nope == 1').evaluate(**DEVICE)
    assert isinstance(found, CelRuntimeError)
    assert str(found) == "no such key: nope"
