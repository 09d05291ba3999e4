"""The ``lorenz`` commands, one module each, and :data:`COMMANDS`, the registry the parser, the dispatch
and the suggestion for a misspelled command are built from.

A command's module is imported only when that command runs (or its ``--help`` is asked for): the table
below names each command's module and its line in ``lorenz --help``, so listing the commands imports
none of them. A new command is a module that declares its ``COMMAND`` and one line in :data:`TABLE`."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

from lorenz.cli.command import Command

__all__ = ["COMMANDS", "TABLE"]

#: By name, in the order ``lorenz --help`` lists them: ``(module, its line in lorenz --help)``.
TABLE: dict[str, tuple[str, str]] = {
    "plugins": (".plugins", "list discovered plugins, what they register, and failures (exit 1 if any)"),
    "check": (".check", "parse and validate a workflow"),
    "tools": (".tools", "list the tools a workflow mounts (--all: every installed tool)"),
    "call": (".call", "run one tool in-process and print its result"),
    "issues": (".issues", "list the candidate issues the dispatch tracker hands out now"),
    "serve": (".serve", "serve the mounted tools over MCP (Streamable HTTP at /mcp, or stdio)"),
    "new-pack": (".new_pack", "write a new tool pack project (its own distribution) from a template"),
    "lint": (".lint", "check tool packs: contract, naming, schemas, error contracts, format parity"),
    "install": (".install", "pip install packs into the environment that runs lorenz, and say what they registered"),
    "uninstall": (".uninstall", "pip uninstall packs from the environment that runs lorenz (asks first)"),
    "mount": (".mount", "mount an installed pack: add it to the workflow's tools: map"),
    "unmount": (".unmount", "unmount a pack: remove it from the workflow's tools: map"),
    "import": (
        ".import_config",
        "add the MCP servers of a client's config file (Claude, Cursor, VS Code) to the workflow",
    ),
    "connect": (
        ".connect",
        "write an MCP client's config file to reach this host (claude-code, claude-desktop, cursor, vscode)",
    ),
    "calls": (".calls", "summarise a call log: per tool count, failure rate, p50/p95/max, top errors"),
    "skills": (".skills", "list the mounted packs' skills, or export them into a folder"),
    "completion": (".completion", "print a shell completion script (bash, zsh, fish)"),
}


class _Commands(MutableMapping[str, Command]):
    """Every command by name (iterated in :data:`TABLE`'s order); a command's module loads on first
    lookup. Setting one replaces it (tests stand a fake in)."""

    def __init__(self) -> None:
        self._loaded: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        command = self._loaded.get(name)
        if command is None:
            module, _ = TABLE[name]
            command = importlib.import_module(module, __name__).COMMAND
            self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: Command) -> None:
        if name not in TABLE:
            raise KeyError(name)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]  # forgotten, not removed: the next lookup loads it again

    def __iter__(self) -> Iterator[str]:
        return iter(TABLE)

    def __len__(self) -> int:
        return len(TABLE)


COMMANDS: MutableMapping[str, Command] = _Commands()
