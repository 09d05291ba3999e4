"""``lorenz calls``: a summary of the call log ``lorenz serve`` writes, or its new calls as they come."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from lorenz.cli.output import UsageError, json_object, print_json
from lorenz.cli.workspace import open_for_command

__all__ = ["run"]


def _call_log_path(args: argparse.Namespace) -> Path:
    from lorenz.host.calllog import CALL_LOG_ENV

    if args.path:
        return Path(args.path)
    configured = os.environ.get(CALL_LOG_ENV)
    if configured and configured != "-":
        return Path(configured)
    settings = open_for_command(args, None).settings
    path = settings.server.call_log
    if not path or path == "-":
        msg = "no call log named: lorenz calls PATH, or server.call_log in WORKFLOW.md, or LORENZ_CALL_LOG"
        raise UsageError(msg)
    return Path(settings.base_dir) / str(path)


def run(args: argparse.Namespace) -> int:
    from lorenz.calls import MAX_ERROR_CHARS, MAX_TOOL_CHARS, follow, parse_since, read_calls, shown, summarize

    path = _call_log_path(args)
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.follow:
        try:
            follow(path, sys.stdout, tool=args.tool)
        except FileNotFoundError as exc:
            raise UsageError(f"{path}: no such call log") from exc
        return 0
    try:
        with path.open(encoding="utf-8") as handle:
            summaries = summarize(read_calls(handle, since=since, tool=args.tool))
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such call log") from exc
    if args.json:
        print_json(json_object(log=str(path), tools=[summary.to_dict() for summary in summaries]))
        return 0
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
