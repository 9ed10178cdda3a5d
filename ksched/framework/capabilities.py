"""What a plugin declares it is, so the runtime and the fused loop can take it in by itself.

Upstream's framework runs every plugin the same way; ksched also judges some filters once per
pod class, by request arithmetic, or inside the compiled loop (:mod:`ksched.fused_loop`). Which
plugins allow that is not a list of names: each plugin class says what its Filter and Score
depend on, with two class attributes, and offers the public methods of that kind's protocol:

- ``FILTER_KIND`` (:class:`FilterKind`): ``NODE_STATIC``, a verdict that depends on the node
  alone (its name, labels, taints, images, cordon), never on the pods placed: the runtime
  judges it once per pod class, and the fused loop runs any such Filter, in-tree or not;
  ``REQUEST_DELTA``, a verdict that depends on the node's pods only through their summed
  requests (:class:`RequestDeltaFilter`, ``fitsRequest``); ``HOST_PORTS``,
  ``TOPOLOGY_SPREAD``, ``POD_AFFINITY``: the filters the loop has kernels for;
  ``ATTACH_LIMITS``, node-static for the pods ``node_static_for`` admits, and for the others a
  count of distinct volumes per driver on the node against its limits
  (:class:`AttachLimitFilter`, NodeVolumeLimits), which the loop keeps as it places pods.
- ``SCORE_KIND`` (:class:`ScoreKind`): ``NODE_STATIC`` with ``NORMALIZATION``
  (:class:`Normalization`, what its ``normalize_score`` does), or one of the scores the loop
  has kernels for.

A plugin without these attributes is run by the object-level framework, one cycle at a time.
A node-static plugin may answer, with ``node_static_for(pod, state)``, that for this pod it is
not (see :func:`node_static_for`): that pod then takes the framework.
A node-static plugin may also say, with ``judged_by_node_class(pod)``, that its verdict and
score are the same on nodes of one :attr:`~ksched.state.ClusterState.node_class` (labels but
the hostname, taints, images, cordon); otherwise it is judged node by node.

A Reserve plugin of a profile the loop runs is a node-static Filter too; it declares, with
``reserves_for(pod, state)``, the pods its Reserve assumes something for (VolumeBinding: pods
with unbound claims). The loop places those only where their verdicts cannot depend on each
other's reservations, and their Reserve runs after the loop places them: it must succeed there
(VolumeBinding's assume does). Without the declaration, the plugin's ``node_static_for`` keeps
such pods from the loop (see :func:`reserves_for`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.framework.interfaces import Cycle, FilterPlugin, FilterResult, NodeIndices, ScorePlugin
from ksched.status import Status


class FilterKind(enum.Enum):
    """What a Filter's verdict on a node depends on."""

    #: The node alone: the same verdict whatever pods are placed.
    NODE_STATIC = "node-static"
    #: The node's pods only through their summed requests (:class:`RequestDeltaFilter`).
    REQUEST_DELTA = "request-delta"
    #: The host ports the node's pods use (:class:`HostPortFilter`).
    HOST_PORTS = "host-ports"
    #: Pods matching the pod's spread constraints, per topology domain.
    TOPOLOGY_SPREAD = "topology-spread"
    #: Pods matching affinity terms, per topology domain.
    POD_AFFINITY = "pod-affinity"
    #: Node-static for the pods ``node_static_for`` admits; for the others, the distinct
    #: volumes per driver the node's pods attach, against its limits (:class:`AttachLimitFilter`).
    ATTACH_LIMITS = "attach-limits"


class ScoreKind(enum.Enum):
    """What a Score depends on."""

    #: The node alone (:class:`NodeStaticScore`); normalised as ``NORMALIZATION`` says.
    NODE_STATIC = "node-static"
    #: NodeResourcesFit's strategies over the node's requests (:class:`ResourceScorer`).
    RESOURCE_ALLOCATION = "resource-allocation"
    #: The balance of the node's requested fractions (:class:`ResourceScorer`).
    BALANCED_ALLOCATION = "balanced-allocation"
    #: Pods matching the spread constraints, per topology domain.
    TOPOLOGY_SPREAD = "topology-spread"
    #: Affinity term weights, per topology domain.
    POD_AFFINITY = "pod-affinity"


class Normalization(enum.Enum):
    """What a node-static Score's ``NormalizeScore`` does."""

    #: None (or one that leaves the scores as they are).
    NONE = "none"
    #: ``DefaultNormalizeScore(MaxNodeScore, false)``.
    DEFAULT = "default"
    #: ``DefaultNormalizeScore(MaxNodeScore, true)``.
    REVERSE = "reverse"


def filter_kind(plugin: Any) -> FilterKind | None:
    """The plugin's declared ``FILTER_KIND`` (``None``: not declared)."""
    kind = getattr(plugin, "FILTER_KIND", None)
    return kind if isinstance(kind, FilterKind) else None


def score_kind(plugin: Any) -> ScoreKind | None:
    """The plugin's declared ``SCORE_KIND`` (``None``: not declared)."""
    kind = getattr(plugin, "SCORE_KIND", None)
    return kind if isinstance(kind, ScoreKind) else None


def normalization(plugin: Any) -> Normalization:
    """The declared ``NORMALIZATION`` of a node-static Score (``NONE`` when not declared)."""
    found = getattr(plugin, "NORMALIZATION", Normalization.NONE)
    return found if isinstance(found, Normalization) else Normalization.NONE


def is_node_static_filter(plugin: Any) -> bool:
    """Whether the plugin's Filter depends on the node alone, for the pods its
    ``node_static_for`` admits (``FilterKind.NODE_STATIC``, ``FilterKind.ATTACH_LIMITS``)."""
    return filter_kind(plugin) in (FilterKind.NODE_STATIC, FilterKind.ATTACH_LIMITS)


def is_node_static_score(plugin: Any) -> bool:
    """Whether the plugin's Score depends on the node alone (``ScoreKind.NODE_STATIC``)."""
    return score_kind(plugin) is ScoreKind.NODE_STATIC


def node_static_for(plugin: Any, pod: Pod, state: Any) -> bool:
    """Whether a node-static plugin's verdict and score for ``pod`` really depend on the node
    alone in ``state`` (``plugin.node_static_for(pod, state)``; ``True`` when not declared).
    A plugin that is node-static for most pods but not all (say, a volume plugin for pods
    without the volumes it counts) declares ``NODE_STATIC`` and answers ``False`` for the
    others, which then take the object-level framework."""
    method = getattr(plugin, "node_static_for", None)
    return bool(method(pod, state)) if callable(method) else True


def reserves_for(plugin: Any, pod: Pod, state: Any) -> bool:
    """Whether a Reserve plugin assumes something for ``pod`` in ``state``
    (``plugin.reserves_for(pod, state)``; ``False`` when not declared: its
    ``node_static_for`` then keeps such pods from the loop)."""
    method = getattr(plugin, "reserves_for", None)
    return bool(method(pod, state)) if callable(method) else False


def judged_by_node_class(plugin: Any, pod: Pod) -> bool:
    """Whether a node-static plugin gives ``pod`` the same verdict and score on every node
    of a node class (``plugin.judged_by_node_class(pod)``; ``False`` when not declared)."""
    method = getattr(plugin, "judged_by_node_class", None)
    return bool(method(pod)) if callable(method) else False


@attrs.frozen(eq=False)
class RequestCheck:
    """What ``fitsRequest`` checks of one pod on one resource layout.

    request : int64[n_resources] the pod's requests per column (the pod count column 0).
    checked : int64[m] the columns checked: requested, not ignored, not the pod count.
    names : the resources a fit code's bits ``1 + j`` stand for: the checked columns', then
        the requested resources no node has.
    count_only : the pod requests nothing, so only the pod count matters.
    missing : the fit-code bits of requested resources no node has (never enough).
    """

    request: npt.NDArray[np.int64]
    checked: npt.NDArray[np.int64]
    names: tuple[str, ...]
    count_only: bool
    missing: int

    @property
    def kernel_args(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], bool,
                                   np.int64]:
        """(request, checked, count only, missing) as the fit kernels take them."""
        return self.request, self.checked, self.count_only, np.int64(self.missing)


@runtime_checkable
class NodeStaticFilter(FilterPlugin, Protocol):
    """A Filter whose verdict depends on the node alone (``FilterKind.NODE_STATIC``)."""

    FILTER_KIND: ClassVar[FilterKind]


@runtime_checkable
class RequestDeltaFilter(FilterPlugin, Protocol):
    """A Filter that depends on the node's pods only through their summed requests: a node
    with pods added or removed is judged by request arithmetic (``FilterKind.REQUEST_DELTA``)."""

    FILTER_KIND: ClassVar[FilterKind]

    def request_check(self, cycle: Cycle) -> RequestCheck:
        """What the filter checks of ``cycle``'s pod."""

    def filter_changed(self, cycle: Cycle, node: int, delta: npt.NDArray[np.int64]) -> Status:
        """The verdict on ``node`` with its requests changed by ``delta`` (per column)."""

    def filter_nominated(self, cycle: Cycle, walk: NodeIndices, passed: npt.NDArray[np.bool_],
                         mask: npt.NDArray[np.bool_], added: npt.NDArray[np.int64]
                         ) -> tuple[NodeIndices, FilterResult]:
        """The verdicts on the nodes ``walk[i]`` that ``passed`` and ``mask`` marks, with
        ``added[node]`` more requested: the positions that fail and their result."""

    def status_of_code(self, cycle: Cycle, code: int) -> Status:
        """The status a fit code of ``cycle``'s pod stands for."""


@runtime_checkable
class HostPortFilter(FilterPlugin, Protocol):
    """A Filter that rejects nodes whose pods use a conflicting host port."""

    FILTER_KIND: ClassVar[FilterKind]

    def blocking_columns(self, cycle: Cycle) -> npt.NDArray[np.int64]:
        """The host-port columns (of ``state.port_keys``) whose use blocks the pod."""


@attrs.frozen(eq=False)
class AttachTable:
    """What attach-limit checks read of a state, per node (``D`` limited drivers).

    group : int64[n_nodes] what resolving a pod's volumes to CSI volumes depends on at the
        node (the rows of :attr:`AttachCounts.adds`).
    limits : int64[n_nodes, D] each driver's ``allocatable.count`` (-1: no limit).
    attached : int64[n_nodes, D] the distinct volumes of each driver the node's pods attach
        (a copy: the loop adds to it as it places pods).
    """

    group: npt.NDArray[np.int64]
    limits: npt.NDArray[np.int64]
    attached: npt.NDArray[np.int64]


@attrs.frozen(eq=False)
class AttachCounts:
    """What one pod attaches, per node group of an :class:`AttachTable`, when none of its
    volumes is attached anywhere yet: the verdict on a node is then whether a limited
    driver's attached volumes plus the pod's exceed its limit.

    adds : int64[G, D] its volumes per limited driver, per node group.
    attaches : bool[G] whether it attaches any volume there (limited driver or not).
    """

    adds: npt.NDArray[np.int64]
    attaches: npt.NDArray[np.bool_]


@runtime_checkable
class AttachLimitFilter(FilterPlugin, Protocol):
    """A Filter that counts the distinct volumes per driver on a node against its limits
    (``FilterKind.ATTACH_LIMITS``); node-static for the pods ``node_static_for`` admits."""

    FILTER_KIND: ClassVar[FilterKind]

    def node_static_for(self, pod: Pod, state: Any) -> bool:
        """Whether the verdict for ``pod`` depends on the node alone in ``state``."""

    def attach_table(self, state: Any) -> AttachTable:
        """The state's per-node counts and limits."""

    def attach_counts(self, cycle: Cycle) -> AttachCounts | None:
        """What ``cycle``'s pod attaches; ``None`` when the verdict is more than that count
        (one of its volumes is attached somewhere already, or some node's verdict is an
        error or does not depend on the count)."""


@runtime_checkable
class NodeStaticScore(ScorePlugin, Protocol):
    """A Score that depends on the node alone, normalised as ``NORMALIZATION`` says."""

    SCORE_KIND: ClassVar[ScoreKind]
    NORMALIZATION: ClassVar[Normalization]


@runtime_checkable
class ResourceScorer(ScorePlugin, Protocol):
    """A Score over the node's requests and allocatable (``resourceAllocationScorer``)."""

    SCORE_KIND: ClassVar[ScoreKind]

    def score_inputs(self, cycle: Cycle) -> tuple[npt.NDArray[np.int64], ...]:
        """Per scored resource: (column or -1, node-side source, pod request, weight)."""


#: The protocol a plugin of each declared kind satisfies.
FILTER_PROTOCOLS: dict[FilterKind, type] = {
    FilterKind.NODE_STATIC: NodeStaticFilter, FilterKind.REQUEST_DELTA: RequestDeltaFilter,
    FilterKind.HOST_PORTS: HostPortFilter, FilterKind.TOPOLOGY_SPREAD: FilterPlugin,
    FilterKind.POD_AFFINITY: FilterPlugin, FilterKind.ATTACH_LIMITS: AttachLimitFilter,
}
SCORE_PROTOCOLS: dict[ScoreKind, type] = {
    ScoreKind.NODE_STATIC: NodeStaticScore, ScoreKind.RESOURCE_ALLOCATION: ResourceScorer,
    ScoreKind.BALANCED_ALLOCATION: ResourceScorer, ScoreKind.TOPOLOGY_SPREAD: ScorePlugin,
    ScoreKind.POD_AFFINITY: ScorePlugin,
}

__all__: Sequence[str] = [
    "FilterKind", "ScoreKind", "Normalization", "RequestCheck", "NodeStaticFilter",
    "RequestDeltaFilter", "HostPortFilter", "AttachLimitFilter", "AttachTable", "AttachCounts",
    "NodeStaticScore", "ResourceScorer", "FILTER_PROTOCOLS", "SCORE_PROTOCOLS",
    "filter_kind", "score_kind", "normalization", "is_node_static_filter",
    "is_node_static_score", "judged_by_node_class", "node_static_for", "reserves_for",
]
