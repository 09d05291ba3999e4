"""Which of a caller's tools a ``server.catalog`` budget lists, and the two tools that reach the rest.

A catalog that fits is listed whole. One that does not lists its pinned tools, then the caller's
most used (its usage weights, highest first; catalog order among equals), skipping any that would
overspend, plus the search and call tools, whose own cost counts against the budget.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

from attrs import frozen

from lorenz.contracts import ToolSpec
from lorenz.settings.model import CatalogSettings
from lorenz.toolsearch.cost import context_tokens

__all__ = ["CALL_TOOL", "SEARCH_TOOL", "Fitted", "fit"]

SEARCH_TOOL = ToolSpec(
    name="lorenz_search_tools",
    title="Search tools",
    description=(
        "Find the tools for a need among those not listed here: describe the need in a few words; "
        "returns the best matching tools with their full input and output schemas. Call one directly "
        "if your client shows it, or through lorenz_call_tool."
    ),
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "query": {"type": "string", "description": "The need, e.g. 'comment on a Jira issue'."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Tools to return (default 5)."},
        },
        "required": ["query"],
    },
    annotations={"readOnlyHint": True, "openWorldHint": False},
)
CALL_TOOL = ToolSpec(
    name="lorenz_call_tool",
    title="Call a tool",
    description="Call a tool found by lorenz_search_tools by its name, with its arguments; returns what it returns.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "description": "The tool's name, as lorenz_search_tools gave it."},
            "arguments": {"type": "object", "description": "The tool's arguments, per its inputSchema."},
        },
        "required": ["name", "arguments"],
    },
)


@frozen
class Fitted:
    """The tools a caller is listed: pinned, then most used, then the search and call tools when the
    catalog was cut; the tools left out, in catalog order; the estimated tokens of what is listed."""

    listed: tuple[ToolSpec, ...]
    left_out: tuple[ToolSpec, ...]
    tokens: int


def _fits(tokens: int, count: int, catalog: CatalogSettings) -> bool:
    within_tokens = catalog.budget_tokens is None or tokens <= catalog.budget_tokens
    return within_tokens and (catalog.max_tools is None or count <= catalog.max_tools)


def fit(
    specs: Sequence[ToolSpec],
    catalog: CatalogSettings,
    usage: Mapping[str, float] | None = None,
    *,
    costs: Mapping[str, int] | None = None,
) -> Fitted:
    """The part of ``specs`` (what the caller may see, in catalog order) the budget lists;
    ``costs`` are the tools' estimated tokens when already known.

    Pinned tools are listed even past the budget: the operator said so.
    """
    known = costs or {}
    costs = {spec.name: known.get(spec.name) or context_tokens(spec.to_wire()) for spec in specs}
    total = sum(costs.values())
    if _fits(total, len(specs), catalog):
        return Fitted(tuple(specs), (), total)
    extra = (SEARCH_TOOL, CALL_TOOL) if catalog.search else ()
    tokens = sum(context_tokens(spec.to_wire()) for spec in extra)
    pinned = [spec for spec in specs if any(fnmatch.fnmatchcase(spec.name, glob) for glob in catalog.pinned)]
    listed = list(pinned)
    tokens += sum(costs[spec.name] for spec in pinned)
    weights = usage or {}
    pinned_names = {spec.name for spec in pinned}
    rest = [spec for spec in specs if spec.name not in pinned_names]
    for spec in sorted(rest, key=lambda spec: -weights.get(spec.name, 0.0)):
        if _fits(tokens + costs[spec.name], len(listed) + len(extra) + 1, catalog):
            listed.append(spec)
            tokens += costs[spec.name]
    chosen = {spec.name for spec in listed}
    return Fitted((*listed, *extra), tuple(spec for spec in specs if spec.name not in chosen), tokens)
