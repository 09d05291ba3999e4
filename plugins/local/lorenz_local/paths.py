"""The one board-directory resolver, shared by the tracker client and the tool pack.

Both must agree, or an agent's writes would be invisible to polling.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DEFAULT_BOARD_DIR", "env_references", "resolve_board_dir"]

DEFAULT_BOARD_DIR = ".lorenz/local"

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def resolve_board_dir(configured: str | None, *, cwd: str | os.PathLike[str], env: Mapping[str, str]) -> Path:
    """The absolute board directory for a configured ``path``.

    ``$NAME``/``${NAME}`` anywhere are replaced from ``env`` (unknown: empty); then a whole-value
    ``~`` or a leading ``~/`` becomes ``HOME`` (or ``USERPROFILE``); a relative result is joined
    to ``cwd`` and normalised. ``None`` means ``.lorenz/local``.
    """
    value = DEFAULT_BOARD_DIR if configured is None else configured
    value = _ENV_REF.sub(lambda m: env.get(m.group(1) or m.group(2), ""), value)
    home = env.get("HOME") or env.get("USERPROFILE")
    if home:
        if value == "~":
            value = home
        elif value.startswith("~/"):
            value = os.path.join(home, value[2:])
    if os.path.isabs(value):
        return Path(value)
    return Path(os.path.normpath(os.path.join(os.fspath(cwd), value)))


def env_references(configured: str | None) -> tuple[str, ...]:
    """The environment variables resolving ``configured`` reads: its ``$NAME``s, ``HOME`` for ``~``."""
    if configured is None:
        return ()
    names = [m.group(1) or m.group(2) for m in _ENV_REF.finditer(configured)]
    if configured == "~" or configured.startswith("~/"):
        names += ["HOME", "USERPROFILE"]
    return tuple(dict.fromkeys(names))
