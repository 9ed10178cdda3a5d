"""ksched.planning.report: the table model, its exports, and plots."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.errors import ArgumentError, KschedError
from ksched.planning import capacity, headroom
from ksched.planning.report import (Table, as_table, capacity_table, headroom_table,
                                    replicas_table, save_plot)

ZONE = "topology.kubernetes.io/zone"


def _cluster() -> ClusterState:
    nodes = [Node(f"n{i}", labels={ZONE: "ab"[i % 2]}, allocatable={"cpu": 4000, "pods": 110})
             for i in range(3)]
    return ClusterState.from_records(nodes)


def _web() -> Pod:
    return Pod("web", containers=[Container("c", requests={"cpu": 1000})])


def test_table_text_is_aligned_numbers_right():
    table = Table(("name", "count"), [("a", 5), ("bbb", 120)], title="t")
    assert table.to_text().splitlines() == ["t", "name  count", "a         5", "bbb     120"]
    assert str(table) == table.to_text()


def test_table_json_and_csv_parse_back():
    table = Table(("name", "count", "note"), [("a", 5, None), ("b,c", 7, "x")])
    assert json.loads(table.to_json()) == [{"name": "a", "count": 5, "note": None},
                                           {"name": "b,c", "count": 7, "note": "x"}]
    assert list(csv.reader(io.StringIO(table.to_csv()))) == [
        ["name", "count", "note"], ["a", "5", ""], ["b,c", "7", "x"]]


def test_table_refuses_a_short_row():
    with pytest.raises(ArgumentError, match=r"rows\[1\]: 1 values for 2 columns"):
        Table(("a", "b"), [(1, 2), (3,)])


def test_capacity_tables_match_the_report():
    report = capacity(_cluster(), _web(), by=ZONE)
    table = capacity_table(report)
    assert table.columns == ("template", "replicas", "limit", "method", "stop_reason", "a", "b")
    assert table.rows == (("default/web", 12, None, report.results[0].method,
                           report.results[0].stop_reason, 8, 4),)
    assert report.results[0].stop_reason.startswith("0/3 nodes are available: 3 Insufficient "
                                                    "cpu. no new claims to deallocate, ")
    nodes = replicas_table(report)
    assert sorted(nodes.rows) == [("default/web", f"n{i}", 4) for i in range(3)]
    assert as_table(report) == table


def test_headroom_table_holds_every_row():
    report = headroom(_cluster(), by=ZONE, reference=_web())
    table = headroom_table(report)
    assert [r["name"] for r in table.to_records()] == ["n0", "n1", "n2", "a", "b", "total"]
    total = table.to_records()[-1]
    assert total["cpu_allocatable_cores"] == 12.0 and total["fits"] == 12
    assert "ephemeral-storage_allocatable_gib" not in total  # all zero: left out
    assert as_table(report) == table


def test_as_table_refuses_other_objects():
    with pytest.raises(ArgumentError, match="report: expected a CapacityReport"):
        as_table(42)


def test_pandas_and_arrow():
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    table = capacity_table(capacity(_cluster(), _web()))
    frame = table.to_pandas()
    assert list(frame.columns) == list(table.columns)
    assert frame["replicas"].tolist() == [12]
    arrow = table.to_arrow()
    assert arrow.column("replicas").to_pylist() == [12]
    assert arrow.num_rows == 1


@pytest.mark.parametrize(("module", "method"), [("pandas", "to_pandas"),
                                                ("pyarrow", "to_arrow")])
def test_missing_pandas_or_arrow_says_how_to_install(monkeypatch, module, method):
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    with pytest.raises(KschedError, match=f"{module} is not installed: pip install {module}"):
        getattr(Table(("a",), [(1,)]), method)()


@pytest.mark.parametrize("suffix", [".png", ".svg", ".html"])
@pytest.mark.parametrize("kind", ["capacity", "headroom"])
def test_save_plot_writes_each_format(tmp_path, suffix, kind):
    pytest.importorskip("matplotlib")
    report = (capacity(_cluster(), _web(), by=ZONE) if kind == "capacity"
              else headroom(_cluster(), by=ZONE))
    path = save_plot(report, tmp_path / f"plot{suffix}")
    data = path.read_bytes()
    assert len(data) > 1000
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    elif suffix == ".svg":
        assert b"<svg" in data[:500]
    else:
        text = data.decode()
        assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "</html>" in text
    assert [p.name for p in tmp_path.iterdir()] == [f"plot{suffix}"]  # no temporary left


def test_save_plot_refuses_unknown_suffix(tmp_path):
    with pytest.raises(ArgumentError, match="expected a file ending in .png, .svg, .html"):
        save_plot(headroom(_cluster()), tmp_path / "plot.gif")
    assert not list(tmp_path.iterdir())


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(KschedError, match=r"pip install 'ksched\[plot\]'"):
        save_plot(headroom(_cluster()), tmp_path / "plot.png")
    assert not list(tmp_path.iterdir())
