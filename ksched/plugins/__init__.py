"""In-tree plugins, one module each, named as upstream names them."""

from __future__ import annotations

from ksched.framework.registry import Registry
from ksched.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from ksched.plugins.default_binder import DefaultBinder
from ksched.plugins.default_preemption import DefaultPreemption
from ksched.plugins.dynamic_resources import DynamicResources
from ksched.plugins.image_locality import ImageLocality
from ksched.plugins.inter_pod_affinity import InterPodAffinity
from ksched.plugins.node_affinity import NodeAffinity
from ksched.plugins.node_name import NodeName
from ksched.plugins.node_ports import NodePorts
from ksched.plugins.node_resources_fit import NodeResourcesFit
from ksched.plugins.node_unschedulable import NodeUnschedulable
from ksched.plugins.node_volume_limits import NodeVolumeLimits
from ksched.plugins.pod_topology_spread import PodTopologySpread
from ksched.plugins.priority_sort import PrioritySort
from ksched.plugins.scheduling_gates import SchedulingGates
from ksched.plugins.taint_toleration import TaintToleration
from ksched.plugins.volume_binding import VolumeBinding
from ksched.plugins.volume_restrictions import VolumeRestrictions
from ksched.plugins.volume_zone import VolumeZone

IN_TREE_PLUGINS = (
    NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
    VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread,
    InterPodAffinity, DynamicResources, NodeResourcesBalancedAllocation, ImageLocality,
    SchedulingGates, PrioritySort, DefaultPreemption, DefaultBinder,
)
IN_TREE_REGISTRY = Registry({plugin.NAME: plugin for plugin in IN_TREE_PLUGINS})

__all__ = ["IN_TREE_REGISTRY", "IN_TREE_PLUGINS"] + [p.__name__ for p in IN_TREE_PLUGINS]
