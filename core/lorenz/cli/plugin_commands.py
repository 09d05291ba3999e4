"""``lorenz <name>`` for the commands plugins register (``lorenz_register_commands``).

Plugins are asked only when the command line names a command Lorenz does not have, or asks for
``lorenz --help``: a built-in command never discovers plugins for this. ``lorenz --help``
lists plugin commands from discovery's survey (a third-party plugin is imported confined, in a
child, as ``lorenz plugins`` does); running one imports the plugins, as any command that uses
them does. A plugin command named like a built-in one is never run.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from lorenz.extensions import PluginCommand
from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.plugins.discovery import discover

from .commands import TABLE
from .output import UsageError
from .parser import _global_options
from .workspace import load_plugin_modules

__all__ = ["help_listing", "run_plugin_command"]


def _globals(argv: Sequence[str]) -> argparse.Namespace:
    """``-p``, ``--plugins-dir`` and ``-v`` as given before the command's word."""
    parser = argparse.ArgumentParser(add_help=False)
    _global_options(parser, suppress=False)
    return parser.parse_known_args(list(argv))[0]


def _commands(argv: Sequence[str], *, unimported: bool) -> list[tuple[PluginCommand, str]]:
    """The plugin commands, each with where it comes from (``acme-tools 1.0``); built-in names left out."""
    discovery = discover(plugins=load_plugin_modules(_globals(argv)), unimported=unimported)
    origins = {
        name: f"{info.distribution} {info.version}" if info.distribution else "in-process"
        for info in discovery.plugins
        for name in info.commands
    }
    return [
        (command, origins.get(command.name.strip(), "?"))
        for command in discovery.commands
        if command.name.strip() not in TABLE
    ]


def run_plugin_command(index: int, argv: Sequence[str]) -> int | None:
    """Run the plugin command ``argv[index]`` names with the arguments after it; ``None`` when no
    plugin has one of that name (the parser then says so)."""
    name = argv[index]
    found = next(((c, o) for c, o in _commands(argv[:index], unimported=False) if c.name.strip() == name), None)
    if found is None:
        return None
    command, origin = found
    owner = f"command {name} ({origin})"
    parser = argparse.ArgumentParser(
        prog=f"lorenz {name}", description=command.description or command.help, epilog=f"from {origin}"
    )
    call_plugin(owner, "arguments", command.arguments, parser)
    args = parser.parse_args(list(argv[index + 1 :]))
    try:
        code = call_plugin(owner, "run", command.run, args)
    except PluginError as exc:
        ended = exc.original
        if isinstance(ended, SystemExit) and (ended.code is None or isinstance(ended.code, int)):
            return ended.code or 0  # sys.exit(n) in a command is its exit status, as in a script
        raise
    if not isinstance(code, int):
        raise UsageError(f"{owner}: run() returned {type(code).__name__}, not an exit status")
    return code


def help_listing(argv: Sequence[str]) -> str:
    """The plugin commands' lines for ``lorenz --help`` (empty when there are none)."""
    found = _commands(argv, unimported=True)
    if not found:
        return ""
    width = max(len(command.name.strip()) for command, _ in found)
    lines = [f"  {command.name.strip().ljust(width)}  {command.help} ({origin})" for command, origin in found]
    return "\n".join(["plugin commands:", *lines])
