"""Node selector kernels (``component-helpers/scheduling/corev1/nodeaffinity``).

A selector is compiled into a program of terms (ORed) of requirements (ANDed), as CSR arrays:

term_indptr : int64[n_terms + 1] requirement range per term
term_ok : bool[n_terms] False for a term that failed to parse (it matches nothing)
req_ops : int64[n_reqs] one of the ``OP_*`` codes
req_keys : int64[n_reqs] label column (-1: no node has the key); for field ops unused
value_indptr : int64[n_reqs + 1], values : int64[...] value ids (label ops) or node rows (field ops)
req_ints : int64[n_reqs] the parsed bound of ``Gt`` / ``Lt``
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

(OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT, OP_FIELD_IN,
 OP_FIELD_NOT_IN) = range(8)


@jit(inner=True)
def _requirement_matches(labels, label_ints, label_int_ok, node, op, key, values, bound):
    if op == OP_FIELD_IN or op == OP_FIELD_NOT_IN:
        found = False
        for v in values:
            if v == node:
                found = True
        return found if op == OP_FIELD_IN else not found
    value = labels[node, key] if key >= 0 else -1
    present = value >= 0
    if op == OP_EXISTS:
        return present
    if op == OP_DOES_NOT_EXIST:
        return not present
    if op == OP_GT or op == OP_LT:
        if not present or not label_int_ok[node, key]:
            return False
        return label_ints[node, key] > bound if op == OP_GT else label_ints[node, key] < bound
    found = False
    if present:
        for v in values:
            if v == value:
                found = True
    return found if op == OP_IN else not found


@jit(inner=True)
def _term_matches(labels, label_ints, label_int_ok, node, term, term_indptr, req_ops, req_keys,
                  value_indptr, values, req_ints):
    for r in range(term_indptr[term], term_indptr[term + 1]):
        if not _requirement_matches(labels, label_ints, label_int_ok, node, req_ops[r],
                                    req_keys[r], values[value_indptr[r]:value_indptr[r + 1]],
                                    req_ints[r]):
            return False
    return True


@jit
def selector_mask(labels, label_ints, label_int_ok, nodes, term_indptr, term_ok, req_ops,
                  req_keys, value_indptr, values, req_ints):
    """bool[n]: some term of the program matches the node (``NodeSelector.Match``)."""
    out = np.zeros(nodes.shape[0], dtype=np.bool_)
    for i in range(nodes.shape[0]):
        for term in range(term_ok.shape[0]):
            if term_ok[term] and _term_matches(labels, label_ints, label_int_ok, nodes[i], term,
                                               term_indptr, req_ops, req_keys, value_indptr,
                                               values, req_ints):
                out[i] = True
                break
    return out


@jit
def preferred_scores(labels, label_ints, label_int_ok, nodes, term_weights, term_indptr, term_ok,
                     req_ops, req_keys, value_indptr, values, req_ints):
    """int64[n]: the summed weights of the terms that match each node."""
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        for term in range(term_ok.shape[0]):
            if term_ok[term] and _term_matches(labels, label_ints, label_int_ok, nodes[i], term,
                                               term_indptr, req_ops, req_keys, value_indptr,
                                               values, req_ints):
                out[i] += term_weights[term]
    return out
