"""The ``lorenz`` command line: thin commands over the library; no logic of its own."""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["main"]


class UsageError(Exception):
    """A mistake on the command line or in the workflow: one line on stderr, exit 1."""


def _report(message: str, code: int) -> int:
    print(f"lorenz: {message}", file=sys.stderr)
    return code


def _load_plugin_modules(names: Sequence[str]) -> list[object]:
    plugins: list[object] = []
    for name in names:
        try:
            plugins.append(importlib.import_module(name))
        except Exception as exc:
            msg = f"cannot import plugin module {name!r}: {type(exc).__name__}: {exc}"
            raise UsageError(msg) from exc
    return plugins


def _env_secrets() -> list[str]:
    """Values of secret-looking environment variables: all there is to redact with before settings exist.

    Short values are left out: flags such as ``TOKENIZERS_PARALLELISM=false`` are no secrets, and
    redacting every ``false`` would garble the message.
    """
    from .redact import is_secret_key

    return [value for name, value in os.environ.items() if is_secret_key(name) and len(value.strip()) >= 8]


def _allow_list_note() -> str:
    """Why a plugin may seem missing: ``LORENZ_LOAD_PLUGINS`` limits which distributions load."""
    from .plugins import LOAD_PLUGINS_ENV

    value = os.environ.get(LOAD_PLUGINS_ENV)
    return "" if value is None else f" ({LOAD_PLUGINS_ENV}={value!r} limits which plugins load)"


def _workspace(args: argparse.Namespace, workflow: str | None) -> Any:
    from .redact import redact_text
    from .results import error_message
    from .workspace import open_workspace

    plugins = _load_plugin_modules(args.plugin)
    try:
        workspace = open_workspace(workflow, plugins=plugins)
    except Exception as exc:  # ConfigError, RegistryError, MountError, and whatever a pack raises
        text = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {error_message(exc)}"
        text = " ".join(redact_text(text, _env_secrets()).split())
        if any(hint in text for hint in ("unsupported tracker.kind", "unsupported tool pack", "embedded default")):
            text += _allow_list_note()
        raise UsageError(text) from exc
    for failure in workspace.discovery.failures:
        _warn(f"warning: plugin {failure.name} ({failure.origin}) failed to load: {failure.error}")
    for warning in workspace.settings.warnings:
        _warn(f"warning: {warning}")
    for pack_failure in workspace.mounted.failures:
        _warn(pack_failure.error)
    if workspace.embedded_default:
        print(
            f"lorenz: no WORKFLOW.md in {Path.cwd()}; using the embedded default (local board at .lorenz/local)",
            file=sys.stderr,
        )
    return workspace


def _warn(message: str) -> None:
    """One redacted line on stderr (a plugin's message may span lines or quote a secret)."""
    from .redact import redact_text

    print(f"lorenz: {' '.join(redact_text(message, _env_secrets()).split())}", file=sys.stderr)


def _print_json(value: Any) -> None:
    from .wire import scrub_surrogates

    # A lone surrogate (from a hand-edited file, a pack) cannot be written to a UTF-8 stream.
    print(scrub_surrogates(json.dumps(value, indent=2, ensure_ascii=False, default=str)))


# -- commands ---------------------------------------------------------------


def cmd_plugins(args: argparse.Namespace) -> int:
    from .plugins import discover

    discovery = discover(plugins=_load_plugin_modules(args.plugin))
    code = 1 if discovery.failures else 0
    if args.json:
        _print_json(
            {
                "plugins": [info.to_dict() for info in discovery.plugins],
                "failures": [failure.to_dict() for failure in discovery.failures],
                "disabled": list(discovery.disabled),
            }
        )
        return code
    if not discovery.plugins and not discovery.failures:
        note = _allow_list_note()
        print(f"no plugins loaded{note}" if note else "no plugins installed (pip install a lorenz-* distribution)")
    for info in discovery.plugins:
        origin = f"{info.distribution} {info.version}" if info.distribution else "in-process"
        print(
            f"{info.name} ({origin}): trackers: {', '.join(info.trackers) or '-'}; "
            f"packs: {', '.join(info.packs) or '-'}"
        )
    for name in discovery.disabled:
        print(f"disabled {name} (LORENZ_DISABLE_PLUGINS)")
    for failure in discovery.failures:
        print(f"FAILED {failure.name} ({failure.origin}): {' '.join(failure.error.split())}")
        if args.verbose and failure.traceback:
            print(textwrap.indent(failure.traceback.rstrip(), "    "))
    if discovery.failures and not args.verbose:
        print("(lorenz plugins -v shows each failure's traceback)", file=sys.stderr)
    return code


def cmd_check(args: argparse.Namespace) -> int:
    from .redact import redact_text
    from .settings import check_pack_settings

    workspace = _workspace(args, args.workflow)
    settings = workspace.settings
    where = settings.workflow_path or "embedded default"
    specs = workspace.tool_specs()
    if workspace.mounted.failures:
        broken = ", ".join(failure.pack for failure in workspace.mounted.failures)
        raise UsageError(f"{where}: the workflow mounts broken packs: {broken}")
    problems = check_pack_settings(settings, workspace.packs())
    if problems:
        raise UsageError(redact_text(f"{where}: {'; '.join(problems)}", settings.secrets))
    print(
        f"ok: {where}: tracker {settings.tracker.kind or '-'}, packs {', '.join(workspace.pack_names()) or '-'} "
        f"({len(specs)} tools)"
    )
    return 0


def cmd_tools(args: argparse.Namespace) -> int:
    workspace = _workspace(args, args.workflow)
    owners = workspace.tool_owners()
    specs = workspace.tool_specs()
    if args.json:
        _print_json([{"pack": owners[spec.name], **spec.to_wire()} for spec in specs])
        return 1 if workspace.mounted.failures else 0
    width = max((len(spec.name) for spec in specs), default=0)
    for spec in specs:
        summary = spec.description.strip().splitlines()[0] if spec.description.strip() else ""
        print(f"{spec.name.ljust(width)}  [{owners[spec.name]}]  {summary}")
    return 1 if workspace.mounted.failures else 0


def _split_call_args(values: Sequence[str]) -> tuple[str | None, str, str | None]:
    """``[WORKFLOW] TOOL [JSON-ARGS]``: a first value that names a file is the workflow."""
    if len(values) == 3:
        return values[0], values[1], values[2]
    if len(values) == 2:
        first = values[0]
        if first.endswith(".md") or os.path.isfile(first):
            return first, values[1], None
        return None, first, values[1]
    if len(values) == 1:
        return None, values[0], None
    msg = "usage: lorenz call [WORKFLOW] TOOL [JSON-ARGS]"
    raise UsageError(msg)


def _parse_arguments(text: str | None) -> Any:
    if text is None:
        return {}
    if text == "-":
        text = sys.stdin.read()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"JSON-ARGS is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise UsageError(msg) from exc
    if not isinstance(value, dict):
        msg = f"JSON-ARGS must be a JSON object, got {type(value).__name__}"
        raise UsageError(msg)
    return value


async def _call(workspace: Any, tool: str, arguments: Any) -> Any:
    import httpx

    from .http import DEFAULT_TIMEOUT

    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        return await workspace.call(tool, arguments, http)


def cmd_call(args: argparse.Namespace) -> int:
    workflow, tool, raw = _split_call_args(args.values)
    arguments = _parse_arguments(raw)
    workspace = _workspace(args, workflow)
    result = asyncio.run(_call(workspace, tool, arguments))
    _print_json(result.to_dict())
    return 0 if result.success else 1


async def _candidates(workspace: Any) -> list[Any]:
    import httpx

    from .http import DEFAULT_TIMEOUT

    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        client = workspace.tracker_client(http=http)
        return list(await client.fetch_candidate_issues())


def cmd_issues(args: argparse.Namespace) -> int:
    from .containment import call_plugin
    from .redact import redact_text

    workspace = _workspace(args, args.workflow)
    if workspace.settings.tracker.kind is None:
        where = workspace.settings.workflow_path
        raise UsageError(f"{where}: no tracker is configured (this workflow only serves its tools: packs)")
    try:
        owner = f"tracker {workspace.settings.tracker.kind}"
        issues = call_plugin(owner, "fetching issues", asyncio.run, _candidates(workspace))
    except Exception as exc:
        raise UsageError(redact_text(f"fetching candidate issues failed: {exc}", workspace.settings.secrets)) from exc
    if args.json:
        _print_json([issue.to_record() for issue in issues])
        return 0
    if not issues:
        print("no candidate issues")
    for issue in issues:
        print(f"{issue.identifier}\t{issue.state} ({issue.state_type})\t{issue.title}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import contextlib

    from .host import serve
    from .host.command import stdout_to_stderr

    # Over --stdio, stdout is the protocol stream: a plugin printing at import must not reach it.
    with stdout_to_stderr() if args.stdio else contextlib.nullcontext():
        plugins = _load_plugin_modules(args.plugin)
    return serve(
        workflow=args.workflow,
        host=args.host,
        port=args.port,
        stdio=args.stdio,
        plugins=plugins,
        reload=not args.no_reload,
    )


def cmd_new_pack(args: argparse.Namespace) -> int:
    from .authoring.scaffold import new_pack

    try:
        written = new_pack(args.name, Path(args.dir) if args.dir else None, tracker=args.tracker)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    root = written[0].parent
    print(f"created {root} ({len(written)} files)")
    print(f"next: cd {root} && pip install -e '.[test]' && pytest && lorenz lint . && lorenz plugins")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from .authoring.lint import lint_discovery, lint_path
    from .plugins import discover

    try:
        if args.path:
            report = lint_path(args.path)
        else:
            report = lint_discovery(discover(plugins=_load_plugin_modules(args.plugin)))
    except (ValueError, OSError, ImportError) as exc:
        raise UsageError(f"cannot lint {args.path or 'the installed packs'}: {exc}") from exc
    if args.path and not report.packs and not report.errors:
        msg = f"{args.path} registers no tool pack (is there a `lorenz_register_tool_packs` hookimpl?)"
        raise UsageError(msg)
    if args.json:
        _print_json(report.to_dict())
    else:
        for diagnostic in report.diagnostics:
            print(diagnostic)
        tools = sum(len(pack["tools"]) + len(pack["disabled"]) for pack in report.packs)
        print(
            f"lorenz lint: {len(report.packs)} packs, {tools} tools: "
            f"{len(report.errors)} errors, {len(report.warnings)} warnings"
        )
    return 1 if report.errors else 0


# -- parser -----------------------------------------------------------------


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        msg = "port must be 0-65535"
        raise argparse.ArgumentTypeError(msg)
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lorenz",
        description="Serve tool packs and issue trackers to AI agents over MCP.",
    )
    parser.add_argument("--version", action="version", version=f"lorenz {__version__}")
    plugin_help = "also register this plugin module by import path (repeatable); handy while writing a pack"
    parser.add_argument("-p", "--plugin", action="append", default=[], metavar="MODULE", help=plugin_help)
    # `-p` is accepted after the command too; SUPPRESS keeps a subcommand from resetting the value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-p",
        "--plugin",
        action="append",
        dest="sub_plugin",
        default=argparse.SUPPRESS,
        metavar="MODULE",
        help=plugin_help,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_parser = functools.partial(sub.add_parser, parents=[common])

    p = add_parser("plugins", help="list discovered plugins, what they register, and failures (exit 1 if any)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="print each failure's traceback (redacted)")
    p.set_defaults(func=cmd_plugins)

    p = add_parser("check", help="parse and validate a workflow")
    p.add_argument("workflow", nargs="?", help="WORKFLOW.md path (default: $LORENZ_WORKFLOW or ./WORKFLOW.md)")
    p.set_defaults(func=cmd_check)

    p = add_parser("tools", help="list the tools a workflow mounts")
    p.add_argument("workflow", nargs="?", help="WORKFLOW.md path")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_tools)

    p = add_parser("call", help="run one tool in-process and print its result")
    p.add_argument("values", nargs="+", metavar="[WORKFLOW] TOOL [JSON-ARGS]", help="JSON-ARGS may be - for stdin")
    p.set_defaults(func=cmd_call)

    p = add_parser("issues", help="list the candidate issues the dispatch tracker hands out now")
    p.add_argument("workflow", nargs="?", help="WORKFLOW.md path")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_issues)

    p = add_parser("serve", help="serve the mounted tools over MCP (Streamable HTTP at /mcp, or stdio)")
    p.add_argument("workflow", nargs="?", help="WORKFLOW.md path")
    p.add_argument("--host", help="bind address (default: server.host, 127.0.0.1)")
    p.add_argument("--port", type=_port, help="port (default: server.port, 4040; 0 picks a free port)")
    p.add_argument("--stdio", action="store_true", help="speak MCP over stdin/stdout instead of HTTP")
    p.add_argument("--no-reload", action="store_true", help="do not watch WORKFLOW.md for changes")
    p.set_defaults(func=cmd_serve)

    p = add_parser("new-pack", help="write a new tool pack project (its own distribution) from a template")
    p.add_argument("name", help="pack name: a lowercase Python identifier; tools are prefixed NAME_")
    p.add_argument("--dir", help="project directory (default: ./lorenz-NAME)")
    p.add_argument("--tracker", action="store_true", help="also write a tracker that mounts the pack")
    p.set_defaults(func=cmd_new_pack)

    p = add_parser("lint", help="check tool packs: contract, naming, schemas, error contracts, format parity")
    p.add_argument("path", nargs="?", help="a pack project directory, .py file or module (default: installed packs)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_lint)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .containment import install_interrupt_flag

    install_interrupt_flag()  # a real Ctrl-C still stops the command; a plugin's KeyboardInterrupt does not
    args = build_parser().parse_args(argv)
    args.plugin = [*args.plugin, *getattr(args, "sub_plugin", [])]
    try:
        code: int = args.func(args)
    except UsageError as exc:
        return _report(str(exc), 1)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
