"""Writing output files whole or not at all: a file is written beside its target under a
temporary name and renamed over it only when the writing succeeded, so a failed command leaves
no half-written file (and an existing one untouched)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ksched.errors import KschedError


@contextlib.contextmanager
def written_whole(path: str | os.PathLike, binary: bool = False) -> Iterator[IO]:
    """An open file for ``path``, renamed into place when the block ends without an error.

    A target that is not a regular file (``/dev/null``, a FIFO) is written straight. The new
    file keeps an existing target's permissions (else the umask's). Failing to create or
    replace it raises :class:`~ksched.errors.KschedError` (``PATH: cannot write: ...``).
    """
    target = Path(path)
    mode = "wb" if binary else "w"
    encoding = None if binary else "utf-8"
    if target.exists() and not target.is_file():
        with open(target, mode, encoding=encoding) as out:
            yield out
        return
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                         suffix=".tmp")
    except OSError as exc:
        raise KschedError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, mode, encoding=encoding) as out:
            yield out
        os.chmod(temporary, target.stat().st_mode & 0o7777 if target.exists()
                 else 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise KschedError(f"{target}: cannot write: {exc.strerror or exc}") from None
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
