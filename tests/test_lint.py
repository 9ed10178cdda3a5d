"""ruff (pyflakes and pycodestyle rules, ``[tool.ruff]`` in pyproject.toml) passes on the
whole tree: CI runs it through this test."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def test_ruff_passes() -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    done = subprocess.run(["ruff", "check", "ksched", "kernels", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_imports_another_modules_private_names() -> None:
    """``from x import _y`` across modules of ksched/ and kernels/ (issue 13's rule)."""
    import ast

    offences = []
    for path in sorted([*ROOT.joinpath("ksched").rglob("*.py"),
                        *ROOT.joinpath("kernels").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                offences += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}"
                             for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
    assert offences == []


def test_no_module_is_longer_than_600_lines() -> None:
    long = [f"{p.relative_to(ROOT)}: {n}" for p in sorted([*ROOT.joinpath("ksched").rglob("*.py"),
                                                          *ROOT.joinpath("kernels").rglob("*.py")])
            if (n := len(p.read_text().splitlines())) > 600]
    assert long == []


def test_the_package_list_names_every_package() -> None:
    """``pip install .`` (not editable) ships only the packages pyproject.toml lists."""
    if sys.version_info < (3, 11):
        pytest.skip("tomllib")
    import tomllib

    listed = set(tomllib.loads(ROOT.joinpath("pyproject.toml").read_text())
                 ["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in ROOT.joinpath("ksched").rglob("__init__.py")}
    assert found - listed == set()


def _import_graph() -> dict[str, set[str]]:
    """Module -> the ksched modules it imports (module level or in a function; not under
    ``if TYPE_CHECKING:``); ``kernels/`` is ``ksched.kernels``."""
    import ast

    files = {}
    for base, prefix in ((ROOT / "ksched", ("ksched",)), (ROOT / "kernels", ("ksched", "kernels"))):
        for path in base.rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            files[".".join(prefix + parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                node.body = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files
                           else node.module for a in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in files and t != name)
    return graph


def test_no_import_cycles() -> None:
    """No module of ksched/ or kernels/ reaches itself through its imports (issue 13)."""
    graph = _import_graph()
    done: set[str] = set()
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        for nxt in sorted(graph[module]):
            if nxt in path:
                cycles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in done:
                visit(nxt, path + [nxt])
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    assert cycles == []
