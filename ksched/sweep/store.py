"""A sweep's results on disk: the journal each finished scenario is appended to as it
finishes, and the output file written from it at the end.

The journal, ``<output>.rows.jsonl``, has one JSON object per finished scenario: its resume
key (:func:`ksched.sweep.digest.params_key`: the base's content hash, the study and the
parameters), the parameters and the result. Each line is flushed as it is written, so a run
that dies loses only the scenarios that were running. Run again, the sweep reads the journal
and skips the scenarios that finished without error (failed ones are tried again); a
journal's torn last line, and any line that is not a whole record, is skipped with a
warning. Delete the journal to start afresh.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ksched.errors import ArgumentError, KschedWarning

__all__ = ["OUTPUT_SUFFIXES", "Journal", "check_output", "check_writable", "journal_path",
           "written_whole"]

#: The output formats, by file suffix.
OUTPUT_SUFFIXES = (".parquet", ".csv", ".jsonl")


def check_output(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, refused unless it ends in one of :data:`OUTPUT_SUFFIXES` (with
    pyarrow installed for ``.parquet``) and it and its journal can be written."""
    target = Path(path)
    if target.suffix.lower() not in OUTPUT_SUFFIXES:
        raise ArgumentError(f"output: {str(target)!r}: expected a file ending in "
                            f"{', '.join(OUTPUT_SUFFIXES)}")
    if target.suffix.lower() == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ArgumentError(f"output: {str(target)!r}: writing Parquet needs pyarrow: "
                            f"pip install pyarrow")
    check_writable(target, "output")
    check_writable(journal_path(target), "output's journal")
    return target


def check_writable(target: Path, what: str) -> None:
    """Refuse ``target`` unless it is a file (or is not there yet) in a folder this process
    may write in."""
    if target.exists() and not target.is_file():
        kind = "a directory" if target.is_dir() else "not a regular file"
        raise ArgumentError(f"{what}: {str(target)!r}: is {kind}")
    if not target.parent.is_dir():
        raise ArgumentError(f"{what}: {str(target)!r}: no such directory: {target.parent}")
    if not os.access(target.parent, os.W_OK | os.X_OK) \
            or (target.exists() and not os.access(target, os.R_OK | os.W_OK)):
        raise ArgumentError(f"{what}: {str(target)!r}: permission denied")


def journal_path(output: Path) -> Path:
    """The journal beside ``output``: ``<output>.rows.jsonl``."""
    return output.with_name(output.name + ".rows.jsonl")


class Journal:
    """The finished scenarios of a sweep, one JSON line each, appended as they finish."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        #: The lines the last :meth:`load` skipped.
        self.skipped = 0

    def load(self) -> dict[str, dict[str, Any]]:
        """The records by key, the last one of a key winning. Lines that are not a whole
        record (the torn last line of a run that died, bytes that are not UTF-8 JSON, a
        record missing a field or with one of the wrong type) are skipped, with a warning
        giving their count (also in :attr:`skipped`)."""
        records: dict[str, dict[str, Any]] = {}
        self.skipped = 0
        if not self.path.exists():
            return records
        try:
            with open(self.path, "rb") as f:
                for line in f:
                    record = _record(line)
                    if record is None:
                        self.skipped += line.strip() != b""
                    else:
                        records[record["key"]] = record
        except OSError as exc:
            raise ArgumentError(f"journal: {str(self.path)!r}: cannot read: "
                                f"{exc.strerror or exc}") from None
        if self.skipped:
            warnings.warn(f"journal {self.path}: skipped {self.skipped} unreadable "
                          f"line{'s' if self.skipped > 1 else ''}", KschedWarning, stacklevel=2)
        return records

    def open(self, fresh: bool = False) -> None:
        """Open for appending (``fresh``: emptied first)."""
        try:
            torn = not fresh and self.path.exists() and self.path.stat().st_size > 0 \
                and not self.path.read_bytes().endswith(b"\n")
            self._file = open(self.path, "w" if fresh else "a", encoding="utf-8")  # noqa: SIM115
            if torn:
                self._file.write("\n")
        except OSError as exc:
            raise ArgumentError(f"journal: {str(self.path)!r}: cannot write: "
                                f"{exc.strerror or exc}") from None

    def append(self, record: dict[str, Any]) -> None:
        """Write ``record`` as one line, flushed to the operating system."""
        assert self._file is not None, "Journal.open() first"
        self._file.write(json.dumps(record, default=repr) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _record(line: bytes) -> dict[str, Any] | None:
    """The journal record of ``line``, or ``None`` unless it is one whole and well-typed."""
    try:
        record = json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is one too
        return None
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        return None
    metrics, error, seconds = (record.get(k) for k in ("metrics", "error", "seconds"))
    if not isinstance(metrics, dict) or not all(_is_scalar(v) for v in metrics.values()):
        return None
    if not (error is None or isinstance(error, str)) or isinstance(seconds, bool) \
            or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        return None
    return record


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def written_whole(path: str | os.PathLike[str], write: Callable[[str], None]) -> Path:
    """``write(temporary)`` then the temporary file renamed over ``path``: the file is
    written whole or not at all. A folder, or a file that cannot be written, is an
    :class:`~ksched.errors.ArgumentError` naming ``path``."""
    target = Path(path)  # the writer makes the file: it gets the usual permissions
    check_writable(target, "path")
    temporary = str(target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"))
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise ArgumentError(f"path: {str(target)!r}: cannot write: "
                                f"{exc.strerror or exc}") from None
        raise
    return target
