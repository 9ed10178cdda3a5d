"""Where a sweep's scenarios run: in this process, on a pool of local worker processes, or
on a Ray cluster.

Every executor runs the same :class:`Job` (the base scenario and the study) on
``(index, parameters)`` items and hands each finished scenario's result to ``on_result`` as
soon as it arrives, so that nothing finished is lost if the run stops.

* :func:`run_inline`: one after another, here.
* :func:`ksched.sweep.pool.run_processes`: a pool of local worker processes.
* :func:`run_ray`: the job goes into Ray's object store once (``ray.put``; numpy arrays are
  read zero-copy on each node) and is kept by each Ray worker process after its first task;
  one task per chunk of scenarios, retried by Ray (``max_retries``) when its worker dies.
"""

from __future__ import annotations

import math
import os
import socket
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ksched.errors import ArgumentError, KschedError
from ksched.sweep.apply import prepare
from ksched.sweep.scenario import Scenario
from ksched.sweep.studies import metrics_of

__all__ = ["Job", "Timing", "check_executor", "connect_ray", "default_workers", "described",
           "failed", "run_inline", "run_ray"]

Item = tuple[int, Mapping[str, Any]]
OnResult = Callable[[dict[str, Any]], None]
#: Columns every row has besides the parameters and metrics.
RESERVED = ("scenario", "error", "seconds")


@attrs.frozen(eq=False)
class Job:
    """What every scenario of one sweep shares: the base, the study, and the base's content
    hash."""

    base: Scenario
    study: Any
    digest: str = ""

    def run(self, index: int, params: Mapping[str, Any]) -> dict[str, Any]:
        """One scenario's result: ``index``, ``metrics``, ``error`` (``None``, or the
        exception's type and message) and ``seconds`` (preparing and running it)."""
        started = time.perf_counter()
        try:
            variant = prepare(self.base, params, expanded=self.study != "plan")
            metrics, error = metrics_of(self.study, variant), None
            clash = next((m for m in metrics if m in params or m in RESERVED), None)
            if clash is not None:
                raise ArgumentError(f"study: metric {clash!r} has the name of a column "
                                    f"already in the table")
        except Exception as exc:  # noqa: BLE001 - a scenario's failure is recorded, not raised
            metrics, error = {}, described(exc)
        return {"index": index, "metrics": metrics, "error": error,
                "seconds": time.perf_counter() - started}


def described(exc: BaseException, limit: int = 1000) -> str:
    """``Type: message`` on one line, at most ``limit`` characters."""
    message = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def failed(index: int, error: str) -> dict[str, Any]:
    """The result of a scenario that could not be run at all."""
    return {"index": index, "metrics": {}, "error": error, "seconds": 0.0}


@attrs.define
class Timing:
    """Where a sweep's time went: ``wall`` (the executor's run), ``startup`` (until the
    first result), ``scenarios`` (the scenarios' own seconds, summed), ``overhead`` (the
    time a scenario took beyond its own seconds, shipping it and its result, summed; the
    process pool counts from when the worker was ready; Ray does not measure it) and
    ``retried`` (scenarios run again after their worker died)."""

    wall: float = 0.0
    startup: float = 0.0
    scenarios: float = 0.0
    overhead: float = 0.0
    retried: int = 0


def default_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------- inline


def run_inline(job: Job, items: Sequence[Item], on_result: OnResult) -> Timing:
    """Run the scenarios here, one after another."""
    timing, started = Timing(), time.perf_counter()
    for index, params in items:
        before = time.perf_counter()
        result = job.run(index, params)
        timing.overhead += time.perf_counter() - before - result["seconds"]
        timing.scenarios += result["seconds"]
        on_result(result)
    timing.wall = time.perf_counter() - started
    return timing


# ---------------------------------------------------------------------------- Ray


_jobs: dict[str, Job] = {}


def _ray_chunk(holder: list[Any], items: Sequence[Item]) -> list[dict[str, Any]]:
    """A Ray task: the chunk's results. ``holder`` wraps the job's object reference so that
    Ray does not fetch it for every task; this worker fetches it once and keeps it."""
    import ray

    key, reference = holder
    job = _jobs.get(key)
    if job is None:
        _jobs.clear()
        job = _jobs[key] = ray.get(reference)
    return [job.run(index, params) for index, params in items]


def import_ray() -> Any:
    """``ray``, or a :class:`KschedError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise KschedError("ray is not installed: pip install 'ksched[ray]'") from None
    return ray


def run_ray(job: Job, items: Sequence[Item], on_result: OnResult, *,
            address: str | None = None, workers: int | None = None, retries: int = 2,
            chunk_size: int | None = None) -> Timing:
    """Run the scenarios as Ray tasks, on the Ray instance this process is connected to,
    else on ``ray.init(address)`` (``None``: a new local instance of ``workers`` CPUs)."""
    ray = connect_ray(address, workers)
    timing, started = Timing(), time.perf_counter()
    holder = [uuid.uuid4().hex, ray.put(job)]  # a key per sweep: workers fetch it once
    task = ray.remote(_ray_chunk).options(max_retries=retries, num_cpus=1)
    size = chunk_size or _chunk_size(len(items), ray.cluster_resources().get("CPU", 1))
    pending = {task.remote(holder, chunk): chunk
               for chunk in (items[i:i + size] for i in range(0, len(items), size))}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        chunk = pending.pop(done[0])
        try:
            results = ray.get(done[0])
        except ray.exceptions.RayError as exc:
            results = [failed(index, described(exc))
                       for index, _ in chunk]
        timing.startup = timing.startup or time.perf_counter() - started
        for result in results:
            timing.scenarios += result["seconds"]
            on_result(result)
    timing.wall = time.perf_counter() - started
    return timing


def connect_ray(address: str | None, workers: int | None = None) -> Any:
    """``ray``, connected: to the instance this process is connected to, else to
    ``ray.init(address)`` (``None``: a new local instance of ``workers`` CPUs). A Ray client
    address (``ray://host:port``) that nothing answers at, or any failure of ``ray.init``,
    is a :class:`~ksched.errors.KschedError` naming the address."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    where = f"ray_address {address!r}" if address is not None else "a local Ray instance"
    if address is not None and address != "auto":
        _probe(address, where)
    try:
        ray.init(address=address, num_cpus=workers if address is None else None,
                 log_to_driver=False)
    except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; all mean "no cluster"
        raise KschedError(f"{where}: cannot connect: {described(exc)}") from None
    return ray


def _probe(address: str, where: str, timeout: float = 5.0) -> None:
    """Refuse an address (``ray://host:port``, or a head's ``host:port``) no server listens
    at, within ``timeout`` seconds (Ray would retry for minutes)."""
    client = address.startswith("ray://")
    try:
        url = urllib.parse.urlsplit(address if client else f"//{address}")
        host, port = url.hostname, url.port or (10001 if client else 6379)
    except ValueError as exc:
        raise ArgumentError(f"{where}: not a ray://HOST:PORT or HOST:PORT address: "
                            f"{exc}") from None
    if not host or url.path:
        raise ArgumentError(f"{where}: not a ray://HOST:PORT or HOST:PORT address")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise KschedError(f"{where}: cannot connect to {host}:{port}: "
                          f"{exc.strerror or exc}") from None


def _chunk_size(count: int, cpus: float) -> int:
    """About four chunks per CPU, at most 64 scenarios each."""
    return max(1, min(64, math.ceil(count / max(4 * cpus, 1))))


def check_executor(executor: Any, ray_address: Any) -> str:
    """The executor's name: ``"inline"``, ``"process"`` (also for ``None``) or ``"ray"``
    (also when only ``ray_address`` is given)."""
    if ray_address is not None and (not isinstance(ray_address, str)
                                    or not ray_address.strip()):
        raise ArgumentError(f"ray_address: expected an address such as 'auto' or "
                            f"'ray://HOST:10001', got {ray_address!r}")
    if executor is None:
        return "ray" if ray_address is not None else "process"
    if executor not in ("inline", "process", "ray"):
        raise ArgumentError(f"executor: expected 'inline', 'process', 'ray' or None, got "
                            f"{executor!r}")
    if ray_address is not None and executor != "ray":
        raise ArgumentError(f"ray_address: only with executor='ray', not {executor!r}")
    return executor
