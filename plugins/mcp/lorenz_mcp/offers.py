"""An upstream's resources, resource templates and prompts: listed when it starts (and again on
``list_changed``), handed to the host as specs, and their reads and renders passed through.

A resource keeps the upstream's URI (tool results link to it); a template the host cannot match
(RFC 6570 beyond level 1, ``{+path}``, ``{?q}``) is not served. Prompt names are the upstream's:
the host gives them the instance's ``prefix``/``rename``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from lorenz import PromptArgument, PromptSpec, ResourceSpec, ToolResult, tool_failure, tool_success

__all__ = [
    "LIST_CHANGED",
    "Offers",
    "complete",
    "failure",
    "list_offers",
    "list_tools",
    "prompt_result",
    "prompt_specs",
    "read_result",
    "resource_specs",
]

#: A template expression with an operator, or a variable the host's level-1 matching cannot serve.
_BEYOND_LEVEL_ONE = re.compile(r"\{(?![A-Za-z_][A-Za-z0-9_]*\})")
_PAGES = 100

#: The notifications that say an upstream's lists changed (it is listed again).
LIST_CHANGED = frozenset(
    {"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed"}
)
#: The JSON-RPC codes the host maps back: invalid params and resource not found.
_INVALID_PARAMS = -32602
_RESOURCE_NOT_FOUND = -32002


@frozen
class Offers:
    """What the upstream serves besides tools, each in wire form."""

    resources: tuple[dict[str, Any], ...] = ()
    templates: tuple[dict[str, Any], ...] = ()
    prompts: tuple[dict[str, Any], ...] = ()


def _dump(item: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = item.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


async def _pages(fetch: Any, field: str) -> tuple[dict[str, Any], ...]:
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(_PAGES):  # a server that pages forever is not followed forever
        page = await fetch(cursor=cursor)
        items.extend(_dump(item) for item in getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(items)


async def list_tools(client: Any) -> tuple[dict[str, Any], ...]:
    """The tools of the server ``client`` is connected to, in wire form."""
    return await _pages(client.list_tools, "tools")


async def complete(
    client: Any, ref: Mapping[str, Any], argument: Mapping[str, str], context_arguments: Mapping[str, str]
) -> dict[str, Any]:
    """``completion/complete`` of a prompt's or template's argument: the completion in wire form (no
    values when the server does not declare completions)."""
    import mcp_types as types

    if client.server_capabilities.completions is None:
        return {"values": []}
    reference = types.PromptReference if ref.get("type") == "ref/prompt" else types.ResourceTemplateReference
    result = await client.complete(reference.model_validate(dict(ref)), dict(argument), dict(context_arguments) or None)
    return _dump(result.completion)


async def list_offers(client: Any) -> Offers:
    """The resources, templates and prompts of the server ``client`` is connected to (none of a
    kind its capabilities do not declare)."""
    capabilities = client.server_capabilities
    resources: tuple[dict[str, Any], ...] = ()
    templates: tuple[dict[str, Any], ...] = ()
    prompts: tuple[dict[str, Any], ...] = ()
    if capabilities.resources is not None:
        resources = await _pages(client.list_resources, "resources")
        templates = await _pages(client.list_resource_templates, "resource_templates")
    if capabilities.prompts is not None:
        prompts = await _pages(client.list_prompts, "prompts")
    return Offers(resources, templates, prompts)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def resource_specs(offers: Offers) -> list[ResourceSpec]:
    """The upstream's resources and (servable) templates as the host's specs."""
    specs = []
    for entry, template in [(r, False) for r in offers.resources] + [(t, True) for t in offers.templates]:
        uri = entry.get("uriTemplate" if template else "uri")
        if not isinstance(uri, str) or (template and _BEYOND_LEVEL_ONE.search(uri)):
            continue
        specs.append(
            ResourceSpec(
                uri=uri,
                name=str(entry.get("name") or uri),
                description=_text(entry.get("description")),
                title=_text(entry.get("title")),
                mime_type=_text(entry.get("mimeType")),
                template=template,
            )
        )
    return specs


def prompt_specs(offers: Offers) -> list[PromptSpec]:
    """The upstream's prompts as the host's specs, by their own names."""
    specs = []
    for entry in offers.prompts:
        arguments = tuple(
            PromptArgument(
                name=str(argument["name"]),
                description=_text(argument.get("description")),
                required=bool(argument.get("required")),
            )
            for argument in entry.get("arguments") or ()
            if isinstance(argument, Mapping) and isinstance(argument.get("name"), str)
        )
        specs.append(
            PromptSpec(
                name=str(entry["name"]),
                description=_text(entry.get("description")),
                title=_text(entry.get("title")),
                arguments=arguments,
            )
        )
    return specs


def read_result(result: Any) -> ToolResult:
    """A ``resources/read`` answer as the host's result: its contents, as they came."""
    return tool_success([_dump(item) for item in result.contents])


def prompt_result(result: Any) -> ToolResult:
    """A ``prompts/get`` answer as the host's result: its description and messages."""
    wire = _dump(result)
    return tool_success({key: wire[key] for key in ("description", "messages") if key in wire})


def failure(message: str, code: int | None) -> ToolResult:
    """An upstream's error answer, with the reason the host maps to the same JSON-RPC code."""
    if code == _RESOURCE_NOT_FOUND:
        return tool_failure(message, reason="not_found")
    if code == _INVALID_PARAMS:
        return tool_failure(message, reason="invalid_arguments")
    return tool_failure(message, reason="upstream_unavailable", retryable=True)
