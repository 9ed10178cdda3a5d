"""In-tree plugins, one module each, named as upstream names them.

A plugin is a small frozen attrs class with a ``NAME`` and the methods of its extension points
(:mod:`ksched.framework.interfaces`); its arithmetic is a kernel of :mod:`ksched.kernels`.
Adding one takes three files:

1. its module here (or anywhere, for your own plugins), with a plain reference implementation
   beside the kernel it calls;
2. its line in ``IN_TREE_PLUGINS`` below (``IN_TREE_REGISTRY.merged({...})`` for your own);
3. its test in ``tests/plugins/``: the kernel against the reference on random clusters.

It joins the fused loop by saying what it is (:mod:`ksched.framework.capabilities`): a Filter
whose verdict depends on the node alone sets ``FILTER_KIND = FilterKind.NODE_STATIC`` (and
``judged_by_node_class(pod)`` when nodes of one class get one verdict), a Score likewise
``SCORE_KIND`` and ``NORMALIZATION``; nothing else in ksched needs to change
(``tests/framework/test_custom_node_static_filter.py`` shows it). Plugins that declare nothing
run in the object-level framework, one cycle at a time.
"""

from __future__ import annotations

from ksched.framework.registry import Registry
from ksched.framework.runtime import set_default_registry
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
set_default_registry(IN_TREE_REGISTRY)

__all__ = ["IN_TREE_REGISTRY", "IN_TREE_PLUGINS"] + [p.__name__ for p in IN_TREE_PLUGINS]
