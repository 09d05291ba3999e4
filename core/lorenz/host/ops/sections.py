"""Landing page sections beside the inventory: what the tools cost an agent's context and what
``server.catalog`` lists a new caller, and the counts the workflow's middleware and call-record
sinks report (a quota's refusals, a sink's deliveries). Every value is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from lorenz.host.http.listening import counted
from lorenz.toolsearch.budget import fit
from lorenz.toolsearch.cost import BYTES_PER_TOKEN, context_tokens

if TYPE_CHECKING:
    from lorenz.contracts import ToolSpec
    from lorenz.settings.model import CatalogSettings

__all__ = ["budget_block", "health_block", "tool_cost"]


def tool_cost(tool: Mapping[str, Any]) -> str:
    """A tool card's estimated context cost (``tool``: its wire form, with the page's ``pack``)."""
    return f' <span class="muted">~{context_tokens({k: v for k, v in tool.items() if k != "pack"})} tokens</span>'


def budget_block(specs: Sequence[ToolSpec], catalog: CatalogSettings | None) -> list[str]:
    """The context these tools cost together and, with ``server.catalog``, what a new caller with
    this grant is listed (pinned first, then catalog order: it has no usage yet) and left out."""
    costs = {spec.name: context_tokens(spec.to_wire()) for spec in specs}
    total = sum(costs.values())
    how = f"estimated: bytes of each tool's tools/list JSON ÷ {BYTES_PER_TOKEN}"
    parts = [
        '<h2 id="budget">Context budget</h2>',
        f"<p>{counted(len(specs), 'tool')}: ~{total} tokens of an agent's context ({escape(how)}).</p>",
    ]
    if catalog is None:
        return parts
    fitted = fit(specs, catalog, costs=costs)
    listed = ", ".join(f"<code>{escape(spec.name)}</code>" for spec in fitted.listed)
    parts.append(
        f"<p><code>server.catalog</code> lists a new caller {counted(len(fitted.listed), 'tool')},"
        f" ~{fitted.tokens} tokens: {listed}.</p>"
    )
    if fitted.left_out:
        left = ", ".join(f"<code>{escape(spec.name)}</code>" for spec in fitted.left_out)
        parts.append(f'<p class="muted">Left out (found by lorenz_search_tools, or called by name): {left}.</p>')
    return parts


def health_block(title: str, reports: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One table per middleware or sink that reports its health: each scalar it says, by key."""
    if not reports:
        return []
    parts = [f"<h2>{escape(title)}</h2>"]
    for name, report in reports.items():
        rows = "".join(
            f"<tr><td>{escape(str(key))}</td><td>{escape(str(value))}</td></tr>"
            for key, value in report.items()
            if value is None or isinstance(value, str | int | float | bool)
        )
        parts.append(f"<h3><code>{escape(name)}</code></h3><table>{rows}</table>")
    return parts
