"""ksched: kube-scheduler v1.35's decisions, from a columnar, vectorised engine.

>>> import ksched
>>> cluster = ksched.load_cluster("snapshot.json")            # doctest: +SKIP
>>> result = ksched.schedule_batch(cluster, ksched.load_pods("pending.yaml"))  # doctest: +SKIP

The public names are imported on first use (PEP 562), so ``import ksched`` and the command
line load only the modules a run needs (the planner, the sweeps, the simulator, preemption's
machinery stay unloaded for a plain ``ksched schedule``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

#: Each public name and the module it comes from.
_SOURCES = {
    "ksched.api": (
        "CSIDriver", "CSINode", "CSIStorageCapacity", "Container", "ContainerImage",
        "ContainerPort", "Namespace", "Node", "NodeAffinity", "NodeSelectorRequirement",
        "NodeSelectorTerm", "PersistentVolume", "PersistentVolumeClaim", "Pod",
        "PodDisruptionBudget", "PriorityClass", "StorageClass", "Taint", "Toleration", "Volume",
        "Workload"),
    "ksched.config": ("SchedulerConfig", "load_config"),
    "ksched.engine": ("Placement", "Result", "schedule_batch"),
    "ksched.errors": ("ArgumentError", "ClusterAccessError", "ConfigError", "InvalidObjectError",
                      "KschedError", "UnsupportedFeatureError"),
    "ksched.explain": ("Explanation", "explain"),
    "ksched.io": ("Objects", "admit_priorities", "read_objects"),
    "ksched.loading": ("cluster_from_objects", "load_cluster", "load_pods", "warmup"),
    "ksched.planning": ("CapacityReport", "HeadroomReport", "PlanReport", "capacity", "expand",
                        "headroom", "plan"),
    "ksched.pod_table": ("PodTable",),
    "ksched.profile": ("Profile", "default_profile"),
    "ksched.queue": ("SchedulingQueue",),
    "ksched.simulator": ("Event", "SimulationResult", "Simulator"),
    "ksched.state": ("ClusterState",),
    "ksched.storage_listers": ("StorageObjects",),
    "ksched.sweep": ("Scenario", "SweepResult", "sweep"),
}
#: Other names for public names: the columnar cluster (``ClusterState``) under the name users
#: look for.
_ALIASES = {"Cluster": "ClusterState"}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}

__all__ = sorted([*_MODULE_OF, *_ALIASES])


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept."""
    target = _ALIASES.get(name, name)
    module = _MODULE_OF.get(target)
    if module is None:
        raise AttributeError(f"module 'ksched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), target)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        """Importing a submodule binds it on its package; ``ksched.explain`` and
        ``ksched.sweep`` stay the functions of those names, not the modules."""
        if name in _MODULE_OF and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
