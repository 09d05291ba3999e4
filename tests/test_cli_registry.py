"""Each ``lorenz`` command is declared once, by the module under ``lorenz/cli/commands/`` that runs it:
the parser, the dispatch, the brief-command list and the suggestion for a misspelled command all come
from :data:`lorenz.cli.commands.COMMANDS`, whose table names each command's module and help line."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from typing import Any

import pytest

from lorenz.cli import commands
from lorenz.cli.command import Command
from lorenz.cli.commands import COMMANDS, TABLE
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
        assert TABLE[command.name][1] and command.description and command.examples
        assert all(
            example.startswith(f"lorenz {command.name}") or "| lorenz " in example for example in command.examples
        )


def test_the_table_names_each_commands_own_module() -> None:
    for name, (module, _) in TABLE.items():
        assert importlib.import_module(module, "lorenz.cli.commands").COMMAND.name == name


@pytest.mark.slow
def test_lorenz_help_lists_every_command_without_importing_one() -> None:
    """``lorenz --help`` prints each command's line from the table; ``lorenz tools --help`` imports the
    ``tools`` module alone, and still shows its examples."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from lorenz.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main(sys.argv[1:])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('lorenz.cli.commands.'))\n"
        "print(json.dumps({'out': out.getvalue(), 'loaded': loaded}))\n"
    )

    def run(*argv: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True)
        report: dict[str, Any] = json.loads(done.stdout)
        return report

    top = run("--help")
    assert top["loaded"] == []
    for name, (_, line) in TABLE.items():
        assert name in top["out"] and line.split()[0] in top["out"]
    tools = run("tools", "--help")
    assert tools["loaded"] == ["lorenz.cli.commands.tools"]
    assert "lorenz tools --all" in tools["out"] and "--json" in tools["out"]
