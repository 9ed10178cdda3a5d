"""The object-level scheduling framework: plugins at extension points, one pod at a time."""

from ksched.framework.interfaces import (
    Cycle,
    FilterPlugin,
    FilterResult,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ksched.framework.registry import Registry
from ksched.framework.runtime import Framework, ScheduleResult, SchedulingError
from ksched.framework.tiebreak import TieBreaker

__all__ = [
    "Cycle", "FilterPlugin", "FilterResult", "Framework", "PreFilterPlugin", "PreFilterResult",
    "PreScorePlugin", "Registry", "ScheduleResult", "SchedulingError", "ScoreExtensions",
    "ScorePlugin", "TieBreaker",
]
