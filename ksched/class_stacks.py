"""The class tables (:class:`~ksched.class_tables.ClassTables`) stacked for the compiled loop,
extended as classes are added: each array is a view of the first rows of a buffer that
doubles, so a new class costs its own rows, not a copy of every class's (a simulation adds
classes one stretch at a time, and the loop needs them all stacked for each run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ksched.class_tables import ClassTables
    from ksched.state import ClusterState

__all__ = ["COUNTING", "GrowingRows", "StackedTables", "full_loop"]


class GrowingRows:
    """Rows of one shape and dtype, appended; :meth:`rows` views those appended so far."""

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self._buffer = np.zeros((4, *shape), dtype=dtype)
        self.count = 0

    def extend(self, rows: Any) -> np.ndarray:
        """Append ``rows`` (an array of rows, or a list of them); returns :meth:`rows`. A
        listed row of another length is refused (numpy would spread a 1-long row over all)."""
        width = self._buffer.shape[1:]
        if width and not isinstance(rows, np.ndarray) and any(len(r) != width[0] for r in rows):
            raise ValueError(f"rows of {width[0]} values expected")
        end = self.count + len(rows)
        if end > len(self._buffer):
            grown = np.zeros((max(end, 2 * len(self._buffer)), *self._buffer.shape[1:]),
                             dtype=self._buffer.dtype)
            grown[:self.count] = self._buffer[:self.count]
            self._buffer = grown
        if end > self.count:  # numpy converts the rows as it copies them
            self._buffer[self.count:end] = rows
        self.count = end
        return self._buffer[:end]

    def rows(self) -> np.ndarray:
        return self._buffer[:self.count]


class _Csr:
    """Per-class lists of entries in compressed rows: ``indptr`` int64[C + 1], ``entries``."""

    def __init__(self, width: tuple[int, ...] = (), dtype: Any = np.int64) -> None:
        self.indptr = GrowingRows((), np.int64)
        self.indptr.extend([0])
        self.entries, self.width = GrowingRows(width, dtype), width

    def extend(self, parts: list) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
        self.indptr.extend(np.cumsum(lengths) + self.entries.count)
        parts = [p for p, length in zip(parts, lengths.tolist()) if length]
        if parts:  # entries of a width (tuples) listed, numbers concatenated
            self.entries.extend([e for p in parts for e in p] if self.width
                                else np.concatenate(parts))
        return self.indptr.rows(), self.entries.rows()


#: The stacked per-class arrays of one value each: (name, table, dtype).
_SCALARS = (("require_all", "require_all", np.bool_), ("count_only", "count_only", np.bool_),
            ("has_subset", "has_subset", np.bool_), ("ba_skip", "ba_skip", np.bool_),
            ("ipa_self_match", "ipa_self_match", np.bool_))
#: The compressed rows: (indptr name, entries name, table, entry shape).
_LISTS = (("spread_indptr", "spread_entries", "spread", (4,)),
          ("soft_indptr", "soft_entries", "soft_spread", (3,)),
          ("fit_check_indptr", "fit_check_cols", "fit_check_cols", ()),
          ("port_check_indptr", "port_check", "port_check", ()),
          ("port_add_indptr", "port_add", "port_add", ()),
          ("subset_indptr", "subset", "subset", ()),
          ("ipa_affinity_indptr", "ipa_affinity", "ipa_affinity", (2,)),
          ("ipa_anti_indptr", "ipa_anti", "ipa_anti", (2,)),
          ("ipa_existing_indptr", "ipa_existing", "ipa_existing", (2,)),
          ("ipa_score_indptr", "ipa_score", "ipa_score", (2,)))
#: The tables of a class whose cycle counts pods per topology domain (spreading, pod
#: affinity) where one of its lists there is not empty.
COUNTING = ("spread", "soft_spread", "ipa_affinity", "ipa_anti", "ipa_existing", "ipa_score")
#: The resource scores' inputs per class: (name, table, item of the table's entry).
_RESOURCE_INPUTS = (("fit_cols", "fit_inputs", 0), ("fit_src", "fit_inputs", 1),
                    ("fit_req", "fit_inputs", 2), ("ba_cols", "ba_inputs", 0),
                    ("ba_req", "ba_inputs", 2))
#: The walk lists (:meth:`~ksched.class_tables.ClassTables.walk_lists`; none: every node).
_WALK = (("walk_indptr", "walk_pos", "walk_lists", ()),)


class StackedTables:
    """The stacked arrays of a :class:`~ksched.class_tables.ClassTables` whose classes are only
    ever appended (see :meth:`update`), for one state ``layout``, count of ``normalized``
    node-static scores and whether NodeResourcesFit runs (``fit_enabled``)."""

    def __init__(self, layout: ClusterState, normalized: int, fit_enabled: bool) -> None:
        n = layout.num_nodes
        self.k, self.count = normalized, 0
        self.layout, self.fit_enabled = layout, fit_enabled
        self._grown: dict[str, GrowingRows] = {}
        self._lists = {entries: _Csr(width) for _, entries, _, width in _LISTS + _WALK}
        self._norm_raw = GrowingRows((n,), np.int64)
        self._static_score = GrowingRows((n,), np.int64)
        self._static_score.extend(np.zeros((1, n), dtype=np.int64))  # row 0: zero everywhere
        self._static_sid = GrowingRows((n,), np.int32)
        self._sid_late = _Csr(dtype=np.bool_)
        self._wording_rows: dict[int, int] = {}
        #: Per node-static entries (by identity: the classes' tables hold them while this
        #: does), their rows: a class like another shares its rows.
        self._norm_row_of: dict[int, list[int]] = {}
        self._static_row_of: dict[int, int] = {}
        #: The per-class rows copied as they are: their shapes and dtypes.
        self._shapes = {"static_ok": ((n,), np.bool_),
                        "request": ((len(layout.resource_names),), np.int64),
                        "nonzero_add": ((2,), np.int64)}
        self._arrays: dict[str, Any] = {}

    def _grow(self, name: str, rows: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        found = self._grown.get(name)
        if found is None:
            found = self._grown[name] = GrowingRows(shape, dtype)
        return found.extend(rows)

    def update(self, t: ClassTables) -> dict[str, Any]:
        """The arrays of every class of ``t`` (see the loop's docstring), with their walk
        lists, the classes added since the last call stacked onto those before."""
        if self.count == len(t.static_ok) and self._arrays:
            return self._arrays
        new = range(self.count, len(t.static_ok))
        out = dict(self._arrays)
        for name, table, dtype in _SCALARS:
            out[name] = self._grow(name, [getattr(t, table)[c] for c in new], (), dtype)
        for name, (shape, dtype) in self._shapes.items():
            out[name] = self._grow(name, [getattr(t, name)[c] for c in new], shape, dtype)
        for indptr, entries, table, _ in _LISTS:
            out[indptr], out[entries] = self._lists[entries].extend(
                [getattr(t, table)[c] for c in new])
        out.update(self._resource_inputs(t, new))
        out.update(self._row_tables(t, new))
        walk = self._lists["walk_pos"]
        lists = t.walk_lists(self.layout, self.fit_enabled, new, walk.entries.count)
        out["walk_listed"] = self._grow("walk_listed", [p is not None for p in lists], (),
                                        np.bool_)
        out["walk_indptr"], out["walk_pos"] = walk.extend(
            [p if p is not None else () for p in lists])
        self.count = len(t.static_ok)
        self._arrays = out
        return out

    def one(self, t: ClassTables, c: int) -> dict[str, Any]:
        """Class ``c``'s arrays alone, as class 0, as :meth:`update` makes them for tables
        holding that class only (views of the stacked arrays, where they can be)."""
        a, at = self.update(t), slice(c, c + 1)
        out = {name: a[name][at] for name, _, _ in _SCALARS}
        for name in [*self._shapes, *(name for name, _, _ in _RESOURCE_INPUTS), "walk_listed"]:
            out[name] = a[name][at]
        for indptr, entries, _, _ in _LISTS + _WALK:
            lo, hi = a[indptr][c], a[indptr][c + 1]
            out[indptr], out[entries] = np.array([0, hi - lo], dtype=np.int64), a[entries][lo:hi]
        rows = a["norm_row"][c]
        norm_row = np.where(rows >= 0, np.cumsum(rows >= 0) - 1, -1).reshape(1, self.k)
        static = a["static_row"][c]
        diag, offsets = a["diag_row"][c], a["sid_offset"]
        sid = slice(diag, diag + 1) if diag >= 0 else slice(0, 0)
        late = slice(offsets[diag], offsets[diag + 1]) if diag >= 0 else slice(0, 0)
        return dict(
            out, norm_raw=a["norm_raw"][rows[rows >= 0]], norm_row=norm_row,
            norm_varies=norm_row >= 0,
            static_score=a["static_score"][[0, static] if static else [0]],
            static_row=np.array([1 if static else 0], dtype=np.int64),
            diag_row=np.array([0 if diag >= 0 else -1], dtype=np.int64),
            static_sid=a["static_sid"][sid], sid_late=a["sid_late"][late],
            sid_offset=np.array([0, late.stop - late.start] if diag >= 0 else [0],
                                dtype=np.int64))

    def _resource_inputs(self, t: ClassTables, new: range) -> dict[str, np.ndarray]:
        """The resource scores' inputs per class (their width: the profile's resources)."""
        out = {}
        for name, table, item in _RESOURCE_INPUTS:
            entries = getattr(t, table)
            width = len(entries[0][item]) if entries else 0
            out[name] = self._grow(name, [entries[c][item] for c in new], (width,), np.int64)
        return out

    def _row_tables(self, t: ClassTables, new: range) -> dict[str, np.ndarray]:
        """The tables classes point into by row: the normalised node-static scores that
        vary (``norm_raw``, ``norm_row`` -1: 0 on every node, left out), the weighted sums
        of those needing no normalisation (``static_score``, ``static_row``; row 0: zeros)
        and the verdicts the loop words failures from, one row per distinct
        (``static_sid``, ``sid_offset``, ``sid_late``, ``diag_row`` -1: none)."""
        norm_rows, static_rows, diag_rows = [], [], []
        raws, statics = [], []  # the rows added to norm_raw and static_score
        for c in new:
            entries, static = t.norm_raw[c], t.static_score[c]
            row = self._norm_row_of.get(id(entries))  # (siblings share their entries)
            if row is None:
                row = self._norm_row_of[id(entries)] = [-1] * self.k
                for j, raw in enumerate(entries):
                    if raw is not None:
                        row[j] = self._norm_raw.count + len(raws)
                        raws.append(raw)
            norm_rows.append(row)
            at = 0 if static is None else self._static_row_of.get(id(static))
            if at is None:
                at = self._static_row_of[id(static)] = self._static_score.count + len(statics)
                statics.append(static)
            static_rows.append(at)
            diag_rows.append(self._wording_row(t.wording[c]))
        self._norm_raw.extend(raws)
        self._static_score.extend(statics)
        rows = np.array(norm_rows, dtype=np.int64).reshape(len(norm_rows), self.k)
        norm_row = self._grow("norm_row", rows, (self.k,), np.int64)
        norm_varies = self._grow("norm_varies", rows >= 0, (self.k,), np.bool_)
        sid_offset, sid_late = self._sid_late.indptr.rows(), self._sid_late.entries.rows()
        return dict(norm_raw=self._norm_raw.rows(), norm_row=norm_row,
                    norm_varies=norm_varies, static_score=self._static_score.rows(),
                    static_row=self._grow("static_row", static_rows, (), np.int64),
                    diag_row=self._grow("diag_row", diag_rows, (), np.int64),
                    static_sid=self._static_sid.rows(), sid_offset=sid_offset,
                    sid_late=sid_late)

    def _wording_row(self, wording: Any) -> int:
        """The row of a class's failure wording (``None``: -1), shared by the classes of one."""
        if wording is None:
            return -1
        row = self._wording_rows.get(id(wording))
        if row is None:
            row = self._wording_rows[id(wording)] = self._static_sid.count
            self._static_sid.extend([wording.sid])
            self._sid_late.extend([wording.late])
        return row


def full_loop(arrays: dict[str, Any]) -> bool:
    """Whether some class of stacked ``arrays`` counts pods per topology domain
    (:data:`COUNTING`) or normalises a node-static score that varies: the loop then runs
    with that code compiled in."""
    indptrs = {table: indptr for indptr, _, table, _ in _LISTS}
    return bool(arrays["norm_varies"].any()) or any(
        bool((np.diff(arrays[indptrs[table]]) > 0).any()) for table in COUNTING)
