""":func:`sweep`: every scenario of a grid over one base, on all cores or a Ray cluster, into
one table."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ksched.errors import ArgumentError
from ksched.sweep.digest import digest, params_key
from ksched.sweep.executors import (
    Job,
    Timing,
    check_executor,
    connect_ray,
    default_workers,
    run_inline,
    run_ray,
)
from ksched.sweep.params import check_grid, grid
from ksched.sweep.pool import run_processes
from ksched.sweep.result import SweepResult
from ksched.sweep.scenario import Scenario, scenario_of
from ksched.sweep.store import Journal, check_output, journal_path
from ksched.sweep.studies import check_study, study_name

__all__ = ["sweep"]


def sweep(base: Scenario | Any, axes: Mapping[str, Sequence[Any]] | Sequence[Mapping] | None
          = None, study: str | Callable[[Any], Mapping[str, Any]] = "schedule", *,
          executor: str | None = None, workers: int | None = None,
          ray_address: str | None = None, output: str | os.PathLike[str] | None = None,
          resume: bool = True, retries: int = 2, chunk_size: int | None = None,
          progress: bool = True) -> SweepResult:
    """Run ``study`` on every scenario of ``axes`` over ``base``.

    Parameters
    ----------
    base : a :class:`~ksched.Scenario` (a ``ClusterState`` or snapshot file stands for
        ``Scenario(cluster)``).
    axes : parameter -> values, their product being the scenarios (the last axis varies
        fastest); or a list of scenarios, each a mapping parameter -> value. The parameters
        are listed in :mod:`ksched.sweep.params`: ``percentage_of_nodes_to_score``,
        ``tie_break``, ``seed``, ``scale``, ``strategy``, ``weights.<Plugin>``,
        ``node_count.<node type>``, ``without`` and any configuration field by dotted path.
    study : ``"schedule"``, ``"capacity"``, ``"headroom"``, ``"plan"``, ``"simulate"`` (see
        :mod:`ksched.sweep.studies`), or a function of a
        :class:`~ksched.sweep.apply.Variant` returning a mapping metric -> scalar (for the
        process pool, a function defined at the top level of an importable module).
    executor : ``None`` / ``"process"``: a pool of ``workers`` local processes (in this
        process when there is one worker or one scenario to run); ``"inline"``: this
        process; ``"ray"``: Ray tasks (the Ray instance this process is connected to, else
        ``ray.init(ray_address)``; ``pip install 'ksched[ray]'``).
    workers : processes of the pool (default: the CPUs this process may use); the CPUs of a
        local Ray instance this call starts.
    ray_address : a Ray cluster (``"ray://head:10001"``, ``"auto"``); implies ``"ray"``.
    output : a ``.parquet``, ``.csv`` or ``.jsonl`` file to write the table to. Finished
        scenarios stream into ``<output>.rows.jsonl`` as they finish; run again with the
        same base, study and parameters, the sweep skips the scenarios finished without
        error there (``resume=False``: starts afresh).
    retries : how many more times a scenario whose worker died is tried.
    chunk_size : scenarios per Ray task (default: about four tasks per CPU).
    progress : a progress bar on standard error when it is a terminal: scenarios done,
        failed, and the time left.

    Returns
    -------
    SweepResult
        A row per scenario; a scenario that raised has its ``error`` and no metrics.

    Raises
    ------
    ArgumentError
        A bad parameter name or value (naming it), study, executor or output, before
        anything runs.

    Examples
    --------
    >>> import ksched
    >>> from ksched.workloads import scheduling_basic
    >>> cluster, pods = scheduling_basic(6, 0, 20)
    >>> result = ksched.sweep(ksched.Scenario(cluster, pods=pods),
    ...                       {"strategy": ["LeastAllocated", "MostAllocated"]},
    ...                       executor="inline", progress=False)
    >>> result.column("placed")
    [20, 20]
    """
    base = scenario_of(base)
    scenarios = grid({} if axes is None else axes)
    kind = check_executor(executor, ray_address)
    check_study(study, kind)
    check_grid(base, study if isinstance(study, str) else None, scenarios)
    workers = _workers(workers)
    retries = _count(retries, "retries")
    if chunk_size is not None and _count(chunk_size, "chunk_size") < 1:
        raise ArgumentError(f"chunk_size: expected an integer >= 1, got {chunk_size!r}")
    target = None if output is None else check_output(output)
    job = Job(base, study, digest(base))
    name = study_name(study)
    keys = [params_key(job.digest, name, params) for params in scenarios]
    journal = None if target is None else Journal(journal_path(target))
    earlier = journal.load() if journal is not None and resume else {}
    results = {i: dict(earlier[key], index=i) for i, key in enumerate(keys)
               if key in earlier and earlier[key].get("error") is None}
    todo = [(i, scenarios[i]) for i in range(len(scenarios)) if i not in results]
    timing = None
    if todo and kind == "ray":  # refused before the journal is touched
        connect_ray(ray_address, workers)
    if todo:
        timing = _run(job, todo, keys, scenarios, results, journal, resume, kind, workers,
                      ray_address, retries, chunk_size, progress, len(scenarios))
    result = _result(name, job.digest, scenarios, results, timing)
    if target is not None:
        result.save(target)
    return result


def _run(job: Job, todo: list, keys: list[str], scenarios: list[dict[str, Any]],
         results: dict[int, dict[str, Any]], journal: Journal | None, resume: bool, kind: str,
         workers: int, ray_address: str | None, retries: int, chunk_size: int | None,
         progress: bool, total: int) -> Timing:
    from tqdm import tqdm

    bar = tqdm(total=total, initial=total - len(todo), unit="scenario", leave=False,
               disable=None if progress else True, dynamic_ncols=True)
    failed = 0

    def on_result(found: dict[str, Any]) -> None:
        nonlocal failed
        index = found["index"]
        results[index] = found
        if journal is not None:
            journal.append({"key": keys[index], "base": job.digest, "params": scenarios[index],
                            **found})
        failed += found["error"] is not None
        bar.update(1)
        if failed:
            bar.set_postfix(failed=failed, refresh=False)

    if journal is not None:
        journal.open(fresh=not resume)
    try:
        if kind == "ray":
            return run_ray(job, todo, on_result, address=ray_address, workers=workers,
                           retries=retries, chunk_size=chunk_size)
        if kind == "inline" or workers == 1 or len(todo) == 1:
            return run_inline(job, todo, on_result)
        return run_processes(job, todo, on_result, workers, retries)
    finally:
        bar.close()
        if journal is not None:
            journal.close()


def _result(name: str, base: str, scenarios: list[dict[str, Any]],
            results: dict[int, dict[str, Any]], timing: Timing | None) -> SweepResult:
    parameters = list(dict.fromkeys(p for params in scenarios for p in params))
    metrics = list(dict.fromkeys(m for i in sorted(results) for m in results[i]["metrics"]))
    rows = []
    for i, params in enumerate(scenarios):
        found = results[i]
        rows.append({"scenario": i, **params, **found["metrics"], "error": found["error"],
                     "seconds": round(found["seconds"], 6)})
    return SweepResult(name, parameters, metrics, rows, base, timing)


def _workers(value: Any) -> int:
    if value is None:
        return default_workers()
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ArgumentError(f"workers: expected an integer >= 1, got {value!r}")
    return value


def _count(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ArgumentError(f"{name}: expected an integer >= 0, got {value!r}")
    return value
