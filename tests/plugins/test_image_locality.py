"""ImageLocality: the kernel path (plugin over a Cycle) against ``reference_score`` per node."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from ksched.api import Container, ContainerImage, Node, Pod
from ksched.constants import IMAGE_MAX_CONTAINER_THRESHOLD, IMAGE_MIN_THRESHOLD, MB
from ksched.plugins.image_locality import ImageLocality, normalized_image_name, reference_score
from tests.strategies import Scenario, build_scenario, scenarios

SETTINGS = settings(max_examples=60, deadline=None)
PLUGIN = ImageLocality()


def image_states(nodes: list[Node] | tuple[Node, ...]) -> dict[str, tuple[int, int]]:
    """Per image name: (size of the first node that lists it, number of nodes listing it),
    as the scheduler cache's ``addNodeImageStates`` keeps them."""
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for node in nodes:
        for image in node.images:
            for name in image.names:
                sizes.setdefault(name, image.size_bytes)
        for name in {n for image in node.images for n in image.names}:
            counts[name] = counts.get(name, 0) + 1
    return {name: (sizes[name], counts[name]) for name in sizes}


def check(s: Scenario) -> list[int]:
    # The state's image summaries are what the reference reads; check them from the records.
    state = s.state
    want = image_states(s.nodes)
    got = {name: (int(state.image_sizes[i]), int(state.image_num_nodes[i]))
           for name, i in state.image_index.items()}
    assert got == want
    raw = PLUGIN.score(s.cycle(), s.indices)
    assert raw.dtype == np.int64
    expected = [reference_score(s.pod, n, state) for n in s.nodes]
    assert raw.tolist() == expected
    assert all(0 <= v <= 100 for v in expected)
    return expected


@SETTINGS
@given(scenarios(spread=False, max_pods=2))
def test_kernel_matches_reference(s: Scenario) -> None:
    check(s)


# --------------------------------------------------------------------------- edge cases


def _pod(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod("p", containers=[Container(f"c{i}", image=im) for i, im in enumerate(images)],
               init_containers=[Container(f"i{i}", image=im) for i, im in enumerate(init)])


def _node(name: str, *images: tuple[tuple[str, ...], int]) -> Node:
    return Node(name, images=[ContainerImage(names, size) for names, size in images])


def test_no_images_anywhere() -> None:
    s = build_scenario([Node("a"), Node("b")], [], _pod("nginx"))
    assert check(s) == [0, 0]


def test_normalized_image_names() -> None:
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("reg:5000/app") == "reg:5000/app:latest"
    assert normalized_image_name("reg:5000/app:1") == "reg:5000/app:1"
    assert normalized_image_name("gcr.io/x/y@sha256:abc") == "gcr.io/x/y@sha256:abc"


def test_spread_scales_the_size() -> None:
    big = (("nginx:latest",), 500 * MB)
    nodes = [_node("a", big), _node("b", big), _node("c"), _node("d")]
    scores = check(build_scenario(nodes, [], _pod("nginx")))
    # 500MB * 2/4 = 250MB -> 100 * (250 - 23) / (1000 - 23) = 23.
    assert scores == [23, 23, 0, 0]
    total = 250 * MB
    assert scores[0] == 100 * (total - IMAGE_MIN_THRESHOLD) // (
        IMAGE_MAX_CONTAINER_THRESHOLD - IMAGE_MIN_THRESHOLD)


def test_first_reported_size_wins_and_duplicates_count_twice() -> None:
    nodes = [_node("a", (("redis:7",), 800 * MB)), _node("b", (("redis:7",), 100 * MB))]
    # Both nodes use 800MB (the first node's size); the image counts once per container:
    # 1600MB of a 3-container maximum of 3000MB -> 100 * (1600 - 23) / (3000 - 23) = 52.
    assert check(build_scenario(nodes, [], _pod("redis:7", "redis:7", init=("busybox",)))) == [
        52, 52]


def test_clamped_at_the_thresholds() -> None:
    nodes = [_node("a", (("huge:1",), 5000 * MB)), _node("b", (("tiny:1",), 10 * MB))]
    assert check(build_scenario(nodes, [], _pod("huge:1", "tiny:1"))) == [100, 0]
