"""``apimachinery/pkg/labels``: requirements, selectors, and the errors of building them.

``labels.NewRequirement`` rejects bad keys, bad values and wrong value counts with field errors
(``key``, ``values``, ``values[0][<key>]``); ``metav1.LabelSelectorAsSelector`` returns the
first failing requirement's errors. Node-affinity terms that fail ``NewRequirement`` match
nothing; pod-affinity and topology-spread selectors that fail report the error text
(:func:`label_selector_error`) as the scheduler's plugins do.

The selector operators (:data:`NODE_SELECTOR_OPERATORS`, :data:`LABEL_SELECTOR_OPERATORS`) and
what each matches (:func:`requirements_match`) are defined here once, for the records, the
manifest reader, the configuration loader and the plugins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ksched.validation import (
    FieldError,
    aggregate,
    child,
    go_quote,
    invalid,
    is_label_key,
    is_label_value,
    parse_go_int,
)

if TYPE_CHECKING:
    from ksched.api import LabelSelector

#: ``selection.Operator`` values (``apimachinery/pkg/selection``).
EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN = (
    "=", "in", "notin", "exists", "!", "gt", "lt")
#: The ``selection.Operator`` of each API operator name (``NodeSelectorOperator``, whose
#: first four are the ``LabelSelectorOperator`` values).
API_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST,
                 "Gt": GREATER_THAN, "Lt": LESS_THAN}
#: ``v1.NodeSelectorOperator`` values, in upstream's order.
NODE_SELECTOR_OPERATORS = tuple(API_OPERATORS)
#: ``metav1.LabelSelectorOperator`` values: the operators ``LabelSelectorAsSelector`` accepts
#: (no Gt / Lt in label selectors).
LABEL_SELECTOR_OPERATORS = NODE_SELECTOR_OPERATORS[:4]


def requirements_match(labels: Mapping[str, str],
                       requirements: Iterable[tuple[str, str, Sequence[str]]]) -> bool:
    """Whether ``labels`` satisfy every ``(key, operator, values)`` requirement
    (``Requirement.Matches`` for the API operators In, NotIn, Exists and DoesNotExist; a
    requirement with another operator constrains nothing here)."""
    for key, op, values in requirements:
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


def requirement_errors(key: str, operator: str, values: Sequence[str] | None,
                       path: str = "") -> list[FieldError]:
    """``labels.NewRequirement(key, operator, values, field.WithPath(path))``'s field errors
    (``operator`` a ``selection.Operator``), deduplicated as ``ErrorList.ToAggregate`` does.
    ``values`` is shown as Go has it: ``None`` for a nil slice (``LabelSelectorAsSelector``
    copies values with ``append``, so an empty list becomes nil there; node selectors pass
    theirs as they are)."""
    errs = []
    if messages := is_label_key(key):
        errs.append(invalid(child(path, "key"), key, "; ".join(messages)))
    vals, values_path = values or (), child(path, "values")
    if operator in (IN, NOT_IN) and not vals:
        errs.append(invalid(values_path, values,
                            "for 'in', 'notin' operators, values set can't be empty"))
    elif operator == EQUALS and len(vals) != 1:
        errs.append(invalid(values_path, values,
                            "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST) and vals:
        errs.append(invalid(values_path, values,
                            "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(invalid(values_path, values,
                                "for 'Gt', 'Lt' operators, exactly one value is required"))
        errs += [invalid(f"{values_path}[{i}]", v, "for 'Gt', 'Lt' operators, the value must "
                         "be an integer") for i, v in enumerate(vals) if parse_go_int(v) is None]
    for i, value in enumerate(vals):
        if messages := is_label_value(value):
            errs.append(invalid(f"{values_path}[{i}][{key}]", value, "; ".join(messages)))
    unique: dict[str, FieldError] = {}
    for err in errs:
        unique.setdefault(str(err), err)
    return list(unique.values())


def requirement_is_valid(key: str, operator: str, values: Sequence[str]) -> bool:
    """Whether ``labels.NewRequirement`` accepts the requirement (``operator`` an API name:
    In, NotIn, Exists, DoesNotExist, Gt, Lt; any other fails)."""
    op = API_OPERATORS.get(operator)
    return op is not None and not requirement_errors(key, op, list(values) or None)


def label_selector_error(selector: LabelSelector | None) -> str | None:
    """The error text of ``metav1.LabelSelectorAsSelector(selector)``, or ``None`` when it
    succeeds: the first failing requirement (``matchLabels`` first, in the order given, where
    Go walks its map in random order; then ``matchExpressions``), its field errors
    aggregated (``[a, b]`` when several)."""
    if selector is None:
        return None
    for key, value in selector.match_labels.items():
        if errs := requirement_errors(key, EQUALS, [value]):
            return aggregate(map(str, errs))
    for r in selector.match_expressions:
        if r.operator not in LABEL_SELECTOR_OPERATORS:
            return f"{go_quote(r.operator)} is not a valid label selector operator"
        if errs := requirement_errors(r.key, API_OPERATORS[r.operator], list(r.values) or None):
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
        return not self.nothing and requirements_match(labels, self.requirements)

    def __repr__(self) -> str:
        return "Selector(Nothing)" if self.nothing else f"Selector({list(self.requirements)})"
