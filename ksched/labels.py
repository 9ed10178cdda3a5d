"""``apimachinery/pkg/labels``: requirements, selectors, and the errors of building them.

``labels.NewRequirement`` rejects bad keys, bad values and wrong value counts with field errors
(``key``, ``values``, ``values[0][<key>]``); ``metav1.LabelSelectorAsSelector`` returns the
first failing requirement's errors. Node-affinity terms that fail ``NewRequirement`` match
nothing; pod-affinity and topology-spread selectors that fail report the error text
(:func:`label_selector_error`) as the scheduler's plugins do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ksched.api import LabelSelector
from ksched.state import parse_go_int
from ksched.validation import FieldError, aggregate, go_quote, invalid, is_label_key, is_label_value

#: ``selection.Operator`` values (``apimachinery/pkg/selection``).
EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN = (
    "=", "in", "notin", "exists", "!", "gt", "lt")
#: The ``selection.Operator`` of each API operator name (``LabelSelectorOperator`` and
#: ``NodeSelectorOperator``).
_API_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST,
                  "Gt": GREATER_THAN, "Lt": LESS_THAN}
#: The operators ``LabelSelectorAsSelector`` accepts (no Gt / Lt in label selectors).
_LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def requirement_errors(key: str, operator: str, values: Sequence[str]) -> list[FieldError]:
    """``labels.NewRequirement(key, operator, values)``'s field errors (``operator`` a
    ``selection.Operator``), deduplicated as ``ErrorList.ToAggregate`` does. An empty value
    list is Go's nil slice (``LabelSelectorAsSelector`` copies values with ``append``)."""
    errs = []
    if messages := is_label_key(key):
        errs.append(invalid("key", key, "; ".join(messages)))
    listed = list(values) if values else None
    if operator in (IN, NOT_IN) and not values:
        errs.append(invalid("values", listed,
                            "for 'in', 'notin' operators, values set can't be empty"))
    elif operator == EQUALS and len(values) != 1:
        errs.append(invalid("values", listed,
                            "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST) and values:
        errs.append(invalid("values", listed,
                            "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(invalid("values", listed,
                                "for 'Gt', 'Lt' operators, exactly one value is required"))
        errs += [invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an "
                         "integer") for i, v in enumerate(values) if parse_go_int(v) is None]
    for i, value in enumerate(values):
        if messages := is_label_value(value):
            errs.append(invalid(f"values[{i}][{key}]", value, "; ".join(messages)))
    unique: dict[str, FieldError] = {}
    for err in errs:
        unique.setdefault(str(err), err)
    return list(unique.values())


def requirement_is_valid(key: str, operator: str, values: Sequence[str]) -> bool:
    """Whether ``labels.NewRequirement`` accepts the requirement (``operator`` an API name:
    In, NotIn, Exists, DoesNotExist, Gt, Lt; any other fails)."""
    op = _API_OPERATORS.get(operator)
    return op is not None and not requirement_errors(key, op, values)


def label_selector_error(selector: LabelSelector | None) -> str | None:
    """The error text of ``metav1.LabelSelectorAsSelector(selector)``, or ``None`` when it
    succeeds: the first failing requirement (``matchLabels`` first, in the order given, where
    Go walks its map in random order; then ``matchExpressions``), its field errors
    aggregated (``[a, b]`` when several)."""
    if selector is None:
        return None
    for key, value in selector.match_labels.items():
        if errs := requirement_errors(key, EQUALS, (value,)):
            return aggregate(map(str, errs))
    for r in selector.match_expressions:
        if r.operator not in _LABEL_SELECTOR_OPERATORS:
            return f"{go_quote(r.operator)} is not a valid label selector operator"
        if errs := requirement_errors(r.key, _API_OPERATORS[r.operator], r.values):
            return aggregate(map(str, errs))
    return None


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
        """Raises ``ValueError`` with :func:`label_selector_error`'s text on an invalid
        selector, as upstream returns that error."""
        if selector is None:
            return cls(nothing=True)
        error = label_selector_error(selector)
        if error is not None:
            raise ValueError(error)
        reqs = [(k, "In", (v,)) for k, v in selector.match_labels.items()]
        reqs += [(r.key, r.operator, tuple(r.values)) for r in selector.match_expressions]
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
