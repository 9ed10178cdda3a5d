"""A sweep's outcome: :class:`SweepResult`, one tidy table (a row per scenario; a column per
parameter, per metric, and ``error`` and ``seconds``) with exports and a plot helper."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ksched.errors import ArgumentError, KschedError
from ksched.planning.report import Table
from ksched.sweep.store import check_writable, written_whole

__all__ = ["SweepResult"]

PLOT_SUFFIXES = (".png", ".svg", ".html")


def _cell(value: Any) -> Any:
    """A table cell: lists and mappings (a parameter's value) as their JSON text."""
    if isinstance(value, list | tuple | Mapping):
        return json.dumps(value, sort_keys=True)
    return value


def _column(values: Sequence[Any]) -> list[Any]:
    """One column's cells, as text when they mix kinds Arrow cannot hold in one column."""
    kinds = {"number" if isinstance(v, int | float) and not isinstance(v, bool)
             else type(v).__name__ for v in values if v is not None}
    if len(kinds) <= 1:
        return list(values)
    return [None if v is None else str(v) for v in values]


def _optional(module: str, hint: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise KschedError(f"{module} is not installed: {hint}") from None


@attrs.frozen(eq=False)
class SweepResult:
    """The results of :func:`ksched.sweep`, a row per scenario in scenario order.

    Attributes
    ----------
    study : the study's name (a function's ``module.qualname``).
    parameters : the parameter columns, in the order the axes gave them.
    metrics : the metric columns, in the order the study gave them.
    rows : one dict per scenario: ``scenario`` (its index), its parameters, its metrics
        (``None`` where it failed), ``error`` (``None``, or the exception, one line) and
        ``seconds`` (its own time, in a worker).
    base : the content hash of the base scenario (the resume key's first part).
    timing : where the run's time went (:class:`ksched.sweep.executors.Timing`), or ``None``
        when every row came from an earlier run.
    """

    study: str
    parameters: tuple[str, ...] = attrs.field(converter=tuple)
    metrics: tuple[str, ...] = attrs.field(converter=tuple)
    rows: tuple[dict[str, Any], ...] = attrs.field(converter=tuple, repr=False)
    base: str = ""
    timing: Any = None

    @property
    def columns(self) -> tuple[str, ...]:
        return ("scenario", *self.parameters, *self.metrics, "error", "seconds")

    @property
    def failed(self) -> tuple[dict[str, Any], ...]:
        """The rows of the scenarios that raised."""
        return tuple(r for r in self.rows if r.get("error"))

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.to_records())

    def column(self, name: str) -> list[Any]:
        """The values of one column, scenario order."""
        if name not in self.columns:
            raise ArgumentError(f"column: no column {name!r} (columns: "
                                f"{', '.join(self.columns)})")
        return [r.get(name) for r in self.rows]

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per row, every column present (parameter values as given)."""
        return [{c: r.get(c) for c in self.columns} for r in self.rows]

    def to_table(self) -> Table:
        """The rows as a :class:`ksched.planning.report.Table` (list-valued parameters as
        JSON text)."""
        cells = [[_cell(r.get(c)) for c in self.columns] for r in self.rows]
        failed = f", {len(self.failed)} failed" if self.failed else ""
        return Table(self.columns, cells,
                     title=f"sweep ({self.study}): {len(self.rows)} scenarios{failed}")

    def _columns(self) -> dict[str, list[Any]]:
        return {c: _column([_cell(r.get(c)) for r in self.rows]) for c in self.columns}

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame``, a row per scenario (needs pandas)."""
        pandas = _optional("pandas", "pip install pandas")
        return pandas.DataFrame(self._columns(), columns=list(self.columns))

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` (needs pyarrow)."""
        pyarrow = _optional("pyarrow", "pip install pyarrow")
        return pyarrow.Table.from_pydict(self._columns())

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> str:
        """The CSV text (a header row first); written whole to ``path`` when given."""
        text = self.to_table().to_csv()
        if path is not None:
            written_whole(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
        return text

    def to_parquet(self, path: str | os.PathLike[str]) -> Path:
        """Write the table to a Parquet file, whole or not at all (needs pyarrow)."""
        table = self.to_arrow()
        import pyarrow.parquet as parquet

        return written_whole(path, lambda tmp: parquet.write_table(table, tmp))

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        """Write one JSON object per row."""
        text = "".join(json.dumps(r, default=repr) + "\n" for r in self.to_records())
        return written_whole(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``.parquet``, ``.csv`` or ``.jsonl``, as ``path`` ends."""
        suffix = Path(path).suffix.lower()
        if suffix == ".parquet":
            return self.to_parquet(path)
        if suffix == ".csv":
            self.to_csv(path)
            return Path(path)
        if suffix == ".jsonl":
            return self.to_jsonl(path)
        raise ArgumentError(f"path: {str(path)!r}: expected a file ending in .parquet, .csv "
                            f"or .jsonl")

    def __str__(self) -> str:
        return self.to_table().to_text()

    # ------------------------------------------------------------------ plot

    def plot(self, metric: str, x: str, by: str | None = None,
             path: str | os.PathLike[str] | None = None) -> Any:
        """``metric`` against the parameter ``x``: a line per combination of the other
        parameters that vary (``by`` first in the legend), so no scenario is averaged into
        another. Only scenarios that share every parameter (a grid that repeats one) are
        averaged, and the title says so. Failed scenarios are left out (the title counts
        them).

        Parameters
        ----------
        metric : a metric column.
        x, by : parameter columns (``by``: the parameter the legend names first).
        path : where to save the plot (``.png``, ``.svg`` or a self-contained ``.html``).

        Returns
        -------
        matplotlib.figure.Figure (needs matplotlib: ``pip install 'ksched[plot]'``).
        """
        self._check_plot(metric, x, by, path)
        _optional("matplotlib", "pip install 'ksched[plot]'")
        from matplotlib.figure import Figure  # no pyplot: no global backend state

        series = self._series(metric, x, by)
        xs = sorted({v for points in series.values() for v in points}, key=_order)
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in xs)
        figure = Figure(figsize=(8 if len(series) > 1 else 7, 4.5), layout="constrained")
        ax = figure.subplots()
        for label, points in series.items():
            keys = [v for v in xs if v in points]
            at = keys if numeric else [xs.index(v) for v in keys]
            ax.plot(at, [sum(points[v]) / len(points[v]) for v in keys], marker="o",
                    label=_legend(label))
        if not numeric:
            ax.set_xticks(range(len(xs)), labels=[_short(v) for v in xs])
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        ax.set_title(self._plot_title(metric, x, series), fontsize="medium")
        ax.grid(alpha=0.3)
        if len(series) > 1:
            figure.legend(loc="outside right upper", fontsize="small")
        if path is not None:
            _save_figure(figure, Path(path), f"{metric} by {x}")
        return figure

    def _plot_title(self, metric: str, x: str, series: Mapping[Any, Mapping[Any, list]]
                    ) -> str:
        """What the plot shows, naming any averaging and the failed scenarios left out."""
        title = f"{metric} by {x}"
        repeats = max((len(v) for points in series.values() for v in points.values()),
                      default=1)
        if repeats > 1:
            title += f"\n(mean of up to {repeats} scenarios with the same parameters)"
        if self.failed:
            title += f"\n({len(self.failed)} failed scenario(s) left out)"
        return title

    def varying(self, *leave_out: str | None) -> list[str]:
        """The parameters whose value differs between scenarios, but for ``leave_out``."""
        return [p for p in self.parameters if p not in leave_out
                and len({_key(r.get(p)) for r in self.rows}) > 1]

    def _check_plot(self, metric: str, x: str, by: str | None, path: Any) -> None:
        if metric not in self.metrics:
            raise ArgumentError(f"metric: no metric {metric!r} (metrics: "
                                f"{', '.join(self.metrics) or 'none'})")
        for name, value in (("x", x), ("by", by)):
            if value is not None and value not in self.parameters:
                raise ArgumentError(f"{name}: no parameter {value!r} (parameters: "
                                    f"{', '.join(self.parameters) or 'none'})")
        if path is not None:
            if Path(path).suffix.lower() not in PLOT_SUFFIXES:
                raise ArgumentError(f"path: {str(path)!r}: expected a file ending in "
                                    f"{', '.join(PLOT_SUFFIXES)}")
            check_writable(Path(path), "path")

    def _series(self, metric: str, x: str, by: str | None
                ) -> dict[tuple[tuple[str, Any], ...], dict[Any, list]]:
        """By combination of the other varying parameters (``by`` first; ``()`` when none
        varies): x value -> the metric's values."""
        others = ([by] if by is not None and by != x else []) + [
            p for p in self.varying(x, by)]
        series: dict[tuple[tuple[str, Any], ...], dict[Any, list]] = {}
        for row in self.rows:
            value = row.get(metric)
            if row.get("error") or not isinstance(value, int | float) \
                    or isinstance(value, bool):
                continue
            label = tuple((p, _key(row.get(p))) for p in others)
            series.setdefault(label, {}).setdefault(_key(row.get(x)), []).append(float(value))
        return series


def _short(value: Any, width: int = 32) -> str:
    """A value's text for a tick or legend, cut to ``width`` characters (a long path or
    configuration keeps its end, which names it)."""
    text = str(value)
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _legend(label: tuple[tuple[str, Any], ...]) -> str | None:
    """``p=v, q=w`` for a series (``None``: the only series, no legend entry)."""
    return ", ".join(f"{p}={_short(v)}" for p, v in label) or None


def _key(value: Any) -> Any:
    """A hashable stand-in for a parameter value."""
    return _cell(value)


def _order(value: Any) -> tuple[int, Any]:
    """Numbers first, in order; then the rest by their text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value)
    return (1, str(value))


def _save_figure(figure: Any, target: Path, title: str) -> None:
    import html

    suffix = target.suffix.lower()
    if suffix == ".html":
        svg = io.StringIO()
        figure.savefig(svg, format="svg")
        body = svg.getvalue()
        page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">"
                f"<title>ksched sweep: {html.escape(title)}</title></head>\n<body>\n"
                f"{body[body.find('<svg'):]}\n</body>\n</html>\n")
        written_whole(target, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
        return
    written_whole(target, lambda tmp: figure.savefig(tmp, format=suffix[1:], dpi=100))
