"""A simulation's samples kept as columns: taken one at a time or a stretch's at once
(:class:`SampleLog`), read as :class:`~ksched.decisions.Sample` records, made on demand
(:class:`Samples`), or as whole columns for a table (:meth:`Samples.columns`).

A month of a real trace sampled every minute is tens of thousands of samples; keeping them
as numbers costs a row of an array each, not an object with its dicts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

from ksched.decisions import Sample, sample_layout

__all__ = ["SampleLog", "Samples"]

#: The queue's sub-queues, in a sample's order.
QUEUES = ("active", "backoff", "unschedulable", "gated")


class _Chunk:
    """Samples taken while the cluster's resources and allocatable totals stood still."""

    def __init__(self, names: tuple[str, ...], allocatable: list[int]) -> None:
        self.names, self.allocatable = names, allocatable
        self.blocks: list[tuple[np.ndarray, ...]] = []  # (times, queues, running, requested)
        self.rows: list[tuple[float, tuple[int, ...], int, list[int]]] = []  # not yet a block

    def close_rows(self) -> None:
        """The samples taken one at a time so far, as a block."""
        if self.rows:
            times, queues, running, requested = zip(*self.rows)
            self.blocks.append((np.array(times, dtype=np.float64),
                                np.array(queues, dtype=np.int64).reshape(-1, len(QUEUES)),
                                np.array(running, dtype=np.int64),
                                np.array(requested, dtype=np.int64).reshape(
                                    -1, len(self.names))))
            self.rows = []

    def frozen(self) -> tuple[np.ndarray, ...]:
        self.close_rows()
        return tuple(np.concatenate(column) for column in zip(*self.blocks))


class SampleLog:
    """The samples of a run as they are taken (the Simulator's), by the resources' layout:
    ``names`` and their ``allocatable`` totals, as the utilisation meter holds them."""

    def __init__(self) -> None:
        self._chunks: list[_Chunk] = []

    def _chunk(self, names: tuple[str, ...], allocatable: list[int]) -> _Chunk:
        last = self._chunks[-1] if self._chunks else None
        if last is None or last.names != names or last.allocatable != allocatable:
            last = _Chunk(names, list(allocatable))
            self._chunks.append(last)
        return last

    def add(self, time: float, lengths: Mapping[str, int], names: tuple[str, ...],
            allocatable: list[int], requested: Sequence[int], running: int) -> None:
        """One sample: the queue's ``lengths``, the ``requested`` totals, the pods running."""
        chunk = self._chunk(names, allocatable)
        chunk.rows.append((time, tuple(lengths[q] for q in QUEUES), running, list(requested)))

    def extend(self, times: npt.NDArray[np.float64], lengths: Mapping[str, int],
               names: tuple[str, ...], allocatable: list[int],
               requested: npt.NDArray[np.int64], running: npt.NDArray[np.int64]) -> None:
        """Samples at ``times`` (float64[K]) with the queue as ``lengths`` at each, the
        ``requested`` totals (int64[K, R]) and the pods ``running`` (int64[K])."""
        if not len(times):
            return
        chunk = self._chunk(names, allocatable)
        chunk.close_rows()
        queues = np.broadcast_to(np.array([lengths[q] for q in QUEUES], dtype=np.int64),
                                 (len(times), len(QUEUES)))
        chunk.blocks.append((np.asarray(times, dtype=np.float64), queues,
                             np.asarray(running, dtype=np.int64),
                             np.asarray(requested, dtype=np.int64)))

    def samples(self) -> Samples:
        """The samples so far (copied: the log may go on)."""
        return Samples([(c.names, tuple(c.allocatable), *c.frozen())
                        for c in self._chunks if c.blocks or c.rows])


class Samples(Sequence[Sample]):
    """A run's samples in time order: a sequence of :class:`~ksched.decisions.Sample`, each
    made when read, kept as columns (:meth:`columns`)."""

    def __init__(self, chunks: list[tuple]) -> None:
        self._chunks = chunks  # (names, allocatable, times, queues, running, requested)
        self._starts = np.cumsum([0] + [len(c[2]) for c in chunks])

    def __len__(self) -> int:
        return int(self._starts[-1])

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Sample, ...]: ...

    def __getitem__(self, index: int | slice) -> Sample | tuple[Sample, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        k = range(len(self))[index]  # IndexError as a tuple's
        c = int(np.searchsorted(self._starts, k, side="right")) - 1
        names, allocatable, times, queues, running, requested = self._chunks[c]
        i = k - int(self._starts[c])
        take = Sample.maker(names, allocatable)
        return take(float(times[i]), dict(zip(QUEUES, queues[i].tolist())),
                    requested[i].tolist(), int(running[i]))

    def __iter__(self) -> Iterator[Sample]:
        for names, allocatable, times, queues, running, requested in self._chunks:
            take = Sample.maker(names, allocatable)
            for t, queue, r, q in zip(times.tolist(), queues.tolist(), running.tolist(),
                                      requested.tolist()):
                yield take(t, dict(zip(QUEUES, queue)), q, r)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Samples({len(self)} samples)"

    def columns(self) -> dict[str, np.ndarray]:
        """The samples as columns (``pandas.DataFrame(samples.columns())``): ``time``, the
        queue's lengths, ``running``, ``cpu`` and ``memory`` (shares of the allocatable
        requested) and, per extended resource some node has, ``<name>.allocatable``,
        ``.requested`` and ``.free`` (0 while no node has it)."""
        parts = [_chunk_columns(*chunk) for chunk in self._chunks]
        names = dict.fromkeys(name for part in parts for name in part)
        return {name: np.concatenate([part.get(name, np.zeros(len(part["time"]), np.int64))
                                      for part in parts]) for name in names}


def _chunk_columns(names: tuple[str, ...], allocatable: tuple[int, ...], times: np.ndarray,
                   queues: np.ndarray, running: np.ndarray, requested: np.ndarray
                   ) -> dict[str, np.ndarray]:
    """One chunk's :meth:`Samples.columns`."""
    out = {"time": times, **{q: queues[:, j] for j, q in enumerate(QUEUES)}, "running": running}
    (cpu, cpu_total), (memory, memory_total), extended = sample_layout(names, allocatable)
    for name, column, total in (("cpu", cpu, cpu_total), ("memory", memory, memory_total)):
        out[name] = requested[:, column] / total if total else np.zeros(len(times))
    for j, r, a in extended:
        out[f"{r}.allocatable"] = np.full(len(times), a, dtype=np.int64)
        out[f"{r}.requested"] = requested[:, j]
        out[f"{r}.free"] = a - requested[:, j]
    return out
