"""The names, hashes and UIDs of the objects workloads make (:mod:`ksched.planning.workloads`).

Deterministic, not random: :func:`template_hash` is the FNV-1a 32-bit hash of a pod template
serialised as JSON with sorted keys, its decimal digits encoded as upstream's
``rand.SafeEncodeString`` encodes them; :func:`generated_names` gives the five character
suffixes of ``names.SimpleNameGenerator``, distinct within one owner; :func:`stable_uid` is the
UUID (version 5) of an object that states none.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np

from ksched.errors import ArgumentError

__all__ = ["fnv32a", "generated_names", "stable_uid", "template_hash"]

#: ``k8s.io/apimachinery/pkg/util/rand``'s alphabet (no vowels, no confusable digits).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LENGTH = 5
_SUFFIXES = len(_ALPHANUMS) ** _SUFFIX_LENGTH
_STRIDE = 7_654_321  # coprime to 27: i -> offset + i * stride is a bijection mod 27**5
#: ``names.SimpleNameGenerator``: a generated name's prefix is cut to 63 - 5 characters.
_MAX_PREFIX = 58
_UID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")  # uuid.NAMESPACE_URL


def template_hash(template: Any) -> str:
    """A stable ``pod-template-hash``: FNV-1a (32 bits) of ``template`` as JSON with sorted
    keys, its decimal digits through ``rand.SafeEncodeString``.

    Examples
    --------
    >>> template_hash({"spec": {"containers": [{"name": "c"}]}}) == template_hash(
    ...     {"spec": {"containers": [{"name": "c"}]}})
    True
    """
    text = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(fnv32a(text)))


def generated_names(prefix: str, count: int, salt: str) -> list[str]:
    """``count`` distinct names ``prefix[:58] + <5 characters>`` (``SimpleNameGenerator``),
    the same for the same ``salt``."""
    if count > _SUFFIXES:
        raise ArgumentError(f"{salt}: more than {_SUFFIXES} pods of one owner")
    base = prefix[:_MAX_PREFIX]
    codes = (fnv32a(salt) + np.arange(count, dtype=np.int64) * _STRIDE) % _SUFFIXES
    digits = codes[:, None] // (len(_ALPHANUMS) ** np.arange(_SUFFIX_LENGTH)) % len(_ALPHANUMS)
    letters = np.array(list(_ALPHANUMS))[digits]
    return [base + "".join(row) for row in letters.tolist()]


def stable_uid(kind: str, namespace: str, name: str) -> str:
    """The UUID (version 5) of an object that states none."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace}/{name}"))


def fnv32a(text: str) -> int:
    """FNV-1a, 32 bits, of ``text``'s UTF-8 bytes (Go's ``hash/fnv.New32a``)."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h
