"""The README's "Planning a heterogeneous GPU cluster": each ``ksched`` command, run in the folder
``ksched example DIR --gpu`` writes, prints the text the README shows after it; and the plan's
claims hold (the counts schedule every pod, one node fewer does not)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from ksched.example import write_example
from tests.readme_commands import section_commands

README = Path(__file__).parent.parent / "README.md"
SECTION = "## Planning a heterogeneous GPU cluster"


def _section() -> str:
    return README.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]


def _commands() -> list[tuple[list[str], str]]:
    return section_commands(SECTION)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    from ksched.cli import main

    folder = tmp_path_factory.mktemp("try-gpu")
    write_example(folder, gpu=True)
    out = []
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for argv, shown in _commands():
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                assert main(argv) == 0, argv
            out.append((stdout.getvalue(), shown))
    return out


def _timeless(text: str) -> str:
    return re.sub(r", \d+(\.\d+)? s\b", ", <time> s", text)


def test_the_section_runs_headroom_capacity_and_two_plans() -> None:
    assert [argv[0] for argv, _ in _commands()] == ["headroom", "capacity", "plan", "plan"]
    assert "ksched example try-gpu --gpu && cd try-gpu" in _section()


def test_each_command_prints_what_the_readme_shows(runs) -> None:
    for stdout, shown in runs:
        assert _timeless(stdout) == _timeless(shown)


def test_the_plans_schedule_everything_and_one_node_fewer_does_not(tmp_path: Path) -> None:
    """The counts the README's plans print, checked with ``schedule_batch`` alone."""
    import ksched
    from ksched.config import load_config
    from ksched.example_gpu import GPU_NODE_TYPES, binpack_config, gpu_next_quarter, \
        gpu_node_type, gpu_snapshot
    from ksched.inputs import as_node, node_from_template
    from ksched.planning.workloads import expand_workloads

    cluster = ksched.load_cluster(gpu_snapshot())
    types = {name.removesuffix(".yaml"): as_node(gpu_node_type(t), name)
             for name, t in GPU_NODE_TYPES.items()}
    expansion = expand_workloads(gpu_next_quarter())
    objects = dict(cluster.objects)  # the workloads' ReplicaSets: default spreading reads them
    objects["workloads"] = tuple(objects.get("workloads", ())) + expansion.workloads
    plans = [re.findall(r"^(\S+)\s+\d+\s+(\d+)\s+[\d.]+\s+[\d,.]+$", shown, flags=re.M)
             for argv, shown in _commands() if argv[0] == "plan"]
    profiles = [None, load_config(binpack_config())]
    for counts, profile in zip(plans, profiles):
        chosen = {name: int(n) for name, n in counts}
        assert set(chosen) == set(types)

        def unscheduled(counts: dict[str, int]) -> int:
            nodes = [node_from_template(types[t], f"{t}-plan-{k}")
                     for t, n in counts.items() for k in range(n)]
            state = ksched.ClusterState.from_records(
                [*cluster.nodes, *nodes], list(cluster.pods), dict(cluster.namespaces), objects)
            return len(ksched.schedule_batch(state, expansion.pods,
                                             profile=profile).unschedulable)

        assert unscheduled(chosen) == 0
        for name, n in chosen.items():
            if n:
                assert unscheduled(dict(chosen, **{name: n - 1})) > 0, name
