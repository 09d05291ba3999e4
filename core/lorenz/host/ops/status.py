"""The machine-readable routes around ``/mcp``: ``/healthz`` and the server card, and the tools and
packs a caller's grant sees (the landing page lists the same).

Authorized like ``/mcp``: with any token configured, an anonymous caller gets a bare status and a
card without tools, a scoped token sees its own tools, and only the full token (or a server with
no token) sees failures.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from lorenz._version import __version__
from lorenz.host.grants import FULL, Grant
from lorenz.host.http.listening import MCP_PATH
from lorenz.toolcall.middleware import layer_health

from .callers import page_grant

if TYPE_CHECKING:
    from lorenz.host.reload.live import LiveWorkspace, Snapshot

__all__ = [
    "auth_configured",
    "endpoint_url",
    "granted_packs",
    "granted_tools",
    "health_data",
    "healthz",
    "server_card",
    "server_card_data",
]

MCP_VERSION = "2026-07-28"


def endpoint_url(request: Request) -> str:
    """The ``/mcp`` URL as this client reached us (the Host header was validated upstream)."""
    return f"{request.url.scheme}://{request.url.netloc}{MCP_PATH}"


def auth_configured(snapshot: Snapshot) -> bool:
    """Whether any token or OAuth is configured (an anonymous caller then sees no tools)."""
    server = snapshot.settings.server
    return bool(server.token or server.tokens or server.auth)


def granted_tools(snapshot: Snapshot, grant: Grant = FULL) -> list[dict[str, Any]]:
    """The wire form of each tool ``grant`` may call, with the pack serving it."""
    out = []
    for spec in snapshot.specs:
        if not grant.allows(spec.name):
            continue
        entry = spec.to_wire()
        entry["pack"] = snapshot.pack_of(spec.name)
        out.append(entry)
    return out


def granted_packs(snapshot: Snapshot, grant: Grant) -> list[str]:
    """The packs ``grant`` may call a tool of (every mounted pack for the full grant)."""
    if grant.everything:
        return [pack.name for pack in snapshot.packs]
    names = {snapshot.pack_of(spec.name) for spec in snapshot.specs if grant.allows(spec.name)}
    return [pack.name for pack in snapshot.packs if pack.name in names]


def server_card_data(snapshot: Snapshot, url: str, *, grant: Grant | None) -> dict[str, Any]:
    """The server card; the packs and tools only for a caller with a grant, limited to it."""
    token = auth_configured(snapshot)
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
    if grant is not None:
        card["packs"] = granted_packs(snapshot, grant)
        card["tools"] = [
            {key: tool[key] for key in ("name", "title", "description", "pack", "annotations") if key in tool}
            for tool in granted_tools(snapshot, grant)
        ]
    return card


async def server_card(request: Request) -> JSONResponse:
    live: LiveWorkspace = request.app.state.live
    snapshot = await live.current_async()
    card = server_card_data(snapshot, endpoint_url(request), grant=await page_grant(request, snapshot))
    headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if not auth_configured(snapshot):  # any page may read a public card; an authorized one is no page's
        headers["Access-Control-Allow-Origin"] = "*"
    else:
        headers["Vary"] = "Authorization"
    return JSONResponse(card, headers=headers)


def health_data(
    snapshot: Snapshot, *, reload_failed: bool, detailed: bool = True, restart_needed: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``/healthz``: ``ok``, or ``degraded`` (still HTTP 200: the host serves the rest) naming the
    plugins that failed to load and the mounted packs left out; ``pid`` is the worker process that
    answered, ``generation`` counts the reloads it served; ``settingsNeedRestart`` names the
    settings changed on disk that only a restart applies. Not ``detailed``: the status and counts
    only (what a load balancer needs), no names, errors or paths."""
    data: dict[str, Any] = {
        "status": "degraded" if snapshot.degraded else "ok",
        "packs": len(snapshot.packs),
        "tools": len(snapshot.specs),
        "reloadFailed": reload_failed,
        "pid": os.getpid(),
        "generation": snapshot.generation,
    }
    if restart_needed:
        data["settingsNeedRestart"] = list(restart_needed)
    if not detailed:
        return data
    isolated = snapshot.isolated_status()
    if isolated:
        data["isolatedPacks"] = isolated
    middleware = layer_health(snapshot.workspace.middleware)
    if middleware:
        data["middleware"] = middleware
    if snapshot.degraded:
        data["failed"] = {
            "plugins": [
                {"name": f.name, "distribution": f.distribution, "version": f.version, "error": f.error}
                for f in snapshot.plugin_failures
            ],
            "packs": [failure.to_dict() for failure in snapshot.pack_failures],
        }
        if snapshot.restart_needed:
            data["restartNeeded"] = [
                {"distribution": f.distribution, "version": f.version, "reason": f.error}
                for f in snapshot.restart_needed
            ]
    return data


async def healthz(request: Request) -> JSONResponse:
    live: LiveWorkspace = request.app.state.live
    snapshot = await live.current_async()
    detailed = await page_grant(request, snapshot) is FULL
    data = health_data(
        snapshot, reload_failed=live.last_error is not None, detailed=detailed, restart_needed=live.restart_needed()
    )
    recorder = getattr(getattr(request.app.state, "host", None), "recorder", None)
    sinks = recorder.sinks.health() if detailed and recorder is not None else None
    if sinks:  # this worker's call-record sinks: delivered, queued, dropped, failed
        data["sinks"] = sinks
    return JSONResponse(data, headers={"Cache-Control": "no-store", "Vary": "Authorization"})
