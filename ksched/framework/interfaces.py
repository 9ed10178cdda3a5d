"""Extension-point contracts, one ``typing.Protocol`` each (``framework/interface.go``).

Plugins are vectorised: a Filter judges a whole array of node indices at once and returns a
:class:`FilterResult`; a Score returns ``int64`` scores for an array of node indices. The runtime,
not the plugin, combines masks, records the first failing plugin per node, skips, normalises,
range-checks and weighs. What plugins beyond the node search (PostFilter: preemption) read of
the scheduler is the typed :class:`Handle`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.state import ClusterState
from ksched.status import Status

NodeIndices = npt.NDArray[np.int64]


@attrs.define
class Cycle:
    """One pod's scheduling cycle: the snapshot, the pod and plugin-owned data (``CycleState``)."""

    state: ClusterState
    pod: Pod
    data: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class PreFilterResult:
    """``PreFilterResult``: the only node names worth filtering (``None``: all nodes)."""

    node_names: frozenset[str] | None = None


@attrs.frozen(eq=False)
class FilterResult:
    """A Filter's verdict over an array of nodes.

    passed : bool[n] per evaluated node.
    status_ids : int32[n] index into ``statuses`` for each failing node (ignored where passed).
    statuses : the distinct failure statuses.
    """

    passed: npt.NDArray[np.bool_]
    status_ids: npt.NDArray[np.int32]
    statuses: tuple[Status, ...]

    @classmethod
    def from_mask(cls, passed: npt.NDArray[np.bool_], failure: Status) -> FilterResult:
        """Every failing node fails with the same status."""
        return cls(passed, np.zeros(len(passed), dtype=np.int32), (failure,))

    @classmethod
    def from_codes(cls, codes: npt.NDArray[np.integer],
                   status_of: Any) -> FilterResult:
        """Nodes with code 0 pass; ``status_of(code)`` words each distinct non-zero code."""
        distinct, inverse = np.unique(codes, return_inverse=True)
        statuses = tuple(status_of(int(c)) if c else Status() for c in distinct)
        return cls(codes == 0, inverse.astype(np.int32).reshape(-1), statuses)

    def status_at(self, i: int) -> Status:
        return self.statuses[self.status_ids[i]]


@runtime_checkable
class Plugin(Protocol):
    NAME: ClassVar[str]


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, cycle: Cycle) -> Status | PreFilterResult | None:
        """``None`` or a success status to go on; Skip to skip this plugin's Filter."""


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, cycle: Cycle, nodes: NodeIndices) -> npt.NDArray[np.int64]: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, cycle: Cycle, scores: npt.NDArray[np.int64]) -> None:
        """Rescale ``scores`` in place to ``[0, MAX_NODE_SCORE]``."""


EXTENSION_POINTS: dict[str, type] = {
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
}


#: The method a plugin has for each extension point.
METHODS = {"preEnqueue": "pre_enqueue", "queueSort": "less", "preFilter": "pre_filter",
           "filter": "filter", "postFilter": "post_filter", "preScore": "pre_score",
           "score": "score", "reserve": "reserve", "permit": "permit", "preBind": "pre_bind",
           "bind": "bind", "postBind": "post_bind"}


def implements(plugin: object, point: str) -> bool:
    """Whether ``plugin`` has the method of extension point ``point``."""
    method = METHODS.get(point)
    return method is not None and callable(getattr(plugin, method, None))


class FrameworkHandle(Protocol):
    """What plugins beyond the node search call on their profile's framework
    (:class:`~ksched.framework.runtime.Framework`)."""

    points: Mapping[str, tuple[tuple[str, Any], ...]]
    #: Whether the cycle may judge nodes by request arithmetic in compiled passes.
    vectorized: bool

    def run_pre_filter(self, cycle: Cycle) -> tuple[Status | None, frozenset[str] | None,
                                                    frozenset[str], tuple[str, ...]]: ...

    def filter_node_with_nominated(self, state: ClusterState, pod: Pod, node: int,
                                   nominated: Sequence[Pod],
                                   skipped: frozenset[str] = frozenset(),
                                   removed: Sequence[int] = (),
                                   cycle: Cycle | None = None) -> Status: ...

    def resource_only(self, skipped: frozenset[str], pod: Pod,
                      state: ClusterState) -> bool: ...

    def request_filter(self, skipped: frozenset[str]) -> tuple[int, str, Any]: ...

    def static_verdicts(self, cycle: Cycle, skipped: frozenset[str]) -> Any: ...


class PodLister(Protocol):
    """The scheduler cache's pods per node (:class:`~ksched.cache.Assumer`)."""

    def rows_on(self, node: int) -> list[int]:
        """Rows (in the cache's ``state.pods``) of the node's pods, in ``NodeInfo.Pods``
        order."""


class DryRunResult(Protocol):
    """What a compiled ``DryRunPreemption`` found: the candidates, the failures by node row,
    and the candidate the interface's node choice picks with the nodes tied for it."""

    candidates: Sequence[Any]
    found_any: bool

    @property
    def failures(self) -> Mapping[int, Status]: ...

    def pick(self) -> tuple[Any, tuple[str, ...]]: ...


class DryRun(Protocol):
    """A compiled ``DryRunPreemption`` over ``potential`` node rows from ``offset`` until
    ``wanted`` candidates are found, for a preemption ``interface`` whose rules it models;
    ``None`` where it does not (the Evaluator then tries node by node)."""

    def __call__(self, interface: Any, cycle: Cycle, potential: NodeIndices, offset: int,
                 wanted: int, handle: Handle, diagnosis: Any) -> DryRunResult | None: ...


@attrs.frozen(eq=False)
class Handle:
    """What plugins beyond the node search read (``framework.Handle``): the profile's
    framework, the queue's nominated pods per node row, PodDisruptionBudgets, the cache's
    pods per node (their order in ``NodeInfo``), a random source (preemption's offset) and a
    compiled dry run of preemption, where the caller has one."""

    framework: FrameworkHandle
    nominated: Mapping[int, Sequence[Pod]] = attrs.field(factory=dict)
    pdbs: Sequence[Any] = ()
    cache: PodLister | None = None
    rng: np.random.Generator | None = None
    dry_run: DryRun | None = None

    def pods_of(self, state: ClusterState, node: int) -> list[int]:
        """Rows (in ``state.pods``) of the node's pods, in ``NodeInfo.Pods`` order."""
        if self.cache is not None:
            return list(self.cache.rows_on(node))
        return [int(i) for i in np.flatnonzero(state.pod_node == node)]


@attrs.frozen
class PostFilterResult:
    """``PostFilterResult``: the node to nominate (``""`` clears the nomination; ``None``
    leaves it as it is), and what preemption decided, for traces and explanations."""

    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()
    num_pdb_violations: int | None = None
    potential_nodes: tuple[str, ...] = ()
    candidates: tuple[Any, ...] = ()
    dry_run_failures: Any = attrs.field(factory=dict)
    tie_nodes: tuple[str, ...] = ()


__all__: Sequence[str] = [
    "Cycle", "PreFilterResult", "FilterResult", "Plugin", "PreFilterPlugin", "FilterPlugin",
    "PreScorePlugin", "ScorePlugin", "ScoreExtensions", "EXTENSION_POINTS", "implements",
    "Handle", "FrameworkHandle", "PodLister", "DryRun", "DryRunResult", "PostFilterResult",
]
