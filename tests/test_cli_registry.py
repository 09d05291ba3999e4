"""Each ``lorenz`` command is declared once, by the module under ``lorenz/cli/commands/`` that runs it:
the parser, the dispatch, the brief-command list and the suggestion for a misspelled command all come
from :data:`lorenz.cli.commands.COMMANDS`."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from lorenz.cli import commands
from lorenz.cli.command import Command
from lorenz.cli.commands import COMMANDS
from lorenz.cli.parser import build_parser


def test_every_command_module_is_registered_once() -> None:
    modules = [info.name for info in pkgutil.iter_modules(commands.__path__)]
    declared = [importlib.import_module(f"lorenz.cli.commands.{name}").COMMAND for name in modules]
    assert all(isinstance(command, Command) for command in declared)
    assert sorted(command.name for command in declared) == sorted(COMMANDS)
    assert all(COMMANDS[command.name] is command for command in declared)


def test_the_parser_offers_exactly_the_registered_commands(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    for name in COMMANDS:
        assert (
            parser.parse_args(
                [name, "x"]
                if name in ("new-pack", "uninstall", "call", "mount", "unmount", "import")
                else [name, "cursor"]
                if name == "connect"
                else [name]
            ).command
            == name
        )
    with pytest.raises(SystemExit):
        parser.parse_args(["lnt"])
    assert f'did you mean "lint"?) (choose from {", ".join(COMMANDS)})' in capsys.readouterr().err


def test_every_command_has_help_and_examples_of_itself() -> None:
    for command in COMMANDS.values():
        assert command.help and command.description and command.examples
        assert all(
            example.startswith(f"lorenz {command.name}") or "| lorenz " in example for example in command.examples
        )
