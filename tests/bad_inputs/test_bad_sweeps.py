"""Bad sweeps (``ksched.sweep``, ``ksched sweep``): parameters, specs, journals, outputs and Ray
addresses, each refused with a ``KschedError`` naming what is wrong, before anything runs and
before any file is written; a journal's unreadable lines skipped with a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ksched
from ksched import ClusterState, Container, Node, Pod
from ksched.errors import ArgumentError
from ksched.sweep import Scenario
from ksched.sweep.store import Journal
from ksched.sweep.studies import METRICS, metrics_of
from tests.refusals import TINY_CLUSTER, cli_refused, refused, run_cli

HOST = "kubernetes.io/hostname"
NODES, PODS = TINY_CLUSTER.split("---\n")
SPEC = "cluster: cluster.yaml\npods: pods.yaml\naxes: {seed: [1, 2]}\n"


@pytest.fixture(scope="module")
def base() -> Scenario:
    """Three nodes n0..n2 and two pending pods."""
    nodes = [Node(f"n{i}", labels={HOST: f"n{i}"},
                  allocatable={"cpu": 4000, "memory": 2**33, "pods": 110}) for i in range(3)]
    pods = [Pod(f"web-{i}", containers=[Container("c", requests={"cpu": 100})])
            for i in range(2)]
    return Scenario(ClusterState.from_records(nodes), pods=pods)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with one node, one pending pod and a good spec, ``spec.yaml``."""
    (tmp_path / "cluster.yaml").write_text(NODES)
    (tmp_path / "pods.yaml").write_text(PODS)
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def _sweep(base: Scenario, axes: object, **kw: object) -> ksched.SweepResult:
    return ksched.sweep(base, axes, executor=kw.pop("executor", "inline"), progress=False,
                        **kw)


# ---------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(("axes", "match"), [
    ({"config.profiles": [["x"]], "weights.NodeResourcesFit": [2]}, "config.profiles: ['x']"),
    ({"config.profiles": [["x"]], "strategy": ["MostAllocated"]}, "config.profiles: ['x']"),
    ({"config.profiles": [[{"schedulerName": "a"}]], "weights.NodeResourcesFit": [2]},
     'pod default/web-0: spec.schedulerName: no scheduler profile named "default-scheduler" '
     '(profiles: "a")'),
])
def test_profiles_combined_with_weights_or_strategy(base, axes, match):
    refused(_sweep, base, axes, match=match, error=ArgumentError)


@pytest.mark.parametrize("name", ["config.profiles.default-scheduler.schedulerName",
                                  "config.profiles.0.schedulerName", "profiles.0.schedulerName"])
def test_a_scheduler_name_that_leaves_the_pods_no_profile_is_refused(base, name):
    refused(_sweep, base, {name: ["other"]}, error=ArgumentError,
            match=f"{name}: 'other': pod default/web-0: spec.schedulerName: no scheduler "
                  f'profile named "default-scheduler" (profiles: "other")')
    assert _sweep(base, {name: ["default-scheduler"]}).column("placed") == [2]


def test_a_profile_for_the_pods_own_scheduler_name_is_taken(base):
    pods = [Pod("mine", scheduler_name="mine", containers=[Container("c")])]
    custom = Scenario(base.cluster, pods=pods)
    result = _sweep(custom, {"config.profiles.0.schedulerName": ["mine"]})
    assert result.column("placed") == [1]
    refused(_sweep, custom, {"config.percentageOfNodesToScore": [50]}, error=ArgumentError,
            match='pod default/mine: spec.schedulerName: no scheduler profile named "mine"')


@pytest.mark.parametrize(("value", "match"), [
    ("", "without: '': an empty node selector or value"),
    (" ", "without: ' ': an empty node selector or value"),
    (f"{HOST} in (n0,,n1)", f"without: '{HOST} in (n0,,n1)': an empty node selector or value"),
    (f"{HOST} in (n0,)", f"without: '{HOST} in (n0,)': an empty node selector or value"),
    ("n0,,n1", "without: malformed selector 'n0,,n1'"),
    ("n0,", "without: malformed selector 'n0,'"),
    (["n0", ""], "without[1]: expected a node name, got ''"),
    ([None], "without[0]: expected a node name, got None"),
    ({"n0": 1}, "without: expected a node selector or a list of node names, got dict"),
])
def test_without_with_empty_or_wrong_items_is_refused(base, value, match):
    refused(_sweep, base, {"without": [value]}, match=match, error=ArgumentError)


def test_a_seed_beyond_64_bits_is_refused(base):
    refused(_sweep, base, {"seed": [2**64]}, error=ArgumentError,
            match="seed: expected an integer from 0 to 9,223,372,036,854,775,807, got 2**64"
            .replace("2**64", str(2**64)))


def huge_metric(variant: object) -> dict[str, int]:
    """A study whose metric no table column holds."""
    return {"big": 2**70}


def test_a_metric_beyond_64_bits_fails_its_scenario(base, tmp_path):
    result = _sweep(base, {"seed": [1]}, study=huge_metric, output=tmp_path / "o.parquet")
    assert result.rows[0]["error"] == ("ArgumentError: study: metric 'big' is "
                                       f"{2**70}, outside the 64-bit integers a table column "
                                       "holds")


def test_bad_prices_are_refused(base):
    refused(Scenario, base.cluster, prices={"m5": "cheap"}, node_types=[base.cluster.nodes[0]],
            match="Scenario.prices['m5']: no such node type (types: n0)")
    refused(Scenario, base.cluster, prices={"n0": "cheap"}, node_types=[base.cluster.nodes[0]],
            match="Scenario.prices['n0']: expected a finite number >= 0, got 'cheap'")


@pytest.mark.parametrize(("address", "match"), [
    (5, "ray_address: expected an address such as 'auto'"),
    ("", "ray_address: expected an address such as 'auto'"),
    ("ray://", "ray_address 'ray://': not a ray://HOST:PORT or HOST:PORT address"),
    ("ray://127.0.0.1:1", "ray_address 'ray://127.0.0.1:1': cannot connect to 127.0.0.1:1: "),
    ("127.0.0.1:1", "ray_address '127.0.0.1:1': cannot connect to 127.0.0.1:1: "),
])
def test_a_ray_address_nothing_listens_at_is_refused_before_writing(base, tmp_path, address,
                                                                   match):
    pytest.importorskip("ray")
    refused(ksched.sweep, base, {"seed": [1]}, ray_address=address, progress=False,
            output=tmp_path / "o.csv", match=match)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------- the journal


def _record(key: str, **fields: object) -> bytes:
    return json.dumps({"key": key, "metrics": {"placed": 9}, "error": None, "seconds": 0.5,
                       **fields}).encode() + b"\n"


def test_a_journals_unreadable_lines_are_skipped_with_a_warning(tmp_path):
    path = tmp_path / "o.csv.rows.jsonl"
    path.write_bytes(_record("good") + _record("a", metrics=None) + _record("b", seconds="1")
                     + _record("c", metrics={"x": [1]}) + _record("d", error=3)
                     + _record("e", seconds=True) + b'{"key": "f", "metr\xff\xfe\n'
                     + b"\xff\xfe\n" + b"[1, 2]\n" + b"\n" + b'{"key": "torn"')
    with pytest.warns(UserWarning, match=f"journal {path}: skipped 9 unreadable lines"):
        records = Journal(path).load()
    assert list(records) == ["good"]


def test_a_rerun_runs_again_the_scenarios_whose_journal_lines_are_bad(base, tmp_path):
    output = tmp_path / "o.jsonl"
    first = _sweep(base, {"seed": [1, 2]}, output=output)
    journal = tmp_path / "o.jsonl.rows.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    broken = json.loads(lines[0])
    del broken["metrics"]
    journal.write_bytes(json.dumps(broken).encode() + b"\n\xff\n" + lines[1])
    with pytest.warns(UserWarning, match="skipped 2 unreadable lines"):
        again = _sweep(base, {"seed": [1, 2]}, output=output)
    assert again.column("placed") == first.column("placed") == [2, 2]
    assert len(journal.read_bytes().splitlines()) == 4  # the scenario run again, appended


def test_a_folder_as_journal_is_refused_before_running(base, tmp_path):
    (tmp_path / "o.csv.rows.jsonl").mkdir()
    refused(_sweep, base, {"seed": [1]}, output=tmp_path / "o.csv", error=ArgumentError,
            match=f"output's journal: '{tmp_path / 'o.csv.rows.jsonl'}': is a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["o.csv.rows.jsonl"]


# ---------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("write", ["to_jsonl", "to_csv", "to_parquet", "save"])
def test_writing_the_table_into_a_folder_is_refused(base, tmp_path, write):
    result = _sweep(base, {"seed": [1]})
    folder = tmp_path / "out.jsonl"
    folder.mkdir()
    refused(getattr(result, write), folder, error=ArgumentError,
            match=f"path: '{folder}': is a directory")
    refused(getattr(result, write), tmp_path / "no" / "o.jsonl", error=ArgumentError,
            match=f"path: '{tmp_path / 'no' / 'o.jsonl'}': no such directory")
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_plotting_into_a_folder_is_refused(base, tmp_path):
    result = _sweep(base, {"seed": [1, 2]})
    (tmp_path / "p.png").mkdir()
    refused(result.plot, "placed", "seed", path=tmp_path / "p.png", error=ArgumentError,
            match=f"path: '{tmp_path / 'p.png'}': is a directory")


def test_the_declared_metrics_are_the_studies_own(base):
    from ksched.sweep.apply import prepare

    variant = prepare(base, {})
    for study in ("schedule", "simulate"):
        fixed = tuple(n for n in METRICS[study] if not n.endswith("*"))
        assert tuple(metrics_of(study, variant)) == fixed  # no extended resources here


# ---------------------------------------------------------------------------- the command


@pytest.mark.parametrize(("spec", "match"), [
    ("cluster:\n", "spec.yaml: cluster: required (the snapshot file)"),
    ("cluster: cluster.yaml\naxes:\n", "spec.yaml: axes: expected parameter: [values, ...], "
                                       "got NoneType"),
    ("cluster: cluster.yaml\nscenarios: {seed: [1]}\n",
     "spec.yaml: scenarios: expected a list of {parameter: value, ...}, got dict"),
    ("cluster: cluster.yaml\nstudy: [schedule]\n", "spec.yaml: study: expected a study name"),
    ("cluster: cluster.yaml\nprices: [1]\n", "spec.yaml: prices: expected node type: price"),
    ("cluster: cluster.yaml\nprices: {m5: 1}\n", "Scenario.prices['m5']: no such node type"),
    ("cluster: cluster.yaml\naxes: {without: ['n1,']}\n", "without: malformed selector 'n1,'"),
    ("cluster: cluster.yaml\naxes: {without: [[n1, '']]}\n",
     "without[1]: expected a node name, got ''"),
    ("cluster: cluster.yaml\naxes: {config.profiles: [[x]], weights.NodeResourcesFit: [2]}\n",
     "spec.yaml: config.profiles: ['x']: json: cannot unmarshal string"),
    ("cluster: cluster.yaml\npods: pods.yaml\n"
     "axes: {config.profiles.default-scheduler.schedulerName: [other]}\n",
     'pod default/web: spec.schedulerName: no scheduler profile named "default-scheduler"'),
])
def test_bad_specs_are_refused(folder, spec, match):
    (folder / "spec.yaml").write_text(spec)
    cli_refused(["sweep", str(folder / "spec.yaml"), "--workers", "1"], match)


@pytest.mark.parametrize(("options", "match"), [
    (["--metric", "bogus", "--x", "seed"],
     "metric: the schedule study has no metric 'bogus' (metrics: placed, unschedulable"),
    (["--metric", "placed", "--x", "scale"], "x: no parameter 'scale' (parameters: seed)"),
    (["--metric", "placed", "--x", "seed", "--by", "seeds"], "by: no parameter 'seeds'"),
])
def test_a_plot_that_cannot_be_drawn_is_refused_before_running(folder, options, match):
    out = folder / "out.csv"
    cli_refused(["sweep", str(folder / "spec.yaml"), "--workers", "1", "-o", str(out),
                 "--plot", str(folder / "p.png"), *options], match)
    assert sorted(p.name for p in folder.iterdir()) == ["cluster.yaml", "pods.yaml", "spec.yaml"]


def test_outputs_that_cannot_be_written_are_refused_before_running(folder):
    spec = str(folder / "spec.yaml")
    (folder / "o.csv.rows.jsonl").mkdir()
    cli_refused(["sweep", spec, "-o", str(folder / "o.csv")],
                f"-o {folder / 'o.csv'}: output's journal: '{folder / 'o.csv.rows.jsonl'}': "
                f"is a directory")
    (folder / "p.svg").mkdir()
    cli_refused(["sweep", spec, "-o", str(folder / "x.csv"), "--plot", str(folder / "p.svg"),
                 "--metric", "placed", "--x", "seed"], f"--plot {folder / 'p.svg'}: is a "
                                                       f"directory")
    assert not (folder / "x.csv").exists() and not (folder / "x.csv.rows.jsonl").exists()


def test_a_ray_address_nothing_listens_at_is_refused_in_one_line(folder):
    pytest.importorskip("ray")
    cli_refused(["sweep", str(folder / "spec.yaml"), "--ray", "ray://127.0.0.1:1", "-o",
                 str(folder / "o.csv")],
                "ray_address 'ray://127.0.0.1:1': cannot connect to 127.0.0.1:1")
    assert sorted(p.name for p in folder.iterdir()) == ["cluster.yaml", "pods.yaml", "spec.yaml"]


def test_skipped_journal_lines_are_one_warning_line(folder):
    out = folder / "o.csv"
    argv = ["sweep", str(folder / "spec.yaml"), "--workers", "1", "-o", str(out)]
    assert run_cli(argv)[0] == 0
    with open(folder / "o.csv.rows.jsonl", "ab") as journal:
        journal.write(b"\xff\xfe not json\n")
    status, stdout, stderr = run_cli(argv)
    assert status == 0 and stdout.startswith(f"2 scenarios: {out}\n")
    assert stderr == f"ksched: warning: journal {out}.rows.jsonl: skipped 1 unreadable line\n"

