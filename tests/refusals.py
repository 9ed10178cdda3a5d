"""Helpers for the bad-input corpus (``tests/bad_inputs/``): every case must end in a
``KschedError`` naming the object and field (or, on the command line, one line and exit
status 2), within a few seconds, and never in a raw exception, a hang or a silent change."""

from __future__ import annotations

import contextlib
import io
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from ksched.errors import KschedError
from ksched.kernels.compile_clock import COMPILING

#: A one-node cluster with one pending pod, as YAML: the good input bad CLI cases start from.
TINY_CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
"""

#: No bad input may take longer than this to be refused.
SECONDS = 20.0


class Hang(Exception):
    """The call under test ran past :data:`SECONDS`."""


@contextlib.contextmanager
def time_limit(seconds: float = SECONDS) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread if the block runs past ``seconds``."""
    def _expire(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def refused(call: Callable[..., Any], *args: Any, match: str,
            error: type[KschedError] = KschedError, **kwargs: Any) -> KschedError:
    """Assert ``call(*args, **kwargs)`` raises ``error`` whose message contains ``match``."""
    with time_limit():
        with pytest.raises(error) as info:
            call(*args, **kwargs)
    assert match in str(info.value), f"{match!r} not in {str(info.value)!r}"
    return info.value


def run_cli(argv: Sequence[str], stdin: str | bytes | None = None) -> tuple[int, str, str]:
    """Run ``ksched ARGV`` in this process: (exit status, stdout, stderr)."""
    from ksched.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        raw = stdin.encode() if isinstance(stdin, str) else stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    try:
        with time_limit(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as exc:  # argparse's own exits
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = old_stdin
    return status, out.getvalue(), err.getvalue()


def cli_refused(argv: Sequence[str], match: str, stdin: str | bytes | None = None) -> str:
    """Assert ``ksched ARGV`` exits with status 2 and one stderr line containing ``match``
    (besides the notice of a first compile: which test of a worker compiles a kernel first
    depends on the order the tests run in)."""
    status, _, err = run_cli(argv, stdin)
    lines = [line for line in err.strip().splitlines() if line != f"ksched: {COMPILING}"]
    assert status == 2, f"exit {status}, stderr {err!r}"
    assert len(lines) == 1, f"expected one line, got {err!r}"
    assert lines[0].startswith("ksched: "), lines[0]
    assert match in lines[0], f"{match!r} not in {lines[0]!r}"
    return lines[0]
