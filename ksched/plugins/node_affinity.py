"""NodeAffinity (``plugins/nodeaffinity/node_affinity.go``; matching in component-helpers
``scheduling/corev1/nodeaffinity``).

PreFilter narrows the walk to the nodes named by ``matchFields metadata.name In`` when every
required term has one. Filter requires ``nodeSelector`` and one matching required term (and the
profile's ``addedAffinity``). Score sums the weights of the matching preferred terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs
import numpy as np

from ksched.api import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod
from ksched.api import NodeAffinity as NodeAffinitySpec
from ksched.constants import LABEL_HOSTNAME, MAX_NODE_SCORE
from ksched.framework.capabilities import FilterKind, Normalization, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices, PreFilterResult
from ksched.kernels import node_affinity as kernels
from ksched.kernels import normalize as normalize_kernels
from ksched.labels import requirement_is_valid
from ksched.plugins._helpers import cycle_data
from ksched.state import ClusterState, parse_go_int
from ksched.status import SKIP, SUCCESS, Code, Status, unresolvable

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
_OPS = {"In": kernels.OP_IN, "NotIn": kernels.OP_NOT_IN, "Exists": kernels.OP_EXISTS,
        "DoesNotExist": kernels.OP_DOES_NOT_EXIST, "Gt": kernels.OP_GT, "Lt": kernels.OP_LT}
_NO_NODE = -3


@attrs.frozen
class NodeAffinityArgs:
    """``NodeAffinityArgs``: node affinity the profile adds to every pod."""

    added_affinity: NodeAffinitySpec | None = None


@attrs.frozen(eq=False)
class SelectorProgram:
    """Compiled node-selector terms for :mod:`ksched.kernels.node_affinity`."""

    term_indptr: np.ndarray
    term_ok: np.ndarray
    req_ops: np.ndarray
    req_keys: np.ndarray
    value_indptr: np.ndarray
    values: np.ndarray
    req_ints: np.ndarray
    term_weights: np.ndarray

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.term_indptr, self.term_ok, self.req_ops, self.req_keys, self.value_indptr,
                self.values, self.req_ints)

    def mask(self, state: ClusterState, nodes: NodeIndices) -> np.ndarray:
        return kernels.selector_mask(state.labels, state.label_ints, state.label_int_ok, nodes,
                                     *self.arrays())

    def weights(self, state: ClusterState, nodes: NodeIndices) -> np.ndarray:
        return kernels.preferred_scores(state.labels, state.label_ints, state.label_int_ok, nodes,
                                        self.term_weights, *self.arrays())


def term_is_valid(term: NodeSelectorTerm) -> bool:
    """Whether a term parses (``nodeaffinity.newNodeSelectorTerm``); empty terms never match."""
    if not term.match_expressions and not term.match_fields:
        return False
    if not all(requirement_is_valid(r.key, r.operator, r.values) for r in term.match_expressions):
        return False
    return all(r.operator in ("In", "NotIn") and len(r.values) == 1 for r in term.match_fields)


def compile_terms(terms: Sequence[NodeSelectorTerm], state: ClusterState,
                  weights: Sequence[int] | None = None, validate: bool = True) -> SelectorProgram:
    """Compile terms (ORed) of requirements (ANDed) against the state's interned labels."""
    term_indptr, term_ok, ops, keys, value_indptr, values, ints = [0], [], [], [], [0], [], []
    for term in terms:
        term_ok.append(term_is_valid(term) if validate else True)
        for req in term.match_expressions:
            ops.append(_OPS.get(req.operator, kernels.OP_IN))
            keys.append(state.label_column(req.key))
            values.extend(state.vocab.get(v) for v in req.values)
            bound = parse_go_int(req.values[0]) if len(req.values) == 1 else None
            ints.append(bound if bound is not None else 0)
            value_indptr.append(len(values))
        for req in term.match_fields:
            op, wanted = _field_requirement(req, state)
            ops.append(op)
            keys.append(-1)
            values.extend(wanted)
            ints.append(0)
            value_indptr.append(len(values))
        term_indptr.append(len(ops))
    i64 = np.int64
    return SelectorProgram(
        np.array(term_indptr, i64), np.array(term_ok, np.bool_), np.array(ops, i64),
        np.array(keys, i64), np.array(value_indptr, i64), np.array(values, i64),
        np.array(ints, i64), np.array(weights if weights is not None else [0] * len(terms), i64))


def _field_requirement(req: NodeSelectorRequirement, state: ClusterState) -> tuple[int, list[int]]:
    """A ``matchFields`` requirement as a test on the node row. Only ``metadata.name`` has a
    value; any other field reads as the empty string, so its result is the same everywhere."""
    value = req.values[0] if req.values else ""
    wants_equal = req.operator == "In"
    if req.key == "metadata.name":
        op = kernels.OP_FIELD_IN if wants_equal else kernels.OP_FIELD_NOT_IN
        return op, [state.node_index.get(value, _NO_NODE)]
    always = wants_equal == (value == "")
    return (kernels.OP_FIELD_NOT_IN if always else kernels.OP_FIELD_IN), []


def node_selector_term(selector: Mapping[str, str]) -> NodeSelectorTerm:
    """``spec.nodeSelector`` as one term of ``In`` requirements (not syntax-checked upstream)."""
    return NodeSelectorTerm(tuple(NodeSelectorRequirement(k, "In", (v,))
                                  for k, v in selector.items()))


def required_node_affinity_mask(pod: Pod, state: ClusterState, nodes: NodeIndices) -> np.ndarray:
    """``RequiredNodeAffinity(pod).Match`` over nodes: nodeSelector AND the required terms."""
    mask = np.ones(len(nodes), dtype=np.bool_)
    if pod.node_selector:
        mask &= compile_terms([node_selector_term(pod.node_selector)], state,
                              validate=False).mask(state, nodes)
    required = pod.node_affinity.required if pod.node_affinity else None
    if required is not None:
        mask &= compile_terms(required, state).mask(state, nodes)
    return mask


def _preferred_terms(pod: Pod, added: NodeAffinitySpec | None) -> list | None:
    """The preferred terms that count (weight > 0, non-empty), or ``None`` to skip scoring."""
    own = pod.node_affinity.preferred if pod.node_affinity else None
    extra = added.preferred if added is not None and added.preferred else None
    if own is None and extra is None:
        return None
    return [t for t in (own or ()) + (extra or ())
            if t.weight != 0 and (t.preference.match_expressions or t.preference.match_fields)]


@attrs.frozen
class NodeAffinity:
    NAME: ClassVar[str] = "NodeAffinity"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.DEFAULT
    args: NodeAffinityArgs | None = None

    @property
    def _added(self) -> NodeAffinitySpec | None:
        return self.args.added_affinity if self.args else None

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Nodes of a class differ only in their names and hostname labels: a pod whose
        nodeSelector or terms (or the profile's added affinity) read those is judged node by
        node."""
        if pod.node_selector and LABEL_HOSTNAME in pod.node_selector:
            return False
        terms: list[NodeSelectorTerm] = []
        for affinity in (pod.node_affinity, self._added):
            if affinity is not None:
                terms += list(affinity.required or ())
                terms += [t.preference for t in affinity.preferred or ()]
        return not any(term.match_fields
                       or any(r.key == LABEL_HOSTNAME for r in term.match_expressions)
                       for term in terms)

    def pre_filter(self, cycle: Cycle) -> Status | PreFilterResult | None:
        pod, added = cycle.pod, self._added
        required = pod.node_affinity.required if pod.node_affinity else None
        if required is None and (added is None or added.required is None) \
                and pod.node_selector is None:
            return SKIP
        if not required:
            return None
        names = node_name_subset(required)
        if names is None:
            return None
        if not names:
            return unresolvable(REASON_CONFLICT)
        return PreFilterResult(frozenset(names))

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        state, added = cycle.state, self._added
        codes = np.zeros(len(nodes), dtype=np.int64)
        pod_ok = required_node_affinity_mask(cycle.pod, state, nodes)
        codes[~pod_ok] = 2
        if added is not None and added.required is not None:
            enforced = compile_terms(added.required, state).mask(state, nodes)
            codes[~enforced] = 1
        return FilterResult.from_codes(codes, lambda c: unresolvable(
            REASON_ENFORCED if c == 1 else REASON_POD))

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        terms = _preferred_terms(cycle.pod, self._added)
        if terms is None:
            return SKIP
        if not all(term_is_valid(t.preference) for t in terms):
            return Status(Code.ERROR, ("invalid preferred node affinity term",))
        cycle.data[self.NAME] = compile_terms([t.preference for t in terms], cycle.state,
                                              [t.weight for t in terms])
        return None

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        program = cycle_data(cycle, self.NAME, lambda: compile_terms(
            [t.preference for t in _preferred_terms(cycle.pod, self._added) or ()], cycle.state,
            [t.weight for t in _preferred_terms(cycle.pod, self._added) or ()]))
        return program.weights(cycle.state, nodes)

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        normalize_kernels.default_normalize_score(scores, MAX_NODE_SCORE, False)


def node_name_subset(required: Sequence[NodeSelectorTerm]) -> set[str] | None:
    """Names from ``matchFields metadata.name In``: per term the intersection, over terms the
    union; ``None`` when some term has no such requirement (all nodes)."""
    union: set[str] = set()
    for term in required:
        names: set[str] | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                names = set(req.values) if names is None else names & set(req.values)
        if names is None:
            return None
        union |= names
    return union


# ----------------------------------------------------------------------- reference


def reference_requirement(req: NodeSelectorRequirement, node: Node) -> bool:
    present = req.key in node.labels
    value = node.labels.get(req.key, "")
    if req.operator == "In":
        return present and value in req.values
    if req.operator == "NotIn":
        return not present or value not in req.values
    if req.operator == "Exists":
        return present
    if req.operator == "DoesNotExist":
        return not present
    label, bound = parse_go_int(value), parse_go_int(req.values[0])
    if not present or label is None:
        return False
    return label > bound if req.operator == "Gt" else label < bound


def reference_term(term: NodeSelectorTerm, node: Node, validate: bool = True) -> bool:
    if validate and not term_is_valid(term):
        return False
    fields = {"metadata.name": node.name}
    return (all(reference_requirement(r, node) for r in term.match_expressions)
            and all((fields.get(r.key, "") == r.values[0]) == (r.operator == "In")
                    for r in term.match_fields))


def reference_filter(pod: Pod, node: Node, added: NodeAffinitySpec | None = None) -> Status:
    if added is not None and added.required is not None and not any(
            reference_term(t, node) for t in added.required):
        return unresolvable(REASON_ENFORCED)
    if pod.node_selector and not all(node.labels.get(k) == v and k in node.labels
                                     for k, v in pod.node_selector.items()):
        return unresolvable(REASON_POD)
    required = pod.node_affinity.required if pod.node_affinity else None
    if required is not None and not any(reference_term(t, node) for t in required):
        return unresolvable(REASON_POD)
    return SUCCESS


def reference_score(pod: Pod, node: Node, added: NodeAffinitySpec | None = None) -> int:
    return sum(t.weight for t in _preferred_terms(pod, added) or ()
               if reference_term(t.preference, node))
