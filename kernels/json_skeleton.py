"""The skeleton of JSON values: a hash of their object keys and brackets, their scalar values
left out, so that values of one shape (the pods of one controller, the nodes of one pool)
share it. :mod:`ksched.api.schema` checks the field names of one value per skeleton.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

_OFFSET_A, _PRIME_A = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
_OFFSET_B, _PRIME_B = np.uint64(0x84222325CBF29CE4), np.uint64(0x1000193000001B5)


@jit
def skeletons(buf, starts, ends, out_a, out_b):
    """Two 64-bit hashes (FNV-1a and a polynomial one) of the keys and brackets of each
    well-formed JSON value ``buf[starts[i]:ends[i]]`` (``buf``: ``uint8[n]``; ``starts``,
    ``ends``: ``int64[m]``), written to ``out_a[i]`` and ``out_b[i]`` (``uint64[m]``).
    Strings that are no key, numbers, literals, commas and whitespace are left out; a key is
    hashed as it is written (its escapes unresolved), closed by ``:``."""
    for i in range(len(starts)):
        a, b = _OFFSET_A, _OFFSET_B
        j, end = starts[i], ends[i]
        while j < end:
            c = buf[j]
            j += 1
            if c <= 32:  # whitespace, most bytes of an indented file
                continue
            if c == 34:  # a string: a key when a colon follows it
                s = j
                while buf[j] != 34:
                    j += 2 if buf[j] == 92 else 1
                k = j + 1
                j = k
                while k < end and buf[k] <= 32:
                    k += 1
                if k < end and buf[k] == 58:
                    for m in range(s, k + 1):
                        x = np.uint64(buf[m])
                        a = (a ^ x) * _PRIME_A
                        b = b * _PRIME_B + x
                    j = k + 1
            elif c == 123 or c == 125 or c == 91 or c == 93:  # { } [ ]
                x = np.uint64(c)
                a = (a ^ x) * _PRIME_A
                b = b * _PRIME_B + x
        out_a[i] = a
        out_b[i] = b


def skeleton_keys(data, starts, ends) -> list[bytes]:
    """:func:`skeletons` of the values at ``starts``/``ends`` of ``data`` (bytes-like), each
    as 16 bytes (a dict key)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    out = np.empty((len(starts), 2), np.uint64)
    skeletons(buf, starts, ends, out[:, 0], out[:, 1])
    raw = out.tobytes()
    return [raw[16 * i:16 * i + 16] for i in range(len(starts))]
