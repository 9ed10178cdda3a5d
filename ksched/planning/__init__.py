"""Capacity planning on top of the engine: how many more fit (:func:`capacity`), workloads
expanded into pods as their controllers would (:func:`expand`), and headroom, fragmentation and
zone loss (:func:`headroom`), and the nodes of which types make pending workloads schedule
(:func:`plan`). Planner code calls the engine's public functions only."""

from ksched.planning.capacity import capacity
from ksched.planning.capacity_report import CapacityReport, CapacityResult
from ksched.planning.headroom import HeadroomReport, headroom
from ksched.planning.plan import PlanReport, plan
from ksched.planning.workloads import Expansion, expand, expand_workloads

__all__ = ["CapacityReport", "CapacityResult", "Expansion", "HeadroomReport", "PlanReport",
           "capacity", "expand", "expand_workloads", "headroom", "plan"]
