"""``lorenz call``: run one mounted tool in-process and print its result."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lorenz.cli.answers import Answerer, parse_answers
from lorenz.cli.command import SERVER_ENV, WORKFLOW_ENV, Command, add_server, remote
from lorenz.cli.output import Progress, UsageError, print_json, progress
from lorenz.cli.workspace import open_for_command, until_started, warn
from lorenz.http import DEFAULT_TIMEOUT
from lorenz.mounting.inventory import mount_hint
from lorenz.settings.suggest import did_you_mean

if TYPE_CHECKING:
    from lorenz.contracts import ProgressSink

__all__ = ["COMMAND"]


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
    import json

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


async def _call(workspace: Any, tool: str, arguments: Any, answerer: Callable[[], Answerer], line: Progress) -> Any:
    """The call, its progress on ``line``, any question it asks answered by ``answerer()`` (made on
    the loop it answers on)."""
    import httpx

    client = answerer()
    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        input_ = client.client_input()
        result = await workspace.call(tool, arguments, http, progress=_reporter(line), client_input=input_)
    client.warn_unasked()
    return result


def _reporter(line: Progress) -> ProgressSink:
    async def report(done: float, total: float | None, message: str | None) -> None:
        line.report(done, total, message)

    return report


def run(args: argparse.Namespace) -> int:
    given = parse_answers(args.answer)  # a malformed --answer is refused before anything runs
    if args.server:
        return _run_remote(args, given)
    workflow, tool, raw = _split_call_args(args.values)
    arguments = _parse_arguments(raw)
    workspace = open_for_command(args, workflow)
    name = tool.strip()
    with progress(f"running {tool}") as line:
        if workspace.mounted.pack_of(name) is None:  # a server still starting may list it yet
            workspace = until_started(workspace, lambda remounted: remounted.mounted.pack_of(name) is not None)
        import asyncio  # ~20 ms: only the commands that run async work pay for it

        def answerer() -> Answerer:
            return Answerer(name, given, yes=args.yes, decline=args.decline, line=line)

        result = asyncio.run(_call(workspace, tool, arguments, answerer, line))
    print_json(result.to_dict())
    if not result.success and workspace.mounted.pack_of(name) is None:
        _unknown_tool(workspace, name)
    return 0 if result.success else 1


def _run_remote(args: argparse.Namespace, given: dict[str, dict[str, Any]]) -> int:
    """``--server URL TOOL [JSON-ARGS]``: the tool as the running server serves it, to this token, its
    questions answered as in-process."""
    from lorenz.host.remote import RemoteCall, remote_call  # the MCP client: only with --server

    if not 1 <= len(args.values) <= 2:
        raise UsageError("usage: lorenz call --server URL TOOL [JSON-ARGS]")
    tool, raw = args.values[0], (args.values[1] if len(args.values) == 2 else None)
    arguments = _parse_arguments(raw)
    name = tool.strip()
    with progress(f"running {tool} on {args.server}") as line:

        async def work(url: str, token: str | None) -> RemoteCall:
            client = Answerer(name, given, yes=args.yes, decline=args.decline, line=line)
            call = await remote_call(url, token, name, arguments, ask=client.ask, progress=_reporter(line))
            client.warn_unasked()
            return call

        call = remote(args, work)
    print_json(call.result)
    if call.listed is not None and name not in call.listed:
        warn(f"{args.server} serves no tool {name}{did_you_mean(name, call.listed)}")
    return 0 if call.result["success"] else 1


def _unknown_tool(workspace: Any, tool: str) -> None:
    """Why ``tool`` is not there: its pack is installed but not mounted (and how to mount it), or the
    closest tool name."""
    inventory = workspace.inventory
    found = inventory.find(tool)
    if found is not None:
        warn(mount_hint(found, workspace.settings.workflow_path))
        return
    warn(f"no installed pack declares {tool}{did_you_mean(tool, [t.name for t in inventory.tools])}")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "%(prog)s [-h] [-p MODULE] [--plugins-dir DIR] [-v] [--answer NAME=JSON] [-y] [--decline] "
        "[--server URL [--token TOKEN]] [WORKFLOW] TOOL [JSON-ARGS]"
    )
    parser.add_argument("values", nargs="+", metavar="[WORKFLOW] TOOL [JSON-ARGS]", help="JSON-ARGS may be - for stdin")
    parser.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="answer the tool's question NAME: the form's content as JSON, or accept, decline or cancel (repeatable)",
    )
    parser.add_argument(
        "-y", "--yes", action="store_true", help="accept every confirmation (booleans true, the rest their defaults)"
    )
    parser.add_argument("--decline", action="store_true", help="decline every question not otherwise answered")
    add_server(parser)


COMMAND = Command(
    name="call",
    description="Run one mounted tool in-process, its arguments checked against its inputSchema as the MCP host "
    "does, and print the result as JSON; exit 1 when the tool failed. With --server URL, call it on a running "
    "lorenz serve over MCP instead. A tool that asks the user (a confirmation, a form) is answered with --answer, "
    "--yes or --decline, else at a prompt on a terminal; its roots are the current directory.",
    examples=(
        'lorenz call local_read_issue \'{"issueId": "BOARD-1"}\'',
        'echo \'{"title": "Fix it"}\' | lorenz call local_create_issue -',
        'lorenz call notes_save_note \'{"name": "todo", "text": "Ship it"}\' --answer confirm=\'{"confirm": true}\'',
        'lorenz call --server http://127.0.0.1:4040/mcp local_read_issue \'{"issueId": "BOARD-1"}\'',
    ),
    env=(*WORKFLOW_ENV, *SERVER_ENV),
    arguments=_arguments,
    run=run,
)
