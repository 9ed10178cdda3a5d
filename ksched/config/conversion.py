"""The internal form of a defaulted v1 profile (``pkg/scheduler/apis/config``'s
``KubeSchedulerProfile`` and ``PluginSet``, converted from v1 as the generated conversions do:
weights are 0 where v1 had none), which validation and the framework read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["InternalProfile", "PluginSet"]


@attrs.frozen
class PluginSet:
    """An internal ``config.PluginSet``: weights are 0 where v1 had none."""

    enabled: tuple[tuple[str, int], ...] = ()
    disabled: tuple[str, ...] = ()

    @classmethod
    def from_v1(cls, value: Mapping) -> PluginSet:
        return cls(tuple((p.get("name", ""), p.get("weight", 0)) for p in value["enabled"]),
                   tuple(p["name"] for p in value["disabled"]))

    def to_json(self) -> dict[str, Any]:
        """The internal struct as ``json.Marshal`` writes it (no json tags; nil slices null)."""
        return {"Enabled": [{"Name": n, "Weight": w} for n, w in self.enabled] or None,
                "Disabled": [{"Name": n, "Weight": 0} for n in self.disabled] or None}


@attrs.frozen
class InternalProfile:
    """An internal ``config.KubeSchedulerProfile`` after defaulting."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Mapping[str, PluginSet]
    #: (name, args): a dict for typed args, ``UnknownArgs`` or ``None`` otherwise.
    plugin_config: tuple[tuple[str, Any], ...]

    @classmethod
    def from_v1(cls, prof: Mapping[str, Any]) -> InternalProfile:
        return cls(prof.get("schedulerName", ""), prof.get("percentageOfNodesToScore"),
                   {k: PluginSet.from_v1(v) for k, v in prof["plugins"].items()},
                   tuple((pc.get("name", ""), pc.get("args")) for pc in prof["pluginConfig"]))

    def args(self, name: str) -> Any:
        return next((a for n, a in self.plugin_config if n == name), None)
