"""JSON documents out of bytes, a List's items one at a time.

A file may hold one value or a stream of them (``jq -c``); the ``items`` of a ``kubectl get -o
json`` List are parsed one at a time, straight from the bytes, so a 1 GB snapshot never
exists as one tree of Python objects. The outline comes from one pass of
:func:`ksched.kernels.json_scan.outline`; every byte is then parsed by orjson, one piece at a
time, which checks it. Errors name the line and column and use ``encoding/json``'s words
(``invalid character '}' after object key``), as kubectl's would; text that is not UTF-8 is
refused (Go would replace it silently). YAML goes through :mod:`ksched.yamlio`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from ksched.errors import InvalidObjectError
from ksched.yamlio import MAX_DEPTH, LoadError, load_json

try:  # a faster JSON parser when the environment has one; the standard library otherwise
    from orjson import JSONDecodeError as _JSONDecodeError
    from orjson import loads as _json_loads

    #: The values parsed are plain: dicts, lists, strings, 64-bit integers, finite floats,
    #: booleans and ``None`` (the standard library's parser also makes ``NaN`` and infinities).
    PLAIN_VALUES = True
except ImportError:  # pragma: no cover - depends on the environment
    from json import JSONDecodeError as _JSONDecodeError
    from json import loads as _json_loads

    PLAIN_VALUES = False

#: Bytes read between two calls of ``release``, scanning and parsing.
_SCAN_CHUNK, _RELEASE_EVERY = 1 << 26, 1 << 25

# ----------------------------------------------------------------------------- positions


def line_column(data: bytes | memoryview | str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset ``pos`` in ``data``."""
    newline = "\n" if isinstance(data, str) else b"\n"
    if not isinstance(data, str | bytes):  # a memoryview, a mapped file: only errors get here
        data = bytes(data[:pos])
    line = data.count(newline, 0, pos) + 1
    return line, pos - (data.rfind(newline, 0, pos) + 1) + 1


def _error(where: str, data: Any, pos: int, problem: str) -> InvalidObjectError:
    line, column = line_column(data, pos)
    return InvalidObjectError(where, f"line {line} column {column}", problem)


# ----------------------------------------------------------------------------- JSON


def _go_char(b: int) -> str:
    """``encoding/json``'s ``quoteChar`` of a byte."""
    from ksched.yamlio import quote_char

    return quote_char(chr(b))


def _outline(data: Any, where: str, release: Callable[[int, int], None] | None) -> tuple:
    from ksched.kernels import json_scan

    starts, ends, depths, parents, is_key, error, at, state = json_scan.scan(
        data, MAX_DEPTH, release, _SCAN_CHUNK)
    if error == json_scan.OK:
        return starts, ends, depths, parents, is_key
    if error == json_scan.UNEXPECTED:
        if data[at] == 0:
            problem = "binary data (a NUL byte), not JSON or YAML text"
        else:
            expected = json_scan.EXPECTED.get(state, "looking for beginning of value")
            problem = f"invalid character {_go_char(data[at])} {expected}"
    elif error == json_scan.TOO_DEEP:
        problem = f"exceeded max depth of {MAX_DEPTH}"
    else:  # a string or a container still open at the end
        problem = "unexpected end of JSON input"
    raise _error(where, data, at, problem)


def _parse(data: Any, start: int, end: int, where: str) -> Any:
    """orjson's value of ``data[start:end]``; its errors placed in the whole text, in
    ``encoding/json``'s words."""
    try:
        return _json_loads(data[start:end])
    except _JSONDecodeError as exc:
        piece = bytes(data[start:end])
        if "UTF-8" in exc.msg:  # orjson checks the encoding first and tells no place
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise _error(where, data, start + bad.start,
                             f"not UTF-8 text (byte 0x{piece[bad.start]:02x})") from None
        try:
            load_json(piece)
            problem = exc.msg  # a value Go reads but orjson does not (a number out of range)
        except LoadError as go:
            problem = go.message
        pos = start + getattr(exc, "pos", 0)
        raise _error(where, data, min(pos, end), problem) from None


def json_documents(data: bytes | memoryview, where: str,
                   release: Callable[[int, int], None] | None = None,
                   skeletons: bool = False,
                   ) -> Iterator[tuple[Any, Iterator[Any] | None]]:
    """The top-level values of ``data`` as ``(value, items)``.

    ``items`` is ``None`` and ``value`` the parsed value, except for a top-level object with
    an ``"items"`` array (a List) and a top-level array: then ``value`` is the object with
    ``"items": []`` (the array: ``[]``) and ``items`` yields the elements one at a time.
    ``release(start, end)`` is called now and then with a range of bytes just read (a mapped
    file gives those pages back, so it never counts whole in the process's memory).
    With ``skeletons``, ``items`` yields ``(element, skeleton)`` pairs (the hash of the
    element's keys and brackets, :mod:`ksched.kernels.json_skeleton`).
    """
    starts, ends, depths, parents, is_key = _outline(data, where, release)
    top = [int(k) for k in (depths == 0).nonzero()[0]]
    children: dict[int, list[int]] = {}
    for k in (depths > 0).nonzero()[0].tolist():
        children.setdefault(int(parents[k]), []).append(k)
    released = 0
    for t in top:
        s, e = int(starts[t]), int(ends[t])
        if release is not None and s - released > _RELEASE_EVERY:  # a stream of values
            release(released, s)
            released = s
        first = data[s]
        if first == 91:  # [
            yield [], _elements(data, starts, ends, children.get(t, []), where, release,
                                skeletons)
            continue
        items = _items_member(data, starts, ends, is_key, children.get(t, [])) \
            if first == 123 else None
        if items is None:
            yield _parse(data, s, e, where), None
            continue
        i0, i1 = int(starts[items]), int(ends[items])
        skeleton = bytes(data[s:i0]) + b"[]" + bytes(data[i1:e])
        try:
            value = _json_loads(skeleton)
        except _JSONDecodeError:  # outside the items: find the place in the real text
            yield _parse(data, s, e, where), None  # raises at the first faulty byte
            continue
        yield value, _elements(data, starts, ends, children.get(items, []), where, release,
                               skeletons)


def _items_member(data: Any, starts: Any, ends: Any, is_key: Any,
                  members: list[int]) -> int | None:
    """The outline row of the ``"items"`` array among a top-level object's members."""
    for a, b in itertools.pairwise(members):
        if is_key[a] and not is_key[b] and data[int(starts[b])] == 91 \
                and bytes(data[int(starts[a]):int(ends[a])]) == b'"items"':
            return b
    return None


#: Items whose skeletons one kernel call hashes.
_SKELETON_BATCH = 4096


def _elements(data: Any, starts: Any, ends: Any, rows: list[int], where: str,
              release: Callable[[int, int], None] | None,
              skeletons: bool = False) -> Iterator[Any]:
    """The parsed items at ``rows``; with ``skeletons``, ``(item, skeleton)`` pairs
    (:func:`ksched.kernels.json_skeleton.skeleton_keys`, hashed a batch at a time)."""
    released = int(starts[rows[0]]) if rows else 0
    for first in range(0, len(rows), _SKELETON_BATCH):
        batch = rows[first:first + _SKELETON_BATCH]
        keys = _skeleton_keys(data, starts[batch], ends[batch]) if skeletons else None
        for n, k in enumerate(batch):
            end = int(ends[k])
            item = _parse(data, int(starts[k]), end, where)
            yield (item, keys[n]) if skeletons else item
            if release is not None and end - released > _RELEASE_EVERY:
                release(released, end)
                released = end


def _skeleton_keys(data: Any, starts: Any, ends: Any) -> list[bytes]:
    from ksched.kernels.json_skeleton import skeleton_keys

    return skeleton_keys(data, starts, ends)


__all__ = ["json_documents", "line_column"]
