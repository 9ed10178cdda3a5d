"""Bad files, each refused by ``ksched.read_objects`` / ``load_cluster`` / ``load_pods`` with a
``KschedError`` that names the file (and the line and column where the text is at fault), in a
few milliseconds: non-UTF-8 and binary data, truncated and corrupt JSON, YAML and gzip, alias
bombs, nesting deeper than the decoders allow, missing and unreadable paths, documents that are
no Kubernetes objects; plus fuzzing of the loader with random bytes, JSON and YAML."""

from __future__ import annotations

import gzip
import json
import os
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ksched
from ksched.errors import KschedError
from tests.refusals import refused, time_limit

POD = (b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, '
       b'"spec": {"containers": [{"name": "c"}]}}')


def _bomb(levels: int = 9) -> bytes:
    """The billion laughs in YAML (about 300 bytes; 9**9 strings once expanded)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, levels):
        lines.append(f"a{k}: &a{k} [" + ",".join([f"*a{k - 1}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


def _gzip_with_garbage() -> bytes:
    return gzip.compress(POD) + b"not gzip at all"


#: (id, file name, content, fragment of the message after ``file <path>: ``).
FILES: list[tuple[str, str, bytes, str]] = [
    # ---- encodings and binary data
    ("latin1-yaml", "p.yaml", b"kind: Pod\nmetadata:\n  name: caf\xe9\n",
     "line 3 column 12: not UTF-8 text (byte 0xe9)"),
    ("latin1-json", "p.json", b'{"kind": "Pod",\n "metadata": {"name": "caf\xe9"}}',
     "line 2 column 27: not UTF-8 text (byte 0xe9)"),
    ("latin1-key-json", "p.json", b'{"k\xe9y": 1}',
     "line 1 column 4: not UTF-8 text (byte 0xe9)"),
    ("cp1252-quotes", "p.yaml", b"kind: Pod\nmetadata:\n  name: \x93a\x94\n",
     "line 3 column 9: not UTF-8 text (byte 0x93)"),
    ("nul-byte", "p.yaml", b"kind: Pod\x00\n",
     "line 1 column 10: binary data (a NUL byte), not JSON or YAML text"),
    ("png", "p.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
     "line 3 column 1: binary data (a NUL byte)"),
    ("high-bytes", "p.yaml", bytes(range(1, 256)), "not UTF-8 text (byte 0x80)"),
    ("nul-in-json", "p.json", b'{"kind": \x00}',
     "line 1 column 10: binary data (a NUL byte), not JSON or YAML text"),
    ("bad-utf16", "p.yaml", b"\xff\xfek\x00\x00\xd8", "invalid UTF-16 text at byte 4"),
    ("yaml-control-char", "p.yaml", b"kind: Pod\x07\n",
     "yaml: line 1: control characters are not allowed"),
    # ---- truncated and malformed JSON
    ("json-cut-in-string", "p.json", b'{"kind": "List", "items": [{"kind": "Pod", "metadata": {"na',
     "line 1 column 57: unexpected end of JSON input"),
    ("json-cut-after-value", "p.json", b'{"kind": "Node",',
     "line 1 column 17: unexpected end of JSON input"),
    ("json-cut-in-list", "p.json", b'{"kind": "List", "items": [' + POD + b", ",
     "line 1 column 133: unexpected end of JSON input"),
    ("json-only-bracket", "p.json", b"[", "line 1 column 2: unexpected end of JSON input"),
    ("json-stray-brace", "p.json", b"{}}",
     "line 1 column 3: invalid character '}' looking for beginning of value"),
    ("json-trailing-comma", "p.json", b'{"kind": "Pod",}',
     "line 1 column 16: invalid character '}' looking for beginning of object key string"),
    ("json-missing-comma", "p.json", b'{"kind": "List", "items": [{"a": 1} {"b": 2}]}',
     "line 1 column 37: invalid character '{' after array element"),
    ("json-missing-colon", "p.json", b'{"a" "b"}',
     "line 1 column 6: invalid character '\"' after object key"),
    ("json-single-quotes", "p.json", b"{'a': 1}",
     "line 1 column 2: invalid character '\\'' looking for beginning of object key string"),
    ("json-nan", "p.json", b'{"a": NaN}',
     "line 1 column 7: invalid character 'N' looking for beginning of value"),
    ("json-bad-escape", "p.json", b'{"a": "\\x"}',
     "line 1 column 8: invalid character 'x' in string escape code"),
    ("json-control-char", "p.json", b'{"a": "x\ty"}',
     "line 1 column 9: invalid character '\\t' in string literal"),
    ("json-lone-surrogate", "p.json", b'{"a": "\\ud800"}',
     "line 1 column 8: no low surrogate in string"),
    ("json-infinite-number", "p.json", b'{"kind": "Pod", "spec": {"priority": 1e999}}',
     "line 1 column 38: number is infinity when parsed as double"),
    ("json-bad-item", "p.json", b'{"kind": "List", "items": [' + POD + b', {"a": tru}]}',
     "line 1 column 139: invalid character 't' looking for beginning of value"),
    ("json-stream-garbage", "p.json", POD + b"\nxyz",
     "line 2 column 1: invalid character 'x' looking for beginning of value"),
    ("json-deep", "p.json", b"[" * 5000 + b"]" * 5000,
     "line 1 column 101: exceeded max depth of 100"),
    ("json-deep-in-item", "p.json", b'{"kind": "List", "items": [{"a": ' + b"[" * 3000
     + b"]" * 3000 + b"}]}", "line 1 column 131: exceeded max depth of 100"),
    ("yaml-flow-as-json", "p.yaml", b"{kind: Pod, metadata: {name: a}}",
     "line 1 column 2: invalid character 'k' looking for beginning of object key string"),
    # ---- YAML
    ("yaml-open-quote", "p.yaml", b'kind: Pod\nmetadata:\n  name: "abc\n',
     "yaml: line 4: found unexpected end of stream"),
    ("yaml-open-flow", "p.yaml", b"items: [a, b\n",
     "yaml: line 1: did not find expected ',' or ']'"),
    ("yaml-tabs", "p.yaml", b"kind: Pod\nmetadata:\n\tname: a\n",
     "yaml: line 3: found character that cannot start any token"),
    ("yaml-bad-indent", "p.yaml", b"kind: Pod\n  metadata: x\n",
     "yaml: line 2: mapping values are not allowed in this context"),
    ("yaml-stray-brace", "p.yaml", b"kind: Pod\n}\n", "yaml: line 1: did not find expected key"),
    ("alias-bomb", "p.yaml", _bomb(), "document contains excessive aliasing"),
    ("alias-bomb-in-labels", "p.yaml", b"kind: Pod\nmetadata:\n  name: a\n  labels:\n"
     + b"".join(b"    " + line + b"\n" for line in _bomb().splitlines()),
     "document contains excessive aliasing"),
    ("alias-of-itself", "p.yaml", b"a: &x [1, *x]\n",
     "yaml: anchor 'x' value contains itself"),
    ("alias-unknown", "p.yaml", b"kind: Pod\nmetadata: *m\n",
     "yaml: unknown anchor 'm' referenced"),
    ("yaml-deep-flow", "p.yaml", b"a: " + b"[" * 20000,
     "yaml: line 1: exceeded max depth of 100"),
    ("yaml-deep-block", "p.yaml", b"- " * 20000 + b"x\n",
     "yaml: line 1: exceeded max depth of 100"),
    ("yaml-duplicate-key", "p.yaml", b"kind: Pod\nmetadata:\n  name: a\n  name: b\n",
     'line 4: key "name" already set in map'),
    ("yaml-duplicate-kind", "p.yaml", b"kind: Pod\nkind: Node\n",
     'line 2: key "kind" already set in map'),
    ("yaml-nan", "p.yaml", b"kind: Pod\nspec:\n  priority: .nan\n",
     "json: unsupported value: NaN"),
    ("yaml-inf", "p.yaml", b"a: -.inf\n", "json: unsupported value: -Inf"),
    ("yaml-bad-base64", "p.yaml", b"kind: Pod\nspec: !!binary a$b\n",
     "yaml: !!binary value contains invalid base64 data"),
    ("yaml-wrong-tag", "p.yaml", b"a: !!int abc\n", "cannot decode !!str `abc` as a !!int"),
    ("yaml-list-key", "p.yaml", b"? [a, b]\n: c\n",
     'yaml: invalid map key: []interface {}{"a", "b"}'),
    ("yaml-null-key", "p.yaml", b"~: 1\n", "unsupported map key of type: <nil>, key: <nil>"),
    ("yaml-bad-merge", "p.yaml", b"kind: Pod\n<<: 5\n",
     "yaml: map merge requires map or sequence of maps as the value"),
    ("yaml-merge-list-of-scalars", "p.yaml", b"a: &a 1\nb:\n  <<: [*a]\n",
     "map merge requires map or sequence of maps as the value"),
    # ---- gzip
    ("gzip-corrupt", "p.json.gz", b"\x1f\x8b\x08\x00garbage-garbage", "corrupt gzip data"),
    ("gzip-truncated", "p.json.gz", gzip.compress(POD)[:-12],
     "truncated gzip data: the compressed stream ends before its end marker"),
    ("gzip-trailing-garbage", "p.json.gz", _gzip_with_garbage(),
     "trailing garbage after the gzip data"),
    ("gz-name-not-gzip", "p.json.gz", POD, "not in gzip format (the name ends in .gz)"),
    ("gzip-of-binary", "p.yaml.gz", gzip.compress(b"\x00\x01\x02binary"),
     "binary data (a NUL byte)"),
    ("gzip-of-bad-json", "p.json.gz", gzip.compress(b'{"kind": "Pod",'),
     "line 1 column 16: unexpected end of JSON input"),
    # ---- documents that are no Kubernetes objects
    ("top-level-number", "p.json", b"42", "expected a Kubernetes object, got an integer"),
    ("top-level-string", "p.yaml", b"hello\n", "expected a Kubernetes object, got a string"),
    ("list-of-scalars", "p.yaml", b"- 1\n- 2\n",
     "[0]: expected a Kubernetes object, got an integer"),
    ("nested-list-scalar", "p.json", b"[" + POD + b", [true]]",
     "[1][0]: expected a Kubernetes object, got a boolean"),
    ("list-item-number", "p.json", b'{"kind": "List", "items": [' + POD + b", 7]}",
     "items[1]: expected a Kubernetes object, got an integer"),
    ("list-item-string", "p.json", b'{"kind": "PodList", "items": ["a"]}',
     "items[0]: expected a Kubernetes object, got a string"),
    ("yaml-list-item-null", "p.yaml", b"kind: List\nitems:\n- null\n",
     "items[0]: expected a Kubernetes object, got null"),
    ("kind-a-list", "p.json", b'{"kind": ["Pod"], "metadata": {"name": "a"}}',
     "kind: expected a string, got a list"),
    ("kind-an-object", "p.yaml", b"kind: {a: b}\n", "kind: expected a string, got an object"),
    ("item-kind-a-number", "p.json", b'{"kind": "List", "items": [{"kind": 5}]}',
     "items[0].kind: expected a string, got an integer"),
    ("second-document-scalar", "p.yaml", b"kind: Namespace\nmetadata: {name: a}\n---\n3\n",
     "expected a Kubernetes object, got an integer"),
]


@pytest.mark.parametrize(("name", "content", "match"), [f[1:] for f in FILES],
                         ids=[f[0] for f in FILES])
def test_bad_file_is_refused_naming_the_file(tmp_path: Path, name: str, content: bytes,
                                             match: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    error = refused(ksched.read_objects, path, match=match)
    assert str(error).startswith(f"file {path}: "), str(error)


@pytest.mark.parametrize("load", [ksched.load_cluster, ksched.load_pods, ksched.read_objects],
                         ids=["load_cluster", "load_pods", "read_objects"])
def test_every_loader_refuses_the_alias_bomb_at_once(tmp_path: Path,
                                                     load: Callable[..., object]) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_bytes(_bomb())
    with time_limit(2.0):
        refused(load, path, match=f"file {path}: yaml: document contains excessive aliasing")


# --------------------------------------------------------------------------- paths


def _missing(tmp_path: Path) -> Path:
    return tmp_path / "absent.json"


def _dangling_link(tmp_path: Path) -> Path:
    (tmp_path / "link.yaml").symlink_to(tmp_path / "gone.yaml")
    return tmp_path / "link.yaml"


def _link_loop(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    return tmp_path / "a.yaml"


def _empty_dir(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def _dir_without_manifests(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "README.md").write_text("# not a manifest\n")
    (folder / "sub.yaml").mkdir()  # a folder with a manifest's name is no manifest
    return folder


def _file_under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "plain.yaml").write_bytes(POD)
    return tmp_path / "plain.yaml" / "x.yaml"


PATHS: list[tuple[str, Callable[[Path], Path], str]] = [
    ("missing-file", _missing, "absent.json: no such file or directory"),
    ("dangling-symlink", _dangling_link, "link.yaml: no such file or directory"),
    ("symlink-loop", _link_loop, "a.yaml: too many levels of symbolic links"),
    ("empty-directory", _empty_dir, "empty: no .json, .yaml or .yml files in it"),
    ("directory-without-manifests", _dir_without_manifests,
     "docs: no .json, .yaml or .yml files in it"),
    ("path-through-a-file", _file_under_a_file, "x.yaml: not a directory"),
]


@pytest.mark.parametrize(("make", "match"), [p[1:] for p in PATHS], ids=[p[0] for p in PATHS])
@pytest.mark.parametrize("load", [ksched.load_cluster, ksched.load_pods],
                         ids=["load_cluster", "load_pods"])
def test_bad_path_is_refused(tmp_path: Path, make: Callable[[Path], Path], match: str,
                             load: Callable[..., object]) -> None:
    refused(load, make(tmp_path), match=match)


def test_missing_file_is_also_a_file_not_found_error(tmp_path: Path) -> None:
    error = refused(ksched.read_objects, tmp_path / "absent.yaml",
                    match="no such file or directory")
    assert isinstance(error, FileNotFoundError)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_bytes(POD)
    path.chmod(0)
    refused(ksched.read_objects, path, match=f"file {path}: permission denied")


def test_bad_text_through_a_fifo(tmp_path: Path) -> None:
    """A FIFO is read once, like a pipe; its bad content is refused like a file's."""
    import threading

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"kind: Pod\nmetadata: [\n"))
    writer.start()
    try:
        refused(ksched.read_objects, fifo,
                match=f"file {fifo}: yaml: line 2: did not find expected node content")
    finally:
        writer.join(5)


# --------------------------------------------------------------------------- fuzzing


_FUZZ_CHECKS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def _outcome(path: Path) -> None:
    """Reading ``path`` gives objects or a ``KschedError`` naming its place, in time."""
    with time_limit(5.0):
        try:
            ksched.read_objects(path)
        except KschedError as exc:
            assert str(exc), "an empty message"


@settings(max_examples=150, deadline=None, suppress_health_check=_FUZZ_CHECKS)
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".json", ".yaml", ".json.gz"]))
def test_random_bytes(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") and data[:1] == b"g" else data)
    _outcome(path)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["kind", "items", "metadata", "name", "spec", "apiVersion", "x"]),
        inner, max_size=4),
    max_leaves=20)
_KINDS = st.sampled_from(["Pod", "Node", "List", "PodList", "Namespace", "PriorityClass", "X"])


@settings(max_examples=150, deadline=None, suppress_health_check=_FUZZ_CHECKS)
@given(value=_JSON, kind=_KINDS, cut=st.integers(0, 400), wrap=st.booleans())
def test_random_json(tmp_path: Path, value: object, kind: str, cut: int, wrap: bool) -> None:
    """Random JSON values, as objects of a random kind, as List items, cut short or not."""
    doc = {"kind": kind, "metadata": {"name": "n"}, "spec": value}
    if wrap:
        doc = {"kind": "List", "items": [doc, value]}
    text = json.dumps(doc).encode()
    path = tmp_path / "fuzz.json"
    path.write_bytes(text[:cut] if cut < len(text) else text)
    _outcome(path)


_YAML_ALPHABET = string.ascii_letters[:6] + string.digits[:3] + ":-&*!|>[]{},#'\"\n\t ~.<"


@settings(max_examples=200, deadline=None, suppress_health_check=_FUZZ_CHECKS)
@given(text=st.text(alphabet=_YAML_ALPHABET, max_size=120))
def test_random_yaml(tmp_path: Path, text: str) -> None:
    """Random text made of YAML's indicators (anchors, aliases, tags, flows, blocks)."""
    path = tmp_path / "fuzz.yaml"
    path.write_text("kind: Pod\nmetadata:\n  name: a\nspec:\n  " + text, encoding="utf-8")
    _outcome(path)


# ---- YAML's !!binary and !!set reaching a field: go-yaml v2 decodes !!binary into a string
# (bytes that are no UTF-8 become U+FFFD, as json.Marshal writes them in YAMLToJSON) and !!set
# into a map of nulls; the field's own check then refuses what the API server refuses.
_META = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
_SPEC = "spec:\n  containers: [{name: c}]\n"

TAGGED: list[tuple[str, str, str]] = [
    ("set-as-containers", _META + "spec:\n  containers: !!set {c}\n",
     "pod default/web: spec.containers: expected a list, got an object"),
    ("set-as-ports", _META + "spec:\n  containers: [{name: c, ports: !!set {80}}]\n",
     "pod default/web: spec.containers[0].ports: expected a list, got an object"),
    ("set-as-quantity", _META + "spec:\n  containers: [{name: c, resources: "
     "{requests: {cpu: !!set {1}}}}]\n",
     "pod default/web: spec.containers[0].resources.requests.cpu: expected a quantity, "
     "got an object"),
    ("set-as-api-version", "apiVersion: !!set {v1}\nkind: Pod\nmetadata: {name: web}\n"
     + _SPEC, "pod default/web: apiVersion: expected a string, got an object"),
    ("set-as-annotation", _META + "  annotations: {a: !!set {x}}\n" + _SPEC,
     "pod default/web: metadata.annotations.a: expected a string, got an object"),
    ("binary-not-utf8-label", _META + "  labels: {app: !!binary /w==}\n" + _SPEC,
     'pod default/web: metadata.labels: Invalid value: "\ufffd": a valid label must be'),
    ("binary-not-utf8-name", "apiVersion: v1\nkind: Pod\nmetadata: {name: !!binary /w==}\n"
     + _SPEC, 'pod default/\ufffd: metadata.name: Invalid value: "\ufffd"'),
    ("binary-quantity", _META + "spec:\n  containers: [{name: c, resources: "
     "{requests: {cpu: !!binary MTAwbXg=}}}]\n",
     'spec.containers[0].resources.requests.cpu: invalid quantity "100mx"'),
    ("binary-annotation-key", _META + "  annotations: {!!binary /w==: x}\n" + _SPEC,
     'pod default/web: metadata.annotations: Invalid value: "\ufffd": name part must consist'),
    ("binary-priority-class-label", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
     "metadata: {name: high, labels: {tier: !!binary /w==}}\nvalue: 10\n",
     'priorityclass high: metadata.labels: Invalid value: "\ufffd"'),
    ("binary-pdb-label", "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
     "metadata: {name: pdb, labels: {a: !!set {b}}}\nspec: {minAvailable: 1}\n",
     "poddisruptionbudget default/pdb: metadata.labels.a: expected a string, got an object"),
]


@pytest.mark.parametrize(("text", "match"), [t[1:] for t in TAGGED], ids=[t[0] for t in TAGGED])
def test_yaml_tags_reach_the_fields_own_check(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    refused(ksched.read_objects, path, match=match)


def test_yaml_tags_go_accepts_are_read() -> None:
    """What kubectl sends the API server as a valid pod: a !!binary name that is UTF-8, a
    !!set of labels (empty values), a !!set of annotations, an annotation value of any bytes."""
    text = (b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: !!binary d2Vi\n"
            b"  labels: !!set {app}\n  annotations: {a: !!binary /w==, b: x}\n" + _SPEC.encode())
    (pod,) = ksched.load_pods(text)
    assert (pod.name, dict(pod.labels)) == ("web", {"app": ""})


# ---- bytes are a file's content


@pytest.mark.parametrize("data", [b"", b" \n\t", bytearray()], ids=["empty", "blank", "bytearray"])
@pytest.mark.parametrize("load", [ksched.load_cluster, ksched.load_pods, ksched.read_objects])
def test_empty_bytes_refused(load: Callable, data: bytes) -> None:
    refused(load, data, match="input: empty bytes, no Kubernetes objects (bytes are read as "
                              "a file's content)", error=ksched.ArgumentError)


@pytest.mark.parametrize("load", [ksched.load_cluster, ksched.load_pods, ksched.read_objects])
def test_a_path_given_as_bytes_says_to_pass_a_str(tmp_path: Path, load: Callable) -> None:
    path = tmp_path / "cluster.json"
    path.write_bytes(POD)
    refused(load, os.fsencode(path), error=ksched.ArgumentError,
            match=f"input: bytes are read as a file's content, not as a path; to read the "
                  f"file '{path}', pass its path as a str or pathlib.Path")
