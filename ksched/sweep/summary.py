"""A sweep's outcome in a few lines: per metric, its range over the scenarios and the
scenarios at either end (best and worst where the metric has a direction), the table
``ksched sweep`` prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ksched.planning.report import Table

__all__ = ["LOWER_IS_BETTER", "HIGHER_IS_BETTER", "direction", "summary_table"]

#: Metrics (or their prefixes, ending in ``.``) where fewer is better.
LOWER_IS_BETTER = ("unschedulable", "displaced_pending", "evicted_pending", "unplaced",
                   "pods_pending_at_end", "unschedulable_attempts", "preemptions", "victims",
                   "time_to_schedule_p50", "time_to_schedule_p99", "balance", "cpu_balance",
                   "memory_balance", "pods_balance", "cost", "nodes", "nodes.")
#: Metrics (or prefixes) where more is better.
HIGHER_IS_BETTER = ("placed", "pods_scheduled", "replicas", "replicas.", "fits", "complete")


def direction(metric: str) -> int:
    """-1 where a lower value is better, +1 where a higher one is, 0 where neither is
    (utilisation: fuller nodes are cheaper and riskier)."""
    for sign, names in ((-1, LOWER_IS_BETTER), (1, HIGHER_IS_BETTER)):
        if any(metric == n or (n.endswith(".") and metric.startswith(n)) for n in names):
            return sign
    return 0


def _number(value: Any) -> bool:
    """A value the summary ranges over (numbers; a bool as 0 / 1)."""
    return isinstance(value, int | float)


def _scenario(row: Mapping[str, Any], varying: Sequence[str]) -> str:
    """``#3 scale=2, strategy=MostAllocated``: a scenario by its index and the parameters
    that vary."""
    params = ", ".join(f"{p}={_text(row.get(p))}" for p in varying)
    return f"#{row.get('scenario')}" + (f" {params}" if params else "")


def _text(value: Any, width: int = 40) -> str:
    text = str(value)
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _shown(value: float) -> str:
    """A number as the table shows it: integers whole, others to 4 significant digits."""
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}"


def summary_table(result: Any) -> Table:
    """Per numeric metric of ``result`` (a :class:`~ksched.sweep.result.SweepResult`):
    ``min``, ``mean`` and ``max`` over the scenarios that ran, and the scenarios with the
    ``best`` and ``worst`` value (lowest and highest, where a metric has no direction). The
    title counts the scenarios, the failed ones and the varying parameters."""
    ok = [r for r in result.rows if not r.get("error")]
    varying = result.varying()
    rows = []
    for metric in result.metrics:
        found = [(r[metric], r) for r in ok if _number(r.get(metric))]
        if not found:
            continue
        values = [float(v) for v, _ in found]
        sign = direction(metric)
        low = min(found, key=lambda item: float(item[0]))
        high = max(found, key=lambda item: float(item[0]))
        best, worst = (high, low) if sign > 0 else (low, high)
        rows.append((metric, _shown(min(values)), _shown(sum(values) / len(values)),
                     _shown(max(values)), _scenario(best[1], varying),
                     _scenario(worst[1], varying)))
    failed = len(result.rows) - len(ok)
    title = (f"{len(result.rows)} scenarios of the {result.study} study"
             + (f", {failed} failed (see the error column)" if failed else "")
             + (f"; varying {', '.join(varying)}" if varying else ""))
    return Table(("metric", "min", "mean", "max", "best (or lowest)", "worst (or highest)"),
                 rows, title=title)
