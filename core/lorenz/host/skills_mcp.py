"""The mounted packs' skills over MCP: each file a resource (``resources/list``/``read``), each
``SKILL.md`` a prompt (``prompts/list``/``get``), for exactly the packs the workflow mounts."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..skills import Skill, mounted_skills, read_skill_file

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from .reload import LiveWorkspace, Snapshot

__all__ = ["skill_handlers"]

#: JSON-RPC code for a resource that does not exist (the MCP specification's).
RESOURCE_NOT_FOUND = -32002


def _skills(snapshot: Snapshot) -> list[Skill]:
    cached: list[Skill] | None = snapshot.wire.get("skills")
    if cached is None:
        cached = snapshot.wire["skills"] = mounted_skills(snapshot.packs)
    return cached


def skill_handlers(live: LiveWorkspace) -> dict[str, Any]:
    """The ``on_*`` handlers for the SDK ``Server``."""

    async def skills() -> list[Skill]:
        return await anyio.to_thread.run_sync(_skills, await live.current_async())

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
            for skill in await skills()
            for file in skill.files
        ]
        return types.ListResourcesResult(resources=resources)

    async def on_read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        for skill in await skills():
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
            for skill in await skills()
            if skill.skill_md is not None
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def on_get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        for skill in await skills():
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
