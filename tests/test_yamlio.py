"""``ksched.yamlio``: YAML and JSON read as ``sigs.k8s.io/yaml`` (go-yaml v2) and
``encoding/json`` read them, with go-yaml's alias bound and ksched's nesting bound.

The expected values and messages are derived from go-yaml v2's ``resolve.go`` / ``decode.go``,
``sigs.k8s.io/yaml``'s ``convertToJSONableObject`` and ``encoding/json``'s scanner errors."""

from __future__ import annotations

import gzip
import time

import numpy as np
import pytest

from ksched.errors import KschedError
from ksched.yamlio import (
    MAX_DEPTH,
    LoadError,
    allowed_alias_ratio,
    go_format_float,
    is_json,
    load_json,
    load_yaml,
    plain_data,
    read_file,
)


def value(text: str | bytes) -> object:
    (document,) = load_yaml(text)
    return document.value


def refused(call, *args, **kwargs) -> LoadError:
    with pytest.raises(LoadError) as info:
        call(*args, **kwargs)
    assert isinstance(info.value, KschedError)
    return info.value


# =========================================================================== scalars


@pytest.mark.parametrize("text, want", [
    # YAML 1.1 booleans, go-yaml v2's table (y and n included)
    ("yes", True), ("Yes", True), ("on", True), ("y", True), ("Y", True), ("TRUE", True),
    ("no", False), ("off", False), ("n", False), ("False", False), ("yEs", "yEs"),
    # nulls
    ("~", None), ("null", None), ("NULL", None), ("", None), ("nil", "nil"),
    # integers: strconv.ParseInt(s, 0, 64) after removing every "_"
    ("42", 42), ("+12", 12), ("-7", -7), ("0x1F", 31), ("0o17", 15), ("0777", 511),
    ("0b101", 5), ("-0b101", -5), ("1_000", 1000), ("12345678901234567890", 12345678901234567890),
    # floats, printed by json.Marshal: integral values become integers
    ("1e3", 1000), ("1.0", 1), ("2.5", 2.5), (".5", 0.5), ("08", 8), ("-1.5e-3", -0.0015),
    ("99999999999999999999999", 1e23), ("1e400", "1e400"),
    # what go-yaml leaves as strings
    ("1_0.5_", 10.5), ("1:30", "1:30"), ("0x", "0x"), ("+", "+"), ("12abc", "12abc"),
    ("2024-01-02", "2024-01-02"), ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ("'42'", "42"), ('"yes"', "yes"), ("!!str 5", "5"), ("!!float 3", 3), ("!!int 0x10", 16),
    ("!!bool yes", True), ("!!binary aGVsbG8=", "hello"), ("!custom 5", "5"),
    ("!!timestamp 2024-01-02", "2024-01-02"), ("!!null ~", None),
])
def test_scalars_resolve_as_go_yaml_v2(text, want):
    got = value(f"k: {text}\n")["k"]
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("text, message", [
    ("!!int abc", "yaml: cannot decode !!str `abc` as a !!int"),
    ("!!bool 1", "yaml: cannot decode !!int `1` as a !!bool"),
    ("!!null x", "yaml: cannot decode !!str `x` as a !!null"),
    ("!!timestamp soon", "yaml: cannot decode !!str `soon` as a !!timestamp"),
    ("!!binary not*base64", "yaml: !!binary value contains invalid base64 data"),
    (".nan", "json: unsupported value: NaN"),
    (".inf", "json: unsupported value: +Inf"),
    ("-.Inf", "json: unsupported value: -Inf"),
])
def test_scalars_go_refuses(text, message):
    assert str(refused(load_yaml, f"k: {text}\n")) == message


def test_keys_become_strings_and_maps_come_out_sorted():
    got = value("zeta: 1\n1: a\n1.5: b\ntrue: c\ny: d\n0x10: e\n1e3: f\n1e6: g\n")
    assert list(got) == ["1", "1.5", "1000", "16", "1e+06", "true", "zeta"]
    assert got["true"] == "d"  # "true" and "y" are the same bool key; the later one wins


@pytest.mark.parametrize("text, message", [
    ("~: 1\n", "unsupported map key of type: <nil>, key: <nil>, value: 1"),
    ("18446744073709551615: x\n",
     'unsupported map key of type: uint64, key: 0xffffffffffffffff, value: "x"'),
    ("? [1, 2]\n: x\n", "yaml: invalid map key: []interface {}{1, 2}"),
    ('? {a: 1}\n: x\n', 'yaml: invalid map key: map[interface {}]interface {}{"a":1}'),
])
def test_keys_go_refuses(text, message):
    assert str(refused(load_yaml, text)) == message


@pytest.mark.parametrize("number, bits, shown", [
    (1000.0, 32, "1000"), (1.5, 32, "1.5"), (1e6, 32, "1e+06"), (123456.0, 32, "123456"),
    (1234567.0, 64, "1.234567e+06"), (0.0001, 64, "0.0001"), (1e-5, 64, "1e-05"),
    (0.1, 32, "0.1"), (-0.0, 64, "-0"), (3.4e39, 32, "+Inf"), (3.4e39, 64, "3.4e+39"),
])
def test_go_format_float(number, bits, shown):
    assert go_format_float(number, bits) == shown


# =========================================================================== structure


def test_duplicate_keys_keep_the_last_value_and_report_go_yamls_strict_error():
    (document,) = load_yaml("a: 1\nb:\n  c: 2\n  c: 3\na: [4]\n")
    assert document.value == {"a": [4], "b": {"c": 3}}
    assert document.duplicates == ('line 4: key "c" already set in map',
                                   'line 5: key "a" already set in map')


def test_merge_keys():
    (document,) = load_yaml("base: &b {x: 1, z: 2}\nd:\n  <<: [*b, {x: 5, w: 6}]\n"
                            "e:\n  <<: *b\n  z: 3\n")
    assert document.value["d"] == {"w": 6, "x": 1, "z": 2}  # earlier maps win
    assert document.value["e"] == {"x": 1, "z": 3}
    # go-yaml's strict mode counts a key set twice through merges, or overriding a merged one,
    # as a duplicate (the line is the value's)
    assert document.duplicates == ('line 1: key "x" already set in map',
                                   'line 6: key "z" already set in map')


@pytest.mark.parametrize("text", ["<<: 1\n", "<<: [1]\n", "a: &a [1]\n<<: *a\n"])
def test_merge_of_a_non_map(text):
    assert str(refused(load_yaml, text)) == (
        "yaml: map merge requires map or sequence of maps as the value")


def test_anchors_and_aliases():
    assert value("a: &x {k: [1, 2]}\nb: *x\nc: &x 3\nd: *x\n") == {
        "a": {"k": [1, 2]}, "b": {"k": [1, 2]}, "c": 3, "d": 3}
    assert str(refused(load_yaml, "a: *nope\n")) == "yaml: unknown anchor 'nope' referenced"
    assert str(refused(load_yaml, "a: &p [1, *p]\n")) == "yaml: anchor 'p' value contains itself"


def test_aliases_expand_into_independent_copies():
    got = value("a: &x {k: 1}\nb: *x\n")
    got["a"]["k"] = 2
    assert got["b"] == {"k": 1}


def _laughs(levels: int, width: int = 9) -> str:
    text = "a: &a [" + ",".join(["lol"] * width) + "]\n"
    for i in range(1, levels):
        name, prev = chr(ord("a") + i), chr(ord("a") + i - 1)
        text += f"{name}: &{name} [" + ",".join([f"*{prev}"] * width) + "]\n"
    return text


def test_billion_laughs_is_refused_at_once():
    bomb = _laughs(9)
    assert len(bomb) < 400  # 9**9 = 387 million strings once expanded
    started = time.perf_counter()
    assert str(refused(load_yaml, bomb)) == "yaml: document contains excessive aliasing"
    assert time.perf_counter() - started < 1.0


def test_moderate_aliasing_is_allowed():
    assert len(value(_laughs(3))["c"]) == 9  # under 1000 decodes: the ratio does not apply
    many = "a: &a x\n" + "".join(f"k{i}: *a\n" for i in range(2000))
    assert len(value(many)) == 2001  # aliases are 50% of the decodes: well under 99%


@pytest.mark.parametrize("decodes, ratio", [
    (1000, 0.99), (400_000, 0.99), (2_200_000, 0.545), (4_000_000, 0.10), (10**8, 0.10),
])
def test_allowed_alias_ratio(decodes, ratio):
    assert allowed_alias_ratio(decodes) == pytest.approx(ratio)


def _nested_flow(n: int) -> str:
    return "[" * n + "]" * n


def _nested_block(n: int) -> str:
    return "".join("  " * i + f"k{i}:\n" for i in range(n)) + "  " * n + "v\n"


@pytest.mark.parametrize("build", [_nested_flow, _nested_block], ids=["flow", "block"])
def test_nesting_bound(build):
    load_yaml(build(MAX_DEPTH))
    error = refused(load_yaml, build(MAX_DEPTH + 1))
    assert str(error).endswith(f": exceeded max depth of {MAX_DEPTH}")
    assert refused(load_yaml, build(2_000)).line is not None  # no RecursionError


def test_nesting_bound_counts_alias_expansion():
    def chain(n):  # the root map, then x{n} holds n + 1 nested lists
        return "x0: &x0 [1]\n" + "".join(f"x{i + 1}: &x{i + 1} [*x{i}]\n" for i in range(n))

    load_yaml(chain(MAX_DEPTH - 2))
    assert "exceeded max depth of 100" in str(refused(load_yaml, chain(MAX_DEPTH - 1)))


def test_documents():
    stream = "a: 1\n---\nb: 2\n---\n"
    assert [d.value for d in load_yaml(stream, all_documents=True)] == [{"a": 1}, {"b": 2}, None]
    assert [d.value for d in load_yaml(stream)] == [{"a": 1}]  # yaml.Unmarshal: the first
    assert [d.value for d in load_yaml("")] == [None]
    assert [d.value for d in load_yaml("# only a comment\n")] == [None]


# =========================================================================== syntax


@pytest.mark.parametrize("data, message", [
    # go-yaml's parser.fail: scanner errors 1-based, parser errors 0-based, as Go prints them
    ("a:\n  b: 1\n c: 2\n", "yaml: line 2: did not find expected key"),
    ("a: [1, 2\n", "yaml: line 1: did not find expected ',' or ']'"),
    ('a: "abc\n', "yaml: line 2: found unexpected end of stream"),
    ("a: b: c\n", "yaml: mapping values are not allowed in this context"),  # line 0: none
    ("\ta: 1\n", "yaml: found character that cannot start any token"),
    ("a: 1\n\tb: 2\n", "yaml: line 2: found a tab character that violates indentation"),
    # reader errors: go-yaml gives no line; ksched adds it
    (b"a: 1\nb: \xff\n", "yaml: line 2: invalid leading UTF-8 octet"),
    (b"a: \xc3(\n", "yaml: line 1: invalid trailing UTF-8 octet"),
    (b"a: 1\nb: \xc3", "yaml: line 2: incomplete UTF-8 octet sequence"),
    (b"a: \x00\n", "yaml: line 1: control characters are not allowed"),
    (gzip.compress(b"a: 1\n", mtime=0), "(gzip-compressed? name the file *.gz)"),
])
def test_syntax_errors(data, message):
    assert message in str(refused(load_yaml, data))


def test_encodings():
    assert value("a: 1\n".encode("utf-16")) == {"a": 1}
    assert value(b"\xef\xbb\xbfa: 1\n") == {"a": 1}
    assert value("a: \u00e9\n") == {"a": "\u00e9"}


# =========================================================================== JSON


@pytest.mark.parametrize("text, message", [
    ('{"a": 1', "unexpected end of JSON input"),
    ('{"a": "b', "unexpected end of JSON input"),
    ("", "unexpected end of JSON input"),
    ('{"a": x}', "invalid character 'x' looking for beginning of value"),
    ('{"a": NaN}', "invalid character 'N' looking for beginning of value"),
    ('{"a": -Infinity}', "invalid character 'I' in numeric literal"),
    ("{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
    ('{"a" 1}', "invalid character '1' after object key"),
    ('{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
    ('{"a": [1 2]}', "invalid character '2' after array element"),
    ('{"a": 1} x', "invalid character 'x' after top-level value"),
    ('{"a": "\\q"}', "invalid character 'q' in string escape code"),
    ('{"a": "\t"}', "invalid character '\\t' in string literal"),
    ('{"a": ' * 200 + "1" + "}" * 200, f"exceeded max depth of {MAX_DEPTH} at line 1"),
])
def test_json_errors_in_encoding_json_words(text, message):
    assert str(refused(load_json, text)) == message


def test_json():
    assert load_json(b'{"a": [1, 2.5, "\xff"]}') == {"a": [1, 2.5, "\ufffd"]}
    assert load_json('{"s": "[[[[{{{{"}') == {"s": "[[[[{{{{"}
    assert is_json(b"  \n{") and is_json("{}") and not is_json(b"a: {}") and not is_json(b"")


# =========================================================================== files


@pytest.mark.parametrize("name, content, message", [
    ("bad.yaml.gz", b"plain text", "gzip: invalid header"),
    ("truncated.yaml.gz", gzip.compress(b"a: 1\n" * 100, mtime=0)[:-12], "unexpected EOF"),
    ("crc.yaml.gz", gzip.compress(b"a: 1\n", mtime=0)[:-8] + b"\0\0\0\0"
     + gzip.compress(b"a: 1\n", mtime=0)[-4:],
     "gzip: invalid checksum"),
    ("empty.yaml.gz", b"", "gzip: empty file"),
])
def test_read_file_gzip_errors(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    error = str(refused(read_file, path))
    assert error.startswith(f"read {path}: ") and message in error


def test_read_file(tmp_path):
    (tmp_path / "a.yaml.gz").write_bytes(gzip.compress(b"a: 1\n", mtime=0))
    assert read_file(tmp_path / "a.yaml.gz") == b"a: 1\n"
    assert read_file(str(tmp_path / "a.yaml.gz").encode()) == b"a: 1\n"
    assert str(refused(read_file, tmp_path / "no.yaml")) == (
        f"open {tmp_path / 'no.yaml'}: no such file or directory")
    assert str(refused(read_file, tmp_path)) == f"read {tmp_path}: is a directory"
    assert "invalid argument" in str(refused(read_file, "a\0b"))


# =========================================================================== Python data


class Name(str):
    def __str__(self) -> str:
        return "not this"


def test_plain_data_normalises():
    data = {"t": (1, 2), "n": np.int64(3), "f": np.float32(0.5), "b": np.bool_(True),
            "s": Name("x"), Name("k"): None}
    got = plain_data(data)
    assert got == {"t": [1, 2], "n": 3, "f": 0.5, "b": True, "s": "x", "k": None}
    assert [type(v) for v in got.values()] == [list, int, float, bool, str, type(None)]
    assert type(next(iter(reversed(got)))) is str
    shared = [1]
    assert plain_data({"a": shared, "b": shared}) == {"a": [1], "b": [1]}


def _cycle() -> dict:
    d: dict = {"x": []}
    d["x"].append(d)
    return d


def _deep(n: int) -> dict:
    d: dict = {}
    for _ in range(n):
        d = {"x": d}
    return d


def _shared_bomb() -> list:
    x: list = ["lol"]
    for _ in range(9):
        x = [x] * 9
    return x


@pytest.mark.parametrize("obj, message", [
    ({1: "a"}, "map key 1 (int) is not a string"),
    ({"a": {None: 1}}, "a: map key None (NoneType) is not a string"),
    ({"a": [0, float("nan")]}, "a[1]: json: unsupported value: NaN"),
    ({"a": float("-inf")}, "a: json: unsupported value: -Inf"),
    ({"a": {1, 2}}, "a: json: unsupported type: set"),
    ({"a": b"x"}, "a: json: unsupported type: bytes"),
    ({"a": object()}, "a: json: unsupported type: object"),
    (_cycle(), "x[0]: value contains itself"),
    (_deep(5000), f"exceeded max depth of {MAX_DEPTH}"),
    ({"a": _shared_bomb()}, "value contains excessive aliasing"),
])
def test_plain_data_refuses(obj, message):
    assert message in str(refused(plain_data, obj))


@pytest.mark.parametrize("encoded, want", [
    ("4oKs", "\u20ac"),  # UTF-8 as it is
    ("/w==", "\ufffd"),
    ("4oI=", "\ufffd\ufffd"),  # a cut 3-byte sequence: one U+FFFD per byte, as Go's json writes
    ("7aCA", "\ufffd\ufffd\ufffd"),  # an encoded surrogate
    ("QeKCQg==", "A\ufffd\ufffdB"),
])
def test_binary_that_is_no_utf8_reads_as_json_marshal_writes_it(encoded, want):
    assert value(f"k: !!binary {encoded}\n{encoded}: !!binary {encoded}\n") == {
        "k": want, encoded: want}


@pytest.mark.parametrize("text, want", [
    ("!!set {a, b}", {"a": None, "b": None}),  # go-yaml v2: a map of nulls
    ("!!set\n  ? a\n", {"a": None}),
    ("!!omap [a: 1, b: 2]", [{"a": 1}, {"b": 2}]),  # tags on collections are not checked
    ("!!seq {a: 1}", {"a": 1}),
    ("!!set x", "x"),  # an unknown tag on a scalar: the string
])
def test_collection_tags_are_ignored_as_go_yaml_v2_ignores_them(text, want):
    assert value(f"k: {text}\n")["k"] == want
