"""Reading YAML and JSON input as Kubernetes' Go code reads it, with bounds.

kube-scheduler reads ``--config`` and kubectl reads manifests through ``sigs.k8s.io/yaml``:
go-yaml v2 decodes the YAML (YAML 1.1 scalars, merge keys, aliases) into ``interface{}``,
``YAMLToJSON`` turns it into JSON (map keys become strings, maps come out with sorted keys,
integral floats print as integers, NaN and infinities fail) and ``encoding/json`` decodes that.
:func:`load_yaml` gives the same data in one pass over libyaml's events (the parser go-yaml
ports, so syntax errors carry the same words):

- scalars resolve as go-yaml v2's ``resolve`` does (``yes``/``on``/``y`` are booleans, ``1e3`` is a
  number, timestamps and dates stay strings, ``!!binary`` is decoded);
- alias expansion is bounded by go-yaml's own rule (``allowedAliasRatio``): a few hundred bytes of
  nested aliases ("billion laughs") fail with ``yaml: document contains excessive aliasing``
  instead of expanding for hours; an alias inside its own anchor fails as go-yaml fails it;
- nesting deeper than :data:`MAX_DEPTH` collections is refused (go-yaml allows 10000; Python's
  recursion does not, and no Kubernetes object comes near 100);
- duplicate keys are reported in go-yaml's strict wording (``line N: key "x" already set in
  map``), for callers that decode strictly.

:func:`load_json` does the same for JSON text (Go's ``encoding/json`` error words),
:func:`read_file` reads a file (gzip-compressed when named ``*.gz``) with Go's ``os`` error words,
and :func:`plain_data` checks an object built in Python (a dict) the same way: string keys,
JSON values only, bounded nesting, bounded sharing and no cycles.

Every failure is a :class:`LoadError` (a :class:`~ksched.errors.KschedError`).

Layout: :mod:`~ksched.yamlio.files` (files, :class:`LoadError`), :mod:`~ksched.yamlio.gojson`
(``encoding/json``), :mod:`~ksched.yamlio.resolve` (go-yaml's scalars),
:mod:`~ksched.yamlio.decode` (go-yaml's decoder and ``YAMLToJSON``),
:mod:`~ksched.yamlio.plain` (data built in Python).
"""

from __future__ import annotations

from ksched.yamlio.decode import Document, allowed_alias_ratio, load_yaml
from ksched.yamlio.files import MAX_DEPTH, MAX_FILE_BYTES, LoadError, is_json, read_file
from ksched.yamlio.gojson import load_json, quote_char
from ksched.yamlio.plain import plain_data
from ksched.yamlio.resolve import go_format_float

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "Document", "LoadError", "allowed_alias_ratio",
           "go_format_float", "is_json", "load_json", "load_yaml", "plain_data", "quote_char",
           "read_file"]
