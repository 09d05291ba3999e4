"""The ``template_pack`` tracker: replace the example issues with calls to your tracker's API
(through ``context.http``, the host's ``httpx.AsyncClient``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lorenz import Issue, Settings, TrackerContext

__all__ = ["TRACKER", "TemplatePackClient", "TemplatePackTracker"]

EXAMPLE_ISSUES = (
    Issue(
        id="1",
        identifier="TEMPLATEPACK-1",
        title="Try the template_pack pack",
        state="Todo",
        state_type="unstarted",
    ),
    Issue(
        id="2",
        identifier="TEMPLATEPACK-2",
        title="Ship it",
        state="Done",
        state_type="completed",
    ),
)


class TemplatePackClient:
    def __init__(self, issues: Sequence[Issue], active_states: Sequence[str]) -> None:
        self._issues = tuple(issues)
        self._active = {state.casefold() for state in active_states}

    async def fetch_candidate_issues(self) -> list[Issue]:
        return [issue for issue in self._issues if issue.state.casefold() in self._active]

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        by_key = {key: issue for issue in self._issues for key in (issue.id, issue.identifier)}
        return [by_key[key] for key in ids if key in by_key]


class TemplatePackTracker:
    kind = "template_pack"

    def create_client(self, settings: Settings, context: TrackerContext) -> TemplatePackClient:
        return TemplatePackClient(EXAMPLE_ISSUES, settings.tracker.active_states)

    def default_tool_packs(self, settings: Settings) -> list[str]:
        """The packs mounted with this tracker."""
        return ["template_pack"]

    def project_url(self, settings: Settings) -> Any:
        return None


TRACKER = TemplatePackTracker()
