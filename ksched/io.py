"""Kubernetes objects in: files, directories, dicts and kubernetes-client models.

Accepted everywhere a "source" is taken:

- a path to a JSON or YAML file, read as kubectl reads ``-f``: one object, a ``v1 List`` as
  ``kubectl get -o json`` writes it (its items are parsed one at a time, straight from the
  bytes), a stream of JSON values (``jq -c``) or multi-document YAML; the content decides
  (JSON when it starts with ``{`` or ``[``), whatever the name. gzip-compressed files are
  recognised by their first bytes; a UTF-8 or UTF-16 byte-order mark is honoured. A pipe,
  a FIFO or ``/dev/stdin`` is read once. A file with no documents holds no objects.
- a path to a directory: every ``.json``, ``.yaml``, ``.yml`` file in it (optionally
  ``.gz``), sorted by name, not recursively; a directory with none is an error;
- bytes: the content of such a file (empty bytes, or bytes that read as one string, as a
  path given as bytes does, are refused);
- a dict in the wire format, or a list of such dicts;
- kubernetes-client model objects (``V1Node``, ``V1Pod``, ``V1PodList``, ...), and the
  snake_case dicts of their ``to_dict()`` (each read as its kind's model: ``V1<kind>``).

Unreadable input is refused with an :class:`~ksched.errors.InvalidObjectError` that names the
file and, for bad syntax, the line: missing files, unreadable or binary ones, text that is
not UTF-8, truncated or corrupt gzip, invalid JSON or YAML (in Go's words), YAML alias bombs
and nesting deeper than :data:`ksched.yamlio.MAX_DEPTH` (see :mod:`ksched.stream` and
:mod:`ksched.yamlio`). YAML reads as kubectl reads it: go-yaml v2's scalars (``yes`` is true,
timestamps and dates stay strings), a key given twice is refused.
"""

from __future__ import annotations

import contextlib
import errno
import io
import mmap
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ksched.api import ManifestMemo, Node, Pod, PriorityClass
from ksched.api.kinds import check_priority_classes
from ksched.api.schema import FieldChecker, check_fields, has_schema
from ksched.client_wire import is_client_model, to_wire, wire_form
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.gc_pause import collector_paused
from ksched.objects import READ_AS, IgnoredObjectsWarning, Objects, without_orphans
from ksched.stream import PLAIN_VALUES, json_documents, line_column
from ksched.yamlio import LoadError, load_yaml

_SUFFIXES = (".json", ".yaml", ".yml", ".json.gz", ".yaml.gz", ".yml.gz")


class MissingFileError(InvalidObjectError, FileNotFoundError):
    """A path that names nothing (a ``KschedError``, and a ``FileNotFoundError`` too)."""


def read_objects(source: Any) -> Objects:
    """Parse every Node, Pod, Namespace, Service, ReplicaSet, StatefulSet,
    ReplicationController, PriorityClass, PodDisruptionBudget, PersistentVolume,
    PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity,
    DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate of ``source``; other
    kinds are ignored. Pods go through :func:`admit_priorities` with the
    source's PriorityClasses; a pod naming a class the source does not hold is left as it
    is, to be admitted where it meets a cluster that holds it (and refused there when none
    does: :func:`ksched.inputs.admitted`)."""
    found: dict[str, list] = {field.name: [] for field in attrs.fields(Objects)}
    with collector_paused():  # records hold no cycles
        _read_into(source, found)
    found["pods"] = admit_priorities(found["pods"], found["priority_classes"], unknown="keep")
    return Objects(**{field: tuple(items) for field, items in found.items()})


def _read_into(source: Any, found: dict[str, list]) -> None:
    """Every object of ``source`` read into the list of its :class:`Objects` field. Nodes and
    pods parsed from JSON text are read through one :class:`ManifestMemo` (the parts they
    repeat read once); those given as dicts, or read from YAML, afresh; a snake_case dict
    (a client model's ``to_dict()``) is renamed to the wire form first."""
    memo = ManifestMemo()
    nodes, pods = found["nodes"], found["pods"]
    fields = FieldChecker()
    for obj, plain, skeleton in _sourced(source):
        kind = obj.get("kind")
        if not isinstance(kind, str):  # no kind: ignored (a kind of another type: refused)
            continue
        if not plain and (kind in READ_AS or kind in ("Pod", "Node")):
            obj = wire_form(obj, kind)
        fields.check(obj, skeleton)
        if plain:
            if kind == "Pod":
                pods.append(memo.pod(obj))
                continue
            if kind == "Node":
                nodes.append(memo.node(obj))
                continue
        if kind == "Pod":
            pods.append(Pod.from_manifest(obj))
        elif kind == "Node":
            nodes.append(Node.from_manifest(obj))
        elif kind in READ_AS:
            field, read = READ_AS[kind]
            found[field].append(read(obj))


_TYPE_NAMES = {dict: "an object", list: "a list", bool: "a boolean", int: "an integer",
               float: "a number", str: "a string", type(None): "null"}


def _described(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _checked(obj: Mapping[str, Any], where: str, path: str) -> Mapping[str, Any]:
    """``obj``, unless its ``kind`` is missing (apimachinery's ``Object 'Kind' is missing``)
    or no string."""
    kind = obj.get("kind")
    if kind is None:
        hint = (": the kubernetes client's to_dict() leaves it empty; pass the client object "
                "itself" if "api_version" in obj else "")
        raise InvalidObjectError(where, path, f"Object 'Kind' is missing{hint}")
    if not isinstance(kind, str):
        raise InvalidObjectError(where, f"{path}.kind" if path else "kind",
                                 f"expected a string, got {_described(kind)}")
    return obj


#: The classes every API server creates (``pkg/apis/scheduling`` ``SystemPriorityClasses``).
BUILTIN_PRIORITY_CLASSES = (PriorityClass("system-node-critical", 2000001000),
                            PriorityClass("system-cluster-critical", 2000000000))


def admit_priorities(pods: Iterable[Pod], priority_classes: Iterable[PriorityClass], *,
                     unknown: str = "refuse") -> tuple[Pod, ...]:
    """The pods as the Priority admission plugin (plugin/pkg/admission/priority) creates them.

    A pod without ``spec.priority`` takes the value of its ``priorityClassName`` (an unknown
    name is an error) or else of the global default class (two are refused, as is a class
    given twice), else 0; the class's preemption policy applies unless the pod states one.
    Pods that have ``spec.priority`` (or records made with a non-zero ``priority``) were
    admitted already and come back unchanged. ``unknown="keep"`` leaves a pod naming a class
    not given as it is, unadmitted (a pod file read apart from the cluster that holds its
    class: the cluster admits it where they meet).
    """
    return tuple(map(priority_admission(priority_classes, unknown=unknown), pods))


def priority_admission(priority_classes: Iterable[PriorityClass], *,
                       unknown: str = "refuse") -> Callable[[Pod], Pod]:
    """:func:`admit_priorities` for one pod at a time: the classes checked once, here."""
    priority_classes = tuple(priority_classes)
    check_priority_classes(priority_classes)  # one name once, one global default
    classes = {pc.name: pc for pc in BUILTIN_PRIORITY_CLASSES}
    classes.update((pc.name, pc) for pc in priority_classes)
    default = min((pc for pc in classes.values() if pc.global_default),
                  key=lambda pc: pc.value, default=None)
    keep = unknown == "keep"

    def admit(pod: Pod) -> Pod:
        if pod.priority_set or pod.priority or (  # admitted already: as it is
                keep and pod.priority_class_name and pod.priority_class_name not in classes):
            return pod
        return _admit_priority(pod, classes, default)

    return admit


def _admit_priority(pod: Pod, classes: Mapping[str, PriorityClass],
                    default: PriorityClass | None) -> Pod:
    if pod.priority_set or pod.priority:  # a record made with a priority states it
        return pod
    pc = default
    if pod.priority_class_name:
        pc = classes.get(pod.priority_class_name)
        if pc is None:
            raise InvalidObjectError(f"pod {pod.key}", "spec.priorityClassName",
                                     f"no PriorityClass with name {pod.priority_class_name} "
                                     "was found")
    if pc is None:  # priority 0, as it has: the same pod (a batch's classes stay found)
        return pod
    policy = pod.preemption_policy if pod.preemption_policy_set else pc.preemption_policy
    return attrs.evolve(pod, priority=pc.value, priority_class_name=pc.name, priority_set=True,
                        preemption_policy=policy, preemption_policy_set=True)


def iter_manifests(source: Any) -> Iterator[Mapping[str, Any]]:
    """Every object of ``source`` as a wire-format dict, Lists flattened; objects of the
    kinds ksched reads with unknown fields refused (:func:`ksched.api.schema.check_fields`)."""
    fields = FieldChecker()
    for obj, plain, skeleton in _sourced(source):
        kind = obj.get("kind")
        if not plain and isinstance(kind, str) and has_schema(kind):
            fields.check(wire_form(obj, kind), skeleton)  # a snake_case dict as its wire form
        else:
            fields.check(obj, skeleton)
        yield obj


#: An object of a source, whether it holds only the plain values that orjson parses from
#: JSON text (what :class:`ManifestMemo` takes), and its skeleton when it is an item of a
#: JSON List (:class:`~ksched.api.schema.FieldChecker`; ``None`` otherwise).
_Sourced = tuple[Mapping[str, Any], bool, bytes | None]


def _sourced(source: Any) -> Iterator[_Sourced]:
    """:func:`iter_manifests`' objects, each with whether it was parsed from JSON text."""
    if isinstance(source, str | os.PathLike):
        yield from _iter_path(Path(source))
    elif hasattr(source, "read"):  # an open file, sys.stdin(.buffer): read once
        yield from _iter_stream(source)
    elif isinstance(source, bytes | bytearray | memoryview):  # a file's content
        yield from _iter_content(bytes(source))
    elif isinstance(source, Mapping):
        try:
            wire = to_wire(source)
        except RecursionError:
            raise InvalidObjectError("input", "", "nested too deeply") from None
        yield from _given(_flatten(wire))
    elif is_client_model(source):
        wire = to_wire(source)
        kind = _model_kind(source)
        if kind:
            wire["kind"] = kind
        yield from _given(_flatten(wire))
    elif isinstance(source, Iterable):
        for item in source:
            yield from _sourced(item)
    else:
        raise ArgumentError(f"cannot read Kubernetes objects from {type(source).__name__}")


def _iter_content(data: bytes) -> Iterator[_Sourced]:
    """The objects of a file's content given as bytes: refused when empty, or when it reads
    as one string (a path given as bytes, most likely)."""
    if not data.strip():
        raise ArgumentError("input: empty bytes, no Kubernetes objects (bytes are read as a "
                            "file's content)")
    try:
        yield from _iter_stream(io.BytesIO(data))
    except InvalidObjectError as exc:
        if exc.path or exc.problem != "expected a Kubernetes object, got a string":
            raise
        shown = data[:200].decode("utf-8", "replace").strip()
        raise ArgumentError(f"input: bytes are read as a file's content, not as a path; to "
                            f"read the file {shown!r}, pass its path as a str or "
                            "pathlib.Path") from None


def _given(objects: Iterable[Mapping[str, Any]], plain: bool = False) -> Iterator[_Sourced]:
    for obj in objects:
        yield obj, plain, None


def _iter_path(path: Path) -> Iterator[_Sourced]:
    if path.is_dir():
        files = sorted(child for child in path.iterdir()
                       if child.name.endswith(_SUFFIXES) and child.is_file())
        if not files:
            raise InvalidObjectError(f"directory {path}", "",
                                     "no .json, .yaml or .yml files in it")
        for child in files:
            yield from _iter_file(child)
        return
    yield from _iter_file(path)


def _iter_file(path: Path) -> Iterator[_Sourced]:
    """The objects of one file, read once (a pipe or ``/dev/stdin`` works too)."""
    where = f"file {path}"
    with _contents(path, where) as (data, release):
        yield from _iter_data(data, where, release)


def _iter_stream(stream: Any) -> Iterator[_Sourced]:
    """The objects of an open file (binary or text), read once to its end."""
    name = getattr(stream, "name", None)
    where = "standard input" if name in ("<stdin>", 0) else f"file {name}" if name else "input"
    try:
        data = stream.read()
    except OSError as exc:
        raise InvalidObjectError(where, "", (exc.strerror or str(exc)).lower()) from None
    except UnicodeDecodeError as exc:  # a text stream that is not UTF-8
        raise InvalidObjectError(where, "", f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x})"
                                 ) from None
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    yield from _iter_data(_unwrapped(data, where), where, None)


def _iter_data(data: Any, where: str, release: Any) -> Iterator[_Sourced]:
    """The objects of the bytes of one file (plain when JSON text parsed by orjson)."""
    plain = PLAIN_VALUES and _is_json(data)
    for value, items in _documents(data, where, release):
        if items is None:
            yield from _given(_flatten(value, where), plain)
        elif isinstance(value, list):  # a top-level array
            for i, (item, skeleton) in enumerate(items):
                for obj in _flatten(item, where, f"[{i}]"):
                    yield obj, plain, skeleton if obj is item else None
        elif _is_list(value):
            _check_list(value, where)
            yield from _flatten_list(value.get("kind"), items, where, "", plain)
        else:  # an object that has an "items" array but is no List: the object itself
            listed = [item for item, _ in items]
            yield from _given(_flatten({**value, "items": listed}, where), plain)


@contextlib.contextmanager
def _contents(path: Path, where: str) -> Iterator[Any]:
    """The bytes of a file: mapped when it is a regular file, read once otherwise; gzip
    undone (by its magic bytes) and UTF-16 turned into UTF-8."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise _os_error(path, where, exc) from None
    mapped = None
    try:
        info = os.fstat(f.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > 0:
            data = mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        else:
            data = f.read()
    except OSError as exc:
        f.close()
        raise _os_error(path, where, exc) from None
    try:
        if path.name.endswith(".gz") and data[:2] != _GZIP:
            raise InvalidObjectError(where, "", "not in gzip format (the name ends in .gz)")
        data = _unwrapped(data, where)
        if mapped is not None and data is mapped:
            view = memoryview(mapped)
            try:
                yield view, _releaser(mapped)
            finally:
                with contextlib.suppress(BufferError):
                    view.release()
        else:
            yield data, None
    finally:
        if mapped is not None:
            with contextlib.suppress(BufferError):  # a slice still alive: left to the GC
                mapped.close()
        f.close()


def _releaser(mapped: mmap.mmap) -> Any:
    """``release(start, end)``: those bytes are read; the kernel may drop their pages from
    the process (they stay in the page cache), so a large file never counts whole in its
    memory."""
    def release(start: int, end: int) -> None:
        start -= start % mmap.PAGESIZE
        end -= end % mmap.PAGESIZE
        if end > start and hasattr(mapped, "madvise"):
            mapped.madvise(mmap.MADV_DONTNEED, start, end - start)

    return release


_GZIP = b"\x1f\x8b"


def _unwrapped(data: Any, where: str) -> Any:
    """``data`` decompressed when it is gzip (its magic bytes tell) and turned into UTF-8
    when it is UTF-16 (a byte-order mark tells: Windows PowerShell's ``>`` writes it)."""
    if data[:2] == _GZIP:
        data = _gunzip(data, where)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        data = _from_utf16(data, where)
    return data


def _os_error(path: Path, where: str, exc: OSError) -> InvalidObjectError:
    if exc.errno == errno.ENOENT:
        return MissingFileError(str(path), "", "no such file or directory")
    return InvalidObjectError(where, "", (exc.strerror or str(exc)).lower())


def _gunzip(data: Any, where: str) -> bytes:
    """The decompressed bytes of every gzip member of ``data`` (``gzip -c a b`` writes two)."""
    out = []
    while data:
        unpacker = zlib.decompressobj(wbits=31)
        try:
            out.append(unpacker.decompress(data))
        except zlib.error as exc:
            raise InvalidObjectError(where, "", f"corrupt gzip data: {exc}") from None
        if not unpacker.eof:
            raise InvalidObjectError(where, "", "truncated gzip data: the compressed "
                                                "stream ends before its end marker")
        data = unpacker.unused_data.lstrip(b"\x00")  # members may follow (and padding)
        if data and data[:2] != _GZIP:
            raise InvalidObjectError(where, "", "trailing garbage after the gzip data")
    return b"".join(out)


def _from_utf16(data: Any, where: str) -> bytes:
    try:
        return bytes(data).decode("utf-16").encode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidObjectError(where, "", f"invalid UTF-16 text at byte {exc.start}") from None


def _documents(data: Any, where: str,
               release: Any = None) -> Iterator[tuple[Any, Iterator[Any] | None]]:
    """``(value, items)`` per document, as :func:`ksched.stream.json_documents` gives them;
    JSON or YAML as :func:`_is_json` tells."""
    start = _text_start(data)
    if _is_json(data):
        yield from json_documents(data[start:] if start else data, where,
                                  None if start else release, skeletons=True)
        return
    yield from ((doc, None) for doc in _yaml_documents(bytes(data[start:]), where))


def _is_json(data: Any) -> bool:
    """Whether ``data`` is JSON: its text (after a UTF-8 byte-order mark) starts with ``{`` or
    ``[``, as kubectl's decoder guesses; YAML otherwise."""
    return _first_non_space(data, _text_start(data)) in (b"{", b"[")


def _text_start(data: Any) -> int:
    """Where the text of ``data`` starts: after a UTF-8 byte-order mark, if any."""
    return 3 if data[:3] == b"\xef\xbb\xbf" else 0


def _yaml_documents(raw: bytes, where: str) -> list[Any]:
    """The documents of a YAML stream as kubectl reads them (:func:`ksched.yamlio.load_yaml`),
    empty ones left out. A key given twice in one mapping is refused (go-yaml's strict
    decoding), rather than silently keeping the last."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise _binary(where, raw, nul)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = line_column(raw, exc.start)
        raise InvalidObjectError(where, f"line {line} column {column}",
                                 f"not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
    try:
        documents = load_yaml(raw, all_documents=True)
    except LoadError as exc:
        raise InvalidObjectError(where, "", exc.message) from None
    for doc in documents:
        if doc.duplicates:
            raise InvalidObjectError(where, "", doc.duplicates[0])
    return [doc.value for doc in documents if doc.value is not None]


def _binary(where: str, data: Any, pos: int) -> InvalidObjectError:
    line, column = line_column(data, pos)
    return InvalidObjectError(where, f"line {line} column {column}",
                              "binary data (a NUL byte), not JSON or YAML text")


def _first_non_space(data: Any, start: int) -> bytes:
    """The first byte at or after ``start`` that is not JSON whitespace (``b""``: none)."""
    for i in range(start, len(data), 1 << 16):
        block = bytes(data[i:i + (1 << 16)]).lstrip(b" \t\r\n")
        if block:
            return block[:1]
    return b""


def _is_list(obj: Mapping[str, Any]) -> bool:
    """``obj`` is a List (``kind`` absent or ending in ``List``) whose items are objects."""
    kind = obj.get("kind")
    return isinstance(obj.get("items"), list) and (kind is None or str(kind).endswith("List"))


def _flatten(obj: Any, where: str = "input", path: str = "") -> Iterator[Mapping[str, Any]]:
    """Every object of ``obj``: itself, or the items of Lists and lists, depth first (without
    recursion, however deep the lists nest)."""
    stack: list[Iterator[tuple[str, Any]]] = [iter(((path, obj),))]
    while stack:
        for here, item in stack[-1]:
            if isinstance(item, list):
                stack.append((f"{here}[{i}]", x) for i, x in enumerate(item))
                break
            if not isinstance(item, Mapping):
                raise InvalidObjectError(where, here,
                                         f"expected a Kubernetes object, got {_described(item)}")
            if _is_list(item):
                _check_list(item, where, here)
                stack.append(_list_items(item.get("kind"), item["items"], here))
                break
            _check_items(item, where, here)
            yield _checked(item, where, here)
        else:
            stack.pop()


def _flatten_list(kind: Any, items: Iterable[tuple[Any, bytes]], where: str, path: str,
                  plain: bool) -> Iterator[_Sourced]:
    """The objects of a JSON List's ``(item, skeleton)`` pairs."""
    pairs = iter(items)
    skeletons: list[bytes] = []

    def elements() -> Iterator[Any]:
        for item, skeleton in pairs:
            skeletons.append(skeleton)
            yield item

    for here, item in _list_items(kind, elements(), path):
        skeleton = skeletons.pop()
        if isinstance(item, dict) and not _is_list(item):  # the usual item: an object
            yield _checked(item, where, here), plain, skeleton
        else:
            yield from _given(_flatten(item, where, here), plain)


def _check_list(obj: Mapping[str, Any], where: str, path: str = "") -> None:
    """A List's own fields (``apiVersion``, ``kind``, ``metadata``, ``items``) checked."""
    kind = obj.get("kind")
    kind = kind if isinstance(kind, str) and has_schema(kind) else "List"  # PodList, ...
    label = f"{kind} in {where}" + (f" at {path}" if path else "")
    check_fields(obj, kind, label)


def _check_items(obj: Mapping[str, Any], where: str, path: str) -> None:
    """Refuse a List (``kind`` ending in ``List``) whose ``items`` is no list."""
    kind, items = obj.get("kind"), obj.get("items")
    if items is not None and isinstance(kind, str) and kind.endswith("List") \
            and not isinstance(items, list):
        raise InvalidObjectError(f"{kind} in {where}", f"{path}.items" if path else "items",
                                 f"expected a list, got {_described(items)}")


def _list_items(kind: Any, items: Iterable[Any], path: str) -> Iterator[tuple[str, Any]]:
    """The items of a List: client models as wire dicts, and the kind of a typed List
    (``PodList``) given to items that lack one."""
    prefix = f"{path}.items" if path else "items"
    for i, item in enumerate(items):
        if is_client_model(item):
            item = to_wire(item)
        if isinstance(item, Mapping) and "kind" not in item and kind and kind != "List":
            item = {**item, "kind": str(kind).removesuffix("List")}
        yield f"{prefix}[{i}]", item


_MODEL_CLASS = re.compile(r"V\d+(?:(?:alpha|beta)\d+)?(?P<kind>[A-Z]\w*)\Z")


def _model_kind(obj: Any) -> str | None:
    """The kind of a top-level client model that leaves ``kind`` unset (``V1Node`` -> Node)."""
    if "kind" not in obj.attribute_map or getattr(obj, "kind", None):
        return None
    match = _MODEL_CLASS.match(type(obj).__name__)
    return match["kind"] if match else None


__all__ = ["BUILTIN_PRIORITY_CLASSES", "IgnoredObjectsWarning", "MissingFileError", "Objects",
           "admit_priorities", "is_client_model", "iter_manifests", "priority_admission",
           "read_objects", "to_wire", "without_orphans"]
