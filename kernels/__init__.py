"""Numba kernels of ksched: plain functions over arrays and scalars, no Python objects.

Every kernel takes its inputs first and returns fresh arrays (or fills ``out_*`` buffers and
returns nothing). Node arguments are ``int64`` index arrays into the cluster's node rows, so one
kernel serves a full scan, a sampled walk or a PreFilter subset.

Nothing is compiled at import: numba compiles a kernel on its first call, for the argument
types of that call, or loads it from the disk cache (:mod:`ksched.kernels._jit` says where), so
a run compiles only what it calls. :func:`warmup` compiles every kernel up front, for
benchmarks that time nothing else.
"""

from __future__ import annotations

from ksched.kernels.warmup import warmup

__all__ = ["warmup"]
