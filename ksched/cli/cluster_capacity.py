"""``ksched cluster-capacity``: kubernetes-sigs/cluster-capacity's command on ksched's
scheduler. Its flags (``--podspec``, ``--max-limit`` with 0 = unlimited, ``--exclude-nodes``,
``--default-config``, ``--verbose``, ``-o json|yaml``) and its output, field for field
(:mod:`ksched.planning.cluster_capacity`), so that scripts written for it keep working; the
cluster comes from a file (``kubectl get nodes,pods,... -A -o json``) or ``--kubeconfig``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from ksched.cli.common import (
    CONFIG_HELP,
    MAX_PODS,
    PATH,
    SOURCE_HELP,
    STDIN,
    Inputs,
    UsageError,
    comma_list,
    configuration,
    integer,
    live_options,
    named,
)
from ksched.errors import ArgumentError

__all__ = ["add_parser"]


def _podspec(inputs: Inputs, source: str) -> Mapping[str, Any]:
    """The first Pod manifest of ``--podspec`` (cluster-capacity decodes one pod)."""
    from ksched.io import iter_manifests

    data = inputs.stdin_bytes() if source == STDIN else source
    for manifest in iter_manifests(data):
        if manifest.get("kind") == "Pod":
            return manifest
    raise UsageError(f"--podspec {named(source)}: no Pod in it")


def _run(args: argparse.Namespace) -> int:
    import ksched
    from ksched.api import Pod
    from ksched.planning.capacity import capacity
    from ksched.planning.cluster_capacity import (
        review,
        review_json,
        review_text,
        review_yaml,
        template_manifest,
    )

    try:
        config = configuration(args)
    except UsageError as exc:
        raise UsageError(str(exc).replace("--config", "--default-config", 1)) from None
    inputs = Inputs(args)
    manifest = template_manifest(_podspec(inputs, args.podspec))
    template = Pod.from_manifest(manifest)
    cluster = ksched.cluster_from_objects(inputs.objects(args.cluster))
    try:
        report = capacity(cluster, template, max_limit=args.max_limit or None,
                          exclude_nodes=args.exclude_nodes or (), profile=config)
    except ArgumentError as exc:
        raise UsageError(str(exc).replace("max_limit", "--max-limit").replace(
            "exclude_nodes", "--exclude-nodes")) from None
    data = review(report, [manifest], args.max_limit)
    writers = {"json": review_json, "yaml": review_yaml}
    text = writers[args.output](data) if args.output else review_text(data, args.verbose)
    sys.stdout.write(text)
    return 0


def add_parser(sub: Any) -> None:
    """The ``cluster-capacity`` parser, on ``sub`` (argparse's subparsers)."""
    p = sub.add_parser(
        "cluster-capacity",
        help="cluster-capacity's command and output: how many copies of one pod fit",
        description="kubernetes-sigs/cluster-capacity on ksched: copies of the --podspec pod "
                    "(named <name>-<k>) are scheduled one after another until the first that "
                    "does not fit (its condition message is the termination reason) or "
                    "--max-limit; the output is cluster-capacity's, field for field.")
    p.add_argument("cluster", type=PATH,
                   help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("--podspec", type=PATH, required=True,
                   help="JSON or YAML file with the pod definition (its first Pod)")
    p.add_argument("--max-limit", type=integer(0, MAX_PODS), default=0,
                   help="number of instances of the pod after which the analysis stops "
                        "(default 0: unlimited)")
    p.add_argument("--exclude-nodes", type=comma_list, default=None,
                   help="comma-separated node names to leave out (with their pods)")
    p.add_argument("--default-config", dest="config", type=PATH,
                   help=f"scheduler configuration: {CONFIG_HELP}")
    p.add_argument("--verbose", action="store_true",
                   help="the requirements, the termination reason and the pods per node")
    p.add_argument("-o", "--output", choices=("json", "yaml"), default=None,
                   help="output format: json or yaml (default: text)")
    p.set_defaults(func=_run)
