"""Reports people can look at: one small table model every planning report converts to, and
plots.

:class:`Table` prints as aligned text and exports JSON, CSV, a ``pandas.DataFrame`` or a
``pyarrow.Table`` (pandas / pyarrow imported only when asked for). :func:`as_table` turns a
:class:`~ksched.planning.CapacityReport` or :class:`~ksched.planning.HeadroomReport` into one;
:func:`save_plot` draws a report with matplotlib (the optional extra ``ksched[plot]``) into a
``.png``, ``.svg`` or self-contained ``.html`` file.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ksched.errors import ArgumentError, KschedError
from ksched.files import written_whole
from ksched.planning.capacity_report import CapacityReport
from ksched.planning.headroom import HeadroomReport

#: The file suffixes :func:`save_plot` writes.
PLOT_SUFFIXES = (".png", ".svg", ".html")


# =========================================================================== the table


@attrs.frozen
class Table:
    """Rows of plain values under named columns.

    Attributes
    ----------
    columns : the column names.
    rows : one tuple per row, ``len(columns)`` values each (str, int, float or ``None``).
    title : a caption (printed above the text form).
    """

    columns: tuple[str, ...] = attrs.field(converter=tuple)
    rows: tuple[tuple[Any, ...], ...] = attrs.field(
        converter=lambda rows: tuple(tuple(r) for r in rows))
    title: str = ""

    def __attrs_post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ArgumentError(f"rows[{i}]: {len(row)} values for "
                                    f"{len(self.columns)} columns")

    def to_records(self) -> list[dict[str, Any]]:
        """One ``{column: value}`` dict per row."""
        return [dict(zip(self.columns, row)) for row in self.rows]

    def to_text(self) -> str:
        """Aligned columns, numbers right-aligned, the title on the first line."""
        cells = [list(self.columns)] + [[_cell(v) for v in row] for row in self.rows]
        widths = [max(len(c[j]) for c in cells) for j in range(len(self.columns))]
        numeric = [all(isinstance(r[j], int | float) and not isinstance(r[j], bool)
                       for r in self.rows) and bool(self.rows) for j in range(len(widths))]
        lines = [self.title] if self.title else []
        for line in cells:
            lines.append("  ".join(c.rjust(w) if num else c.ljust(w)
                                   for c, w, num in zip(line, widths, numeric)).rstrip())
        return "\n".join(lines)

    def to_json(self, indent: int | None = 1) -> str:
        """A JSON array of row objects."""
        return json.dumps(self.to_records(), indent=indent)

    def to_csv(self) -> str:
        """CSV (``csv`` module, ``\\n`` line ends), a header row first."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(["" if v is None else v for v in row] for row in self.rows)
        return out.getvalue()

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of the rows (needs pandas)."""
        pandas = _optional("pandas", "pip install pandas")
        return pandas.DataFrame.from_records(list(self.rows), columns=list(self.columns))

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` of the rows (needs pyarrow)."""
        pyarrow = _optional("pyarrow", "pip install pyarrow")
        return pyarrow.Table.from_pydict(
            {c: [row[j] for row in self.rows] for j, c in enumerate(self.columns)})

    def __str__(self) -> str:
        return self.to_text()


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _optional(module: str, hint: str) -> Any:
    """Import an optional dependency, or a :class:`KschedError` saying how to install it."""
    try:
        return __import__(module)
    except ImportError:
        raise KschedError(f"{module} is not installed: {hint}") from None


# =========================================================================== conversions


def capacity_table(report: Any) -> Table:
    """Per template of a :class:`~ksched.planning.CapacityReport`: replicas, limit, method,
    stop reason (and one column per ``by`` value when the report has ``by``)."""
    values = sorted({v for r in report.results for v in r.by}) if report.by_label else []
    columns = ["template", "replicas", "limit", "method", "stop_reason", *values]
    rows = [(r.template.key, r.replicas, r.limit, r.method, r.stop_reason,
             *(r.by.get(v, 0) for v in values)) for r in report.results]
    return Table(columns, rows, title=f"capacity: {report.replicas} replicas")


def replicas_table(report: Any) -> Table:
    """Per template and node of a :class:`~ksched.planning.CapacityReport`: the copies
    placed there (nodes with at least one)."""
    rows = [(r.template.key, node, count) for r in report.results
            for node, count in r.replicas_on_nodes.items()]
    return Table(("template", "node", "replicas"), rows, title="replicas per node")


def headroom_table(report: Any) -> Table:
    """Every row of a :class:`~ksched.planning.HeadroomReport` (nodes, groups, total) in
    human units, the unit in each column's name (``cpu_allocatable_cores``,
    ``memory_free_gib``, ``nvidia.com/gpu_stranded``), then per DeviceClass matching some
    device ``devices.<class>_allocatable`` / ``_allocated`` / ``_free`` (``_stranded``);
    resources no node has and no pod requests are left out."""
    from ksched.planning.headroom import scaled, unit

    with_fits = report.fits_per_node is not None
    columns = ["scope", "name", "nodes"]
    for r in report.shown:
        tail = f"_{unit(r).lower()}" if unit(r) else ""
        columns += [f"{r}_{what}{tail}" for what in ("allocatable", "requested", "free")]
        columns += [f"{r}_percent"] + ([f"{r}_stranded{tail}"] if with_fits else [])
    classes = report.devices.shown if report.devices is not None else ()
    device_fields = ("allocatable", "allocated", "free") + (("stranded",) if with_fits else ())
    columns += [f"devices.{c}_{what}" for c in classes for what in device_fields]
    columns += ["fits"] if with_fits else []
    rows = []
    for u in [*report.nodes, *report.groups, report.total]:
        row: list[Any] = [u.scope, u.name, u.nodes]
        for r in report.shown:
            row += [_rounded(scaled(r, v)) for v in (u.allocatable[r], u.requested[r],
                                                      u.free[r])]
            row += [round(u.percent[r], 2)]
            row += [_rounded(scaled(r, u.stranded[r]))] if with_fits else []
        row += [u.devices[c][what] for c in classes for what in device_fields]
        rows.append(row + ([u.fits] if with_fits else []))
    return Table(columns, rows, title="headroom" + (f" by {report.by}" if report.by else ""))


def _rounded(value: float | int) -> float | int:
    return round(value, 3) if isinstance(value, float) else value


def as_table(report: Any) -> Table:
    """The :class:`Table` of a capacity or headroom report (a :class:`Table` as it is)."""

    if isinstance(report, Table):
        return report
    if isinstance(report, CapacityReport):
        return capacity_table(report)
    if isinstance(report, HeadroomReport):
        return headroom_table(report)
    raise ArgumentError(f"report: expected a CapacityReport, HeadroomReport or Table, "
                        f"got {type(report).__name__}")


# =========================================================================== plots


def save_plot(report: Any, path: str | os.PathLike[str]) -> Path:
    """Draw ``report`` into ``path``, the format chosen by its suffix.

    Parameters
    ----------
    report : a :class:`~ksched.planning.HeadroomReport` (utilisation heatmap per node and
        resource; percent used per ``by`` value as bars) or a
        :class:`~ksched.planning.CapacityReport` (histogram of replicas per node per
        template; copies per ``by`` value as bars).
    path : ``.png`` / ``.svg`` (matplotlib, drawn off-screen) or ``.html`` (a self-contained
        page with the SVG embedded). Written to a temporary file renamed over ``path``.

    Returns
    -------
    Path : ``path``.

    Raises
    ------
    ArgumentError : an unknown suffix or report type.
    KschedError : matplotlib is missing (``pip install 'ksched[plot]'``).
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in PLOT_SUFFIXES:
        raise ArgumentError(f"path: {target.name!r}: expected a file ending in "
                            f"{', '.join(PLOT_SUFFIXES)}")
    figure = _figure(report)
    if suffix == ".html":
        svg = io.StringIO()
        figure.savefig(svg, format="svg")
        data: bytes = _html_page(_title(report), svg.getvalue()).encode("utf-8")
    else:
        buffer = io.BytesIO()
        figure.savefig(buffer, format=suffix[1:], dpi=100)
        data = buffer.getvalue()
    with written_whole(target, binary=True) as out:
        out.write(data)
    return target


def _figure(report: Any) -> Any:

    _optional("matplotlib", "pip install 'ksched[plot]'")
    from matplotlib.figure import Figure  # no pyplot: no global backend state

    if isinstance(report, HeadroomReport):
        return _headroom_figure(Figure, report)
    if isinstance(report, CapacityReport):
        return _capacity_figure(Figure, report)
    raise ArgumentError(f"report: expected a CapacityReport or HeadroomReport, "
                        f"got {type(report).__name__}")


def _headroom_figure(Figure: Any, report: Any) -> Any:
    figure = Figure(figsize=(10, 4.5), layout="constrained")
    heat, bars = figure.subplots(1, 2, width_ratios=(3, 2))
    util = 100.0 * report.utilisation
    image = heat.imshow(util.T, aspect="auto", interpolation="nearest", cmap="viridis",
                        vmin=0.0, vmax=100.0)
    heat.set_yticks(range(len(report.resources)), labels=list(report.resources))
    heat.set_xlabel(f"node (state order, {len(report.node_names)})")
    heat.set_title("utilisation per node and resource (%)")
    figure.colorbar(image, ax=heat, label="% requested")
    rows = report.groups if report.by else [report.total]
    _grouped_bars(bars, [u.name for u in rows], list(report.resources),
                  [[u.percent[r] for r in report.resources] for u in rows])
    bars.set_ylabel("% requested")
    bars.set_title(f"per {report.by}" if report.by else "cluster total")
    return figure


def _capacity_figure(Figure: Any, report: Any) -> Any:
    panels = 2 if report.by_label else 1
    figure = Figure(figsize=(5 * panels + 1, 4), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, panels))
    hist = axes[0]
    for r in report.results:
        counts = list(r.replicas_on_nodes.values())
        if counts:
            hist.hist(counts, bins=range(1, max(counts) + 2), alpha=0.6, align="left",
                      label=r.template.name)
    hist.set_xlabel("replicas on a node")
    hist.set_ylabel("nodes")
    hist.set_title(f"replicas per node ({report.replicas} in all)")
    if report.results:
        hist.legend()
    if report.by_label:
        values = sorted({v for r in report.results for v in r.by})
        _grouped_bars(axes[1], values, [r.template.name for r in report.results],
                      [[r.by.get(v, 0) for r in report.results] for v in values])
        axes[1].set_ylabel("replicas")
        axes[1].set_title(f"per {report.by_label}")
    return figure


def _grouped_bars(ax: Any, groups: Sequence[str], series: Sequence[str],
                  heights: Sequence[Sequence[float]]) -> None:
    """Bars per group, one colour per series (``heights[group][series]``)."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for k, name in enumerate(series):
        ax.bar(x + k * width - 0.4 + width / 2, [h[k] for h in heights], width, label=name)
    ax.set_xticks(x, labels=list(groups), rotation=45 if len(groups) > 6 else 0)
    if series:
        ax.legend(fontsize="small")


def _title(report: Any) -> str:
    return as_table(report).title


def _html_page(title: str, svg: str) -> str:
    body = svg[svg.find("<svg"):]  # drop the XML declaration and doctype
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">"
            f"<title>ksched: {html.escape(title)}</title></head>\n<body>\n"
            f"<h1>ksched: {html.escape(title)}</h1>\n{body}\n</body>\n</html>\n")
