"""One way in: whatever a user passes as pods, a cluster or an option, checked and turned into
records.

Every public function that takes pods (``schedule_batch``, ``explain``, the simulator's
events, ...) calls :func:`as_pods` / :func:`as_pod`; every one that takes a cluster calls
:func:`as_cluster`; options go through the ``check_*`` functions. Accepted as pods: ``Pod``
records, Kubernetes dicts (the camelCase wire form, or the snake_case form of the kubernetes
client's ``to_dict()``), kubernetes-client objects (``V1Pod``, ``V1PodList``), ``v1 List`` /
``PodList`` dicts, a path (read as :func:`ksched.load_pods` reads it: the pending pods), a
single pod or any iterable of these. Anything else is refused with a
:class:`~ksched.errors.KschedError` naming the argument, never a raw Python error.
"""

from __future__ import annotations

import numbers
import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ksched.api import Pod, PriorityClass
from ksched.config import SchedulerConfig
from ksched.coerce import (
    POD_HINT,
    as_node,
    as_pod,
    described,
    is_snake_case,
    node_from_template,
    snake_to_wire,
)
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.framework.tiebreak import TIE_BREAKS
from ksched.io import (
    admit_priorities,
    is_client_model,
    iter_manifests,
    read_objects,
    without_orphans,
)
from ksched.pod_loading import pending_table_of_file
from ksched.pod_table import PodTable, all_pods
from ksched.profile import Profile
from ksched.state import ClusterState, check_unique, pod_specs
from ksched.validation import go_quote, invalid, not_supported

_SOURCE_HINT = ("a Pod, a Pod manifest dict, a kubernetes-client V1Pod, a path or an iterable "
                "of these")


# =========================================================================== pods


def as_pods(source: Any, where: str = "pods") -> tuple[Pod, ...]:
    """The pods of ``source``, in order (a single pod gives a 1-tuple); two with one
    namespace/name are refused (``metadata.name: Duplicate value``).

    A tuple or list of ``Pod`` records is taken as it is (one ``isinstance`` per pod), a
    :class:`~ksched.pod_table.PodTable`'s pods too (checked when it was built).
    """
    if isinstance(source, PodTable):
        return tuple(source)
    if isinstance(source, tuple | list) and all_pods(source):
        pods = tuple(source)
    elif isinstance(source, Pod):
        pods = (source,)
    elif isinstance(source, str | os.PathLike):
        pods = _pods_of_path(source, where)
    elif isinstance(source, Mapping) or is_client_model(source):
        pods = tuple(_pods_of_object(source, where))
    elif isinstance(source, Iterable) and not isinstance(source, bytes | bytearray):
        pods = tuple(pod for i, item in enumerate(source)
                     for pod in _pods_of_item(item, f"{where}[{i}]"))
    else:
        raise ArgumentError(f"{where}: expected {_SOURCE_HINT}, got {described(source)}")
    check_unique(pods)
    return pods


def as_pod_table(source: Any, where: str = "pods") -> PodTable:
    """:func:`as_pods` as a :class:`~ksched.pod_table.PodTable` (a table is taken as it is)."""
    if isinstance(source, PodTable):
        return source
    if isinstance(source, str | os.PathLike) and os.path.isfile(source):
        table = pending_table_of_file(source)  # kubectl's List of pods, read by template
        if table is not None:
            return table
    return PodTable.of(as_pods(source, where))


def _pods_of_item(item: Any, where: str) -> Sequence[Pod]:
    """The pods one element of an iterable stands for (a path or a List may hold several)."""
    if isinstance(item, Pod):
        return (item,)
    if isinstance(item, str | os.PathLike):
        return _pods_of_path(item, where)
    if isinstance(item, Mapping) or is_client_model(item):
        return tuple(_pods_of_object(item, where))
    raise ArgumentError(f"{where}: expected {POD_HINT} or a path, got {described(item)}")


def _pods_of_path(path: str | os.PathLike, where: str) -> tuple[Pod, ...]:
    """``load_pods(path)``: the pending pods of a file or directory (a kubectl List of pods
    straight into a :class:`~ksched.pod_table.PodTable`)."""
    if not os.path.exists(path):
        raise ArgumentError(f"{where}: {os.fspath(path)!s}: no such file or directory "
                            f"(expected {_SOURCE_HINT})")
    table = pending_table_of_file(path)
    return tuple(table) if table is not None else read_objects(path).pending_pods


def _pods_of_object(obj: Any, where: str) -> Iterable[Pod]:
    """A pod dict or ``V1Pod``, or every pod of a ``List`` / ``PodList`` (dict or model).
    A List's PriorityClasses admit its pods, as a file's do (pods they leave unadmitted
    are admitted with the cluster's where they meet it, :func:`admitted`)."""
    listed = obj.get("items") if isinstance(obj, Mapping) else getattr(obj, "items", None)
    if not isinstance(listed, list):
        yield as_pod(obj, where)
        return
    pods, classes = [], []
    for i, item in enumerate(iter_manifests(obj)):
        kind = item.get("kind") if isinstance(item, Mapping) else None
        if kind == "PriorityClass":
            classes.append(PriorityClass.from_manifest(item))
        else:  # a Pod (another kind is refused, naming it)
            pods.append(as_pod(item, f"{where}.items[{i}]"))
    yield from admit_priorities(pods, classes, unknown="keep") if classes else pods


def policy_objects(cluster: ClusterState, key: str) -> tuple[Any, ...]:
    """The cluster's ``"priority_classes"`` or ``"pdbs"`` (read with its nodes, see
    :meth:`ClusterState.from_objects <ksched.state.ClusterState.from_objects>`)."""
    return tuple(cluster.objects.get(key, ()))


def merged_classes(cluster: ClusterState, given: Iterable[Any] = ()) -> tuple[Any, ...]:
    """The cluster's PriorityClasses with ``given`` ones (a class of the same name given
    replaces the cluster's: a snapshot and its pods often come from one file)."""
    given = tuple(given)
    names = {pc.name for pc in given}
    return tuple(pc for pc in policy_objects(cluster, "priority_classes")
                 if pc.name not in names) + given


def admitted(pods: PodTable | Sequence[Pod], cluster: ClusterState,
             priority_classes: Iterable[Any] = ()) -> Any:
    """``pods`` as the Priority admission plugin creates them in ``cluster``: a pod without
    ``spec.priority`` takes its class's value from the cluster's PriorityClasses (and
    ``priority_classes``; see :func:`ksched.io.admit_priorities`). Every command applies
    it where pending pods meet the cluster; pods admitted already come back unchanged. A
    :class:`~ksched.pod_table.PodTable` is admitted per spec row (no work per pod)."""
    classes = merged_classes(cluster, priority_classes)
    if isinstance(pods, PodTable):
        specs = admit_priorities(pods.specs, classes)
        if all(new is old for new, old in zip(specs, pods.specs)):
            return pods
        return PodTable(pods.spec, specs, pods.names, pods.uids, pods.creation_times)
    return admit_priorities(pods, classes)


def check_not_running(pods: Sequence[Pod], cluster: ClusterState) -> None:
    """Refuse a pending pod whose namespace/name is already bound in ``cluster``. Names are
    compared first (a set of the smaller side's); keys only when a name is on both sides.
    A :class:`~ksched.pod_table.PodTable`'s keys meet the state's (kept per state) as sets."""
    if not len(cluster.pods):
        return
    if isinstance(pods, PodTable):
        running = cluster.pod_rows()
        both = running.keys() & pods.keys()
        if both:
            _refuse_running(cluster, min(running[key] for key in both))
        return
    bound = pod_specs(cluster.pods, 0, len(cluster.pods))
    small, large = (bound, pods) if len(bound) <= len(pods) else (pods, bound)
    if {p.name for p in small}.isdisjoint(map(_NAME, large)):
        return
    keys = {(p.namespace, p.name) for p in pods}
    for row, running in enumerate(bound):
        if (running.namespace, running.name) in keys:
            _refuse_running(cluster, row)


def _refuse_running(cluster: ClusterState, row: int) -> None:
    """A pending pod has the namespace/name of the bound pod at ``row``."""
    running = pod_specs(cluster.pods, row, row + 1)[0]
    node = cluster.node_names[int(cluster.pod_node[row])]
    raise InvalidObjectError(
        f"pod {running.namespace}/{running.name}", "metadata.name",
        f"Duplicate value: {go_quote(running.name)}: already bound to node "
        f"{go_quote(node)}")


_NAME = operator.attrgetter("name")


# =========================================================================== clusters


def as_cluster(source: Any, where: str = "cluster") -> ClusterState:
    """A ``ClusterState``: itself, or whatever :func:`ksched.load_cluster` reads (a path,
    wire dicts, kubernetes-client objects, or an iterable of these)."""
    if isinstance(source, ClusterState):
        return source
    if isinstance(source, str | os.PathLike):
        if not os.path.exists(source):
            raise ArgumentError(f"{where}: {os.fspath(source)!s}: no such file or directory")
    elif isinstance(source, Pod) or not (isinstance(source, Mapping | Iterable)
                                         or is_client_model(source)) \
            or isinstance(source, bytes | bytearray):
        raise ArgumentError(f"{where}: expected a ClusterState, a path, Kubernetes object "
                            f"dicts or kubernetes-client objects, got {described(source)}")
    try:
        return ClusterState.from_objects(without_orphans(read_objects(source)))
    except ArgumentError as exc:  # iter_manifests: an element that is no source of objects
        raise ArgumentError(f"{where}: {exc}") from None


# =========================================================================== options


def check_percentage(value: Any, where: str = "percentage_of_nodes_to_score") -> int | None:
    """``None`` or an integer in [0, 100] (``validatePercentageOfNodesToScore``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"{where}: must be an integer from 0 to 100 or None, got "
                            f"{described(value)}")
    if not 0 <= value <= 100:
        raise ArgumentError(str(invalid(where, int(value), "not in valid range [0-100]")))
    return int(value)


def check_tie_break(value: Any) -> str:
    """One of :data:`~ksched.framework.tiebreak.TIE_BREAKS`."""
    if not isinstance(value, str):
        raise ArgumentError(f"tie_break: must be one of {', '.join(TIE_BREAKS)}, got "
                            f"{described(value)}")
    if value not in TIE_BREAKS:
        raise ArgumentError(str(not_supported("tie_break", value, TIE_BREAKS)))
    return value


def check_seed(value: Any) -> int | np.random.Generator | None:
    """``None``, a non-negative integer or a ``numpy.random.Generator``."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"seed: must be None, a non-negative integer or a "
                            f"numpy.random.Generator, got {described(value)}")
    if value < 0:
        raise ArgumentError(str(invalid("seed", int(value), "must be non-negative")))
    return int(value)


def check_progress(value: Any) -> Any:
    """``None`` or a callable taking a count of pods done."""
    if value is not None and not callable(value):
        raise ArgumentError(f"progress: must be a callable (e.g. a tqdm bar's update) or "
                            f"None, got {described(value)}")
    return value


def check_profile(value: Any) -> Any:
    """``None``, a :class:`~ksched.profile.Profile` or a loaded
    :class:`~ksched.config.SchedulerConfig`."""
    if value is not None and not isinstance(value, Profile | SchedulerConfig):
        hint = " (load it with ksched.load_config)" if isinstance(
            value, Mapping | str | os.PathLike) else ""
        raise ArgumentError(f"profile: must be a Profile, a SchedulerConfig or None, got "
                            f"{described(value)}{hint}")
    return value


def check_registry(value: Any) -> Any:
    """``None`` or a plugin registry (a mapping of plugin names to factories)."""
    if value is not None and not isinstance(value, Mapping):
        raise ArgumentError(f"registry: must be a Registry (plugin name -> factory) or None, "
                            f"got {described(value)}")
    return value


def check_flag(value: Any, where: str) -> bool:
    """A ``bool`` option."""
    if not isinstance(value, bool | np.bool_):
        raise ArgumentError(f"{where}: must be True or False, got {described(value)}")
    return bool(value)


__all__ = ["admitted", "as_cluster", "as_node", "as_pod", "as_pod_table", "as_pods",
           "check_flag", "check_not_running", "check_percentage", "check_profile",
           "check_progress", "check_registry", "check_seed", "check_tie_break", "check_unique",
           "is_snake_case", "merged_classes", "node_from_template", "policy_objects",
           "snake_to_wire"]
