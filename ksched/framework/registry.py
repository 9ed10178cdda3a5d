"""Plugin registry: plugin name -> factory (``pkg/scheduler/framework/runtime/registry.go``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ksched.errors import ConfigError

#: ``factory(args) -> plugin``; ``args`` is the plugin's args object or ``None``.
PluginFactory = Callable[[Any], Any]


class Registry(Mapping[str, PluginFactory]):
    """A mapping of plugin names to factories that refuses duplicates and unknown removals."""

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self._factories:
            raise ConfigError(f"a plugin named {name} already exists")
        self._factories[name] = factory

    def unregister(self, name: str) -> None:
        if name not in self._factories:
            raise ConfigError(f"no plugin named {name} exists")
        del self._factories[name]

    def merged(self, other: Mapping[str, PluginFactory]) -> Registry:
        """A new registry with ``other``'s plugins added (duplicates are errors)."""
        out = Registry(self._factories)
        for name, factory in other.items():
            out.register(name, factory)
        return out

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)
