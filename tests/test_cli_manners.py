"""The ``lorenz`` command's manners (issue 13), each through the installed script in a subprocess: a pipe
closed early, ``-p`` of an installed module or a path, ``--plugins-dir``, ``-v``, suggestions, help texts,
``--version``, installed-but-unmounted tools, and the progress line on a terminal only."""

from __future__ import annotations

import os
import pty
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Lorenz = Callable[..., subprocess.CompletedProcess[str]]


def test_a_closed_stdout_is_no_traceback(lorenz: Lorenz) -> None:
    """`lorenz tools | head -1` style: the reader is gone before the output is written; no BrokenPipeError
    traceback, and the shell's SIGPIPE status (141)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read: the first write gets EPIPE
    try:
        done = lorenz("tools", "--all", stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141


def test_p_of_an_installed_module_is_a_note(lorenz: Lorenz) -> None:
    """`-p lorenz_acme` for the installed acme says so and uses the installed plugin once; left out of
    LORENZ_LOAD_PLUGINS, the same `-p` registers the module in-process, without the note."""
    done = lorenz("-p", "lorenz_acme", "tools")
    assert done.returncode == 0, done.stderr
    note = "lorenz: -p lorenz_acme: already installed (lorenz-acme 0.1.0); using the installed plugin"
    assert note in done.stderr.splitlines()
    assert done.stdout.count("acme_echo") == 1
    alone = lorenz("tools", "-p", "lorenz_acme", env={"LORENZ_LOAD_PLUGINS": ""})
    assert alone.returncode == 0, alone.stderr
    assert "already installed" not in alone.stderr
    assert "acme_echo" in alone.stdout


PATH_PACK = """
from lorenz import ToolSpec, hookimpl, tool_success


class {cls}:
    name = "{name}"

    def tool_specs(self, settings):
        return [ToolSpec(name="{name}_hello", description="Say hello.")]

    async def execute_tool(self, name, input, context):
        return tool_success({{"hello": "{name}"}})


@hookimpl
def lorenz_register_tool_packs(register):
    register({cls}())
"""


def _pack_file(path: Path, name: str) -> Path:
    path.write_text(PATH_PACK.format(cls=name.capitalize() + "Pack", name=name), encoding="utf-8")
    return path


def test_p_accepts_a_py_path_and_a_package_module_path(lorenz: Lorenz, tmp_path: Path) -> None:
    """`-p path/to/file.py` registers a lone file, and a package's module by path keeps its relative imports."""
    lone = _pack_file(tmp_path / "lone_pack.py", "lone")
    package = tmp_path / "src" / "lorenz_rel"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    _pack_file(package / "pack.py", "rel")
    (package / "plugin.py").write_text("from .pack import lorenz_register_tool_packs  # noqa: F401\n")
    (tmp_path / "work" / "WORKFLOW.md").write_text("---\ntracker: {kind: acme}\ntools: {lone: {}, rel: {}}\n---\n")
    done = lorenz("-p", str(lone), "call", "lone_hello", "-p", str(package / "plugin.py"))
    assert done.returncode == 0, done.stderr
    assert '"hello": "lone"' in done.stdout
    listed = lorenz("tools", "-p", str(lone), "-p", str(package / "plugin.py"))
    assert "rel_hello" in listed.stdout
    missing = lorenz("-p", str(tmp_path / "nope.py"), "tools")
    assert missing.returncode == 1
    assert "cannot import plugin module" in missing.stderr and "not a .py file" in missing.stderr


def test_plugins_dir_loads_every_py_file(lorenz: Lorenz, tmp_path: Path) -> None:
    """`--plugins-dir DIR` registers each .py file of DIR, before or after the command."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    _pack_file(folder / "first.py", "first")
    _pack_file(folder / "second.py", "second")
    (folder / "notes.txt").write_text("not a plugin", encoding="utf-8")
    done = lorenz("plugins", "--plugins-dir", str(folder))
    assert "first (in-process): trackers: -; packs: first" in done.stdout
    assert "second (in-process): trackers: -; packs: second" in done.stdout
    assert "second_hello" in lorenz("--plugins-dir", str(folder), "tools", "--all").stdout
    bad = lorenz("--plugins-dir", str(tmp_path / "nowhere"), "plugins")
    assert bad.returncode == 1
    assert f"lorenz: --plugins-dir: {tmp_path / 'nowhere'}: not a directory" in bad.stderr


def test_lint_handles_a_scaffolded_packages_relative_imports(lorenz: Lorenz, tmp_path: Path) -> None:
    """`lorenz lint path/to/plugin.py` (and the package directory) of a `new-pack` project lints the pack
    instead of failing on its `from .tools import PACK`."""
    assert lorenz("new-pack", "quux", cwd=tmp_path).returncode == 0
    package = tmp_path / "lorenz-quux" / "lorenz_quux"
    for target in (package / "plugin.py", package):
        done = lorenz("lint", str(target), cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "lorenz lint: 1 pack, 2 tools: 0 errors" in done.stdout


def test_verbose_is_global_and_shows_redacted_tracebacks(lorenz: Lorenz) -> None:
    """-v before or after the command shows the traceback of what failed (plugins, a bad workflow), with
    secrets redacted; without it, one line."""
    for args in (["-v", "plugins"], ["plugins", "-v"]):
        done = lorenz(*args)
        assert "    Traceback (most recent call last):" in done.stdout, args
    secret = "s3cr3t-token-value"
    quiet = lorenz("check", "missing.md", env={"ACME_API_TOKEN": secret})
    assert quiet.returncode == 1
    assert "Traceback" not in quiet.stderr
    loud = lorenz("-v", "check", "missing.md", env={"ACME_API_TOKEN": secret})
    assert "missing_workflow_file" in loud.stderr and "Traceback (most recent call last):" in loud.stderr
    assert secret not in loud.stderr


def test_misspelled_command_and_tool_get_a_suggestion(lorenz: Lorenz) -> None:
    """A near-miss command is an argparse error naming the closest one; so is a near-miss tool name."""
    done = lorenz("tool")
    assert done.returncode == 2
    assert "invalid choice: 'tool' (did you mean \"tools\"?)" in done.stderr
    called = lorenz("call", "acme_ehco", '{"message": "hi"}')
    assert called.returncode == 1
    assert 'lorenz: no installed pack declares acme_ehco (did you mean "acme_echo"?)' in called.stderr


def test_an_installed_but_unmounted_tool(lorenz: Lorenz) -> None:
    """`tools --all` lists the zed pack the workflow does not mount, with its distribution; calling its
    tool says how to mount it instead of a bare "Unsupported tool"."""
    listed = lorenz("tools", "--all")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[1:4] for line in listed.stdout.splitlines()}
    assert rows["acme_echo"] == ["acme", "lorenz-acme", "0.1.0"]
    assert rows["zed_ping"] == ["zed", "lorenz-zed", "0.1.0"]
    assert "acme_echo  acme  lorenz-acme 0.1.0  mounted" in listed.stdout
    assert "zed_ping   zed   lorenz-zed 0.1.0   -" in listed.stdout
    assert (
        'lorenz: to mount a pack, run "lorenz mount slow" or add "tools: {slow: {}}" to WORKFLOW.md '
        "(not mounted: slow, zed)"
    ) in listed.stderr
    assert "zed_ping" not in lorenz("tools").stdout
    called = lorenz("call", "zed_ping")
    assert called.returncode == 1
    hint = (
        'lorenz: zed_ping is in the installed pack "zed" (lorenz-zed 0.1.0), which the workflow does not mount: '
        'run "lorenz mount zed" or add "tools: {zed: {}}" to WORKFLOW.md'
    )
    assert hint in called.stderr.splitlines()


COMMANDS = ["plugins", "check", "tools", "call", "issues", "serve", "new-pack", "lint", "install", "uninstall"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_help_has_description_example_and_environment(lorenz: Lorenz, command: str) -> None:
    """`lorenz COMMAND --help`: a description, at least one example of that command, the environment."""
    done = lorenz(command, "--help")
    assert done.returncode == 0
    usage, description = done.stdout.split("\n\n")[:2]
    assert usage.startswith(f"usage: lorenz {command}")
    assert len(description.split()) >= 8, description
    examples = done.stdout.split("examples:\n", 1)[1].split("\n\n")[0]
    assert f"  lorenz {command}" in examples or f"| lorenz {command}" in examples
    assert "\nenvironment:\n" in done.stdout


def test_version_lists_the_installed_plugins(lorenz: Lorenz) -> None:
    """`lorenz --version` names the core, the Python, and each installed plugin with its version."""
    done = lorenz("--version")
    assert done.returncode == 0
    first, *rest = done.stdout.splitlines()
    assert first.startswith("lorenz 0.1.0 from ")
    assert "  lorenz-acme 0.1.0: acme" in rest
    assert "  lorenz-zed 0.1.0: zed" in rest


def _on_a_terminal(lorenz: Lorenz, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run with stderr on a pseudo-terminal; returns the result and everything written to the terminal."""
    controller, terminal = pty.openpty()
    try:
        done = lorenz(*args, stdout=subprocess.PIPE, stderr=terminal)
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the terminal side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
    return done, b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.slow
def test_progress_line_on_a_terminal_only(lorenz: Lorenz, tmp_path: Path) -> None:
    """Slow work (a tool and a tracker taking ~2 s) shows a spinner on a terminal's stderr, erased after;
    the same command with stderr on a pipe shows none."""
    workflow = tmp_path / "slow.md"
    workflow.write_text("---\ntracker: {kind: slow}\n---\n", encoding="utf-8")
    called, screen = _on_a_terminal(lorenz, "call", str(workflow), "slow_wait")
    assert called.returncode == 0, screen
    assert "running slow_wait (1 s)" in screen
    assert screen.rstrip("\r\n").endswith("\r\x1b[K")  # erased, so the shell prompt starts clean
    fetched, screen = _on_a_terminal(lorenz, "issues", str(workflow))
    assert fetched.returncode == 0, screen
    assert "fetching issues from slow (1 s)" in screen
    assert "S-1" in fetched.stdout
    piped = lorenz("call", str(workflow), "slow_wait")
    assert piped.returncode == 0, piped.stderr
    assert "running slow_wait" not in piped.stderr and "\r" not in piped.stderr


def test_an_unforeseen_error_is_one_redacted_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exception nobody planned for (a bug, the system) is one redacted line and a pointer to -v, which
    shows the redacted traceback: never a raw traceback quoting a secret."""
    import attrs

    from lorenz import cli
    from lorenz.cli.commands import COMMANDS

    secret = "tok-0123456789abcdef"
    monkeypatch.setenv("ACME_API_TOKEN", secret)

    def broken(args: object) -> int:
        raise RuntimeError(f"lost the thread with {secret}")

    monkeypatch.setitem(COMMANDS, "plugins", attrs.evolve(COMMANDS["plugins"], run=broken))
    assert cli.main(["plugins"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "lorenz: RuntimeError: lost the thread with [REDACTED]",
        "(lorenz -v shows the traceback)",
    ]
    assert cli.main(["plugins", "-v"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err and "in broken" in err
    assert secret not in err
