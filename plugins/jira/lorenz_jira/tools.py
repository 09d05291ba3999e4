"""The ``jira`` tool pack: seven ``jira_*`` tools over whichever Jira transport is configured.

The tools are typed tools of the authoring kit (:mod:`.handlers`, loaded by the first listing or
call, not when the plugin registers); :class:`JiraToolPack` serves them as the pack always answered:
the same input schemas, the result as pretty JSON text, and every failure redacted with the message
it always had (now with a reason, retryable and recovery).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lorenz import (
    Permissions,
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    needs_tracker_kind,
    plain_text,
    redact_text,
    unsupported_tool_failure,
)

from .names import DEFAULT_SELECT, JIRA_TOOL_NAMES
from .options import JIRA_KINDS, jira_options
from .tracker import JIRA_PACK

if TYPE_CHECKING:
    from lorenz.authoring import Pack

__all__ = ["DEFAULT_SELECT", "JIRA_TOOL_NAMES", "JiraToolPack", "kit_pack"]  # and KIT_PACK, lazily


def kit_pack() -> Pack:
    """The typed tools as a :class:`lorenz.authoring.Pack` (what ``lorenz.testing`` and the lint
    check); imported on first use, so registering the plugin loads no kit."""
    from .handlers import KIT_PACK  # the typed tools: registering loads none

    return KIT_PACK


def __getattr__(name: str) -> Any:
    if name == "KIT_PACK":
        return kit_pack()
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def _secrets(settings: Settings) -> set[str]:
    """The values to redact: the settings' secrets plus the Jira credentials when the options parse."""
    try:
        credentials = jira_options(settings).credentials()
    except Exception:  # invalid options: the failure being reported is usually this very error
        credentials = (settings.tracker.api_key,) if settings.tracker.api_key else ()
    return set(settings.secrets) | set(credentials)


#: The enrichment jira_query adds besides its ``total`` (which its text has always had).
_ENRICHMENT = frozenset({"echo", "notice"})


def _as_before(result: ToolResult, settings: Settings) -> ToolResult:
    """``result`` answering as the pack always did: the text is the pretty JSON it always sent (a
    query's echo and notice ride in ``structuredContent`` only), and a failure's message is redacted."""
    if result.success:
        data = result.result
        if isinstance(data, Mapping) and not _ENRICHMENT.isdisjoint(data):
            from lorenz.authoring import FormattedResult  # lorenz.authoring: only an enriched result

            text = plain_text({key: value for key, value in data.items() if key not in _ENRICHMENT})
            return FormattedResult(success=True, result=data, text=text)
        return ToolResult(success=True, result=data)
    message = redact_text(result.error or "", _secrets(settings))
    error = result.result.get("error") if isinstance(result.result, Mapping) else None
    details = {key: value for key, value in (error or {}).items() if key != "message"}
    return ToolResult(success=False, error=message, result={"error": {"message": message, **details}})


class JiraToolPack:
    """Pack ``jira``: read, query, move, comment on and create issues. Takes no ``tools.jira`` keys."""

    name = JIRA_PACK

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        """The seven tools, always, in a fixed order: the kit's specs (title, annotations,
        outputSchema) with the input schemas callers have always seen."""
        return kit_pack().tool_specs(settings)

    def typed_pack(self) -> Pack:
        """The kit ``Pack`` behind this provider (``lorenz lint`` checks its tools)."""
        return kit_pack()

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): the configured site and remote MCP server."""
        options = jira_options(settings)
        return Permissions.reaching(options.base_url, options.mcp.url)

    def check_settings(self, settings: Settings) -> list[str]:
        """The site and credentials are the Jira tracker's (its ``validate_dispatch`` checks them)."""
        return needs_tracker_kind(settings, JIRA_KINDS, ("tracker.base_url", "tracker.email", "tracker.api_key"))

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """Run one ``jira_*`` tool; every failure is redacted. Arguments are checked before a
        backend client is built or the network touched."""
        if name not in JIRA_TOOL_NAMES:
            return unsupported_tool_failure(name, JIRA_TOOL_NAMES)
        return _as_before(await kit_pack().execute_tool(name, input, context), context.settings)
