"""``lorenz --version``: the core, the interpreter, and every installed plugin distribution."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lorenz
from lorenz.plugins.checks import normalize_distribution

__all__ = ["VersionAction", "version_text"]


def version_text() -> str:
    """``lorenz --version``: the core, the interpreter, and every installed plugin distribution with its
    version (read from metadata, nothing imported), like ``pytest -VV``."""
    from .distributions import installed, left_out  # importlib.metadata: only lorenz --version reads it

    home = Path(lorenz.__file__).resolve().parent
    lines = [f"lorenz {lorenz.__version__} from {home} (Python {sys.version.split()[0]})"]
    plugins = sorted((d for d in installed().values() if d.entry_points), key=lambda d: normalize_distribution(d.name))
    if not plugins:
        lines.append("installed plugins: none (lorenz install NAME adds one)")
        return "\n".join(lines)
    lines.append("installed plugins:")
    for dist in plugins:
        reason = left_out(normalize_distribution(dist.name))
        lines.append(f"  {dist.label}: {', '.join(dist.entry_points)}" + (f" ({reason})" if reason else ""))
    return "\n".join(lines)


class VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` and exit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version, the Python and every installed plugin")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_text())
        parser.exit()
