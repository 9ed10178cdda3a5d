"""``ksched sweep SPEC.yaml``: the library's table, the output files, resuming, plots, and
one-line refusals."""

from __future__ import annotations

import csv
import io
import json

import pytest

import ksched
from ksched.example import write_example
from tests.refusals import cli_refused, run_cli

ZONE = "topology.kubernetes.io/zone"
SPEC = f"""\
cluster: snapshot.json
pods: pending.yaml
study: schedule
axes:
  without: [null, "{ZONE}=us-east-1a"]
  scale: [1, 4]
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    here = tmp_path_factory.mktemp("sweep-cli")
    write_example(here)
    (here / "sweep.yaml").write_text(SPEC)
    return here


def _ok(argv, status=0):
    code, out, err = run_cli(argv)
    assert code == status, err
    return out


def test_the_table_is_the_librarys(folder):
    out = _ok(["sweep", str(folder / "sweep.yaml"), "--workers", "1"])
    base = ksched.Scenario(folder / "snapshot.json", pods=folder / "pending.yaml")
    expected = ksched.sweep(base, {"without": [None, f"{ZONE}=us-east-1a"], "scale": [1, 4]},
                            executor="inline", progress=False)
    lines = out.splitlines()
    assert lines[0] == "sweep (schedule): 4 scenarios"
    assert lines[1].split()[:5] == ["scenario", "without", "scale", "placed", "unschedulable"]
    assert [int(line.split()[3]) for line in lines[2:4]] == expected.column("placed")[:2]
    assert expected.column("placed") == [90, 360, 90, 360]


def test_output_files_resume_and_plot(folder, tmp_path):
    output, plot = tmp_path / "out.csv", tmp_path / "plot.svg"
    argv = ["sweep", str(folder / "sweep.yaml"), "--workers", "1", "-o", str(output)]
    out = _ok(argv + ["--plot", str(plot), "--metric", "unschedulable", "--x", "scale",
                      "--by", "without"])
    lines = out.splitlines()
    assert lines[:2] == [f"4 scenarios: {output}",
                         "4 scenarios of the schedule study; varying without, scale"]
    placed = next(line.split() for line in lines if line.startswith("placed "))
    assert placed[1:4] == ["90", "225", "360"]  # min, mean, max over the four scenarios
    assert " ".join(placed[4:7]) == "#1 without=None, scale=4"  # the most placed: best
    unplaced = next(line.split() for line in lines if line.startswith("unplaced "))
    assert unplaced[1] == "0"  # the two scenarios that remove no node
    rows = list(csv.DictReader(io.StringIO(output.read_text())))
    assert [r["scale"] for r in rows] == ["1", "4", "1", "4"]
    assert rows[2]["without"] == f"{ZONE}=us-east-1a" and rows[2]["displaced"] == "667"
    assert plot.read_text().lstrip().startswith("<?xml")
    journal = tmp_path / "out.csv.rows.jsonl"
    before = journal.read_text()
    output.unlink()
    assert _ok(argv).startswith(f"4 scenarios: {output}\n")  # all from the journal ...
    assert journal.read_text() == before  # ... nothing run again
    assert list(csv.DictReader(io.StringIO(output.read_text())))[0]["placed"] == "90"
    _ok(argv + ["--fresh"])
    assert len(journal.read_text().splitlines()) == 4


def test_parquet_output(folder, tmp_path):
    parquet = pytest.importorskip("pyarrow.parquet")
    output = tmp_path / "out.parquet"
    _ok(["sweep", str(folder / "sweep.yaml"), "--workers", "1", "-o", str(output)])
    table = parquet.read_table(output)
    assert table.column("placed").to_pylist() == [90, 360, 90, 360]
    assert table.column("scale").to_pylist() == [1, 4, 1, 4]


def test_failed_scenarios_give_exit_status_one(folder, tmp_path):
    spec = tmp_path / "capacity.yaml"
    spec.write_text(f"cluster: {folder / 'snapshot.json'}\nstudy: capacity\n"
                    f"axes: {{strategy: [MostAllocated]}}\n")
    out = _ok(["sweep", str(spec), "--workers", "1", "-o", str(tmp_path / "c.jsonl")],
              status=1)
    assert out == (f"1 scenarios, 1 failed (see the error column): {tmp_path / 'c.jsonl'}\n"
                   f"1 scenarios of the capacity study, 1 failed (see the error column)\n"
                   f"metric  min  mean  max  best (or lowest)  worst (or highest)\n")
    row = json.loads((tmp_path / "c.jsonl").read_text())
    assert row["error"] == "ArgumentError: capacity study: the scenario has no pods to use as " \
                           "templates"


@pytest.mark.parametrize(("spec", "match"), [
    ("cluster: snapshot.json\naxis: {seed: [1]}\n", "unknown key 'axis' (a spec has cluster"),
    ("axes: {seed: [1]}\n", "cluster: required"),
    ("[1, 2]\n", "expected a mapping with cluster"),
    ("cluster: snapshot.json\naxes: {seed: [1]}\nscenarios: [{seed: 1}]\n",
     "give axes or scenarios, not both"),
    ("cluster: snapshot.json\naxes: {sede: [1]}\n", "axes: unknown parameter 'sede'"),
    ("cluster: snapshot.json\naxes: {scale: [-1]}\n", "scale: expected a number > 0"),
    ("cluster: snapshot.json\nstudy: guess\n", "study: expected one of schedule"),
    ("cluster: snapshot.json\nnode_types: 3\n", "node_types: expected a list of files"),
    ("cluster: missing.json\n", "missing.json"),
    ("cluster: snapshot.json\naxes: {seed: [1\n", "cannot parse"),
])
def test_bad_specs_are_refused_in_one_line(folder, tmp_path, spec, match):
    path = folder / "bad.yaml"
    path.write_text(spec)
    cli_refused(["sweep", str(path), "--workers", "1"], match)


def test_bad_options_are_refused_in_one_line(folder, tmp_path):
    spec = str(folder / "sweep.yaml")
    cli_refused(["sweep", spec, "-o", str(tmp_path / "out.xlsx")],
                "expected a file ending in .parquet, .csv, .jsonl")
    cli_refused(["sweep", spec, "--plot", str(tmp_path / "p.png")],
                "--plot: give the --metric to draw and the --x parameter")
    cli_refused(["sweep", spec, "--workers", "0"], "--workers: must be an integer from 1")
    cli_refused(["sweep", spec, "--workers", "1", "--plot", str(tmp_path / "p.png"),
                 "--metric", "speed", "--x", "scale"],
                "metric: the schedule study has no metric 'speed'")
