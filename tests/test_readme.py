"""The README's commands and Python snippets run as written."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from ksched.example import write_example

README = Path(__file__).parent.parent / "README.md"


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
    assert result.stop_reason == placed[-1].reason
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
