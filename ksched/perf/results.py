"""Results as scheduler_perf writes them: perfdash's ``{"version": "v1", "dataItems": [...]}``.

Each measured op gives a ``SchedulingThroughput`` item (``Average``, ``Perc50/90/95/99`` in
pods/s over about 1-second samples: the pods bound in each second of the op's clock, the last
second's count over its actual length; an op shorter than one second is one sample) and a
``scheduler_scheduling_attempt_duration_seconds`` item per ``result`` (``scheduled``,
``unschedulable``; milliseconds, quantiles interpolated in upstream's buckets as Prometheus'
``histogram_quantile`` does). Labels: ``Metric``, ``Name``
(``BenchmarkPerfScheduling/<test case>/<workload>/<namespace>``), ``engine``
(``ksched-<version>``) and ``clock`` (``wall`` or ``virtual``); as upstream, every item gets
every label used anywhere (``not applicable`` where it has none).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

__all__ = ["Measurement", "throughput_samples", "throughput_item", "attempt_items",
           "data_items", "file_name", "bench_line", "ATTEMPT_METRIC"]

ATTEMPT_METRIC = "scheduler_scheduling_attempt_duration_seconds"
#: ``metrics.ExponentialBuckets(0.001, 2, 15)``: the attempt histogram's upper bounds (s).
ATTEMPT_BUCKETS = tuple(0.001 * 2.0**i for i in range(15))
BENCHMARK = "BenchmarkPerfScheduling"


@attrs.frozen
class Measurement:
    """What one measured op (or collection window) observed.

    Attributes
    ----------
    namespace : the namespace the ``Name`` label ends with (the op's, or the window's name).
    clock : ``"wall"`` or ``"virtual"``.
    bind_times : float64[n_bound], seconds from the op's start at which each measured pod
        was bound.
    duration : seconds from the op's start to its end.
    attempts : float64[n_attempts], each attempt's duration in seconds.
    attempt_results : the result of each attempt, ``"scheduled"`` or ``"unschedulable"``.
    """

    namespace: str
    clock: str
    bind_times: np.ndarray = attrs.field(eq=False)
    duration: float
    attempts: np.ndarray = attrs.field(eq=False)
    attempt_results: tuple[str, ...] = ()

    @property
    def scheduled(self) -> int:
        return int(len(self.bind_times))


def throughput_samples(bind_times: np.ndarray, duration: float,
                       interval: float = 1.0) -> list[float]:
    """Pods/s per ``interval``: the bound pods of each window over its length, the last
    window over what is left of ``duration``. Windows where no pod was bound are merged into
    the next, each of them recorded with the merged value (upstream's ``skipped`` rule).

    Examples
    --------
    >>> throughput_samples(np.array([0.1, 0.2, 1.5, 2.2]), 2.5)
    [2.0, 1.0, 2.0]
    """
    if duration <= 0.0 or len(bind_times) == 0:
        return []
    windows = max(1, math.ceil(duration / interval - 1e-9))
    edges = np.minimum(np.arange(windows + 1) * interval, duration)
    edges[-1] = duration
    counts, _ = np.histogram(np.clip(bind_times, 0.0, duration), bins=edges)
    samples: list[float] = []
    skipped, start = 0, 0.0
    for count, end in zip(counts, edges[1:]):
        if count == 0:
            skipped += 1
            continue
        value = float(count) / float(end - start)
        samples.extend([value] * (skipped + 1))
        skipped, start = 0, end
    return samples


def _perc(values: Sequence[float], percent: int) -> float:
    return values[math.ceil(len(values) * percent / 100) - 1]


def throughput_item(measurement: Measurement, labels: Mapping[str, str]) -> dict[str, Any]:
    """The ``SchedulingThroughput`` data item (upstream's ``throughputCollector.collect``)."""
    samples = sorted(throughput_samples(measurement.bind_times, measurement.duration))
    data: dict[str, float] = {}
    if samples:
        data = {"Average": sum(samples) / len(samples), "Perc50": _perc(samples, 50),
                "Perc90": _perc(samples, 90), "Perc95": _perc(samples, 95),
                "Perc99": _perc(samples, 99)}
    return {"data": data, "unit": "pods/s",
            "labels": {**labels, "Metric": "SchedulingThroughput"}}


def histogram_quantile(q: float, upper: Sequence[float], cumulative: Sequence[float]) -> float:
    """Prometheus' ``histogram_quantile`` over buckets ``upper`` (+Inf last implied) and
    their cumulative counts (the last is the total)."""
    total = cumulative[-1]
    rank = q * total
    index = int(np.searchsorted(cumulative, rank, side="left"))
    if index >= len(upper):
        return upper[-1]
    start = upper[index - 1] if index > 0 else 0.0
    below = cumulative[index - 1] if index > 0 else 0.0
    inside = cumulative[index] - below
    return float(start + (upper[index] - start) * ((rank - below) / inside if inside else 0.0))


def attempt_items(measurement: Measurement, labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """The attempt-duration items, one per ``result`` seen (milliseconds)."""
    out = []
    results = np.asarray(measurement.attempt_results)
    for result in ("scheduled", "unschedulable"):
        durations = measurement.attempts[results == result] if len(results) else results
        if len(durations) == 0:
            continue
        counts = [int(np.sum(durations <= bound)) for bound in ATTEMPT_BUCKETS]
        counts.append(len(durations))
        data = {f"Perc{p}": histogram_quantile(p / 100, ATTEMPT_BUCKETS, counts) * 1000.0
                for p in (50, 90, 95, 99)}
        data["Average"] = float(np.mean(durations)) * 1000.0
        out.append({"data": data, "unit": "ms", "labels": {
            **labels, "Metric": ATTEMPT_METRIC, "result": result,
            "profile": "default-scheduler"}})
    return out


def data_items(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The results file's content; every item carries every label (``not applicable``)."""
    names = sorted({label for item in items for label in item["labels"]})
    filled = [{**item, "labels": {name: item["labels"].get(name, "not applicable")
                                  for name in names}} for item in items]
    return {"version": "v1", "dataItems": filled}


def file_name(now: datetime.datetime | None = None) -> str:
    """Upstream's file name: ``BenchmarkPerfScheduling_benchmark_<2006-01-02T15:04:05Z>``."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return f"{BENCHMARK}_benchmark_{now.strftime('%Y-%m-%dT%H:%M:%SZ')}.json"


def bench_line(name: str, seconds: float, throughput: float | None) -> str:
    """A ``go test -bench`` result line benchstat reads: one iteration, its ns/op, and the
    average throughput as ``SchedulingThroughput/Average``."""
    line = f"{BENCHMARK}/{name} \t       1\t{round(seconds * 1e9):>14d} ns/op"
    if throughput is not None:
        line += f"\t{throughput:>12.2f} SchedulingThroughput/Average"
    return line
