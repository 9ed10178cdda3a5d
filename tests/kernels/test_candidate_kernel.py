"""The one candidate choice (``pickOneNodeForPreemption``): ``pick_candidate`` (which the
object-level ``select_candidate`` calls) and the dry run's one-pass ``best_candidate`` against
the plain reference on the same candidates, ties going to the smallest node name."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Container, Pod
from ksched.framework.preemption import Candidate, Victims, select_candidate, start_time
from ksched.plugins.reference.default_preemption import pick_one_node_for_preemption
from ksched.kernels.preemption import CANDIDATE, NO_VICTIMS, best_candidate, pick_candidate

SETTINGS = settings(max_examples=300, deadline=None)

_victims = st.lists(st.tuples(st.sampled_from((-5, 0, 0, 1, 10)),
                              st.sampled_from((None, 1.0, 1.0, 2.0, 7.5))),
                    min_size=1, max_size=4)


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    """Candidates on distinct nodes, their victims most important first (as
    ``SelectVictimsOnNode`` lists them), with few values so that criteria tie often."""
    names = draw(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=6, unique=True))
    out = []
    for name in names:
        victims = [Pod(f"{name}{k}", containers=[Container("c")], priority=p, start_time=t)
                   for k, (p, t) in enumerate(draw(_victims))]
        victims.sort(key=lambda v: (-v.priority, start_time(v)))
        out.append(Candidate(name, tuple(victims), draw(st.sampled_from((0, 0, 1, 2)))))
    return out


def arrays(found: list[Candidate]) -> tuple[np.ndarray, ...]:
    victims = [v for c in found for v in c.victims]
    ends = np.cumsum([len(c.victims) for c in found]).astype(np.int64)
    starts = ends - np.array([len(c.victims) for c in found], dtype=np.int64)
    return (starts, ends, np.array([c.num_pdb_violations for c in found], dtype=np.int64),
            np.array([v.priority for v in victims], dtype=np.int64),
            np.array([start_time(v) for v in victims], dtype=np.float64))


@SETTINGS
@given(candidates())
def test_pick_candidate_is_the_reference(found: list[Candidate]) -> None:
    want, ties = pick_one_node_for_preemption(
        {c.node: Victims(c.victims, c.num_pdb_violations) for c in found})
    assert select_candidate(found)[0].node == want
    starts, ends, violations, priority, start = arrays(found)
    rank = np.argsort(np.argsort([c.node for c in found])).astype(np.int64)
    tied, best = pick_candidate(starts, ends, violations, priority, start, rank)
    assert found[best].node == want
    assert tuple(sorted(c.node for c, t in zip(found, tied) if t)) == ties


@SETTINGS
@given(candidates(), st.data())
def test_best_candidate_is_the_reference_without_pdb_violations(
        found: list[Candidate], data: st.DataObject) -> None:
    found = [Candidate(c.node, c.victims, 0) for c in found]
    kinds = np.array([data.draw(st.sampled_from((CANDIDATE, CANDIDATE, NO_VICTIMS)))
                      for _ in found], dtype=np.int64)
    starts, ends, _, priority, start = arrays(found)
    indptr = np.concatenate([starts[:1], ends]).astype(np.int64)
    nodes = np.arange(len(found), dtype=np.int64)
    rank = np.argsort(np.argsort([c.node for c in found])).astype(np.int64)
    got = best_candidate(len(found), kinds, nodes, indptr, priority, start, rank)
    chosen = [c for c, k in zip(found, kinds) if k == CANDIDATE]
    if not chosen:
        assert got == -1
    else:
        assert found[got].node == pick_one_node_for_preemption(
            {c.node: Victims(c.victims, 0) for c in chosen})[0]
