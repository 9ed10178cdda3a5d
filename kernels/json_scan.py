"""The outline of a JSON text, found in one pass over its bytes without building any object.

:func:`outline` checks the structure (brackets, commas, colons, closed strings, nesting depth)
and records where values start and end: every top-level value (a file may hold a stream of
them, as ``jq -c`` writes), every member of a top-level value, and every element of an
``"items"`` array of a top-level object (a ``kubectl get -o json`` List). Scalars are only
delimited here; the caller parses every byte again with a real JSON parser, one piece at a
time, which checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._jit import jit

#: Error codes of :func:`outline` (0: none).
OK, UNEXPECTED, UNTERMINATED_STRING, END_OF_INPUT, TOO_DEEP, FULL = 0, 1, 2, 3, 4, 5

# Per-container states: what may come next (``error_state`` of :func:`scan`).
_TOP, _ARRAY_FIRST, _ARRAY_AFTER, _ARRAY_VALUE = 0, 1, 2, 3
_OBJECT_FIRST, _OBJECT_KEY, _OBJECT_COLON, _OBJECT_VALUE, _OBJECT_AFTER = 4, 5, 6, 7, 8
#: ``encoding/json``'s words for a byte found where it cannot be, by state.
EXPECTED = {_ARRAY_AFTER: "after array element", _OBJECT_FIRST: "looking for beginning of "
            "object key string", _OBJECT_KEY: "looking for beginning of object key string",
            _OBJECT_COLON: "after object key", _OBJECT_AFTER: "after object key:value pair"}

_ITEMS = np.frombuffer(b'"items"', dtype=np.uint8)


@jit(inner=True)
def _is_items_key(buf, start, end, items):
    if end - start != len(items):
        return False
    for k in range(len(items)):
        if buf[start + k] != items[k]:
            return False
    return True


@jit
def outline(buf, stop, items, regs, state, row, listing, starts, ends, depths, parents, is_key):
    """Spans of the values of ``buf`` (``uint8[n]``) that a loader splits on, from byte
    ``regs[0]`` on, until the first boundary between tokens at or after ``stop``.

    Fills one row per recorded value, in text order: ``buf[starts[k]:ends[k]]``, its depth
    (0 top level, 1 member of a top-level value, 2 element of a top-level object's
    ``"items"`` array), the row of the value that holds it (-1 at the top) and whether it is
    an object key. Returns ``(error, error_at)``: ``error`` is one of the codes above (``OK``
    when the text read so far is well formed; ``FULL`` when the row arrays are) and
    ``error_at`` the byte it was found at. The scan resumes where it stopped (after ``OK``
    short of the end, or ``FULL``) from the registers ``regs`` (position, depth, "items"
    key just read, rows) and the per-depth ``state`` (``int8``, ``_TOP`` at 0), ``row``
    (``int64``, the container's row or -1) and ``listing`` (``bool``: it is an ``"items"``
    array) arrays, whose length less one is the nesting limit. ``items`` is ``b'"items"'``
    as ``uint8``.
    """
    n = len(buf)
    i, depth, items_next, count = regs[0], regs[1], regs[2] != 0, regs[3]
    max_depth = len(state) - 1
    while i < n:
        if i >= stop:
            regs[0], regs[1], regs[2], regs[3] = i, depth, items_next, count
            return OK, i
        c = buf[i]
        if c == 32 or c == 10 or c == 13 or c == 9:
            i += 1
            while i < n:
                c = buf[i]
                if not (c == 32 or c == 10 or c == 13 or c == 9):
                    break
                i += 1
            continue
        s = state[depth]
        if c == 44:  # ,
            if s == _ARRAY_AFTER:
                state[depth] = _ARRAY_VALUE
            elif s == _OBJECT_AFTER:
                state[depth] = _OBJECT_KEY
            else:
                regs[1] = depth
                return UNEXPECTED, i
            i += 1
            continue
        if c == 58:  # :
            if s != _OBJECT_COLON:
                regs[1] = depth
                return UNEXPECTED, i
            state[depth] = _OBJECT_VALUE
            i += 1
            continue
        if c == 125 or c == 93:  # } ]
            if c == 125:
                ok = s == _OBJECT_FIRST or s == _OBJECT_AFTER
            else:
                ok = s == _ARRAY_FIRST or s == _ARRAY_AFTER
            if depth == 0 or not ok:
                regs[1] = depth
                return UNEXPECTED, i
            if row[depth] >= 0:
                ends[row[depth]] = i + 1
            depth -= 1
            i += 1
        else:
            # A value (or a key) starts here.
            key = s == _OBJECT_FIRST or s == _OBJECT_KEY
            if not (key or s == _TOP or s == _ARRAY_FIRST or s == _ARRAY_VALUE
                    or s == _OBJECT_VALUE):
                regs[1] = depth
                return UNEXPECTED, i
            if key and c != 34:
                regs[1] = depth
                return UNEXPECTED, i
            record = depth <= 1 or (depth == 2 and listing[depth])
            r = -1
            if record:
                if count == len(starts):
                    regs[0], regs[1], regs[2], regs[3] = i, depth, items_next, count
                    return FULL, i
                r = count
                count += 1
                starts[r] = i
                ends[r] = -1
                depths[r] = depth
                parents[r] = row[depth] if depth > 0 else -1
                is_key[r] = key
            if c == 123 or c == 91:  # { [
                if depth >= max_depth:
                    return TOO_DEEP, i
                opens_items = depth == 1 and c == 91 and items_next and state[1] >= _OBJECT_FIRST
                depth += 1
                state[depth] = _OBJECT_FIRST if c == 123 else _ARRAY_FIRST
                row[depth] = r
                listing[depth] = opens_items
                items_next = False
                i += 1
                continue  # the container's own "value done" comes at its closing bracket
            if c == 34:  # "
                j = i + 1
                while j < n:
                    b = buf[j]
                    if b == 92:  # backslash: skip the escaped byte
                        j += 2
                        continue
                    if b == 34:
                        break
                    j += 1
                if j >= n:
                    return UNTERMINATED_STRING, i
                if key and depth == 1:
                    items_next = _is_items_key(buf, i, j + 1, items)
                i = j + 1
            else:  # a number, true, false or null: checked later by the parser
                j = i
                while j < n:
                    b = buf[j]
                    if not ((b >= 48 and b <= 57) or (b >= 97 and b <= 122)
                            or (b >= 65 and b <= 90) or b == 43 or b == 45 or b == 46):
                        break
                    j += 1
                if j == i:
                    regs[1] = depth
                    return UNEXPECTED, i
                i = j
            if r >= 0:
                ends[r] = i
            if key:
                state[depth] = _OBJECT_COLON
                continue
            if depth == 1 and not key:
                items_next = False
        # A value ended (a scalar above, or a container closed): move its container on.
        s = state[depth]
        if s == _ARRAY_FIRST or s == _ARRAY_VALUE:
            state[depth] = _ARRAY_AFTER
        elif s == _OBJECT_VALUE:
            state[depth] = _OBJECT_AFTER
    regs[0], regs[1], regs[2], regs[3] = n, depth, items_next, count
    if depth > 0:
        return END_OF_INPUT, n
    return OK, n


def scan(data: Any, max_depth: int, release: Callable[[int, int], None] | None = None,
         chunk: int = 1 << 26) -> tuple:
    """:func:`outline` of a bytes-like object: ``(starts, ends, depths, parents, is_key,
    error, error_at, error_state)`` with containers nested at most ``max_depth`` deep: the
    row arrays cut to the rows found, and for an
    ``UNEXPECTED`` byte the state of its container (what was expected instead).
    ``release(start, end)`` is called after each ``chunk`` bytes read (a mapped file may give
    those pages back)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    n = len(buf)
    size = n // 1024 + 64
    rows = _rows(size)
    regs = np.zeros(4, np.int64)
    state = np.zeros(max_depth + 1, np.int8)
    row = np.full(max_depth + 1, -1, np.int64)
    listing = np.zeros(max_depth + 1, np.bool_)
    while True:
        start = int(regs[0])
        error, at = outline(buf, start + chunk, _ITEMS, regs, state, row, listing, *rows)
        if error == FULL:
            rows = tuple(np.concatenate([a, np.empty(3 * len(a), a.dtype)]) for a in rows)
            continue
        if release is not None:
            release(start, int(regs[0]))
        if error != OK or regs[0] >= n:
            count = int(regs[3])
            return (*(a[:count] for a in rows), int(error), int(at), int(state[regs[1]]))


def _rows(size: int) -> tuple:
    return (np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int8),
            np.empty(size, np.int64), np.empty(size, np.bool_))
