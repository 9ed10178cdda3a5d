"""Why the next copy does not fit: the scheduler's full condition message for capacity's
stop reason (the FitError diagnosis, then what PostFilter appends:
``0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3
nodes are available: 3 No preemption victims found for incoming pod.``), as the pod's
``PodScheduled`` condition says it and cluster-capacity reports it.

Two ways, one answer:

- :func:`condition_message` runs the copy through :class:`ksched.simulator.Simulator` on the
  cluster as it was when the copy came (its first failed cycle, PostFilter included); exact
  for every template and profile.
- :func:`closed_form_message` builds the same message from arrays when the closed form holds
  (the default profile, node-local filters): the static filters' statuses from one explained
  cycle on the cluster as given, NodeResourcesFit's on the free capacity left, and
  DefaultPreemption's verdict per node (lower-priority pods removed) — milliseconds, no pod
  bound. It returns ``None`` where it cannot be sure (a PreFilter rejection, host ports,
  ``preemptionPolicy: Never``, a non-static filter other than NodeResourcesFit), and the caller
  falls back to :func:`condition_message`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.explain import Explanation
from ksched.framework.preemption import NO_VICTIMS, NOT_HELPFUL
from ksched.profile import default_profile
from ksched.resources import is_scalar_resource, pod_requests, request_vector
from ksched.simulator import UNSCHEDULABLE, Event, Simulator
from ksched.state import ClusterState, host_ports
from ksched.status import Code, Status, counted_fit_error_message, unresolvable, unschedulable

__all__ = ["closed_form_message", "condition_message"]

_FIT = "NodeResourcesFit"
_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE.upstream_name
#: What DynamicResources' PostFilter says for a pod without resource claims.
_NO_CLAIMS = "no new claims to deallocate"
#: The default profile's PostFilter plugins, in the order the closed form words them.
_POST_FILTER = ("DynamicResources", "DefaultPreemption")


def condition_message(state: ClusterState, pod: Pod, profile: Any = None,
                      fallback: str = "") -> str:
    """The message of ``pod``'s first failed cycle on ``state``, PostFilter included.

    Parameters
    ----------
    state : the cluster when the copy came (not modified).
    pod : the pending copy.
    profile : as :func:`ksched.schedule_batch` takes it.
    fallback : returned when the simulator places the pod after all (it should not).

    Returns
    -------
    str
    """
    result = Simulator(state, profile=profile).run([Event(0.0, "create", pod=pod)])
    for decision in result.decisions:
        if decision.pod == pod.key and decision.outcome == UNSCHEDULABLE:
            return decision.reason
    return fallback


def closed_form_message(state: ClusterState, pod: Pod, why: Explanation,
                        free: npt.NDArray[np.int64], static: frozenset[str]) -> str | None:
    """The condition message of ``pod`` once the closed form has filled the cluster.

    Parameters
    ----------
    state : the cluster as given (its columns cover the pod's resources).
    pod : the copy that does not fit.
    why : :func:`ksched.explain` of the template on ``state`` (every node judged).
    free : int64[n_nodes, n_resources], allocatable minus requested after the copies.
    static : the names of the node-static filters (their verdicts do not change).

    Returns
    -------
    str, or ``None`` where the closed form cannot word it (see the module).
    """
    if why.pre_filter_plugin or host_ports(pod) or pod.preemption_policy == "Never":
        return None
    if _POST_FILTER != tuple(default_profile().plugins["postFilter"]):
        return None  # the wording below follows this order
    if any(not row.feasible and row.plugin not in static and row.plugin != _FIT
           for row in why.nodes):
        return None
    request = request_vector(pod_requests(pod), state.resource_names)
    statuses = _node_statuses(state, why, request, free, static)
    message = counted_fit_error_message(state.num_nodes, Counter(statuses).items())
    preemption = _preemption(state, pod, request, free, statuses)
    if preemption is None:  # a node takes the copy once lower-priority pods go: nominated
        return message
    return f"{message} {_NO_CLAIMS}, preemption: {preemption}"


def _node_statuses(state: ClusterState, why: Explanation, request: np.ndarray,
                   free: np.ndarray, static: frozenset[str]) -> list[Status]:
    """Each node's first failing status after the fill: a static filter's, as the explained
    cycle gave it, else NodeResourcesFit's on ``free``."""
    index, names = state.node_index, state.resource_names
    out: list[Status] = [Status()] * state.num_nodes
    for row in why.nodes:
        i = index[row.node]
        if not row.feasible and row.plugin in static:
            make = unresolvable if row.code == _UNRESOLVABLE else unschedulable
            out[i] = make(*row.reasons)
        else:
            out[i] = fit_status(names, request, free[i], state.allocatable[i])
    return out


def fit_status(names: Sequence[str], request: np.ndarray, free: np.ndarray,
               allocatable: np.ndarray) -> Status:
    """NodeResourcesFit's status (``fitsRequest``) for ``request`` on a node with ``free``
    left of ``allocatable`` (int64[n_resources] each, the pod slot column counting 1)."""
    order = {"cpu": 0, "memory": 1, "ephemeral-storage": 2}
    reasons, beyond = [], False
    for j in sorted(range(len(names)), key=lambda j: (order.get(names[j], 3), names[j])):
        name, amount = names[j], int(request[j])
        if name == "pods":
            continue
        if amount > 0 and (name in order or is_scalar_resource(name)) and amount > free[j]:
            reasons.append(f"Insufficient {name}")
            beyond |= amount > allocatable[j]
    pods = names.index("pods") if "pods" in names else -1
    if pods >= 0 and free[pods] < 1:
        reasons.insert(0, "Too many pods")
    if not reasons:
        return Status()
    return (unresolvable if beyond else unschedulable)(*reasons)


def _preemption(state: ClusterState, pod: Pod, request: np.ndarray, free: np.ndarray,
                statuses: Sequence[Status]) -> str | None:
    """DefaultPreemption's message (``0/N nodes are available: ...``), or ``None`` when some
    node would take the copy once its lower-priority pods were removed."""
    lower = _lower_priority(state, pod.priority)
    failures: list[Status] = []
    for i, status in enumerate(statuses):
        if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            continue  # not a candidate: counted as "not helpful"
        if i not in lower:
            failures.append(unresolvable(NO_VICTIMS))
            continue
        _, freed = lower[i]
        room = free[i] + freed
        after = fit_status(state.resource_names, request, room, state.allocatable[i])
        if after.is_success:
            return None
        failures.append(after)
    return counted_fit_error_message(state.num_nodes, Counter(failures).items(),
                                     unresolvable(NOT_HELPFUL))


def _lower_priority(state: ClusterState, priority: int) -> dict[int, tuple[int, np.ndarray]]:
    """Node row -> (pods, their requests summed, the pod slots included) of the running pods
    below ``priority``."""
    out: dict[int, tuple[int, np.ndarray]] = {}
    names = state.resource_names
    for row, other in enumerate(state.pods):
        if other.priority >= priority:
            continue
        node = int(state.pod_node[row])
        count, total = out.get(node, (0, np.zeros(len(names), dtype=np.int64)))
        out[node] = (count + 1, total + request_vector(pod_requests(other), names))
    return out

