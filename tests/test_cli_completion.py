"""``lorenz completion`` and colour (issue 44 item 7): completion scripts for bash, zsh and fish made from
the parser, bash's run for real; colour on a terminal only, and never under ``NO_COLOR``."""

from __future__ import annotations

import io
import os
import pty
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lorenz.cli.commands import COMMANDS
from lorenz.cli.output import paint

LORENZ = Path(sys.executable).with_name("lorenz")


def _env(**extra: str) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    environ.pop("NO_COLOR", None)
    environ.update({"LORENZ_LOAD_PLUGINS": "lorenz-local", "PATH": f"{LORENZ.parent}{os.pathsep}{environ['PATH']}"})
    return {**environ, **extra}


def script(shell: str) -> str:
    done = subprocess.run([str(LORENZ), "completion", shell], capture_output=True, text=True, env=_env(), check=True)
    return done.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_script_names_every_command_and_asks_for_pack_names(shell: str) -> None:
    text = script(shell)
    for name in COMMANDS:
        assert name in text
    long = "-l " if shell == "fish" else "--"
    assert f"{long}dry-run" in text and f"{long}remove" in text and "claude-desktop" in text
    own = [line for line in text.splitlines() if "completion)" in line or "from completion' -l" in line]
    assert own and not any("names" in line for line in own)  # the scripts' own helper is not offered
    assert "lorenz completion --names packs" in text and "lorenz completion --names tools" in text


def complete(tmp_path: Path, *words: str) -> list[str]:
    """What bash's completion offers for ``words`` (the last one being completed)."""
    program = (
        f'eval "$(lorenz completion bash)"; COMP_WORDS=({" ".join(shlex.quote(w) for w in words)}); '
        f'COMP_CWORD={len(words) - 1}; _lorenz; printf "%s\\n" "${{COMPREPLY[@]}}"'
    )
    done = subprocess.run(
        ["bash", "-c", program], cwd=tmp_path, capture_output=True, text=True, env=_env(), check=True, timeout=60
    )
    return done.stdout.split()


def test_bash_completes_commands_options_packs_and_tools(tmp_path: Path) -> None:
    assert complete(tmp_path, "lorenz", "mo") == ["mount"]
    assert complete(tmp_path, "lorenz", "-v", "comp") == ["completion"]
    assert complete(tmp_path, "lorenz", "connect", "--re") == ["--remove"]
    assert complete(tmp_path, "lorenz", "connect", "claude-") == ["claude-code", "claude-desktop"]
    assert complete(tmp_path, "lorenz", "mount", "loc") == ["local"]
    assert complete(tmp_path, "lorenz", "call", "local_q") == ["local_query"]


def test_colour_only_on_a_terminal_and_not_under_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert paint("x", "red", Terminal()) == "\033[31mx\033[0m"
    assert paint("x", "red", io.StringIO()) == "x"
    monkeypatch.setenv("NO_COLOR", "1")
    assert paint("x", "red", Terminal()) == "x"


@pytest.mark.parametrize(("extra", "coloured"), [({}, True), ({"NO_COLOR": "1"}, False)])
def test_an_error_on_a_terminal_is_red_unless_no_color(tmp_path: Path, extra: dict[str, str], coloured: bool) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [str(LORENZ), "check", "missing.md"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=follower,
            env=_env(TERM="xterm", **extra),
            timeout=60,
            check=False,
        )
        os.close(follower)
        output = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(leader)
    assert done.returncode == 1
    assert output.startswith(b"\033[31mlorenz:\033[0m ") is coloured
    assert b"lorenz:" in output


ZSH_STUBS = """
compdef() { :; }
compadd() { shift; print -l -- "$@"; }
_describe() { print -l -- ${(P)2%%:*}; }
_files() { :; }
"""


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_complete_commands_options_and_packs(tmp_path: Path, shell: str) -> None:
    """zsh's script runs with its completion builtins stubbed to print what they are offered; fish's own
    ``complete -C`` completes a command line as the prompt would."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here (bash's script is run by the test above)")
    path = tmp_path / f"lorenz.{shell}"
    path.write_text(script(shell), encoding="utf-8")
    assert subprocess.run([shell, "-n", str(path)], check=False).returncode == 0
    cases = [
        (("lorenz", "mo"), "mount"),
        (("lorenz", "connect", "--re"), "--remove"),
        (("lorenz", "mount", "lo"), "local"),
    ]
    for words, want in cases:
        if shell == "zsh":
            line = " ".join(shlex.quote(word) for word in words)
            program = f"{ZSH_STUBS}source {shlex.quote(str(path))}; words=({line}); CURRENT={len(words)}; _lorenz"
            argv = ["zsh", "-c", program]
        else:
            argv = ["fish", "-c", f"source {shlex.quote(str(path))}; complete -C {shlex.quote(' '.join(words))}"]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=_env(), check=True, timeout=60)
        offered = [line.split("\t")[0] for line in done.stdout.splitlines()]
        assert [name for name in offered if name.startswith(words[-1])] == [want], (words, done.stdout)
