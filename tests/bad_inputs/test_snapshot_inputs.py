"""Issue 22, second round: hostile values that used to end in a raw traceback, and snapshots as
they come (pods on a node being deleted, pending pods) accepted with a warning saying what
was left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ksched
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.io import read_objects
from ksched.loading import IgnoredObjectsWarning

BIG = "1" * 5000
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str = "") -> dict:
    spec = {"containers": [{"name": "c"}], **({"nodeName": node} if node else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_json_integer_of_5000_digits_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "node.json"
    path.write_text('{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"},\n'
                    f' "status": {{"capacity": {{"pods": {BIG}}}}}}}\n')
    with pytest.raises(InvalidObjectError, match=r"line 2 column \d+: json: cannot unmarshal "
                                                 r"number 1{12}\.\.\.1111 \(5000 digits\)"):
        ksched.load_cluster(path)


def test_yaml_integer_of_5000_digits_is_a_string_as_in_go_yaml() -> None:
    text = f"kind: Node\nmetadata: {{name: nn}}\nstatus: {{capacity: {{pods: {BIG}}}}}\n"
    with pytest.raises(InvalidObjectError, match=r"node nn: status.capacity.pods: "):
        read_objects(text.encode())


def test_load_live_with_a_number_refused() -> None:
    from ksched.live import load_live

    with pytest.raises(ArgumentError, match="kubeconfig: must be a path or None, not int 5"):
        load_live(5)


@pytest.mark.parametrize("items, shown", [({}, "an object"), ("x", "a string"), (3, "an integer")])
def test_list_items_that_are_no_list_refused(items: object, shown: str) -> None:
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()
    with pytest.raises(InvalidObjectError, match=f"List in input: items: expected a list, "
                                                 f"got {shown}"):
        read_objects(data)


def test_pod_on_a_node_not_in_the_snapshot_left_out_with_a_warning() -> None:
    snapshot = {"kind": "List", "items": [NODE, _pod("a", "n1"), _pod("b", "gone")]}
    with pytest.warns(IgnoredObjectsWarning, match=r'1 pod\(s\) bound to 1 node\(s\) not in '
                                                   r'the snapshot \("gone"; first pod '
                                                   r"default/b\) left out"):
        cluster = ksched.load_cluster(snapshot)
    assert len(cluster.pods) == 1


def test_pending_pods_of_a_snapshot_are_counted_in_a_warning() -> None:
    snapshot = {"kind": "List", "items": [NODE, _pod("a"), _pod("b")]}
    with pytest.warns(IgnoredObjectsWarning, match=r"2 pending pod\(s\) .* ksched.load_pods"):
        cluster = ksched.load_cluster(snapshot)
    assert len(cluster.pods) == 0


def test_cli_says_what_was_left_out(tmp_path: Path, capsys) -> None:
    from ksched.cli import main

    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"kind": "List", "items": [NODE, _pod("b", "gone"),
                                                          _pod("p")]}))
    assert main(["schedule", str(path)]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warned == ['ksched: warning: 1 pod(s) bound to 1 node(s) not in the snapshot '
                      '("gone"; first pod default/b) left out, as the scheduler\'s cache '
                      'ignores them']
