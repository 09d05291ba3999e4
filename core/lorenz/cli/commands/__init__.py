"""The ``lorenz`` commands, one module each, and :data:`COMMANDS`, the registry :mod:`lorenz.cli` runs
them from."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from . import call, calls, check, install, issues, lint, new_pack, plugins, serve, skills, tools, uninstall

__all__ = ["COMMANDS"]

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "plugins": plugins.run,
    "check": check.run,
    "tools": tools.run,
    "call": call.run,
    "issues": issues.run,
    "serve": serve.run,
    "new-pack": new_pack.run,
    "lint": lint.run,
    "install": install.run,
    "uninstall": uninstall.run,
    "calls": calls.run,
    "skills": skills.run,
}
