"""What the volume plugins share: upstream's not-found messages, a pod's claim volumes, and
indexes over the bound pods that grow with them.

An index (:class:`PodLogIndex`) is kept in the state's ``match_cache`` (shared by the states of
one batch, whose pod log only grows) and, at each use, takes in only the pods placed since it
was last brought up to date; a state with fewer pods than it counted (another branch) gets a
fresh one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ksched.api import Pod, Volume
from ksched.bound_pods import pod_specs
from ksched.state import ClusterState
from ksched.validation import go_quote

__all__ = ["CLAIM_RESOURCE", "CLASS_RESOURCE", "PodLogIndex", "VOLUME_RESOURCE",
           "claim_volumes", "not_found", "pod_log_index"]

#: The qualified resources the listers' not-found errors name.
CLAIM_RESOURCE = "persistentvolumeclaim"
VOLUME_RESOURCE = "persistentvolume"
CLASS_RESOURCE = "storageclass.storage.k8s.io"


def not_found(resource: str, name: str) -> str:
    """``apierrors.NewNotFound(resource, name).Error()``:
    ``persistentvolumeclaim "data" not found``."""
    return f"{resource} {go_quote(name)} not found"


def claim_volumes(pod: Pod) -> list[Volume]:
    """The pod's ``persistentVolumeClaim`` volumes, in order (not its ephemeral ones)."""
    return [v for v in pod.volumes if v.kind == "persistentVolumeClaim"]


class PodLogIndex:
    """An index over a state's bound pods that takes in pods as they are placed.

    Subclasses say what each pod adds (:meth:`add`); :attr:`counted` is how many pods of the
    log it holds.
    """

    def __init__(self) -> None:
        self.counted = 0

    def add(self, pods: Sequence[Pod], nodes: npt.NDArray[np.int64],
            state: ClusterState) -> None:
        """Take in ``pods`` (rows ``counted..``, their specs), bound to node rows ``nodes``."""
        raise NotImplementedError


IndexT = TypeVar("IndexT", bound=PodLogIndex)


def pod_log_index(state: ClusterState, key: tuple, factory: Callable[[], IndexT]) -> IndexT:
    """The index kept under ``key`` in ``state.match_cache``, up to date with its bound pods
    (made by ``factory`` when there is none, or it counted more pods than ``state`` has)."""
    index = state.match_cache.get(key)
    total = len(state.pods)
    if index is None or index.counted > total:
        index = state.match_cache[key] = factory()
    if index.counted < total:
        start = index.counted
        index.add(pod_specs(state.pods, start, total), state.pod_node[start:total], state)
        index.counted = total
    return index
