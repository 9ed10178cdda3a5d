"""Numba kernels of ksched: plain functions over arrays and scalars, no Python objects.

Every kernel takes its inputs first and returns fresh arrays (or fills ``out_*`` buffers and
returns nothing). Node arguments are ``int64`` index arrays into the cluster's node rows, so one
kernel serves a full scan, a sampled walk or a PreFilter subset. :func:`warmup` compiles (or
loads from the disk cache) every kernel on tiny inputs.
"""

from __future__ import annotations

from ksched.kernels.warmup import warmup

__all__ = ["warmup"]
