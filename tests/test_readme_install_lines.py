"""The install lines of the plugin and example READMEs work on their own (issue 13): lorenz-core is on no
package index yet, so a ``pip install`` of a plugin from a checkout must install the core in the same
command, before the plugin; a ``lorenz install`` line needs nothing more (lorenz is there)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = sorted([*ROOT.glob("plugins/*/README.md"), *ROOT.glob("examples/*/README.md")])
CORE = {".", "./", str(ROOT)}


def install_commands(readme: Path) -> list[list[str]]:
    """Every ``pip install ...`` and ``lorenz install ...`` command in the README's shell blocks."""
    blocks = re.findall(r"```(?:sh|bash)?\n(.*?)```", readme.read_text(encoding="utf-8"), flags=re.S)
    commands = []
    for line in "\n".join(blocks).splitlines():
        words = shlex.split(line.split("#", 1)[0])
        if words[:2] in (["pip", "install"], ["lorenz", "install"]):
            commands.append(words)
    return commands


@pytest.mark.parametrize("readme", READMES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_install_line_brings_the_core_first(readme: Path) -> None:
    """Each pip line installing a checkout's plugin or example installs the core before it; each README
    also shows the `lorenz install` way."""
    commands = install_commands(readme)
    assert any(words[0] == "lorenz" for words in commands), f"{readme}: no `lorenz install` line"
    for words in commands:
        if words[0] == "lorenz":
            continue
        targets = [word for word in words[2:] if not word.startswith("-") or word == "-e"]
        paths = [word for word in targets if "/" in word or word in CORE]
        plugin_paths = [index for index, word in enumerate(paths) if word not in CORE]
        core_at = next((index for index, word in enumerate(paths) if word in CORE), None)
        assert core_at is not None and all(core_at < index for index in plugin_paths), (
            f"{readme}: `{' '.join(words)}` installs a checkout's plugin without the core first"
        )
