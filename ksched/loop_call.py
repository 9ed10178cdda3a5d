"""The compiled loop's arguments (:func:`ksched.kernels.schedule_loop.schedule_loop`), prepared
once per set of stacked class arrays (:class:`LoopCall`): a run sets only what changes between
runs, and passes everything by position (a run of one pod, as the simulator makes, then costs
little more than the loop itself).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ksched.framework.capabilities import AttachTable, Normalization
from ksched.kernels import node_resources_fit as fit_kernels
from ksched.kernels import schedule_loop as loop_kernels
from ksched.plugins.node_resources_fit import shape_arrays

__all__ = ["LIVE", "LoopCall", "NO_REMOVALS", "ONE_CLASS", "ONE_WALK", "PER_RUN",
           "loop_parameters", "no_attach"]

#: The arguments each run sets, in the order :meth:`LoopCall.__call__` takes them.
PER_RUN = ("begin", "pod_class", "allocatable", "requested", "nonzero", "port_count",
           "walk_order", "pods_col", "percentage", "tie_mode", "draws", "state", "attach_group",
           "attach_limits", "attached", "use_tree", "out_fail", "rec_class", "rec_indptr",
           "rec_keys", "rec_counts", "rec_used", "remove_node", "out_node", "out_start",
           "out_walk")
#: The arguments that view per-class state (:meth:`LoopCall.refresh`).
LIVE = ("fail_epoch", "cached_version", "cached_score", "ipa_affinity_empty", "counter_counts",
        "ipa_rows")
_POSITION = {name: k for k, name in enumerate(loop_kernels.PARAMETERS)}
_PER_RUN_AT = tuple(_POSITION[name] for name in PER_RUN)

#: The class (0) of a run of one pod of one class's arrays, and its walk (written, not read).
ONE_CLASS = np.zeros(1, dtype=np.int64)
ONE_WALK = np.empty((1, 4), dtype=np.int64)
#: The removals of a run of pods only (see ``schedule_loop``'s ``remove_node``).
NO_REMOVALS = np.zeros(0, dtype=np.int64)
_NO_ATTACH: dict[int, AttachTable] = {}


def no_attach(n: int) -> AttachTable:
    """The attach table of runs that count no volumes, on ``n`` nodes (kept per count)."""
    found = _NO_ATTACH.get(n)
    if found is None:
        found = _NO_ATTACH[n] = AttachTable(np.zeros(n, np.int64), np.zeros((n, 0), np.int64),
                                            np.zeros((n, 0), np.int64))
    return found


class LoopCall:
    """The loop's arguments for one set of stacked class ``arrays`` (``prepared``: those and
    the others but :data:`PER_RUN` and :data:`LIVE`), run by the variant ``full`` says. The
    :data:`LIVE` arguments view per-class state that is replaced as it grows: set by
    :meth:`refresh` (the loop writes into them)."""

    def __init__(self, arrays: Mapping[str, Any], full: bool,
                 prepared: Mapping[str, Any]) -> None:
        missing = set(loop_kernels.PARAMETERS) - set(prepared) - set(PER_RUN) - set(LIVE)
        if missing:
            raise ValueError(f"loop arguments missing: {sorted(missing)}")
        self.arrays = arrays
        self.loop = loop_kernels.loop_for(full)
        #: Whether a class counts volumes or devices against per-node limits.
        self.attaches = bool(arrays["has_attach"].any())
        self.args = [prepared.get(name) for name in loop_kernels.PARAMETERS]
        #: The live objects the :data:`LIVE` arguments view (held, so that their
        #: identities stay theirs), and those identities.
        self.live: tuple = ()
        self.key: tuple = ()

    def refresh(self, live: tuple, views: Callable[[], Mapping[str, Any]]) -> LoopCall:
        """Set the :data:`LIVE` arguments to ``views()`` unless they view ``live`` already."""
        key = tuple(map(id, live))
        if key != self.key:
            self.live, self.key = live, key
            for name, value in views().items():
                self.args[_POSITION[name]] = value
        return self

    def __call__(self, *per_run: Any) -> int:
        """Run the loop with the :data:`PER_RUN` arguments ``per_run``; returns where it
        stopped."""
        args = self.args  # every run sets all of these: none is left from the last
        for k, value in zip(_PER_RUN_AT, per_run, strict=True):
            args[k] = value
        return int(self.loop(*args))


def loop_parameters(scorer: Any, weights: np.ndarray, normalized: list, labels: np.ndarray,
                    has_scoring: bool, fit_enabled: bool) -> dict[str, Any]:
    """The loop's arguments that the profile decides: the resource-allocation ``scorer``'s
    (or ``None``), the loop scores' ``weights``, the ``normalized`` node-static scores'
    (name, plugin, weight, normalisation), and the nodes' ``labels``."""
    shape_x, shape_y = shape_arrays(scorer.args.shape if scorer is not None else ())
    return dict(
        fit_strategy=scorer.strategy_code if scorer is not None
        else fit_kernels.LEAST_ALLOCATED,
        fit_weights=np.array([w for _, w in scorer.args.resources] if scorer is not None
                             else [], dtype=np.int64),
        shape_x=shape_x, shape_y=shape_y, weights=weights,
        norm_reverse=np.array([s[3] is Normalization.REVERSE for s in normalized],
                              dtype=np.bool_),
        norm_weight=np.array([s[2] for s in normalized], dtype=np.int64),
        labels=labels, has_scoring=has_scoring, fit_enabled=fit_enabled)
