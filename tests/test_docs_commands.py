"""The README's and docs/*.md's shell sessions, run as written, print what the docs show (issue 32).

A ```` ```console ```` block is a session: ``$ command`` lines (a trailing ``\\`` continues one), each
followed by the output the docs promise; an output line that is just ``...`` stands for any number of
lines, ``...`` inside a line for any text, and a ``# exits N`` comment says the command fails with N. A
``sh``/``shell``/``bash`` block is not run, and needs ``<!-- docs-test: skip (why) -->`` on the line
before it. A document's sessions run in order in one temporary directory (also ``$HOME``, shown as
``~``) holding a copy of ``examples/``, in a fresh venv over this environment's packages where pip
downloads nothing, holding what the README's quick start installs: the core and ``lorenz-local``, not
the other bundled plugins.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from attrs import frozen

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LEFT_OUT = re.compile(r"lorenz_(jira|linear|slack|mcp|quota)\b")

SHELL_LANGUAGES = {"sh", "shell", "bash", "console"}
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
EXITS = re.compile(r"#.*\bexits (?P<code>\d+)\b")


@frozen
class Command:
    """One ``$`` line of a session: where it is, what runs, and what the docs say it prints."""

    path: Path
    line: int
    text: str
    expected: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        found = EXITS.search(self.text)
        return int(found["code"]) if found else 0

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}"


@frozen
class Block:
    """A fenced shell block: its language, first line (the fence), skip reason, and body lines."""

    path: Path
    line: int
    lang: str
    skip: str | None
    body: tuple[str, ...]

    def commands(self) -> list[Command]:
        """The session's commands, in order (only for ``console`` blocks)."""
        commands: list[Command] = []
        current: list[str] | None = None
        expected: list[str] = []
        start = 0
        for offset, raw in enumerate(self.body, start=self.line + 1):
            if current is not None and current[-1].endswith("\\"):
                current.append(raw.strip())
                continue
            if raw.startswith("$ "):
                if current is not None:
                    commands.append(Command(self.path, start, "\n".join(current), tuple(expected)))
                current, expected, start = [raw[2:]], [], offset
            elif current is not None:
                expected.append(raw)
        if current is not None:
            commands.append(Command(self.path, start, "\n".join(current), tuple(expected)))
        return commands


def shell_blocks(path: Path) -> Iterator[Block]:
    """Every fenced shell block of ``path``, with the skip marker on the line before it, if any."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        indent, lang = opened["indent"], opened["lang"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        prompted = lang in ("", "text") and any(line.lstrip().startswith("$ ") for line in lines[index + 1 : end])
        if lang in SHELL_LANGUAGES or prompted:  # a ``$ `` session in a plain block is one to check too
            before = next((line for line in reversed(lines[:index]) if line.strip()), "")
            marker = SKIP.search(before)
            body = tuple(line[len(indent) :] if line.startswith(indent) else line for line in lines[index + 1 : end])
            yield Block(path, index + 1, lang, marker["why"] if marker else None, body)
        index = end + 1


def pattern(expected: tuple[str, ...]) -> re.Pattern[str]:
    """The regular expression the output must match: ``...`` lines and ``...`` in a line are wildcards."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece.rstrip()) for piece in line.rstrip().split("...")) + r"\n")
    return re.compile("".join(parts))


def matches(expected: tuple[str, ...], output: str) -> bool:
    """Whether ``output`` (trailing spaces of each line ignored) is what the docs show."""
    text = "".join(f"{line.rstrip()}\n" for line in output.splitlines())
    return pattern(expected).fullmatch(text) is not None


def sessions(path: Path) -> list[Block]:
    return [block for block in shell_blocks(path) if block.lang == "console" and block.skip is None]


def fresh_venv(where: Path) -> Path:
    """A venv seeing this environment's packages through a ``.pth``, with its console scripts; its ``bin``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    site = where / "site"  # this environment's packages, but of the bundled plugins only lorenz-local
    site.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not LEFT_OUT.search(entry.name):
            (site / entry.name).symlink_to(entry)
    (Path(purelib) / "_lorenz_docs_env.pth").write_text(
        f"import site; site.addsitedir({str(site)!r})\n", encoding="utf-8"
    )
    ours = Path(sys.executable).parent
    for script in ours.iterdir():
        target = where / "bin" / script.name
        if target.exists() or script.name.startswith(("activate", "Activate", "python")):
            continue
        head = script.read_bytes()[:200]
        if head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]:
            body = script.read_text(encoding="utf-8").split("\n", 1)[1]
            target.write_text(f"#!{python}\n{body}", encoding="utf-8")
            target.chmod(0o755)
        else:
            target.symlink_to(script)
    return where / "bin"


def environment(home: Path, bin_dir: Path) -> dict[str, str]:
    """A user's shell in that venv: no Lorenz or pip settings of ours, no network for pip."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LORENZ_", "PIP_", "VIRTUAL_ENV", "PYTEST_", "NOX"))
    }
    env.pop("PYTHONPATH", None)
    ours = str(Path(sys.executable).parent)
    path = [bin_dir, *(part for part in env.get("PATH", "").split(os.pathsep) if part and part != ours)]
    env.update(
        PATH=os.pathsep.join(map(str, path)),
        HOME=str(home),
        VIRTUAL_ENV=str(bin_dir.parent),
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",
        PIP_NO_DEPS="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NO_COLOR="1",
        COLUMNS="100",
    )
    return env


def shown(output: str, home: Path) -> str:
    """Output as the docs show it: the temporary home is ``~``."""
    return output.replace(str(home.resolve()), "~").replace(str(home), "~")


@pytest.mark.parametrize("doc", [doc for doc in DOCS if sessions(doc)], ids=lambda doc: doc.name)
@pytest.mark.slow
def test_the_docs_sessions_print_what_they_show(doc: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".venv", ".nox")
    shutil.copytree(ROOT / "examples", home / "examples", ignore=ignore)
    env = environment(home, fresh_venv(tmp_path / "venv"))
    cwd_file = tmp_path / "cwd"
    cwd = home
    for block in sessions(doc):
        for command in block.commands():
            script = f"cd {str(cwd)!r} || exit 99\n{command.text}\nstatus=$?\npwd > {str(cwd_file)!r}\nexit $status\n"
            done = subprocess.run(
                ["bash", "-c", script],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                check=False,
                timeout=180,
            )
            cwd = Path(cwd_file.read_text(encoding="utf-8").strip())
            output = shown(done.stdout, home)
            where = command.where(ROOT)
            assert done.returncode == command.exit_code, (
                f"{where}: `{command.text}` exited {done.returncode} (expected {command.exit_code}):\n{output}"
            )
            assert matches(command.expected, output), (
                f"{where}: `{command.text}` printed:\n{output}\nwhere the docs show:\n" + "\n".join(command.expected)
            )


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.name)
def test_every_shell_block_runs_or_says_why_not(doc: Path) -> None:
    """A shell block is a ``console`` session the test runs, or carries a visible skip reason."""
    unchecked = [
        f"{doc.relative_to(ROOT)}:{block.line}"
        for block in shell_blocks(doc)
        if block.lang != "console" and block.skip is None
    ]
    assert not unchecked, (
        f"shell blocks neither run nor skipped: {', '.join(unchecked)} (write a ```console session, or put "
        "<!-- docs-test: skip (why) --> on the line before the block)"
    )


def test_the_session_format(tmp_path: Path) -> None:
    """How a block reads: commands with their output, continuations, wildcards, skips and exit codes."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Text.\n\n- item\n\n  ```console\n  $ lorenz one \\\n      --flag\n  out 1\n  ...\n"
        "  $ lorenz two  # exits 2\n  ```\n\n<!-- docs-test: skip (needs Jira) -->\n```sh\nlorenz three\n```\n"
        "\n```\n$ lorenz four\n```\n\n```python\nprint('$ not a session')\n```\n",
        encoding="utf-8",
    )
    console, skipped, plain = shell_blocks(doc)
    one, two = console.commands()
    assert (one.line, one.text, one.expected, one.exit_code) == (6, "lorenz one \\\n--flag", ("out 1", "..."), 0)
    assert (two.line, two.expected, two.exit_code) == (10, (), 2)
    assert (skipped.lang, skipped.skip, plain.lang, plain.skip) == ("sh", "needs Jira", "", None)
    assert matches(("out 1", "..."), "out 1\nmore\nand more\n")
    assert matches(("a ... c", "..."), "a b c  \n")
    assert matches(("...", "last"), "first\nlast\n")
    assert not matches(("out 1",), "out 1\nout 2\n")
    assert not matches(("a ... c",), "a b\nc\n")  # an inline wildcard stays on its line
