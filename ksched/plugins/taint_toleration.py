"""TaintToleration (``plugins/tainttoleration/taint_toleration.go``).

Filter: every NoSchedule / NoExecute taint must be tolerated. Score: the number of
PreferNoSchedule taints not tolerated by the tolerations with an empty or PreferNoSchedule
effect, normalised in reverse (fewest untolerated taints score 100).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import Node, Pod, Toleration
from ksched.constants import MAX_NODE_SCORE
from ksched.framework.capabilities import FilterKind, Normalization, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.kernels import normalize as normalize_kernels
from ksched.kernels import taint_toleration as kernels
from ksched.plugins._helpers import cycle_data
from ksched.state import TAINT_EFFECT_CODES, Vocab
from ksched.status import SUCCESS, Status, unresolvable

REASON = "node(s) had untolerated taint(s)"


def encode_tolerations(tolerations: Sequence[Toleration], vocab: Vocab) -> tuple[np.ndarray, ...]:
    """Tolerations as kernel arrays: (key ids, exists flags, value ids, effect codes).

    An empty key or effect is -1 (matches all); strings no node uses get ids that match nothing.
    """
    keys = np.array([vocab.get(t.key) if t.key else -1 for t in tolerations], dtype=np.int64)
    exists = np.array([t.operator == "Exists" for t in tolerations], dtype=np.bool_)
    values = np.array([vocab.get(t.value) for t in tolerations], dtype=np.int64)
    effects = np.array([TAINT_EFFECT_CODES[t.effect] if t.effect else -1 for t in tolerations],
                       dtype=np.int64)
    return keys, exists, values, effects


def _taints(cycle: Cycle) -> tuple[np.ndarray, ...]:
    s = cycle.state
    return s.taint_indptr, s.taint_keys, s.taint_values, s.taint_effects


@attrs.frozen
class TaintToleration:
    NAME: ClassVar[str] = "TaintToleration"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.REVERSE
    args: Any = None

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Taints are part of a node's class."""
        return True

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        tolerations = cycle_data(cycle, "TaintToleration/all", lambda: encode_tolerations(
            cycle.pod.tolerations, cycle.state.vocab))
        untolerated = kernels.untolerated_mask(*_taints(cycle), nodes, *tolerations)
        return FilterResult.from_mask(~untolerated, unresolvable(REASON))

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        cycle.data[self.NAME] = encode_tolerations(_prefer_no_schedule(cycle.pod.tolerations),
                                                   cycle.state.vocab)
        return None

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        tolerations = cycle_data(cycle, self.NAME, lambda: encode_tolerations(
            _prefer_no_schedule(cycle.pod.tolerations), cycle.state.vocab))
        return kernels.intolerable_prefer_no_schedule_counts(*_taints(cycle), nodes, *tolerations)

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        normalize_kernels.default_normalize_score(scores, MAX_NODE_SCORE, True)


def _prefer_no_schedule(tolerations: Sequence[Toleration]) -> list[Toleration]:
    return [t for t in tolerations if t.effect in ("", "PreferNoSchedule")]


# ----------------------------------------------------------------------- reference


def reference_filter(pod: Pod, node: Node) -> Status:
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
                t.tolerates(taint) for t in pod.tolerations):
            return unresolvable(REASON)
    return SUCCESS


def reference_score(pod: Pod, node: Node) -> int:
    tolerations = _prefer_no_schedule(pod.tolerations)
    return sum(1 for taint in node.taints if taint.effect == "PreferNoSchedule"
               and not any(t.tolerates(taint) for t in tolerations))
