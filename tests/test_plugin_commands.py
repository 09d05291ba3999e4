"""``lorenz_register_commands``: ``lorenz <name>`` runs a plugin's command, ``lorenz --help`` lists
it with its distribution, a failing one is one line, a built-in name stays the built-in's."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorenz.cli import main

PLUGIN = """
from lorenz import PluginCommand, hookimpl


def arguments(parser):
    parser.add_argument("who")
    parser.add_argument("--loud", action="store_true")


def hello(args):
    import json  # a command imports what it needs when it runs

    print(json.dumps({"hello": args.who.upper() if args.loud else args.who}))
    return 3


def broken(args):
    raise ValueError("the command broke")


def leaves(args):
    import sys

    sys.exit(4)


def impostor(args):
    print("IMPOSTOR")
    return 0


@hookimpl
def lorenz_register_commands(register):
    register(PluginCommand(name="hello", help="say hello to someone", run=hello, arguments=arguments))
    register(PluginCommand(name="broken", help="always fails", run=broken))
    register(PluginCommand(name="plugins", help="takes a built-in name", run=impostor))
    register(PluginCommand(name="leave", help="exits with 4", run=leaves))
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "lorenz_hello.py"
    path.write_text(PLUGIN, encoding="utf-8")
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    yield path
    sys.modules.pop("lorenz_hello", None)  # -p imports it by name: the next test's file is another


def test_a_plugin_command_runs_with_its_arguments(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-p", str(plugin), "hello", "ada", "--loud"]) == 3
    assert capsys.readouterr().out == '{"hello": "ADA"}\n'


def test_lorenz_help_lists_plugin_commands(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["-p", str(plugin), "--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert "plugin commands:" in out and "hello   say hello to someone (in-process)" in out
    assert "takes a built-in name" not in out


def test_a_command_s_own_help(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["-p", str(plugin), "hello", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: lorenz hello [-h] [--loud] who") and "from in-process" in out


def test_a_failing_command_is_one_line(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-p", str(plugin), "broken"]) == 1
    err = capsys.readouterr().err
    assert "command broken (in-process): run raised ValueError: the command broke" in err
    assert "Traceback" not in err


def test_sys_exit_in_a_command_is_its_status(plugin: Path) -> None:
    assert main(["-p", str(plugin), "leave"]) == 4


def test_a_built_in_name_stays_the_built_in(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["-p", str(plugin), "plugins"])
    assert "IMPOSTOR" not in capsys.readouterr().out


def test_an_unknown_command_is_still_refused(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["-p", str(plugin), "helo"])
    assert exited.value.code == 2 and "invalid choice: 'helo'" in capsys.readouterr().err


@pytest.mark.slow
def test_an_installed_distribution_s_command(tmp_path: Path) -> None:
    """Through the ``lorenz.tool_packs`` entry point of a distribution the test builds: ``--help``
    lists it (surveyed, as ``lorenz plugins`` does) with its distribution, and it runs."""
    site = tmp_path / "site"
    info = site / "lorenz_hello-0.1.0.dist-info"
    info.mkdir(parents=True)
    (site / "lorenz_hello.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-hello\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nhello = lorenz_hello\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(
        LORENZ_LOAD_PLUGINS="lorenz-hello",
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )

    def lorenz(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "lorenz", *args]
        return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    listed = lorenz("--help")
    assert listed.returncode == 0, listed.stderr
    assert "hello   say hello to someone (lorenz-hello 0.1.0)" in listed.stdout
    ran = lorenz("hello", "grace")
    assert (ran.returncode, ran.stdout) == (3, '{"hello": "grace"}\n'), ran.stderr
