"""The README's commands and Python snippets run as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import attrs
import pytest

from ksched.example import write_example
from tests.readme_commands import section_commands

HERE = Path(__file__).parent
README = HERE.parent / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def namespace(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every Python block of the README run in order, in one namespace, in the folder that
    ``ksched example`` writes (as the README says)."""
    folder = tmp_path_factory.mktemp("try-ksched")
    write_example(folder)
    names: dict = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for block in _blocks("python"):
            exec(compile(block, str(README), "exec"), names)  # noqa: S102 - our own README
    return names


def test_every_python_block_runs(namespace: dict) -> None:
    assert len(_blocks("python")) >= 4


def test_library_example_places_the_example_pods(namespace: dict) -> None:
    result = namespace["result"]  # the simulator's, the last block that names it
    assert result.summary()["pods_scheduled"] > 0
    pods = namespace["pods"]
    assert len(pods) == 92
    why = namespace["why"]
    assert why.pod.name == "trainer-0"  # only limits: requests defaulted from them
    assert why.chosen is None
    assert why.message.startswith("0/300 nodes are available: ")
    assert "Insufficient cpu" in why.message


def test_fleet_example_reads_quantities_as_written(namespace: dict) -> None:
    fleet = namespace["fleet"]
    assert fleet.num_nodes == 3200
    cpu = fleet.resource_column("cpu")
    assert int(fleet.allocatable[0, cpu]) == 8000  # "8" cpu is eight cores
    assert int(fleet.allocatable[-1, fleet.resource_column("nvidia.com/gpu")]) == 8


def test_capacity_example_agrees_with_schedule_batch(namespace: dict) -> None:
    import ksched

    result = namespace["room"].results[0]
    assert result.replicas > 0
    assert sum(result.by.values()) == result.replicas
    copies = [attrs.evolve(namespace["web"], name=f"copy-{k}")
              for k in range(result.replicas + 1)]
    placed = ksched.schedule_batch(namespace["cluster"], copies).placements
    assert all(p.node for p in placed[:-1]) and placed[-1].node is None
    # capacity states the pod condition whole: the diagnosis, then what PostFilter said
    assert result.stop_reason.startswith(placed[-1].reason)
    assert namespace["spare"].displaced.removed_nodes


def test_custom_plugin_example_runs(namespace: dict) -> None:
    assert namespace["placed"].placements[0].node == "fast"
    profile = namespace["config"].profiles[0]
    assert profile.weights["PreferLabelled"] == 5
    assert "PreferLabelled" in profile.plugins["score"]
    assert profile.args["PreferLabelled"] == {"label": "ssd"}


def test_quick_start_commands_are_the_ci_command() -> None:
    commands = [line for block in _blocks("bash") for line in block.splitlines()]
    assert 'pip install . && ksched demo' in commands
    test_command = 'pip install -e ".[test]" && python -m pytest'
    assert test_command in commands
    assert test_command in (README.parent / ".ci" / "run").read_text()


def _worked_example() -> list[tuple[list[str], str]]:
    return section_commands("### A worked example")


@pytest.fixture(scope="module")
def worked_example(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """(stdout, README's text) per command, run in the ``ksched example`` folder."""
    from ksched.cli import main

    folder = tmp_path_factory.mktemp("worked")
    write_example(folder)
    runs = []
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for argv, shown in _worked_example():
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(argv) == 0
            runs.append((out.getvalue(), shown))
    return runs, folder


def test_worked_example_prints_what_the_readme_shows(worked_example) -> None:
    runs, _ = worked_example
    assert [argv[0] for argv, _ in _worked_example()] == ["capacity", "plan"]
    for stdout, shown in runs:  # the plan's wall time varies from run to run
        assert _timeless(stdout) == _timeless(shown)


def _timeless(text: str) -> str:
    return re.sub(r", \d+(\.\d+)? s\b", ", <time> s", text)


def test_worked_example_plot_is_the_one_the_readme_shows(worked_example) -> None:
    pytest.importorskip("matplotlib")
    _, folder = worked_example
    made, shown = (folder / "capacity.png").read_bytes(), (HERE / "readme" / "capacity.png")
    assert "](tests/readme/capacity.png)" in README.read_text()
    assert made[:8] == b"\x89PNG\r\n\x1a\n"
    assert made[16:24] == shown.read_bytes()[16:24]  # the IHDR's width and height


def test_worked_example_plan_is_tight() -> None:
    """One node fewer of either type than the README's plan leaves a pod unscheduled."""
    import ksched
    from ksched.example import NODE_TYPES, node_type, next_quarter
    from ksched.planning.workloads import expand_workloads
    from ksched.workloads import kubectl_snapshot

    cluster = ksched.load_cluster(kubectl_snapshot(300, 2000))
    types = {spec[0].replace(".", "-"): node_type(*spec) for spec in NODE_TYPES.values()}
    chosen = {"m6i-4xlarge": 97, "r6i-4xlarge": 20}
    for fewer in chosen:
        counts = dict(chosen, **{fewer: chosen[fewer] - 1})
        nodes = [ksched.inputs.node_from_template(ksched.inputs.as_node(types[t], t),
                                                  f"{t}-plan-{k}")
                 for t, n in counts.items() for k in range(n)]
        state = ksched.ClusterState.from_records([*cluster.nodes, *nodes], list(cluster.pods))
        pods = expand_workloads(next_quarter(), cluster=state).pods
        assert ksched.schedule_batch(state, pods).unschedulable, fewer


def test_sweep_example_loses_pods_only_with_the_zone(namespace: dict) -> None:
    growth = namespace["growth"]
    assert len(growth) == 14 and not growth.failed
    kept, lost = growth.rows[:7], growth.rows[7:]
    assert all(r["displaced"] == 667 and r["displaced_pending"] == 0 for r in lost)
    assert [r["unschedulable"] for r in kept[:3]] == [r["unschedulable"] for r in lost[:3]]
    assert lost[-1]["unschedulable"] > kept[-1]["unschedulable"]
    assert list(namespace["frame"]["scale"][:7]) == [1, 5, 10, 15, 20, 25, 30]
    assert "](tests/readme/sweep.png)" in README.read_text()
