"""The ``lorenz`` argument parser, built from the command registry: a subparser per command with its
description, examples and the environment variables it reads, global options accepted before or after
the command, and a suggestion for a misspelled command.

A subparser gets its command's arguments, description and examples only when the command line names
it, so that only that command's module is imported."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

from lorenz.settings.suggest import did_you_mean

from .command import Command
from .commands import COMMANDS, TABLE
from .version import VersionAction

__all__ = ["build_parser"]


def _epilog(command: Command) -> str:
    lines = ["examples:", *(f"  {example}" for example in command.examples), "", "environment:"]
    width = max((len(name) for name, _ in command.env), default=0)
    lines += [f"  {name.ljust(width)}  {text}" for name, text in command.env] or ["  none read"]
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """Suggests the closest choice for a misspelled command (``tool`` -> ``tools``), as Python 3.14's
    ``suggest_on_error`` does."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices and isinstance(value, str):
            names = [str(choice) for choice in choices]
            msg = f"invalid choice: {value!r}{did_you_mean(value, names)} (choose from {', '.join(names)})"
            raise argparse.ArgumentError(action, msg)
        super()._check_value(action, value)

    def every_command(self) -> argparse.ArgumentParser:
        """This parser with every command's subparser filled (importing every command): what ``lorenz
        completion`` lists, from the parser it is handed as ``args.parser``."""
        sub = next(action for action in self._actions if isinstance(action, _Commands))
        for name, chosen in sub.choices.items():
            if chosen.epilog is None:
                _fill(chosen, COMMANDS[name])
        return self


def _fill(parser: argparse.ArgumentParser, command: Command) -> None:
    """The named command's subparser: its description, examples, environment and arguments."""
    parser.description = textwrap.fill(command.description, 100)
    parser.epilog = _epilog(command)
    command.arguments(parser)


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]  # argparse's own subparsers action
    """Fills the subparser of the command the line names (:func:`_fill`) before it parses the rest."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        name = values[0] if isinstance(values, Sequence) and values else None
        if isinstance(name, str) and name in TABLE:
            chosen = self._name_parser_map[name]
            if chosen.epilog is None:  # not filled yet
                _fill(chosen, COMMANDS[name])
        super().__call__(parser, namespace, values, option_string)


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``-p``, ``--plugins-dir`` and ``-v``; a subcommand's copies (``suppress``) default to nothing so
    they do not reset a value given before the command."""
    prefix = "sub_" if suppress else ""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "-p",
        "--plugin",
        action="append",
        dest=f"{prefix}plugin",
        default=default([]),
        metavar="MODULE",
        help="also register this plugin module, or .py file, by name or path (repeatable)",
    )
    parser.add_argument(
        "--plugins-dir",
        action="append",
        dest=f"{prefix}plugins_dir",
        default=default([]),
        metavar="DIR",
        help="also register every .py file in DIR as a plugin (repeatable)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        dest=f"{prefix}verbose",
        default=default(False),
        help="show tracebacks (redacted) of failures",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser for every command in :data:`~lorenz.cli.commands.TABLE`; the command's name lands in
    ``args.command``."""
    parser = _Parser(
        prog="lorenz",
        description="Serve tool packs and issue trackers to AI agents over MCP.",
        epilog="lorenz COMMAND --help shows a command's examples and the environment variables it reads.",
    )
    parser.add_argument("--version", action=VersionAction)
    _global_options(parser, suppress=False)
    common = _Parser(add_help=False)
    _global_options(common, suppress=True)
    sub = parser.add_subparsers(action=_Commands, dest="command", required=True, metavar="COMMAND")
    for name, (_, line) in TABLE.items():
        sub.add_parser(name, parents=[common], help=line, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(parser=parser)  # for lorenz completion, which lists every command and option
    return parser
