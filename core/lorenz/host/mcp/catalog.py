"""A budgeted catalog (``server.catalog``) served: each caller's ``tools/list`` cut to its budget
(:func:`lorenz.toolsearch.budget.fit`), the search and call tools that reach the rest, the tools a
search found added to that session's list, and the usage each caller's list learns from.

A caller is an OAuth subject, else a scoped token's name, else everyone served the full grant. Its
usage is each call's weight halving every week, learned from the calls this process serves and,
once, from the call log's tail (so a restart, and every worker, starts from what the log says).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from lorenz.host.grants import Grant
from lorenz.results import ToolResult, failure_result
from lorenz.toolcall.replies import ToolReply, call_result
from lorenz.toolsearch.budget import CALL_TOOL, MAX_QUERY_CHARS, SEARCH_TOOL, fit
from lorenz.toolsearch.cost import context_tokens

if TYPE_CHECKING:
    from lorenz.host.reload.live import Snapshot
    from lorenz.toolsearch.index import CatalogSearch

__all__ = ["HALF_LIFE_SECONDS", "ServedCatalog", "Usage", "caller_key"]

logger = logging.getLogger("lorenz.host")

#: How long until a call counts half as much in its caller's usage.
HALF_LIFE_SECONDS = 7 * 24 * 3600.0
#: Callers, and sessions with found tools, remembered at most (the least recent are forgotten).
MAX_REMEMBERED = 10_000
#: Bytes of the call log's tail read to learn each caller's usage from at start.
LEARN_FROM_BYTES = 4 * 1024 * 1024

_CATALOG_TOOLS = {SEARCH_TOOL.name: SEARCH_TOOL, CALL_TOOL.name: CALL_TOOL}

#: Runs one call of a mounted tool exactly as ``tools/call`` does (grants, middleware, call log).
CallTool = Callable[[str, Any], Awaitable[ToolReply]]


def caller_key(subject: str | None, token: str | None) -> str:
    """Whose usage a call counts in: the OAuth subject's, a scoped token's, or everyone's (``""``)."""
    if subject:
        return f"subject:{subject}"
    return f"token:{token}" if token else ""


class Usage:
    """Each caller's calls per tool, each call's weight halving every :data:`HALF_LIFE_SECONDS`."""

    def __init__(self) -> None:
        self._callers: OrderedDict[str, dict[str, tuple[float, float]]] = OrderedDict()

    def add(self, caller: str, tool: str, when: float | None = None) -> None:
        now = time.time() if when is None else when
        tools = self._callers.pop(caller, None) or {}
        self._callers[caller] = tools  # most recent last, so the cap drops the least recent
        weight, at = tools.get(tool, (0.0, now))
        tools[tool] = (_decayed(weight, at, now) + 1.0, max(at, now))
        if len(self._callers) > MAX_REMEMBERED:
            self._callers.popitem(last=False)

    def weights(self, caller: str, now: float | None = None) -> dict[str, float]:
        moment = time.time() if now is None else now
        tools = self._callers.get(caller) or {}
        return {tool: _decayed(weight, at, moment) for tool, (weight, at) in tools.items()}

    def learn(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Count the call-log ``records`` (their ``ts``, ``tool``, ``subject`` and ``token``)."""
        for record in records:
            try:
                when = datetime.fromisoformat(str(record["ts"]).replace("Z", "+00:00")).timestamp()
            except (KeyError, ValueError):
                continue
            if record.get("kind") is None:  # a tool call, not a resource read or prompt render
                subject, token = record.get("subject"), record.get("token")
                self.add(caller_key(_text(subject), _text(token)), str(record["tool"]), when)


def _decayed(weight: float, at: float, now: float) -> float:
    return weight * math.exp2(-max(0.0, now - at) / HALF_LIFE_SECONDS)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


class ServedCatalog:
    """What a host serving ``server.catalog`` keeps: the search index, each caller's usage, and the
    tools each session was shown by a search."""

    def __init__(self) -> None:
        self._search: CatalogSearch | None = None
        self.usage = Usage()
        self._found: OrderedDict[str, set[str]] = OrderedDict()
        self._learned = False

    @property
    def search(self) -> CatalogSearch:
        """The search index, made at the first search (SQLite only for a workflow that searches)."""
        if self._search is None:
            from lorenz.toolsearch.index import CatalogSearch  # SQLite: only for a workflow that searches

            self._search = CatalogSearch()
        return self._search

    async def learn_once(self, log_path: str | None) -> None:
        """Learn from the call log's tail, the first time a budgeted list is served."""
        if self._learned:
            return
        self._learned = True
        if log_path is not None and log_path != "-":
            await anyio.to_thread.run_sync(self._learn, log_path)

    def _learn(self, log_path: str) -> None:
        from lorenz.calllog.reader import read_calls  # only for a workflow with server.catalog

        try:
            with open(log_path, "rb") as log:
                size = log.seek(0, os.SEEK_END)
                log.seek(max(0, size - LEARN_FROM_BYTES))
                lines = log.read().splitlines()
        except OSError as exc:
            logger.debug("lorenz: catalog usage not learned from %s: %s", log_path, exc)
            return
        self.usage.learn(read_calls(lines[1:] if size > LEARN_FROM_BYTES else lines))

    def count(self, grant: Grant, tool: str, snapshot: Snapshot) -> None:
        """One call of ``tool`` by ``grant``'s caller (only a mounted tool counts)."""
        if snapshot.settings.server.catalog is not None and tool in snapshot.by_name:
            subject = grant.caller.subject if grant.caller is not None else None
            self.usage.add(caller_key(subject, grant.name), tool)

    def listed(
        self, snapshot: Snapshot, tools: list[types.Tool], grant: Grant, session: str | None
    ) -> list[types.Tool]:
        """The part of ``tools`` (what the caller may see) its budget lists, and what a search
        showed ``session``; ``tools`` itself when it fits."""
        catalog = snapshot.settings.server.catalog
        if catalog is None:
            return tools
        specs = [snapshot.by_name[tool.name] for tool in tools if tool.name in snapshot.by_name]
        subject = grant.caller.subject if grant.caller is not None else None
        fitted = fit(specs, catalog, self.usage.weights(caller_key(subject, grant.name)), costs=_costs(snapshot))
        if not fitted.left_out:
            return tools
        names = [spec.name for spec in fitted.listed if spec.name not in _CATALOG_TOOLS]
        names += sorted(self._found.get(session, set()) - set(names)) if session is not None else []
        by_name = {tool.name: tool for tool in tools}
        served = [by_name[name] for name in names if name in by_name]
        return served + [_wire(spec.name) for spec in fitted.listed if spec.name in _CATALOG_TOOLS]

    def serves(self, snapshot: Snapshot, name: str) -> bool:
        """Whether ``name`` is one of the catalog's own tools here (a mounted tool keeps its name)."""
        catalog = snapshot.settings.server.catalog
        return catalog is not None and catalog.search and name in _CATALOG_TOOLS and name not in snapshot.by_name

    async def answer(
        self,
        snapshot: Snapshot,
        name: str,
        arguments: Any,
        visible: list[types.Tool],
        call: CallTool,
        session: Any = None,
        session_id: str | None = None,
    ) -> ToolReply:
        """A call of the search or the call tool; ``visible`` is what the caller's ``tools/list``
        would hold before the budget, and ``call`` runs a mounted tool as ``tools/call`` does."""
        arguments = arguments if isinstance(arguments, Mapping) else {}
        if name == CALL_TOOL.name:
            target, given = arguments.get("name"), arguments.get("arguments", {})
            if not isinstance(target, str) or not target.strip():
                return _refused("name", "the name of the tool to call, as lorenz_search_tools gave it")
            if not isinstance(given, Mapping):
                return _refused("arguments", "an object: the tool's arguments, per its inputSchema")
            if target.strip() in _CATALOG_TOOLS:
                return _refused("name", "a tool the search found: call lorenz_search_tools directly")
            return await call(target.strip(), dict(given))
        query, limit = arguments.get("query"), arguments.get("limit", 5)
        if not isinstance(query, str) or not query.strip():
            return _refused("query", "the need in a few words, e.g. 'comment on a Jira issue'")
        if len(query) > MAX_QUERY_CHARS:
            return _refused("query", f"at most {MAX_QUERY_CHARS} characters")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 20:
            return _refused("limit", "an integer from 1 to 20")
        allowed = {tool.name for tool in visible}
        index = self.search.index_for(snapshot.specs)
        hits = index.search(query, allowed=allowed, limit=limit)
        wire = {tool.name: tool for tool in visible}
        found = [wire[hit.spec.name].model_dump(by_alias=True, mode="json", exclude_none=True) for hit in hits]
        if session is not None and session_id is not None and found:
            await self._show(session, session_id, [tool["name"] for tool in found])
        return call_result(ToolResult(success=True, result={"tools": found}))

    async def _show(self, session: Any, session_id: str, names: list[str]) -> None:
        """Add what a search found to the session's list, and tell its client the list changed."""
        shown = self._found.pop(session_id, set())
        self._found[session_id] = shown
        if len(self._found) > MAX_REMEMBERED:
            self._found.popitem(last=False)
        if set(names) <= shown:
            return
        shown.update(names)
        try:
            await session.send_tool_list_changed()
        except Exception as exc:  # the session ended: its list is gone with it
            logger.debug("lorenz: no list change sent to session %s: %s", session_id[:16], exc)
            self._found.pop(session_id, None)


def _costs(snapshot: Snapshot) -> dict[str, int]:
    """Each mounted tool's estimated context tokens, computed once per snapshot."""
    costs: dict[str, int] | None = snapshot.wire.get("costs")
    if costs is None:
        costs = snapshot.wire["costs"] = {spec.name: context_tokens(spec.to_wire()) for spec in snapshot.specs}
    return costs


_WIRE: dict[str, types.Tool] = {}


def _wire(name: str) -> types.Tool:
    tool = _WIRE.get(name)
    if tool is None:
        tool = _WIRE[name] = types.Tool.model_validate(_CATALOG_TOOLS[name].to_wire())
    return tool


def _refused(key: str, wanted: str) -> ToolReply:
    message = f"Invalid arguments: {key} must be {wanted}"
    recovery = "Correct the arguments and call again"
    return call_result(failure_result(message, reason="invalid_arguments", recovery=recovery))
