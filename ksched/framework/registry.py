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
        for name, factory in _items(factories or {}):
            self.register(name, factory)

    def register(self, name: str, factory: PluginFactory) -> None:
        """Add a plugin (``Registry.Register``); the name must be new and the factory callable."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a plugin name must be a non-empty string, got {name!r}")
        if not callable(factory):
            raise ConfigError(f"plugin {name}: the factory must be callable, got "
                              f"{type(factory).__name__}")
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
        for name, factory in _items(other):
            out.register(name, factory)
        return out

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)


def _items(factories: Any) -> list[tuple[Any, Any]]:
    if not isinstance(factories, Mapping):
        raise ConfigError(f"plugins must be given as a mapping of names to factories, got "
                          f"{type(factories).__name__}")
    return list(factories.items())
