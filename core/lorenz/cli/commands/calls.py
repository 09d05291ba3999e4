"""``lorenz calls``: a summary of the call log ``lorenz serve`` writes, or its new calls as they come."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from lorenz.calllog.reader import (
    MAX_TOOL_CHARS,
    Skipped,
    call_line,
    follow,
    parse_since,
    read_calls,
    shown,
    summarize,
)
from lorenz.calllog.record import MAX_ERROR_CHARS
from lorenz.calllog.writer import CALL_LOG_ENV
from lorenz.cli.command import WORKFLOW_ENV, Command, add_json
from lorenz.cli.output import UsageError, counted, json_object, print_json
from lorenz.settings import ConfigError, load_workflow
from lorenz.workspace import find_workflow

__all__ = ["COMMAND"]


def _call_log_path(args: argparse.Namespace) -> Path:
    if args.path:
        return Path(args.path)
    configured = os.environ.get(CALL_LOG_ENV)
    if configured and configured != "-":
        return Path(configured)
    path = _configured_call_log()
    if path is None:
        msg = "no call log named: lorenz calls PATH, or server.call_log in WORKFLOW.md, or LORENZ_CALL_LOG"
        raise UsageError(msg)
    return path


def _configured_call_log() -> Path | None:
    """``server.call_log`` read straight from the workflow's front matter: reading a log needs
    neither the workflow's secrets nor its plugins."""
    workflow = find_workflow(None, cwd=Path.cwd(), env=os.environ)
    if workflow is None:
        return None
    try:
        config = load_workflow(workflow).config
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    server = config.get("server")
    value = server.get("call_log") if isinstance(server, dict) else None
    if not isinstance(value, str) or not value or value == "-":
        return None
    return workflow.parent / value


def run(args: argparse.Namespace) -> int:
    path = _call_log_path(args)
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.follow:
        render = _json_line if args.json else call_line
        try:
            follow(path, sys.stdout, tool=args.tool, render=render)
        except FileNotFoundError as exc:
            raise UsageError(f"{path}: no such call log") from exc
        return 0
    skipped = Skipped()
    try:
        with path.open("rb") as handle:  # bytes: a line that is not UTF-8 is skipped, not fatal
            summaries = summarize(read_calls(handle, since=since, tool=args.tool, skipped=skipped))
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such call log") from exc
    if args.json:
        tools = [summary.to_dict() for summary in summaries]
        print_json(json_object(log=str(path), tools=tools, skippedLines=skipped.lines))
        return 0
    if skipped.lines:
        undecodable = f"; {skipped.undecodable} not UTF-8" if skipped.undecodable else ""
        print(
            f"lorenz: {path}: {counted(skipped.lines, 'line')} skipped (not a call record{undecodable})",
            file=sys.stderr,
        )
    if not summaries:
        print("no calls")
        return 0
    names = [shown(summary.tool, MAX_TOOL_CHARS) for summary in summaries]
    width = max(len(name) for name in names)
    print(f"{'tool'.ljust(width)}  calls  failed     p50 ms     p95 ms     max ms")
    for name, summary in zip(names, summaries, strict=True):
        print(
            f"{name.ljust(width)}  {summary.calls:5}  {summary.failure_rate:6.1%} "
            f"{summary.p50_ms:10.1f} {summary.p95_ms:10.1f} {summary.max_ms:10.1f}"
        )
        for error, count in summary.top_errors:
            print(f"{''.ljust(width)}    {count} × {shown(error, MAX_ERROR_CHARS)}")
    return 0


def _json_line(record: dict[str, Any]) -> str:
    """A record as ``lorenz calls --json --follow`` prints it: one JSON object on one line."""
    return json.dumps(json_object(call=record), separators=(",", ":"))


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", help="the call log (default: server.call_log or $LORENZ_CALL_LOG)")
    parser.add_argument("--since", help="only calls this recent: 30s, 15m, 1h, 2d")
    parser.add_argument("--tool", help="only this tool")
    add_json(parser)
    parser.add_argument("--follow", action="store_true", help="print each new call as it is logged")


COMMAND = Command(
    name="calls",
    description="Summarise the JSON-lines call log lorenz serve writes (server.call_log, LORENZ_CALL_LOG): per tool "
    "the calls, the failure rate, p50/p95/max durations and the most frequent errors; --follow tails it "
    "(with --json, one JSON object a line).",
    examples=("lorenz calls", "lorenz calls calls.jsonl --since 1h --tool jira_query", "lorenz calls --follow"),
    env=(("LORENZ_CALL_LOG", "the call log when none is named"), *WORKFLOW_ENV),
    arguments=_arguments,
    run=run,
    brief=True,
)
