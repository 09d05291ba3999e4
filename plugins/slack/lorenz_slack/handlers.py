"""Running a ``slack`` tool by name: as the kit runs it (:func:`run_slack_tool`, what the pack does), or
answering as the pack always has (:func:`execute_slack_tool`). Loaded on a tool's first call."""

from __future__ import annotations

from typing import Any, cast

import attrs

from lorenz import ArgumentError, Settings, ToolResult, as_arguments, tool_success, unsupported_tool_failure
from lorenz.authoring import FormattedResult, ToolFailure, failure_result

from .catalog import TOOL_NAMES
from .shapes import payload, pretty
from .toolkit import TOOLS
from .transport import SlackTransport
from .work import SlackCallContext

__all__ = ["execute_slack_tool", "run_slack_tool"]


async def run_slack_tool(name: str, input: Any, context: Any, transport: SlackTransport | None) -> ToolResult:
    """Run tool ``name`` as the kit runs it (structured output, enrichment, declared failures), on
    ``transport`` (``None``: the Web API through ``context.http``)."""
    found = TOOLS.get(name)
    if found is None:
        return unsupported_tool_failure(name, TOOL_NAMES)
    ctx = SlackCallContext(
        settings=context.settings,
        http=context.http,
        options={},
        tool=found,
        progress_sink=getattr(context, "progress_sink", None),
        log_sink=getattr(context, "log_sink", None),
        enabled=getattr(context, "enabled", None),
        transport=transport,
    )
    result = await found.run(input, ctx)
    if not isinstance(result, FormattedResult):
        return result
    # Callers parse the text as the JSON the pack always answered: the enrichment (echo, notice) and a
    # failure's reason, retryable and recovery ride in structuredContent only.
    enriched = ctx.enrich.values
    if result.success and enriched and isinstance(result.result, dict):
        return attrs.evolve(result, text=pretty({k: v for k, v in result.result.items() if k not in enriched}))
    if not result.success and result.error is not None:
        return attrs.evolve(result, text=pretty({"error": {"message": result.error}}))
    return result


async def execute_slack_tool(name: str, input: Any, settings: Settings, transport: SlackTransport) -> ToolResult:
    """Run one slack tool against ``transport`` and answer as the pack always has: the bare payload
    (no enrichment, absent fields left out); every error becomes a failure result."""
    found = TOOLS.get(name)
    if found is None or found.read_arguments is None:
        return unsupported_tool_failure(name, TOOL_NAMES)
    ctx = SlackCallContext(settings=settings, http=cast(Any, None), options={}, tool=found, transport=transport)
    try:
        args = found.read_arguments(ctx, as_arguments(input))
        return tool_success(payload(await found.handler(ctx, args)))
    except ArgumentError as exc:
        return failure_result(str(exc), reason="invalid_arguments")
    except ToolFailure as failure:
        return failure.to_result()
