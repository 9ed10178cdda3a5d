"""The default executor: a pool of local worker processes.

Workers are fresh Python processes (``python -c``, running :func:`main`), not forks of this one:
they share no threads or locks with it and behave the same on every platform. Each imports
ksched, whose kernels load from numba's disk cache (``kernels/_jit.py``), so nothing is
compiled again, and receives the sweep's :class:`~ksched.sweep.executors.Job` (the base and
the study) once, when it starts: scenarios travel as their parameters only, results as their
metrics. A study function defined in the ``__main__`` script is run by
``multiprocessing``'s ``spawn`` workers instead (which import that script again, under the
``if __name__ == "__main__":`` guard it then needs), as are all studies on Windows.

Each worker runs one scenario at a time, so a worker that dies (killed, out of memory, a
crash in native code) is known to have died on that scenario: a new worker takes its place
and the scenario is tried again, up to ``retries`` more times, then recorded as failed.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import pickle
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from ksched.errors import KschedError
from ksched.sweep.executors import Item, Job, OnResult, Timing, described, failed

__all__ = ["main", "run_processes", "serve"]


def serve(connection: Any, payload: bytes | None = None) -> None:
    """A worker's loop: load the job (``payload``, or the first message: this process's
    ``sys.path``, then the job), say ``("ready", None)``, then run the scenarios it is sent
    until ``None``. Ctrl-C is left to the parent, which ends its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if payload is None:
            sys.path[:] = connection.recv()
            payload = connection.recv_bytes()
        job = pickle.loads(payload)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops the sweep
        connection.send(("fatal", described(exc)))
        return
    connection.send(("ready", None))
    while True:
        try:
            item = connection.recv()
        except EOFError:
            return
        if item is None:
            return
        connection.send(job.run(*item))


class _Worker:
    """One worker process, its end of the connection and the scenario it is running."""

    def __init__(self, payload: bytes, spawn: bool) -> None:
        if spawn:
            context = multiprocessing.get_context("spawn")
            self.connection, child = context.Pipe()
            self.process: Any = context.Process(target=serve, args=(child, payload),
                                                daemon=True, name="ksched-sweep")
            self.process.start()
            child.close()
        else:
            mine, theirs = socket.socketpair()
            self.process = subprocess.Popen(
                [sys.executable, "-c", _WORKER, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
            theirs.close()
            self.connection = Connection(mine.detach())
            self.connection.send(list(sys.path))
            self.connection.send_bytes(payload)
        self.item: Item | None = None
        self.sent = 0.0
        #: When the worker had loaded the job (``None``: not yet).
        self.ready: float | None = None

    def send(self, item: Item) -> None:
        self.item, self.sent = item, time.perf_counter()
        self.connection.send(item)

    def exit_code(self) -> int | None:
        """The process's exit status once it has ended (``None`` if it will not)."""
        if isinstance(self.process, subprocess.Popen):
            try:
                return self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                return None
        self.process.join(timeout=5)
        return self.process.exitcode

    def stop(self, now: bool = False) -> None:
        """Ask the worker to end (``now``: end it), and wait for it."""
        if not now:
            with contextlib.suppress(OSError):
                self.connection.send(None)
        if now or self.exit_code() is None:
            self.process.terminate()
            self.exit_code()
        self.connection.close()


def _spawned(job: Job) -> bool:
    """Whether workers must be ``multiprocessing`` spawn children: on Windows, or for a
    study defined in ``__main__`` (which only they can import)."""
    return sys.platform == "win32" or getattr(job.study, "__module__", None) == "__main__"


def run_processes(job: Job, items: Sequence[Item], on_result: OnResult, workers: int,
                  retries: int = 2) -> Timing:
    """Run the scenarios on ``min(workers, len(items))`` worker processes."""
    payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
    spawn = _spawned(job)
    run = _Run(payload, spawn, collections.deque(items), retries, on_result)
    pool: list[_Worker] = []
    finished = False
    try:
        pool += [_Worker(payload, spawn) for _ in range(min(workers, len(items)))]
        while run.queue or any(w.item is not None for w in pool):
            for worker in pool:
                if worker.item is None and run.queue:
                    worker.send(run.queue.popleft())
            ready = wait([w.connection for w in pool if w.item is not None])
            for k, worker in enumerate(pool):
                if worker.connection in ready:
                    pool[k] = run.collect(worker)
        finished = True
    finally:
        for worker in pool:
            worker.stop(now=not finished)
    run.timing.wall = time.perf_counter() - run.started
    return run.timing


#: Workers in a row that die before loading the job: then the sweep stops.
_START_FAILURES = 3


class _Run:
    """The pool's bookkeeping: scenarios to run, attempts per scenario, timings."""

    def __init__(self, payload: bytes, spawn: bool, queue: collections.deque, retries: int,
                 on_result: OnResult) -> None:
        self.payload, self.spawn, self.queue = payload, spawn, queue
        self.retries, self.on_result = retries, on_result
        self.attempts: collections.Counter = collections.Counter()
        self.timing, self.started = Timing(), time.perf_counter()
        self.start_failures = 0

    def collect(self, worker: _Worker) -> _Worker:
        """Take ``worker``'s message, or replace it when it died; the worker to use next."""
        try:
            message = worker.connection.recv()
        except (EOFError, OSError):
            return self._replace(worker)
        now = time.perf_counter()
        if isinstance(message, tuple):
            kind, why = message
            if kind == "fatal":  # the job cannot be loaded there: no worker will do better
                raise KschedError(f"a sweep worker could not load the sweep: {why} (a study "
                                  f"function must be importable by the workers)")
            worker.ready, self.start_failures = now, 0
            self.timing.startup = self.timing.startup or now - self.started
            return worker
        self.timing.scenarios += message["seconds"]
        self.timing.overhead += now - max(worker.sent, worker.ready or now) - message["seconds"]
        worker.item = None
        self.on_result(message)
        return worker

    def _replace(self, worker: _Worker) -> _Worker:
        item, code = worker.item, worker.exit_code()
        worker.item = None
        worker.stop(now=True)
        if worker.ready is None:  # died starting: not the scenario's doing
            self.start_failures += 1
            if self.start_failures >= _START_FAILURES:
                raise KschedError(f"sweep workers die as they start (exit status {code}): "
                                  f"run with executor='inline' to see why")
            if item is not None:
                self.queue.appendleft(item)
        elif item is not None:
            self._retry(item, code)
        return _Worker(self.payload, self.spawn)

    def _retry(self, item: Item, code: int | None) -> None:
        index = item[0]
        self.attempts[index] += 1
        if self.attempts[index] <= self.retries:
            self.timing.retried += 1
            self.queue.appendleft(item)
        else:
            self.on_result(failed(index, f"WorkerDied: the worker process died (exit status "
                                         f"{code}) on each of {self.attempts[index]} attempts"))


def main(descriptor: str) -> None:
    """A worker started by :func:`run_processes`, on the socket of that descriptor."""
    serve(Connection(int(descriptor)))


#: What a worker process runs (``python -c``; not ``-m``, which would import this module twice).
_WORKER = "import sys; from ksched.sweep.pool import main; main(sys.argv[1])"
