"""Plugin statuses and the scheduler's unschedulable diagnosis, worded as upstream.

Mirrors ``k8s.io/kube-scheduler/framework/interface.go`` (``Code``, ``Status``) and
``pkg/scheduler/framework/types.go`` (``FitError.Error``).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable

import attrs


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        """The name Go's ``Code.String`` prints (``UnschedulableAndUnresolvable``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))


@attrs.frozen
class Status:
    """A plugin's verdict: a code, the reasons, and the plugin that gave it."""

    code: Code = attrs.field(default=Code.SUCCESS, converter=Code)
    reasons: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    @property
    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return attrs.evolve(self, plugin=plugin)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def fit_error_message(num_all_nodes: int, node_statuses: Iterable[Status],
                      num_failed: int | None = None, absent: Status | None = None,
                      pre_filter_message: str = "") -> str:
    """``FitError.Error()``: ``0/3 nodes are available: 1 Insufficient cpu, 2 ....``

    ``node_statuses`` are the explicit per-node failures. Nodes without one (never evaluated,
    or outside a PreFilter node subset) count with the ``absent`` status's reasons. Entries are
    ``"<count> <reason>"`` sorted as strings, as Go's ``sort.Strings`` does.
    """
    if pre_filter_message:
        return f"{_fit_error_head(num_all_nodes)} {pre_filter_message}."
    return counted_fit_error_message(num_all_nodes, ((s, 1) for s in node_statuses), absent,
                                     num_failed)


def counted_fit_error_message(num_all_nodes: int, counts: Iterable[tuple[Status, int]],
                              absent: Status | None = None,
                              num_failed: int | None = None) -> str:
    """:func:`fit_error_message` from distinct statuses, each with how many nodes have it
    (``num_failed``, when given, is the number of nodes with an explicit failure)."""
    histogram: Counter[str] = Counter()
    explicit = 0
    for status, count in counts:
        if not count:
            continue
        explicit += count
        for reason in status.reasons:
            histogram[reason] += count
    if num_failed is not None:
        explicit = num_failed
    if absent is not None and explicit < num_all_nodes:
        for reason in absent.reasons:
            histogram[reason] += num_all_nodes - explicit
    entries = sorted(f"{count} {reason}" for reason, count in histogram.items())
    message = _fit_error_head(num_all_nodes)
    return message + (" " + ", ".join(entries) + "." if entries else "")


def _fit_error_head(num_all_nodes: int) -> str:
    """``FitError.Error()``'s opening (``"0/%v nodes are available:"``)."""
    return f"0/{num_all_nodes} nodes are available:"


def with_post_filter(fit_error: str, post_filter: Status) -> str:
    """``FitError.Error()``'s tail: PostFilter's message after the filter diagnosis."""
    return f"{fit_error} {post_filter.message}" if post_filter.message else fit_error
