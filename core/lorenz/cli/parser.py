"""The ``lorenz`` argument parser: every subcommand with a description, examples and the environment
variables it reads, global options accepted before or after the command, and a suggestion for a
misspelled command."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from .output import did_you_mean

__all__ = ["build_parser"]

_PLUGINS_ENV = (
    ("LORENZ_LOAD_PLUGINS", "comma-separated distributions to load, and no others (empty: none)"),
    ("LORENZ_DISABLE_PLUGINS", "comma-separated distributions to leave out"),
)
_WORKFLOW_ENV = (
    ("LORENZ_WORKFLOW", "the workflow file when none is named (default ./WORKFLOW.md)"),
    *_PLUGINS_ENV,
    ("LORENZ_SECRET_RESOLUTION_TIMEOUT_MS", "how long an op:// secret may take to resolve (30000)"),
    ("$NAME", "any variable the workflow references, and the tracker's defaults (JIRA_API_KEY, LINEAR_API_KEY...)"),
)
_PIP_ENV = (("PIP_*", "pip's own settings (PIP_INDEX_URL, PIP_FIND_LINKS...), read by the pip lorenz runs"),)


@frozen
class _Command:
    help: str
    description: str
    examples: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


_COMMANDS = {
    "plugins": _Command(
        "list discovered plugins, what they register, and failures (exit 1 if any)",
        "Every discovered plugin distribution, its version and the packs and tracker kinds it registered, "
        "and every plugin that failed to load (exit 1 if one did).",
        ("lorenz plugins", "lorenz plugins -v            # with each failure's traceback", "lorenz plugins --json"),
        _PLUGINS_ENV,
    ),
    "check": _Command(
        "parse and validate a workflow",
        "Parse and validate a workflow against the installed plugins; on a mistake, exit 1 with the exact "
        "error naming the key at fault.",
        ("lorenz check", "lorenz check path/to/WORKFLOW.md --json"),
        _WORKFLOW_ENV,
    ),
    "tools": _Command(
        "list the tools a workflow mounts (--all: every installed tool)",
        "The tools the workflow mounts, each with its pack; --all adds every other installed tool, with its "
        "distribution and whether it is mounted.",
        ("lorenz tools", "lorenz tools --all", "lorenz tools WORKFLOW.md --json"),
        _WORKFLOW_ENV,
    ),
    "call": _Command(
        "run one tool in-process and print its result",
        "Run one mounted tool in-process, its arguments checked against its inputSchema as the MCP host "
        "does, and print the result as JSON; exit 1 when the tool failed.",
        (
            'lorenz call local_read_issue \'{"issueId": "LOC-1"}\'',
            'echo \'{"title": "Fix it"}\' | lorenz call local_create_issue -',
        ),
        _WORKFLOW_ENV,
    ),
    "issues": _Command(
        "list the candidate issues the dispatch tracker hands out now",
        "Ask the workflow's dispatch tracker for the issues it would hand out now, and list them.",
        ("lorenz issues", "lorenz issues --json"),
        _WORKFLOW_ENV,
    ),
    "serve": _Command(
        "serve the mounted tools over MCP (Streamable HTTP at /mcp, or stdio)",
        "Serve the mounted tools over MCP: Streamable HTTP at http://HOST:PORT/mcp (a landing page at /), "
        "or stdio; a change to WORKFLOW.md re-mounts while serving.",
        (
            "lorenz serve",
            "lorenz serve --port 0          # any free port",
            "lorenz serve --host 0.0.0.0 --workers 4   # with LORENZ_MCP_TOKEN set",
            "lorenz serve --stdio",
        ),
        (*_WORKFLOW_ENV, ("LORENZ_MCP_TOKEN", "bearer token every /mcp request must carry (server.token)")),
    ),
    "new-pack": _Command(
        "write a new tool pack project (its own distribution) from a template",
        "Write a complete pack project, its own distribution: typed tools, tests, and the entry point that "
        "makes Lorenz find it once installed.",
        ("lorenz new-pack acme", "lorenz new-pack acme_crm --dir ~/src/lorenz-acme-crm --tracker"),
    ),
    "lint": _Command(
        "check tool packs: contract, naming, schemas, error contracts, format parity",
        "Check the installed packs, or the one at PATH (a project directory, a package, a .py file or a "
        "module name), against the pack contract; exit 1 on an error.",
        ("lorenz lint", "lorenz lint ./lorenz-acme", "lorenz lint lorenz_acme/plugin.py --json"),
        _PLUGINS_ENV,
    ),
    "install": _Command(
        "pip install packs into the environment that runs lorenz, and say what they registered",
        "pip install packages (names, paths, wheels, -e PATH) into the interpreter that runs lorenz (a pipx "
        "venv included), then list what each new plugin registered.",
        ("lorenz install lorenz-acme", "lorenz install dist/lorenz_acme-0.1.0-py3-none-any.whl", "lorenz install -e ."),
        (*_PIP_ENV, *_PLUGINS_ENV),
    ),
    "calls": _Command(
        "summarise a call log: per tool count, failure rate, p50/p95/max, top errors",
        "Summarise the JSON-lines call log lorenz serve writes (server.call_log, LORENZ_CALL_LOG): per tool "
        "the calls, the failure rate, p50/p95/max durations and the most frequent errors; --follow tails it.",
        ("lorenz calls", "lorenz calls calls.jsonl --since 1h --tool jira_query", "lorenz calls --follow"),
        (("LORENZ_CALL_LOG", "the call log when none is named"), *_WORKFLOW_ENV),
    ),
    "skills": _Command(
        "list the mounted packs' skills, or export them into a folder",
        "List the skills (SKILL.md directories) the mounted packs ship, or copy them into DIR (e.g. "
        ".claude/skills), de-duplicated, never overwriting a changed file without --force.",
        ("lorenz skills", "lorenz skills export .claude/skills", "lorenz skills export .claude/skills --force"),
        _WORKFLOW_ENV,
    ),
    "uninstall": _Command(
        "pip uninstall packs from the environment that runs lorenz (asks first)",
        "pip uninstall distributions from the interpreter that runs lorenz, after asking (unless -y). "
        "lorenz-core itself is refused.",
        ("lorenz uninstall lorenz-acme", "lorenz uninstall -y lorenz-acme lorenz-weather"),
        _PIP_ENV,
    ),
}


def _epilog(command: _Command) -> str:
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


class _Version(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version, the Python and every installed plugin")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from .version import version_text

        print(version_text())
        parser.exit()


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


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        msg = "port must be 0-65535"
        raise argparse.ArgumentTypeError(msg)
    return port


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        msg = "workers must be a whole number, 1 or more"
        raise argparse.ArgumentTypeError(msg)
    return count


def _add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    workflow_help = "WORKFLOW.md path (default: $LORENZ_WORKFLOW or ./WORKFLOW.md)"
    if name in ("check", "tools", "issues", "serve"):
        p.add_argument("workflow", nargs="?", help=workflow_help)
    if name in ("plugins", "check", "tools", "issues", "lint"):
        p.add_argument("--json", action="store_true", help="print a JSON object (docs/cli-json.md)")
    if name == "tools":
        p.add_argument("--all", action="store_true", help="every installed tool, mounted or not")
    elif name == "call":
        p.usage = "%(prog)s [-h] [-p MODULE] [--plugins-dir DIR] [-v] [WORKFLOW] TOOL [JSON-ARGS]"
        p.add_argument("values", nargs="+", metavar="[WORKFLOW] TOOL [JSON-ARGS]", help="JSON-ARGS may be - for stdin")
    elif name == "serve":
        p.add_argument("--host", help="bind address (default: server.host, 127.0.0.1)")
        p.add_argument("--port", type=_port, help="port (default: server.port, 4040; 0 picks a free port)")
        p.add_argument(
            "--workers", type=_workers, metavar="N", help="worker processes on one port (default: server.workers, 1)"
        )
        p.add_argument(
            "--allow-no-token",
            action="store_true",
            help="listen beyond loopback without a bearer token (behind a proxy that authenticates)",
        )
        p.add_argument("--stdio", action="store_true", help="speak MCP over stdin/stdout instead of HTTP")
        p.add_argument("--no-reload", action="store_true", help="do not watch WORKFLOW.md for changes")
    elif name == "new-pack":
        p.add_argument("name", help="pack name: a lowercase Python identifier; tools are prefixed NAME_")
        p.add_argument("--dir", help="project directory (default: ./lorenz-NAME)")
        p.add_argument("--tracker", action="store_true", help="also write a tracker that mounts the pack")
    elif name == "lint":
        p.add_argument("path", nargs="?", help="a project or package folder, .py file or module (default: installed)")
    elif name == "install":
        p.add_argument("packages", nargs="*", metavar="PACKAGE", help="a distribution name, a path or a wheel")
        p.add_argument("-e", "--editable", action="append", default=[], metavar="PATH", help="install PATH editable")
        p.add_argument("-U", "--upgrade", action="store_true", help="upgrade to the newest version")
    elif name == "calls":
        p.add_argument("path", nargs="?", help="the call log (default: server.call_log or $LORENZ_CALL_LOG)")
        p.add_argument("--since", help="only calls this recent: 30s, 15m, 1h, 2d")
        p.add_argument("--tool", help="only this tool")
        p.add_argument("--json", action="store_true", help="print a JSON object (docs/cli-json.md)")
        p.add_argument("--follow", action="store_true", help="print each new call as it is logged")
    elif name == "skills":
        p.add_argument("action", nargs="?", choices=["export"], help="export: copy the skills into DIR")
        p.add_argument("dir", nargs="?", metavar="DIR", help="where to export (e.g. .claude/skills)")
        p.add_argument("--workflow", help="WORKFLOW.md path (default: $LORENZ_WORKFLOW or ./WORKFLOW.md)")
        p.add_argument("--force", action="store_true", help="replace files that differ from the pack's copy")
        p.add_argument("--json", action="store_true", help="print a JSON object (docs/cli-json.md)")
    elif name == "uninstall":
        p.add_argument("packages", nargs="+", metavar="PACKAGE", help="an installed distribution name")
        p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")


def build_parser(commands: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for ``commands`` (each has its help text here); the command lands in ``args.command``."""
    parser = _Parser(
        prog="lorenz",
        description="Serve tool packs and issue trackers to AI agents over MCP.",
        epilog="lorenz COMMAND --help shows a command's examples and the environment variables it reads.",
    )
    parser.add_argument("--version", action=_Version)
    _global_options(parser, suppress=False)
    common = _Parser(add_help=False)
    _global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        command = _COMMANDS[name]
        p = sub.add_parser(
            name,
            parents=[common],
            help=command.help,
            description=textwrap.fill(command.description, 100),
            epilog=_epilog(command),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_arguments(name, p)
    return parser
