"""A sweep's results on disk: the journal each finished scenario is appended to as it
finishes, and the output file written from it at the end.

The journal, ``<output>.rows.jsonl``, has one JSON object per finished scenario: its resume
key (:func:`ksched.sweep.digest.params_key`: the base's content hash, the study and the
parameters), the parameters and the result. Each line is flushed as it is written, so a run
that dies loses only the scenarios that were running. Run again, the sweep reads the journal
and skips the scenarios that finished without error (failed ones are tried again); a
journal's torn last line is ignored. Delete the journal to start afresh.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ksched.errors import ArgumentError

__all__ = ["OUTPUT_SUFFIXES", "Journal", "check_output", "journal_path", "written_whole"]

#: The output formats, by file suffix.
OUTPUT_SUFFIXES = (".parquet", ".csv", ".jsonl")


def check_output(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, refused unless it ends in one of :data:`OUTPUT_SUFFIXES` and its
    folder exists."""
    target = Path(path)
    if target.suffix.lower() not in OUTPUT_SUFFIXES:
        raise ArgumentError(f"output: {str(target)!r}: expected a file ending in "
                            f"{', '.join(OUTPUT_SUFFIXES)}")
    if target.is_dir():
        raise ArgumentError(f"output: {str(target)!r}: is a directory")
    if not target.parent.is_dir():
        raise ArgumentError(f"output: {str(target)!r}: no such directory: {target.parent}")
    return target


def journal_path(output: Path) -> Path:
    """The journal beside ``output``: ``<output>.rows.jsonl``."""
    return output.with_name(output.name + ".rows.jsonl")


class Journal:
    """The finished scenarios of a sweep, one JSON line each, appended as they finish."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """The records by key, the last one of a key winning; unreadable lines skipped."""
        records: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return records
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # the torn last line of a run that died while writing it
                if isinstance(record, dict) and isinstance(record.get("key"), str):
                    records[record["key"]] = record
        return records

    def open(self, fresh: bool = False) -> None:
        """Open for appending (``fresh``: emptied first)."""
        torn = not fresh and self.path.exists() and self.path.stat().st_size > 0 \
            and not self.path.read_bytes().endswith(b"\n")
        self._file = open(self.path, "w" if fresh else "a", encoding="utf-8")  # noqa: SIM115
        if torn:
            self._file.write("\n")

    def append(self, record: dict[str, Any]) -> None:
        """Write ``record`` as one line, flushed to the operating system."""
        assert self._file is not None, "Journal.open() first"
        self._file.write(json.dumps(record, default=repr) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def written_whole(path: str | os.PathLike[str], write: Callable[[str], None]) -> Path:
    """``write(temporary)`` then the temporary file renamed over ``path``: the file is
    written whole or not at all."""
    target = Path(path)  # the writer makes the file: it gets the usual permissions
    temporary = str(target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"))
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target
