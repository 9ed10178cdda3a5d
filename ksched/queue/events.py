"""The cluster events the queue reacts to (``pkg/scheduler/framework/events.go``): their labels,
the wildcard ones, the in-flight event record, and the events of a pod update
(``PodSchedulingPropertiesChange``).
"""

from __future__ import annotations

import attrs

from ksched.api import Pod
from ksched.queue.queued_pod_info import Hint
from ksched.resources import pod_requests

__all__ = ["ASSIGNED_POD_ADD", "ASSIGNED_POD_DELETE", "BACKOFF_COMPLETE", "FORCE_ACTIVATE",
           "NODE_ADD", "NODE_UPDATE", "SCHEDULE_ATTEMPT_FAILURE", "SCHEDULING_GATES",
           "UNSCHEDULABLE_TIMEOUT", "UNSCHEDULED_POD_ADD", "UNSCHEDULED_POD_UPDATE",
           "WILDCARD_EVENTS", "ClusterEvent", "pod_update_events"]

#: The PreEnqueue plugin modelled here (``plugins/schedulinggates``).
SCHEDULING_GATES = "SchedulingGates"

# Event labels (``pkg/scheduler/framework/events.go``).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
UNSCHEDULED_POD_ADD = "UnschedulablePodAdd"
UNSCHEDULED_POD_UPDATE = "UnschedulablePodUpdate"
ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE = "AssignedPodAdd", "AssignedPodDelete"
NODE_ADD, NODE_UPDATE = "NodeAdd", "NodeUpdate"
#: Wildcard events (``ClusterEventIsWildCard``) requeue a pod whatever rejected it.
WILDCARD_EVENTS = frozenset({FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT})


@attrs.frozen
class ClusterEvent:
    """An entry of ``inFlightEvents``: an event received while some pod was in flight."""

    mark: int
    event: str
    hint: Hint | None
    #: The pod the event is about (ForceActivate, the pod's own update), or None for all.
    target: str | None


def pod_update_events(old: Pod | None, new: Pod) -> list[str]:
    """Event labels of a pod update (``framework.PodSchedulingPropertiesChange``).

    Models the label, scale-down (``extractPodScaleDown``: a resource request lowered or
    gone), scheduling-gate and toleration extractors; generated resource-claim changes fall
    under the general ``Update``.
    """
    resource = "UnschedulablePod" if not new.node_name else "AssignedPod"
    if old is None:
        return [resource + "Update"]
    actions = []
    if dict(old.labels) != dict(new.labels):
        actions.append("UpdatePodLabel")
    if _scaled_down(old, new):
        actions.append("UpdatePodScaleDown")
    if not getattr(new, "scheduling_gates", ()) and getattr(old, "scheduling_gates", ()):
        actions.append("UpdatePodSchedulingGatesEliminated")
    if len(new.tolerations) != len(old.tolerations):
        actions.append("UpdatePodToleration")
    return [resource + a for a in actions] or [resource + "Update"]


def _scaled_down(old: Pod, new: Pod) -> bool:
    """``extractPodScaleDown``: some resource ``old`` requests is requested less or not at all
    by ``new`` (``PodRequests``, the spec's requests: ksched reads no resize status)."""
    if old.containers is new.containers and old.init_containers is new.init_containers \
            and old.overhead is new.overhead and old.pod_requests is new.pod_requests:
        return False
    before, after = pod_requests(old), pod_requests(new)
    return any(name not in after or amount > after[name] for name, amount in before.items())
