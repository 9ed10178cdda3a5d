"""The README's two commands, run in order in one fresh environment, leave a working ``ksched``.

``pip install . && ksched demo`` then ``pip install -e ".[test]"``: numba's compiled kernels
must not land in site-packages (a read-only install would fail to cache them, and on a
writable one pip's uninstall, which replaces the first install by the editable one, leaves a
``ksched`` folder of cache files behind that shadows the editable install:
``ImportError: cannot import name 'warmup' from 'ksched' (unknown location)``).

The environment is a virtual environment with ``--system-site-packages`` (numpy, numba, ...
are not installed again); the commands run on a copy of the checkout, and ``ksched demo``
runs from a folder outside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ["demo", "--nodes", "50", "--running", "10", "--pending", "100"]
SNAPSHOT = ('{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node", "metadata": '
            '{"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}, '
            '{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1", '
            '"containers": [{"name": "c", "image": "nginx"}]}}]}')
LOAD = ("import ksched; c = ksched.load_cluster('snapshot.json'); "
        "print(c.num_nodes, len(c.pods))")


def _checkout_files() -> list[str]:
    """The checkout as git sees it: tracked files and new ones it does not ignore."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs git to list the checkout")
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def _copy_checkout(dest: Path) -> Path:
    for name in _checkout_files():
        if name.startswith("tests/conformance/"):  # recorded traces: not needed here
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def _cache_files(folder: Path) -> list[Path]:
    return [p for pattern in ("*.nbi", "*.nbc") for p in folder.rglob(pattern)]


@pytest.mark.slow
def test_readme_install_commands_in_one_environment(tmp_path: Path) -> None:
    src = _copy_checkout(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     tmp_path, os.environ.copy()).stdout.strip())
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               XDG_CACHE_HOME=str(tmp_path / "user-cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "snapshot.json").write_text(SNAPSHOT)

    steps = [["pip", "install", "."], ["pip", "install", "-e", ".[test]"]]
    for step in steps:
        installed = _run([str(python), "-m", *step], src, env)
        if installed.returncode != 0 and "Could not find a version" in installed.stderr:
            pytest.skip("pip cannot reach a package index for the build requirements")
        assert installed.returncode == 0, installed.stderr[-3000:]
        demo = _run([str(bindir / "ksched"), *DEMO], outside, env)
        assert demo.returncode == 0, f"after {' '.join(step)}:\n{demo.stderr[-3000:]}"
        assert "placed 100, unschedulable 0" in demo.stdout, demo.stdout
        loaded = _run([str(python), "-c", LOAD], outside, env)  # the JSON kernel, installed
        assert loaded.stdout.split() == ["1", "1"], loaded.stderr[-3000:]
        assert _cache_files(site) == [], f"numba cache files in {site} after {step}"
    where = _run([str(python), "-c", "import ksched; print(ksched.__file__)"], outside, env)
    assert where.stdout.strip() == str(src / "ksched" / "__init__.py"), where.stderr
    assert not (Path(site) / "ksched").exists()  # nothing of the first install left behind
    assert _cache_files(tmp_path / "user-cache" / "ksched" / "numba")  # cached there instead


@pytest.mark.parametrize(("env", "expected"), [
    ({"NUMBA_CACHE_DIR": "{tmp}/numba-here"}, "{tmp}/numba-here"),
    ({"XDG_CACHE_HOME": "{tmp}/xdg"}, "{tmp}/xdg/ksched/numba"),
    ({"HOME": "{tmp}/home"}, "{tmp}/home/.cache/ksched/numba")])
def test_kernel_cache_folder(tmp_path: Path, env: dict[str, str], expected: str) -> None:
    """``NUMBA_CACHE_DIR`` wins; else the user's cache folder (``XDG_CACHE_HOME``)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    clean.update({k: v.format(tmp=tmp_path) for k, v in env.items()})
    program = "from ksched.kernels._jit import cache_dir; print(cache_dir())"
    out = _run([sys.executable, "-c", program], tmp_path, clean)
    assert out.stdout.strip() == expected.format(tmp=tmp_path), out.stderr
