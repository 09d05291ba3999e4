"""The human-facing route around ``/mcp``: the landing page (``/healthz`` and the server card are
:mod:`.status`'s).

Plain server-rendered HTML, every interpolated value escaped. Authorized like ``/mcp``: with any
token configured, an anonymous caller is told only how to connect, a scoped token sees its own
tools and calls, and only the full token (or a server with no token) sees everything, failures
included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from lorenz._version import __version__
from lorenz.host.grants import FULL, Grant
from lorenz.host.http.listening import counted
from lorenz.host.mcp.instructions import instructions_for
from lorenz.mounting.instances import provider_of
from lorenz.toolcall.middleware import layer_health

from .callers import own_call, page_grant, signed_in
from .pack_offers import offers_block
from .pack_permissions import permissions_block, policy_of, sandboxed_pill
from .sections import budget_block, health_block, tool_cost
from .status import auth_configured, endpoint_url, granted_packs, granted_tools
from .token_form import FORGET_BUTTON, TOKEN_FORM

if TYPE_CHECKING:
    from lorenz.calllog.record import CallRecord
    from lorenz.calllog.stats import CallStats, ToolStats
    from lorenz.host.reload.live import LiveWorkspace, Snapshot
    from lorenz.mounting.policy import DisabledEntry

__all__ = ["landing_page", "render_landing"]

#: The landing page's call tables: the recent calls, newest first, and the per-tool counters.
CallView = tuple[list["CallRecord"], list["ToolStats"]]


_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{margin-bottom:0}code,pre{font:13px ui-monospace,monospace;background:#f4f4f6;border-radius:4px}
pre{padding:.6rem;white-space:pre-wrap;overflow-wrap:anywhere}code{padding:.1rem .25rem}.muted{color:#6e6e73}
section.tool{border:1px solid #ddd;border-radius:6px;padding:.2rem 1rem;margin:.8rem 0}
.disabled{opacity:.55;border-style:dashed}
.failed{border-color:#c62828;background:#fff5f5}
table{border-collapse:collapse;margin:.6rem 0;font-size:13px}
td,th{border-bottom:1px solid #eee;padding:.2rem .6rem;text-align:left}
tr.call-failure td,tr.call-crash td,tr.call-timeout td,tr.call-rejected td{color:#b71c1c}
.pill{display:inline-block;font-size:12px;border:1px solid #bbb;border-radius:9px;padding:0 .5rem;margin-right:.3rem}
"""


def _disabled_card(entry: DisabledEntry) -> list[str]:
    parts = [
        f'<section class="tool disabled" id="tool-{escape(entry.name)}">',
        f'<h4><code>{escape(entry.name)}</code> <span class="pill">disabled</span></h4>',
        f"<p>{escape(entry.description)}</p>",
        f"<p>Disabled. {escape(entry.reason)}{f' (since {escape(entry.since)})' if entry.since else ''}</p>",
    ]
    if entry.hint:
        parts.append(f"<pre>{escape(entry.hint)}</pre>")
    parts.append("</section>")
    return parts


def _failures(snapshot: Snapshot) -> list[str]:
    """The plugins that failed to load and the mounted packs left out, with their errors."""
    if not snapshot.degraded:
        return []
    parts = ['<h2 id="failures">Failures</h2>', '<p class="muted">The host serves everything else.</p>']
    for failure in snapshot.pack_failures:
        what = f"pack <code>{escape(failure.pack)}</code>"
        if failure.item is not None:
            what = f"{escape(failure.item[0])} <code>{escape(failure.item[1])}</code> of {what}"
        parts.append(
            f'<section class="tool failed" id="failed-pack-{escape(failure.pack)}"><h4>{what} left out</h4>'
            f"<pre>{escape(failure.error)}</pre></section>"
        )
    for plugin in snapshot.plugin_failures:
        parts.append(
            f'<section class="tool failed" id="failed-plugin-{escape(plugin.name)}"><h4>plugin '
            f"<code>{escape(plugin.name)}</code> ({escape(plugin.origin)}) failed to load</h4>"
            f"<pre>{escape(plugin.error)}</pre></section>"
        )
    return parts


def _restart_banner(snapshot: Snapshot) -> list[str]:
    """Changes on disk this process cannot load: said first, as only a restart applies them."""
    if not snapshot.restart_needed:
        return []
    items = "".join(f"<li>{escape(failure.error)}</li>" for failure in snapshot.restart_needed)
    return [f'<div class="tool failed" id="restart-needed"><h3>Restart needed</h3><ul>{items}</ul></div>']


def _hints(annotations: Any) -> str:
    if not annotations:
        return '<span class="pill">no annotations</span>'
    pills = []
    for key, value in annotations.items():
        pills.append(f'<span class="pill">{escape(str(key))}: {escape(json.dumps(value))}</span>')
    return "".join(pills)


def _recent_calls(calls: CallView | None, refresh: int | None, grant: Grant) -> list[str]:
    """The live view: per-tool counters and the most recent calls (for a scoped token or an OAuth
    caller: the counters of its tools, and its own calls)."""
    if calls is None:
        return []
    recent, tools = calls
    if grant != FULL:
        tools = [tool for tool in tools if grant.allows(tool.tool)]
        recent = [call for call in recent if own_call(call, grant)]
    again = (
        f'refreshing every {refresh} s (<a href="/">stop</a>)'
        if refresh
        else '<a href="/?refresh=5#calls">refresh every 5 s</a>'
    )
    parts = [f'<h2 id="calls">Recent calls</h2><p class="muted">Since start; {again}.</p>']
    if not recent:
        return [*parts, "<p>No tool calls yet.</p>"]
    parts.append("<table><tr><th>tool</th><th>calls</th><th>failures</th><th>p50 ms</th><th>p95 ms</th></tr>")
    for tool in tools:
        parts.append(
            f"<tr><td><code>{escape(tool.tool)}</code></td><td>{tool.calls}</td><td>{tool.failures}</td>"
            f"<td>{tool.p50_ms:.1f}</td><td>{tool.p95_ms:.1f}</td></tr>"
        )
    parts.append("</table><table><tr><th>time (UTC)</th><th>tool</th><th>outcome</th><th>ms</th><th>error</th></tr>")
    for call in recent:
        outcome = escape(call.outcome)
        parts.append(
            f'<tr class="call-{outcome}"><td>{escape(call.ts[11:23])}</td><td><code>{escape(call.tool)}</code></td>'
            f"<td>{outcome}</td><td>{call.duration_ms:.1f}</td><td>{escape(call.error or '')}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _inventory(snapshot: Snapshot, grant: Grant) -> list[str]:
    """The packs ``grant`` may use, with their tools (and the operator-disabled ones it would see)."""
    tools_by_pack: dict[str, list[dict[str, Any]]] = {}
    for tool in granted_tools(snapshot, grant):
        tools_by_pack.setdefault(str(tool["pack"]), []).append(tool)
    packs = set(granted_packs(snapshot, grant))
    origins = {
        name: " ".join(filter(None, (plugin.distribution, plugin.version)))
        for plugin in snapshot.workspace.discovery.plugins
        for name in plugin.packs
    }
    parts = ["<h2>Packs and tools</h2>"]
    if not packs:
        parts.append("<p>No tool packs are mounted.</p>")
    for pack in snapshot.packs:
        if pack.name not in packs:
            continue
        tools = tools_by_pack.get(pack.name, [])
        pill = ' <span class="pill">isolated</span>' if getattr(pack, "isolated", False) else ""
        provider = provider_of(pack)
        served_by = f' <span class="muted">({escape(provider)})</span>' if provider != pack.name else ""
        origin = origins.get(pack.name)
        shown = f' <span class="muted">{escape(origin)}</span>' if origin else ""
        pill += sandboxed_pill(policy := policy_of(snapshot, pack))
        parts.append(f'<h3 id="pack-{escape(pack.name)}">{escape(pack.name)}{served_by}{pill}{shown}</h3>')
        parts += permissions_block(policy) if grant == FULL else []
        muted = [
            entry
            for entry in snapshot.workspace.mounted.disabled.values()
            if entry.pack == pack.name and grant.allows(entry.name)
        ]
        if not tools and not muted:
            parts.append('<p class="muted">No tools.</p>')
        for tool in tools:
            title = f' <span class="muted">({escape(tool["title"])})</span>' if tool.get("title") else ""
            schema = json.dumps(tool["inputSchema"], indent=2, ensure_ascii=False)
            parts += [
                f'<section class="tool" id="tool-{escape(tool["name"])}">',
                f"<h4><code>{escape(tool['name'])}</code>{title}{tool_cost(tool)}</h4>",
                f"<p>{escape(tool.get('description') or '')}</p>",
                f"<p>{_hints(tool.get('annotations'))}</p>",
                "<details><summary>Input schema</summary>",
                f"<pre>{escape(schema)}</pre></details>",
            ]
            if "outputSchema" in tool:
                output = json.dumps(tool["outputSchema"], indent=2, ensure_ascii=False)
                parts.append(f"<details><summary>Output schema</summary><pre>{escape(output)}</pre></details>")
            parts.append("</section>")
        for entry in muted:
            parts += _disabled_card(entry)
        parts += offers_block(snapshot, pack.name)
    return parts


def render_landing(
    snapshot: Snapshot,
    url: str,
    *,
    grant: Grant | None = FULL,
    stats: CallStats | None = None,
    refresh: int | None = None,
    calls: CallView | None = None,
    sinks: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The landing page: how to connect, and to a caller with a grant what it may use, what that
    costs an agent's context, and what it has been doing (the failures, and the counts of the
    middleware and ``sinks``, only to the full grant). ``None``: an anonymous caller."""
    token = auth_configured(snapshot)
    header = ' --header "Authorization: Bearer $LORENZ_MCP_TOKEN"' if token else ""
    curl_auth = ' -H "Authorization: Bearer $LORENZ_MCP_TOKEN"' if token else ""
    inspector_auth = ' --header "Authorization: Bearer $LORENZ_MCP_TOKEN"' if token else ""
    curl = (
        f"curl -s {url} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'"
        f' -H \'MCP-Protocol-Version: 2025-11-25\'{curl_auth} -d \'{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}\''
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="refresh" content="{refresh}">' if refresh and grant is not None else "",
        f"<title>Lorenz MCP server</title><style>{_CSS}</style></head>",
        '<body data-grant="yes">' if grant is not None else "<body>",
        f'<h1>Lorenz</h1><p class="muted">MCP server, version {escape(__version__)}</p>',
    ]
    if grant == FULL:
        parts += _restart_banner(snapshot)
    parts += signed_in(grant)
    if grant is not None:
        parts.append(
            f"<p>{counted(len(granted_tools(snapshot, grant)), 'tool')} "
            f"from {counted(len(granted_packs(snapshot, grant)), 'pack')}"
            f"{' (the embedded default: the local board)' if snapshot.workspace.embedded_default else ''}.</p>"
        )
    parts += [
        "<h2>Connect</h2>",
        f"<p>Endpoint (Streamable HTTP): <code>{escape(url)}</code>{' — requires a bearer token' if token else ''}</p>",
        "<p>Claude Code:</p>",
        f"<pre>claude mcp add --transport http lorenz {escape(url)}{escape(header)}</pre>",
        "<p>MCP Inspector:</p>",
        f"<pre>npx @modelcontextprotocol/inspector --cli {escape(url)} --transport http"
        f"{escape(inspector_auth)} --method tools/list</pre>",
        "<p>curl:</p>",
        f"<pre>{escape(curl)}</pre>",
        "<p>Over stdio (an MCP client starts the process): <code>lorenz serve --stdio</code></p>",
    ]
    if grant is None:
        parts.append("<p>The tool inventory is available to callers presenting a bearer token.</p>")
        parts.append(TOKEN_FORM)
    else:
        if token:
            parts.append(FORGET_BUTTON)
        if grant == FULL:
            parts += _failures(snapshot)
            parts += health_block("Middleware", layer_health(snapshot.workspace.middleware))
            parts += health_block("Call-record sinks", sinks or {})
        project = snapshot.workspace.project_url
        if project:
            kind = escape(str(snapshot.settings.tracker.kind))
            parts.append(f'<p>Tracker: {kind}, project <a href="{escape(project)}">{escape(project)}</a></p>')
        parts += ['<h2 id="instructions">Instructions</h2>', f"<pre>{escape(instructions_for(snapshot))}</pre>"]
        parts += _recent_calls(calls if calls is not None or stats is None else stats.snapshot(), refresh, grant)
        specs = [spec for spec in snapshot.specs if grant.allows(spec.name)]
        parts += budget_block(specs, snapshot.settings.server.catalog)
        parts += _inventory(snapshot, grant)
    parts.append(
        '<p class="muted">Server card: <a href="/.well-known/mcp.json">/.well-known/mcp.json</a>'
        ' · health: <a href="/healthz">/healthz</a></p></body></html>'
    )
    return "\n".join(parts)


#: The longest auto-refresh period the landing page accepts, in seconds.
MAX_REFRESH_SECONDS = 3600


def refresh_seconds(value: str) -> int | None:
    """``?refresh=N``: N seconds (at most an hour), or ``None`` for anything else: only ASCII
    digits count (``str.isdigit`` admits ``²``, which ``int`` refuses) and a longer string is
    not parsed at all."""
    if not value or len(value) > 6 or not (value.isascii() and value.isdigit()):
        return None
    seconds = int(value)
    return min(seconds, MAX_REFRESH_SECONDS) if seconds > 0 else None


async def landing_page(request: Request) -> HTMLResponse:
    live: LiveWorkspace = request.app.state.live
    snapshot = await live.current_async()
    state = getattr(request.app.state, "host", None)
    recorder = getattr(state, "recorder", None)
    grant = await page_grant(request, snapshot)
    html = render_landing(
        snapshot,
        endpoint_url(request),
        grant=grant,
        calls=None if recorder is None or grant is None else await recorder.view(snapshot),
        sinks=recorder.sinks.health() if recorder is not None and grant is FULL else None,
        refresh=refresh_seconds(request.query_params.get("refresh", "")),
    )
    return HTMLResponse(
        html,
        headers={
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": (
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; "
                "form-action 'none'; base-uri 'none'"
            ),
            "Vary": "Authorization",
        },
    )
