"""The ``jira`` tool pack: seven ``jira_*`` tools over whichever Jira transport is configured.

The tools are typed tools of the authoring kit (:mod:`.handlers`); :class:`JiraToolPack` serves
them as the pack always answered: the same input schemas, the result as pretty JSON text, and every
failure redacted with the message it always had (now with a reason, retryable and recovery).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorenz import (
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    needs_tracker_kind,
    redact_text,
    unsupported_tool_failure,
)
from lorenz.authoring import Pack

from .handlers import TOOLS
from .inputs import DEFAULT_SELECT
from .options import JIRA_KINDS, jira_options
from .tracker import JIRA_PACK

__all__ = ["DEFAULT_SELECT", "JIRA_TOOL_NAMES", "KIT_PACK", "JiraToolPack"]


class _KitPack(Pack):
    """The typed tools as a kit pack that, like the pack before the kit, ignores ``tools.jira``."""

    def parse_options(self, raw: Mapping[str, Any] | None) -> Any:
        return {}


#: The typed tools as a :class:`lorenz.authoring.Pack` (what ``lorenz.testing`` and the lint check).
KIT_PACK = _KitPack(name=JIRA_PACK, tools=TOOLS, description="Read, query, move, comment on and create Jira issues.")

#: What ``tools/list`` shows: the kit's specs (title, annotations, outputSchema), the input schemas
#: being the ones callers have always seen.
_SPECS: tuple[ToolSpec, ...] = tuple(entry.spec() for entry in TOOLS)

JIRA_TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in _SPECS)


def _secrets(settings: Settings) -> set[str]:
    """The values to redact: the settings' secrets plus the Jira credentials when the options parse."""
    try:
        credentials = jira_options(settings).credentials()
    except Exception:  # invalid options: the failure being reported is usually this very error
        credentials = (settings.tracker.api_key,) if settings.tracker.api_key else ()
    return set(settings.secrets) | set(credentials)


def _as_before(result: ToolResult, settings: Settings) -> ToolResult:
    """``result`` as a plain result: the host renders it as the pretty JSON it always sent (the
    enrichment inside it, so the text stays JSON), and a failure's message is redacted."""
    if result.success:
        return ToolResult(success=True, result=result.result)
    message = redact_text(result.error or "", _secrets(settings))
    error = result.result.get("error") if isinstance(result.result, Mapping) else None
    details = {key: value for key, value in (error or {}).items() if key != "message"}
    return ToolResult(success=False, error=message, result={"error": {"message": message, **details}})


class JiraToolPack:
    """Pack ``jira``: read, query, move, comment on and create issues. Takes no ``tools.jira`` keys."""

    name = JIRA_PACK

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        """The seven tools, always, in a fixed order."""
        return list(_SPECS)

    def check_settings(self, settings: Settings) -> list[str]:
        """The site and credentials are the Jira tracker's (its ``validate_dispatch`` checks them)."""
        return needs_tracker_kind(settings, JIRA_KINDS, ("tracker.base_url", "tracker.email", "tracker.api_key"))

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """Run one ``jira_*`` tool; every failure is redacted. Arguments are checked before a
        backend client is built or the network touched."""
        if name not in JIRA_TOOL_NAMES:
            return unsupported_tool_failure(name, JIRA_TOOL_NAMES)
        return _as_before(await KIT_PACK.execute_tool(name, input, context), context.settings)
