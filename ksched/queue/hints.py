"""The AssignedPodAdd event and its queueing hint (``isPodWorthRequeuing`` over the plugins'
``QueueingHintFn``\\ s, ``pkg/scheduler/backend/queue/scheduling_queue.go``).

With ``SchedulerQueueingHints`` on (v1.35's default) ``addAssignedPodToCache``
(``pkg/scheduler/eventhandlers.go``) answers every bound pod the informer sees with
``MoveAllToActiveOrBackoffQueue(EventAssignedPodAdd, nil, pod, nil)``: no pre-filter
(``AssignedPodAdded``'s ``getUnschedulablePodsWithCrossTopologyTerm`` is the path with hints
off). A pod moves when one of its rejecting plugins registered for Pod/Add and that plugin's hint
answers Queue. In tree (v1.35.4, default gates) only InterPodAffinity and PodTopologySpread
register for it (``EventsToRegister``); here a plugin registers by having a
``schedulable_after_pod_added(target, added, state) -> bool`` hint, so a pod rejected only by
NodeResourcesFit, say, stays where it is. The Simulator sends the event after each successful
Bind, whether the compiled loop or the framework placed the pod (pods a timeline creates bound
included).

A bound pod updated in place (``updatePodInCache``) sends each event of
``PodSchedulingPropertiesChange`` (``AssignedPodUpdatePodLabel``,
``AssignedPodUpdatePodScaleDown``...) the same way: ``MoveAllToActiveOrBackoffQueue(evt, oldPod,
newPod, nil)`` (:class:`PodUpdateHints`). A plugin registers for assigned Pod/Update actions with
a ``POD_UPDATE_ACTIONS`` tuple and a ``schedulable_after_pod_updated(target, old, new, state)``
hint: InterPodAffinity and PodTopologySpread for UpdatePodLabel, NodeResourcesFit for
UpdatePodScaleDown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ksched.api import Pod
from ksched.queue.events import ASSIGNED_POD_ADD, pod_update_events
from ksched.queue.queued_pod_info import Hint, QueuedPodInfo

if TYPE_CHECKING:
    from ksched.queue.scheduling_queue import SchedulingQueue
    from ksched.state import ClusterState

__all__ = ["PodAddHints", "PodUpdateHints"]

#: The hint method a plugin registers for assigned Pod/Add with.
HINT = "schedulable_after_pod_added"
#: The hint method and the action list a plugin registers for assigned Pod/Update with.
UPDATE_HINT, UPDATE_ACTIONS = "schedulable_after_pod_updated", "POD_UPDATE_ACTIONS"
#: The prefix of the events of an assigned pod's update (``framework.AssignedPod``).
ASSIGNED_POD = "AssignedPod"


class PodAddHints:
    """The plugins of each profile registered for assigned Pod/Add, and the event sent.

    Parameters
    ----------
    plugins : the enabled plugins of each profile, by scheduler name, then plugin name
        (``Framework.plugins``).
    """

    def __init__(self, plugins: Mapping[str, Mapping[str, Any]]) -> None:
        self._hints = {profile: tuple((name, getattr(p, HINT)) for name, p in enabled.items()
                                      if hasattr(p, HINT))
                       for profile, enabled in plugins.items()}
        #: Every plugin registered in some profile, sorted (the pods move in a set order):
        #: only pods one of them rejected can move.
        self.plugins = tuple(sorted({name for hints in self._hints.values() for name, _ in hints}))

    def hint(self, pod: Pod, node: str, state: ClusterState) -> Hint:
        """The event's hint for ``pod`` bound to ``node``: Queue when a rejecting plugin of the
        queued pod (``UnschedulablePlugins`` or ``PendingPlugins``) registered for the event
        and its hint says so (the bound copy of ``pod`` is made on first use)."""
        hints, bound = self._hints, []

        def hint(info: QueuedPodInfo, event: str) -> bool:
            for name, fn in hints.get(info.pod.scheduler_name, ()):
                if name in info.unschedulable_plugins or name in info.pending_plugins:
                    if not bound:
                        bound.append(pod if pod.node_name == node else pod.bound_to(node))
                    if fn(info.pod, bound[0], state):
                        return True
            return False

        return hint

    def send(self, queue: SchedulingQueue, pod: Pod, node: str, state: ClusterState) -> None:
        """``MoveAllToActiveOrBackoffQueue(EventAssignedPodAdd, nil, pod, nil)`` for ``pod``
        just bound to ``node`` (``state``: the cluster the hints read, for default spreading
        selectors); also recorded for the pods in flight."""
        queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, self.hint(pod, node, state),
                                            self.plugins)


class PodUpdateHints:
    """The plugins of each profile registered for assigned Pod/Update actions, and the events
    sent when a bound pod changes in place.

    Parameters
    ----------
    plugins : the enabled plugins of each profile, by scheduler name, then plugin name.
    """

    def __init__(self, plugins: Mapping[str, Mapping[str, Any]]) -> None:
        self._hints = {profile: tuple((name, frozenset(getattr(p, UPDATE_ACTIONS)),
                                       getattr(p, UPDATE_HINT))
                                      for name, p in enabled.items() if hasattr(p, UPDATE_HINT))
                       for profile, enabled in plugins.items()}

    def send(self, queue: SchedulingQueue, old: Pod, new: Pod, state: ClusterState) -> None:
        """``updatePodInCache`` with SchedulerQueueingHints: for each event of
        ``PodSchedulingPropertiesChange(new, old)``, ``MoveAllToActiveOrBackoffQueue`` with the
        hints of the rejecting plugins registered for its action (``isPodWorthRequeuing``);
        an event no plugin registered for moves nothing."""
        hints = self._hints
        for event in pod_update_events(old, new):
            action = event.removeprefix(ASSIGNED_POD)
            plugins = sorted({name for registered in hints.values()
                              for name, actions, _ in registered if action in actions})
            if not plugins:
                continue

            def hint(info: QueuedPodInfo, event: str, action: str = action) -> bool:
                for name, actions, fn in hints.get(info.pod.scheduler_name, ()):
                    if action in actions and (name in info.unschedulable_plugins
                                              or name in info.pending_plugins) \
                            and fn(info.pod, old, new, state):
                        return True
                return False

            queue.move_all_to_active_or_backoff(event, hint, plugins)
