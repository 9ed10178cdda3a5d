"""The README's worked examples as data: each ``ksched`` command of a section with the text
block the README shows after it (the tests run the command and compare)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def section_commands(title: str) -> list[tuple[list[str], str]]:
    """The ``ksched`` commands (continuation lines joined, as argv without ``ksched``) of the
    README section headed ``title``, each with the text block shown after it."""
    section = README.read_text().split(title, 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"```bash\n(.*?)```\s*```text\n(.*?)```", section, flags=re.S)
    out = []
    for script, shown in pairs:
        lines = script.replace("\\\n", " ").splitlines()
        command = next(line for line in lines[::-1] if line.startswith("ksched "))
        out.append((shlex.split(command)[1:], shown))
    return out
