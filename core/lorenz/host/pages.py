"""The human-facing routes around ``/mcp``: the landing page, the server card, ``/healthz``.

Plain server-rendered HTML, every interpolated value escaped. With a bearer token configured,
the tool inventory is shown only to callers presenting it (the page still says how to connect).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from .. import __version__
from .instructions import instructions_for
from .listening import counted
from .security import MCP_PATH, token_matches

if TYPE_CHECKING:
    from ..policy import DisabledEntry
    from .calllog import CallStats
    from .reload import LiveWorkspace, Snapshot

__all__ = ["health_data", "healthz", "landing_page", "render_landing", "server_card"]

MCP_VERSION = "2026-07-28"


def endpoint_url(request: Request) -> str:
    """The ``/mcp`` URL as this client reached us (the Host header was validated upstream)."""
    return f"{request.url.scheme}://{request.url.netloc}{MCP_PATH}"


def _authorized(request: Request, snapshot: Snapshot) -> bool:
    token = snapshot.settings.server.token
    header = request.headers.get("authorization")
    # The raw bytes (Starlette decodes headers as latin-1), compared like SecurityMiddleware does.
    return not token or token_matches(header.encode("latin-1") if header is not None else None, token)


def _tools(snapshot: Snapshot) -> list[dict[str, Any]]:
    out = []
    for spec in snapshot.specs:
        entry = spec.to_wire()
        entry["pack"] = snapshot.pack_of(spec.name)
        out.append(entry)
    return out


def server_card_data(snapshot: Snapshot, url: str, *, authorized: bool) -> dict[str, Any]:
    token = bool(snapshot.settings.server.token)
    card: dict[str, Any] = {
        "mcp_version": MCP_VERSION,
        "server_name": "lorenz",
        "server_version": __version__,
        "server_description": "Lorenz tool packs served over MCP",
        "endpoints": {"streamable_http": url},
        "transports": ["streamable-http", "stdio"],
        "capabilities": {"tools": True, "resources": True, "prompts": True, "logging": False},
        "authentication": {"required": True, "type": "bearer"} if token else {"required": False, "type": "none"},
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if authorized:
        card["packs"] = [pack.name for pack in snapshot.packs]
        card["tools"] = [
            {key: tool[key] for key in ("name", "title", "description", "pack", "annotations") if key in tool}
            for tool in _tools(snapshot)
        ]
    return card


async def server_card(request: Request) -> JSONResponse:
    live: LiveWorkspace = request.app.state.live
    snapshot = await live.current_async()
    card = server_card_data(snapshot, endpoint_url(request), authorized=_authorized(request, snapshot))
    return JSONResponse(
        card,
        headers={
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
            "Access-Control-Allow-Origin": "*",
        },
    )


def health_data(snapshot: Snapshot, *, reload_failed: bool) -> dict[str, Any]:
    """``/healthz``: ``ok``, or ``degraded`` (still HTTP 200: the host serves the rest) naming the
    plugins that failed to load and the mounted packs left out; ``pid`` is the worker process that
    answered, ``generation`` counts the reloads it served."""
    data: dict[str, Any] = {
        "status": "degraded" if snapshot.degraded else "ok",
        "packs": len(snapshot.packs),
        "tools": len(snapshot.specs),
        "reloadFailed": reload_failed,
        "pid": os.getpid(),
        "generation": snapshot.generation,
    }
    isolated = snapshot.isolated_status()
    if isolated:
        data["isolatedPacks"] = isolated
    if snapshot.degraded:
        data["failed"] = {
            "plugins": [
                {"name": f.name, "distribution": f.distribution, "version": f.version, "error": f.error}
                for f in snapshot.plugin_failures
            ],
            "packs": [failure.to_dict() for failure in snapshot.pack_failures],
        }
    return data


async def healthz(request: Request) -> JSONResponse:
    live: LiveWorkspace = request.app.state.live
    snapshot = await live.current_async()
    return JSONResponse(
        health_data(snapshot, reload_failed=live.last_error is not None), headers={"Cache-Control": "no-store"}
    )


_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{margin-bottom:0}code,pre{font:13px ui-monospace,monospace;background:#f4f4f6;border-radius:4px}
pre{padding:.6rem;overflow-x:auto}code{padding:.1rem .25rem}.muted{color:#6e6e73}
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
        parts.append(
            f'<section class="tool failed" id="failed-pack-{escape(failure.pack)}"><h4>pack '
            f"<code>{escape(failure.pack)}</code> left out</h4><pre>{escape(failure.error)}</pre></section>"
        )
    for plugin in snapshot.plugin_failures:
        parts.append(
            f'<section class="tool failed" id="failed-plugin-{escape(plugin.name)}"><h4>plugin '
            f"<code>{escape(plugin.name)}</code> ({escape(plugin.origin)}) failed to load</h4>"
            f"<pre>{escape(plugin.error)}</pre></section>"
        )
    return parts


def _hints(annotations: Any) -> str:
    if not annotations:
        return '<span class="pill">no annotations</span>'
    pills = []
    for key, value in annotations.items():
        pills.append(f'<span class="pill">{escape(str(key))}: {escape(json.dumps(value))}</span>')
    return "".join(pills)


def _recent_calls(stats: CallStats | None, refresh: int | None) -> list[str]:
    """The live view: per-tool counters since start and the most recent calls."""
    if stats is None:
        return []
    recent, tools = stats.snapshot()
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


def render_landing(
    snapshot: Snapshot, url: str, *, authorized: bool, stats: CallStats | None = None, refresh: int | None = None
) -> str:
    """The landing page: what is served, how to connect to it, and (to authorized callers) what
    the tools have been doing."""
    token = bool(snapshot.settings.server.token)
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
        f'<meta http-equiv="refresh" content="{refresh}">' if refresh else "",
        f"<title>Lorenz MCP server</title><style>{_CSS}</style></head><body>",
        f'<h1>Lorenz</h1><p class="muted">MCP server, version {escape(__version__)}</p>',
    ]
    if authorized:
        parts.append(
            f"<p>{counted(len(snapshot.specs), 'tool')} from {counted(len(snapshot.packs), 'pack')}"
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
    if not authorized:
        parts.append("<p>The tool inventory is available to callers presenting the bearer token.</p>")
    else:
        parts += _failures(snapshot)
        project = snapshot.workspace.project_url
        if project:
            kind = escape(str(snapshot.settings.tracker.kind))
            parts.append(f'<p>Tracker: {kind}, project <a href="{escape(project)}">{escape(project)}</a></p>')
        parts += ['<h2 id="instructions">Instructions</h2>', f"<pre>{escape(instructions_for(snapshot))}</pre>"]
        parts += _recent_calls(stats, refresh)
        tools_by_pack: dict[str, list[dict[str, Any]]] = {}
        for tool in _tools(snapshot):
            tools_by_pack.setdefault(str(tool["pack"]), []).append(tool)
        parts.append("<h2>Packs and tools</h2>")
        if not snapshot.packs:
            parts.append("<p>No tool packs are mounted.</p>")
        for pack in snapshot.packs:
            tools = tools_by_pack.get(pack.name, [])
            pill = ' <span class="pill">isolated</span>' if getattr(pack, "isolated", False) else ""
            parts.append(f'<h3 id="pack-{escape(pack.name)}">{escape(pack.name)}{pill}</h3>')
            muted = [entry for entry in snapshot.workspace.mounted.disabled.values() if entry.pack == pack.name]
            if not tools and not muted:
                parts.append('<p class="muted">No tools.</p>')
            for tool in tools:
                title = f' <span class="muted">({escape(tool["title"])})</span>' if tool.get("title") else ""
                schema = json.dumps(tool["inputSchema"], indent=2, ensure_ascii=False)
                parts += [
                    f'<section class="tool" id="tool-{escape(tool["name"])}">',
                    f"<h4><code>{escape(tool['name'])}</code>{title}</h4>",
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
    parts.append(
        '<p class="muted">Server card: <a href="/.well-known/mcp.json">/.well-known/mcp.json</a>'
        ' · health: <a href="/healthz">/healthz</a></p></body></html>'
    )
    return "\n".join(parts)


async def landing_page(request: Request) -> HTMLResponse:
    live: LiveWorkspace = request.app.state.live
    snapshot = await live.current_async()
    refresh = request.query_params.get("refresh", "")
    state = getattr(request.app.state, "host", None)
    html = render_landing(
        snapshot,
        endpoint_url(request),
        authorized=_authorized(request, snapshot),
        stats=getattr(getattr(state, "recorder", None), "stats", None),
        refresh=min(int(refresh), 3600) if refresh.isdigit() and int(refresh) > 0 else None,
    )
    return HTMLResponse(
        html,
        headers={
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        },
    )
