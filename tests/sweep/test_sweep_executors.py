"""The same sweep in this process, on the process pool and on a real local Ray instance;
workers that die and scenarios that raise; results streamed to the journal and a re-run that
resumes without redoing finished scenarios."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ksched
from ksched.sweep import Scenario
from ksched.workloads import scheduling_basic

#: The file the studies below use to leave marks (set per test, inherited by workers).
MARKS = "KSCHED_SWEEP_TEST_MARKS"
AXES = {"strategy": ["LeastAllocated", "MostAllocated"],
        "weights.NodeResourcesBalancedAllocation": [1, 4], "scale": [1, 2.5]}


@pytest.fixture(scope="module")
def base() -> Scenario:
    cluster, pods = scheduling_basic(40, 30, 120)
    return Scenario(cluster, pods=pods)


def _rows(result) -> list[dict]:
    """The table without the timings, which differ from run to run."""
    return [{k: v for k, v in row.items() if k != "seconds"} for row in result.to_records()]


def _mark(text: str) -> None:
    with open(os.environ[MARKS], "a", encoding="utf-8") as f:
        f.write(text + "\n")


def _marks() -> list[str]:
    path = Path(os.environ[MARKS])
    return path.read_text().split() if path.exists() else []


@pytest.fixture
def marks(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "marks"
    monkeypatch.setenv(MARKS, str(path))
    return path


# The studies: at the top level, so that the pool's workers can import them.


def counted(variant) -> dict:
    """Leaves a mark per run; fails for seed 1."""
    _mark(f"seed-{variant.seed}")
    if variant.seed == 1:
        raise RuntimeError("no luck with seed 1")
    return {"twice": 2 * variant.seed}


def dies_once(variant) -> dict:
    """Kills its worker the first time it runs seed 2."""
    if variant.seed == 2 and "died" not in _marks():
        _mark("died")
        os._exit(3)
    return {"tenfold": variant.seed * 10}


def always_dies(variant) -> dict:
    """Kills its worker whenever it runs seed 1."""
    if variant.seed == 1:
        os._exit(4)
    return {"tenfold": variant.seed * 10}


def dies_in_process(variant) -> dict:
    """Ends the whole process at seed 3 when ``KSCHED_SWEEP_TEST_DIE`` is set (a run killed
    mid-sweep)."""
    _mark(f"seed-{variant.seed}")
    if variant.seed == 3 and os.environ.get("KSCHED_SWEEP_TEST_DIE"):
        os._exit(9)
    return {"tenfold": variant.seed * 10}


# ---------------------------------------------------------------------------- executors


@pytest.fixture(scope="module")
def inline(base):
    return ksched.sweep(base, AXES, executor="inline", progress=False)


def test_the_process_pool_gives_the_same_table(base, inline):
    pooled = ksched.sweep(base, AXES, workers=2, progress=False)
    assert _rows(pooled) == _rows(inline)
    assert len(pooled) == 8 and not pooled.failed
    assert inline.column("placed") == [120, 300] * 4
    assert pooled.timing.retried == 0 and pooled.timing.scenarios > 0


@pytest.fixture(scope="module")
def ray():
    try:
        import ray
    except ImportError:
        pytest.skip("Ray cannot be imported here: pip install 'ksched[ray]' to run this test")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_gives_the_same_table(ray, base, inline):
    on_ray = ksched.sweep(base, AXES, executor="ray", chunk_size=3, progress=False)
    assert _rows(on_ray) == _rows(inline)


def test_ray_retries_a_task_whose_worker_died(ray, base, marks):
    def dies_once_on_ray(variant):  # a local function: Ray ships it by value
        if variant.seed == 2 and not marks.exists():
            marks.write_text("died\n")
            os._exit(3)
        return {"tenfold": variant.seed * 10}

    result = ksched.sweep(base, {"seed": [0, 1, 2, 3]}, dies_once_on_ray, executor="ray",
                          chunk_size=1, progress=False)
    assert marks.read_text() == "died\n"  # the first try died ...
    assert result.column("tenfold") == [0, 10, 20, 30] and not result.failed  # ... retried


def test_the_pool_refuses_a_function_it_cannot_ship(base):
    with pytest.raises(ksched.ArgumentError, match="cannot be pickled for the process pool"):
        ksched.sweep(base, {"seed": [0, 1]}, lambda v: {}, workers=2, progress=False)


class Unloadable:
    """A study the workers cannot load (its unpickling fails there)."""

    def __init__(self) -> None:
        self.state = "loaded"

    def __call__(self, variant) -> dict:
        return {}

    def __setstate__(self, state) -> None:
        raise RuntimeError("not here")


def test_a_study_the_workers_cannot_load_stops_the_sweep(base):
    with pytest.raises(ksched.KschedError, match="a sweep worker could not load the sweep: "
                                                 "RuntimeError: not here"):
        ksched.sweep(base, {"seed": [0, 1]}, Unloadable(), workers=2, progress=False)


def test_executor_choices_are_checked(base):
    with pytest.raises(ksched.ArgumentError, match="executor: expected 'inline', 'process'"):
        ksched.sweep(base, {}, executor="threads", progress=False)
    with pytest.raises(ksched.ArgumentError, match="ray_address: only with executor='ray'"):
        ksched.sweep(base, {}, executor="inline", ray_address="auto", progress=False)
    with pytest.raises(ksched.ArgumentError, match="workers: expected an integer >= 1"):
        ksched.sweep(base, {}, workers=0, progress=False)


# ---------------------------------------------------------------------------- failures


def test_a_scenario_that_raises_is_recorded_and_the_rest_finish(base, marks):
    result = ksched.sweep(base, {"seed": [0, 1, 2]}, counted, workers=2, progress=False)
    assert result.column("twice") == [0, None, 4]
    assert result.column("error") == [None, "RuntimeError: no luck with seed 1", None]
    assert [r["scenario"] for r in result.failed] == [1]


def test_a_killed_worker_is_replaced_and_its_scenario_retried(base, marks):
    result = ksched.sweep(base, {"seed": [0, 1, 2, 3, 4]}, dies_once, workers=2,
                          progress=False)
    assert _marks() == ["died"]
    assert result.column("tenfold") == [0, 10, 20, 30, 40] and not result.failed
    assert result.timing.retried == 1


def test_a_scenario_that_always_kills_its_worker_is_recorded_as_failed(base):
    result = ksched.sweep(base, {"seed": [0, 1, 2]}, always_dies, workers=2, retries=1,
                          progress=False)
    assert result.column("tenfold") == [0, None, 20]
    assert result.column("error")[1] == ("WorkerDied: the worker process died (exit status 4) "
                                         "on each of 2 attempts")


# ---------------------------------------------------------------------------- resuming


def test_a_rerun_resumes_without_redoing_finished_scenarios(base, marks, tmp_path):
    output = tmp_path / "out.csv"
    first = ksched.sweep(base, {"seed": [0, 1, 2]}, counted, executor="inline",
                         output=output, progress=False)
    assert _marks() == ["seed-0", "seed-1", "seed-2"] and len(first.failed) == 1
    journal = tmp_path / "out.csv.rows.jsonl"
    assert len(journal.read_text().splitlines()) == 3
    again = ksched.sweep(base, {"seed": [0, 1, 2, 3]}, counted, executor="inline",
                         output=output, progress=False)
    assert _marks()[3:] == ["seed-1", "seed-3"]  # the failed one again, and the new one
    assert _rows(again)[:3] == _rows(first)
    assert output.read_text().splitlines()[4].startswith("3,3,6,,")  # scenario, seed, twice
    fresh = ksched.sweep(base, {"seed": [0]}, counted, executor="inline", output=output,
                         resume=False, progress=False)
    assert _marks()[5:] == ["seed-0"] and len(fresh) == 1
    other = Scenario(base.cluster, pods=base.pods[:5])  # another base: nothing to reuse
    ksched.sweep(other, {"seed": [0]}, counted, executor="inline", output=output,
                 progress=False)
    assert _marks()[6:] == ["seed-0"]


def test_a_run_killed_midway_loses_nothing_finished(marks, tmp_path):
    output = tmp_path / "out.parquet"
    script = (f"import sys; sys.path[:] = {sys.path!r}\n"
              "import ksched\n"
              f"from {__name__} import dies_in_process, _base\n"
              f"ksched.sweep(_base(), {{'seed': [0, 1, 2, 3, 4]}}, dies_in_process, "
              f"executor='inline', output={str(output)!r}, progress=False)\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "KSCHED_SWEEP_TEST_DIE": "1"})
    assert run.returncode == 9, run.stderr
    assert not output.exists()  # the table is written at the end ...
    journal = tmp_path / "out.parquet.rows.jsonl"
    assert [json.loads(line)["params"] for line in journal.read_text().splitlines()] == \
        [{"seed": s} for s in (0, 1, 2)]
    with open(journal, "a") as f:
        f.write('{"key": "torn')  # ... and a line cut short by the crash is ignored
    result = ksched.sweep(_base(), {"seed": [0, 1, 2, 3, 4]}, dies_in_process,
                          executor="inline", output=output, progress=False)
    assert _marks() == ["seed-0", "seed-1", "seed-2", "seed-3", "seed-3", "seed-4"]
    assert result.column("tenfold") == [0, 10, 20, 30, 40]
    parquet = pytest.importorskip("pyarrow.parquet")
    assert parquet.read_table(output).column("tenfold").to_pylist() == [0, 10, 20, 30, 40]


def _base() -> Scenario:
    cluster, pods = scheduling_basic(5, 0, 5)
    return Scenario(cluster, pods=pods)
