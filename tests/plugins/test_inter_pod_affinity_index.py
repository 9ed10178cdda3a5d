"""The running pods' groups InterPodAffinity reads (``inter_pod_affinity_index``) against a
pass over the pods, on the states a cache goes through as pods come and go, read in any
order (an index extended along one log must not serve a state of another)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched import ClusterState, Container, Node, Pod
from ksched.api import LabelSelector, PodAffinity, PodAffinityTerm
from ksched.cache import Assumer
from ksched.plugins.inter_pod_affinity import has_required_anti_affinity
from ksched.plugins.inter_pod_affinity_index import running_pods

HOST = "kubernetes.io/hostname"


def _anti(app: str) -> PodAffinity:
    return PodAffinity(required=(PodAffinityTerm(HOST, LabelSelector(match_labels={"app": app})),))


SPECS = st.tuples(st.sampled_from(["default", "other"]), st.sampled_from(["web", "db"]),
                  st.sampled_from([None, "web", "db"]), st.sampled_from([None, "db"]))
STEPS = st.lists(st.tuples(st.booleans(), SPECS, st.integers(0, 30)), min_size=1, max_size=40)


def _pod(i: int, spec: tuple) -> Pod:
    namespace, app, anti, affinity = spec
    return Pod(f"p{i}", namespace=namespace, labels={"app": app},
               containers=[Container("c", requests={"cpu": 10})],
               pod_anti_affinity=_anti(anti) if anti else None,
               pod_affinity=_anti(affinity) if affinity else None)


def _expected(state: ClusterState, app: str) -> tuple[list[bool], list[list[int]]]:
    mask = [p.labels.get("app") == app for p in state.pods]
    groups: dict[tuple, list[int]] = {}
    for row in state.affinity_pods:
        pod = state.pods[row]
        if has_required_anti_affinity(pod):
            groups.setdefault((pod.namespace, pod.pod_affinity, pod.pod_anti_affinity),
                              []).append(row)
    return mask, sorted(groups.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS, st.randoms(use_true_random=False))
def test_the_index_of_every_state_matches_a_pass_over_its_pods(steps, random):
    nodes = [Node(f"n{i}", labels={HOST: f"n{i}"}, allocatable={"cpu": 10**6, "pods": 10**4})
             for i in range(3)]
    assumer = Assumer(ClusterState.from_records(nodes, [_pod(-1, ("default", "db", "db", None))]),
                      [])
    states, alive = [], ["default/p-1"]
    for i, (add, spec, pick) in enumerate(steps):
        if add or not alive:
            pod = _pod(i, spec)
            assumer.assume(pod, i % 3)
            alive.append(pod.key)
        else:
            assumer.remove([alive.pop(pick % len(alive))])
        assumer.sync()
        states.append(assumer.state)
        random.shuffle(order := list(range(len(states))))
        for k in order[:3] + [len(states) - 1]:
            state = states[k]
            index = running_pods(state)
            for app in ("web", "db"):
                mask, groups = _expected(state, app)
                got = index.match_mask(lambda p, app=app: p.labels.get("app") == app)
                assert got.tolist() == mask
            kept = index.term_groups(has_required_anti_affinity)
            assert sorted(rows.tolist() for _, rows in kept) == groups
