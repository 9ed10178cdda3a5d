"""Label syntax checks of ``apimachinery/pkg/labels`` and ``util/validation``.

``labels.NewRequirement`` rejects bad keys, bad values and wrong value counts; node-affinity
terms that fail it match nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ksched.api import LabelSelector
from ksched.state import parse_go_int

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*\Z")


def is_qualified_name(key: str) -> bool:
    """``IsQualifiedName``: ``[prefix/]name``, name <= 63 chars, prefix a DNS-1123 subdomain."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
        if key.count("/") > 1:
            return False
    return 0 < len(name) <= 63 and bool(_NAME.match(name))


def is_label_value(value: str) -> bool:
    """``IsValidLabelValue``: empty, or <= 63 chars of ``[A-Za-z0-9_.-]``, alphanumeric at
    both ends."""
    return value == "" or (len(value) <= 63 and bool(_NAME.match(value)))


def requirement_is_valid(key: str, operator: str, values: Sequence[str]) -> bool:
    """Whether ``labels.NewRequirement(key, operator, values)`` succeeds."""
    if not is_qualified_name(key):
        return False
    if operator in ("In", "NotIn"):
        if not values:
            return False
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            return False
    elif operator in ("Gt", "Lt"):
        if len(values) != 1 or parse_go_int(values[0]) is None:
            return False
    else:
        return False
    return all(is_label_value(v) for v in values)


class Selector:
    """A ``labels.Selector``: ANDed requirements, or ``Nothing`` (matches no labels).

    Build it with :meth:`from_label_selector` (``metav1.LabelSelectorAsSelector``): ``None``
    gives Nothing, an empty selector gives Everything.
    """

    __slots__ = ("nothing", "requirements")

    def __init__(self, requirements: Sequence[tuple[str, str, tuple[str, ...]]] = (),
                 nothing: bool = False) -> None:
        self.requirements = tuple(requirements)
        self.nothing = nothing

    @classmethod
    def from_label_selector(cls, selector: LabelSelector | None) -> Selector:
        """Raises ``ValueError`` on an invalid requirement, as upstream returns an error."""
        if selector is None:
            return cls(nothing=True)
        reqs = [(k, "In", (v,)) for k, v in selector.match_labels.items()]
        reqs += [(r.key, r.operator, tuple(r.values)) for r in selector.match_expressions]
        for key, op, values in reqs:
            if not requirement_is_valid(key, op, values):
                raise ValueError(f"invalid label selector requirement: {key} {op} {list(values)}")
        return cls(reqs)

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> Selector:
        return cls([(k, "In", (v,)) for k, v in labels.items()])

    def merged(self, labels: Mapping[str, str]) -> Selector:
        """``mergeLabelSetWithSelector``: the label set's requirements first, then ours;
        Nothing stays Nothing."""
        if self.nothing:
            return self
        return Selector([(k, "In", (v,)) for k, v in labels.items()] + list(self.requirements))

    @property
    def empty(self) -> bool:
        """``Selector.Empty()``: Everything (no requirements)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, op, values in self.requirements:
            present = key in labels
            if op == "In" and not (present and labels[key] in values):
                return False
            if op == "NotIn" and present and labels[key] in values:
                return False
            if op == "Exists" and not present:
                return False
            if op == "DoesNotExist" and present:
                return False
        return True

    def __repr__(self) -> str:
        return "Selector(Nothing)" if self.nothing else f"Selector({list(self.requirements)})"
