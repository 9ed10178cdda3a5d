from __future__ import annotations

import pytest

from ksched.errors import ConfigError
from ksched.framework.interfaces import EXTENSION_POINTS, implements
from ksched.framework.registry import Registry
from ksched.plugins import IN_TREE_REGISTRY
from ksched.profile import default_profile


def test_duplicate_register_is_an_error() -> None:
    registry = Registry({"A": lambda args: None})
    with pytest.raises(ConfigError, match="a plugin named A already exists"):
        registry.register("A", lambda args: None)


def test_unknown_unregister_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no plugin named B exists"):
        Registry().unregister("B")


def test_merged_keeps_both_and_refuses_overlap() -> None:
    merged = Registry({"A": lambda a: 1}).merged({"B": lambda a: 2})
    assert sorted(merged) == ["A", "B"]
    with pytest.raises(ConfigError):
        merged.merged({"A": lambda a: 3})


@pytest.mark.parametrize("point", EXTENSION_POINTS)
def test_default_profile_plugins_satisfy_their_protocols(point: str) -> None:
    protocol = EXTENSION_POINTS[point]
    for name in default_profile().plugins[point]:
        plugin = IN_TREE_REGISTRY[name](None)
        assert implements(plugin, point), name
        assert isinstance(plugin, protocol), name
        assert plugin.NAME == name
