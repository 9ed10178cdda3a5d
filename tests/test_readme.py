"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_custom_plugin_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(b for b in blocks if "PreferLabelled" in b)
    namespace: dict = {}
    exec(compile(example, str(README), "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["result"].placements[0].node == "fast"
    profile = namespace["config"].profiles[0]
    assert profile.weights["PreferLabelled"] == 5
    assert "PreferLabelled" in profile.plugins["score"]
    assert profile.args["PreferLabelled"] == {"label": "ssd"}
