"""A simulation's decisions kept as columns: recorded one at a time, without an object each
(:class:`DecisionLog`, the Simulator's running record), read as
:class:`~ksched.decisions.Decision` records made on demand (:class:`Decisions`, a result's).

A replay of a real trace records a decision per pod bound, finished and retried: tens of
thousands; appending seven values to seven lists costs a fraction of making a record each."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from ksched.decisions import Decision
from ksched.errors import ArgumentError

__all__ = ["DecisionLog", "Decisions"]

#: A decision's fields, in :class:`~ksched.decisions.Decision`'s order.
FIELDS = ("time", "pod", "outcome", "node", "reason", "victims", "attempt")


class _Columns(Sequence[Decision]):
    """Decisions read from ``_columns`` (a sequence per field of :data:`FIELDS`)."""

    _columns: tuple[Sequence[Any], ...]

    def __len__(self) -> int:
        return len(self._columns[0])

    @overload
    def __getitem__(self, index: int) -> Decision: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Decision, ...]: ...

    def __getitem__(self, index: int | slice) -> Decision | tuple[Decision, ...]:
        if isinstance(index, slice):
            return tuple(map(Decision, *(column[index] for column in self._columns)))
        return Decision(*(column[index] for column in self._columns))

    def __iter__(self) -> Iterator[Decision]:
        return map(Decision, *self._columns)

    def __reversed__(self) -> Iterator[Decision]:
        return map(Decision, *(reversed(column) for column in self._columns))

    def column(self, field: str) -> Sequence[Any]:
        """Every decision's ``field`` (one of :data:`FIELDS`), in order."""
        if field not in FIELDS:
            raise ArgumentError(f"decisions: column {field!r}: expected one of {FIELDS}")
        return self._columns[FIELDS.index(field)]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Columns):
            return all(tuple(a) == tuple(b) for a, b in zip(self._columns, other._columns))
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]


class DecisionLog(_Columns):
    """The decisions of a run as they are made (the Simulator's ``decisions``): a sequence
    of :class:`~ksched.decisions.Decision`, each made when read."""

    def __init__(self) -> None:
        self._columns = tuple([] for _ in FIELDS)
        (self._times, self._pods, self._outcomes, self._nodes, self._reasons, self._victims,
         self._attempts) = self._columns

    def add(self, time: float, pod: str, outcome: str, node: str | None = None,
            reason: str = "", victims: tuple[str, ...] = (), attempt: int = 0) -> None:
        """Record a decision (the fields of :class:`~ksched.decisions.Decision`)."""
        self._times.append(time)
        self._pods.append(pod)
        self._outcomes.append(outcome)
        self._nodes.append(node)
        self._reasons.append(reason)
        self._victims.append(victims)
        self._attempts.append(attempt)

    def extend(self, rows: Sequence[tuple]) -> None:
        """Record decisions given as tuples of :meth:`add`'s seven arguments, in order."""
        for column, values in zip(self._columns, zip(*rows)):
            column.extend(values)

    def frozen(self) -> Decisions:
        """The decisions so far (copied: the log may go on)."""
        return Decisions(tuple(tuple(column) for column in self._columns))

    def __repr__(self) -> str:
        return f"DecisionLog({len(self)} decisions)"


class Decisions(_Columns):
    """A run's decisions in time order: a sequence of :class:`~ksched.decisions.Decision`,
    each made when read, kept as columns (:meth:`column`)."""

    def __init__(self, columns: tuple[tuple[Any, ...], ...]) -> None:
        if len(columns) != len(FIELDS) or len({len(c) for c in columns}) > 1:
            raise ArgumentError(f"Decisions: a column per field of {FIELDS}, all as long")
        self._columns = columns

    @classmethod
    def of(cls, decisions: Sequence[Decision]) -> Decisions:
        """The columns of ``decisions`` (records)."""
        return cls(tuple(tuple(getattr(d, f) for d in decisions) for f in FIELDS))

    def __repr__(self) -> str:
        return f"Decisions({len(self)} decisions)"
