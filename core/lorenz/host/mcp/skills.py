"""The mounted packs' skills over MCP: each file a resource (``resources/list``/``read``), each
``SKILL.md`` a prompt (``prompts/list``/``get``), for exactly the packs the workflow mounts. A
scoped token sees the skills of the packs it may call a tool of; another pack's skill does not
exist for it (reading it is refused as an unknown one is)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError

from lorenz.mounting.mount import mounted_skill_sources
from lorenz.mounting.skills import Skill, mounted_skills, read_skill_file

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from lorenz.host.grants import Grant
    from lorenz.host.reload.live import LiveWorkspace, Snapshot

__all__ = ["skill_handlers"]

#: JSON-RPC code for a resource that does not exist (the MCP specification's).
RESOURCE_NOT_FOUND = -32002


def _skills(snapshot: Snapshot) -> list[Skill]:
    cached: list[Skill] | None = snapshot.wire.get("skills")
    if cached is None:
        cached = snapshot.wire["skills"] = mounted_skills(snapshot.packs)
    return cached


def _sources(snapshot: Snapshot) -> dict[str, set[Path]]:
    """``{pack name: its skill directories}``, once per snapshot."""
    cached: dict[str, set[Path]] | None = snapshot.wire.get("skill_sources")
    if cached is None:
        cached = {pack.name: {Path(source) for source in mounted_skill_sources([pack])} for pack in snapshot.packs}
        snapshot.wire["skill_sources"] = cached
    return cached


def visible_skills(snapshot: Snapshot, grant: Grant) -> list[Skill]:
    """The skills ``grant`` may see: those of the packs it may call at least one tool of."""
    skills = _skills(snapshot)
    if grant.everything:
        return skills
    packs = {snapshot.pack_of(spec.name) for spec in snapshot.specs if grant.allows(spec.name)}
    sources = _sources(snapshot)
    directories = {directory for pack in packs if pack is not None for directory in sources.get(pack, ())}
    return [skill for skill in skills if skill.directory in directories]


def skill_handlers(live: LiveWorkspace, grant_of: Callable[[ServerRequestContext[Any, Any]], Grant]) -> dict[str, Any]:
    """The ``on_*`` handlers for the SDK ``Server``; ``grant_of`` says what a request may see."""

    async def skills(ctx: ServerRequestContext[Any, Any]) -> list[Skill]:
        grant = grant_of(ctx)
        return await anyio.to_thread.run_sync(visible_skills, await live.current_async(), grant)

    async def on_list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = [
            types.Resource(
                uri=skill.uri(file),
                name=f"{skill.key}/{file.relative}",
                description=skill.description if file.relative == "SKILL.md" else None,
                mime_type=file.mime_type,
                size=file.size,
            )
            for skill in await skills(ctx)
            for file in skill.files
        ]
        return types.ListResourcesResult(resources=resources)

    async def on_read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        for skill in await skills(ctx):
            for file in skill.files:
                if skill.uri(file) == uri:
                    try:
                        data = await anyio.to_thread.run_sync(read_skill_file, skill, file)
                    except (OSError, ValueError):  # swapped for a symlink or a non-file since it was listed
                        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}") from None
                    contents: types.TextResourceContents | types.BlobResourceContents
                    if file.is_text:
                        text = data.decode("utf-8", errors="replace")
                        contents = types.TextResourceContents(uri=uri, mime_type=file.mime_type, text=text)
                    else:
                        blob = base64.b64encode(data).decode("ascii")
                        contents = types.BlobResourceContents(uri=uri, mime_type=file.mime_type, blob=blob)
                    return types.ReadResourceResult(contents=[contents])
        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")

    async def on_list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts = [
            types.Prompt(name=skill.name, description=skill.description or None)
            for skill in await skills(ctx)
            if skill.skill_md is not None
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def on_get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        for skill in await skills(ctx):
            skill_md = skill.skill_md
            if skill.name == params.name and skill_md is not None:
                try:
                    data = await anyio.to_thread.run_sync(read_skill_file, skill, skill_md)
                except (OSError, ValueError):
                    raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}") from None
                text = data.decode("utf-8", errors="replace")
                message = types.PromptMessage(role="user", content=types.TextContent(text=text))
                return types.GetPromptResult(description=skill.description or None, messages=[message])
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")

    return {
        "on_list_resources": on_list_resources,
        "on_read_resource": on_read_resource,
        "on_list_prompts": on_list_prompts,
        "on_get_prompt": on_get_prompt,
    }
