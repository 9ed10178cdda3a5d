"""The one place where numba options are chosen.

``cache=True`` keeps compiled code on disk between processes; ``fastmath`` stays off because
scores must match Go bit for bit; ``error_model="numpy"`` keeps divisions free of Python checks.
"""

from __future__ import annotations

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy")
