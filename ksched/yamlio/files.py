"""Reading an input file as Go's ``os.ReadFile`` (and ``compress/gzip`` for ``*.gz``) reads it,
in Go's words, with bounds; and :class:`LoadError`, how every reader of :mod:`ksched.yamlio`
fails.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib

from ksched.errors import KschedError

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "LoadError", "is_json", "read_file"]

#: Collections nested deeper than this are refused (ksched's bound; go-yaml's is 10000).
MAX_DEPTH = 100
#: Files (after decompression) larger than this are refused.
MAX_FILE_BYTES = 1 << 30


class LoadError(KschedError, ValueError):
    """Input that cannot be read or decoded.

    ``str(error)`` is Go's message where Go has one (``yaml: line 3: did not find expected
    key``); ``line`` is the 1-based line when known, ``path`` the field path for data built in
    Python.
    """

    def __init__(self, message: str, line: int | None = None, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.path = path



def read_file(path: str | os.PathLike) -> bytes:
    """The file's bytes, gunzipped when its name ends in ``.gz`` (``os.ReadFile``'s errors)."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    try:
        with open(name, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_FILE_BYTES:
                raise LoadError(f"read {name}: file is larger than {MAX_FILE_BYTES} bytes")
            raw = f.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise LoadError(f"read {name}: is a directory") from None
    except FileNotFoundError:
        raise LoadError(f"open {name}: no such file or directory") from None
    except PermissionError:
        raise LoadError(f"open {name}: permission denied") from None
    except OSError as exc:
        raise LoadError(f"open {name}: {(exc.strerror or str(exc)).lower()}") from None
    except ValueError as exc:  # an embedded NUL byte
        if isinstance(exc, LoadError):
            raise
        raise LoadError(f"open {name}: invalid argument") from None
    if len(raw) > MAX_FILE_BYTES:  # a device or pipe that reports no size
        raise LoadError(f"read {name}: file is larger than {MAX_FILE_BYTES} bytes")
    return _gunzip(name, raw) if name.endswith(".gz") else raw


def _gunzip(name: str, raw: bytes) -> bytes:
    """``gzip.NewReader`` + ``io.ReadAll``, in Go's ``compress/gzip`` words."""
    if not raw:
        raise LoadError(f"read {name}: gzip: empty file")
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except EOFError:
        raise LoadError(f"read {name}: unexpected EOF (truncated gzip data)") from None
    except zlib.error:
        raise LoadError(f"read {name}: flate: corrupt input") from None
    except OSError as exc:  # gzip.BadGzipFile: a bad header, or a CRC / length mismatch
        problem = "invalid checksum" if "check failed" in str(exc) else "invalid header"
        raise LoadError(f"read {name}: gzip: {problem}") from None
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(f"read {name}: decompressed data is larger than {MAX_FILE_BYTES} bytes")
    return data


def is_json(data: bytes | str) -> bool:
    """``utilyaml.IsJSONBuffer``: the first non-blank byte is ``{``."""
    return bool((_JSON_START if isinstance(data, bytes) else _JSON_START_TEXT).match(data))


_JSON_START = re.compile(rb"[ \t\r\n]*\{")
_JSON_START_TEXT = re.compile(r"[ \t\r\n]*\{")
