"""The ``linear`` tracker's options (``tracker.project_slug`` & co.) and the ``tools.linear`` pack options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from attrs import frozen

from lorenz import (
    Settings,
    check_url,
    reject_unknown_keys,
    reject_unknown_options,
    resolve_env_reference,
    string_list_option,
    string_option,
)

__all__ = [
    "CONFIG_ALIASES",
    "DEFAULT_ENDPOINT",
    "ENV_FALLBACKS",
    "KIND",
    "LinearTrackerOptions",
    "ToolCredentials",
    "SELECTOR_REQUIRED",
    "linear_endpoint",
    "linear_tracker_options",
    "parse_tracker_options",
    "project_url",
    "tool_credentials",
    "validate_dispatch",
    "validate_tool_options",
]

KIND = "linear"
DEFAULT_ENDPOINT = "https://api.linear.app/graphql"
CONFIG_ALIASES: Mapping[str, str] = {
    "project_slug": "projectSlug",
    "project_slugs": "projectSlugs",
    "project_labels": "projectLabels",
}
ENV_FALLBACKS: Mapping[str, str] = {"api_key": "LINEAR_API_KEY", "assignee": "LINEAR_ASSIGNEE"}

SELECTOR_REQUIRED = "tracker.project_slug, tracker.project_slugs, or tracker.project_labels is required"
_SELECTORS_EXCLUSIVE = "tracker.project_slug, tracker.project_slugs, and tracker.project_labels are mutually exclusive"

_TOOL_OPTION_KEYS = ("apiKey", "api_key", "endpoint")


@frozen(kw_only=True)
class LinearTrackerOptions:
    """Which projects the tracker polls: one slug, a list of slugs, or the projects carrying labels."""

    project_slug: str | None = None
    project_slugs: tuple[str, ...] | None = None
    project_labels: tuple[str, ...] | None = None


def parse_tracker_options(options: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """Validate the provider options (already aliased to camelCase) and keep only the present ones.

    ``projectSlug`` is resolved as a whole-value ``$VAR``; an empty result is dropped.
    """
    reject_unknown_options(options, tuple(CONFIG_ALIASES.values()), KIND)
    parsed: dict[str, Any] = {}
    slug = string_option(options, "projectSlug")
    if slug is not None:
        resolved = resolve_env_reference(slug, env)
        if resolved:
            parsed["projectSlug"] = resolved
    for key in ("projectSlugs", "projectLabels"):
        values = string_list_option(options, key)
        if values is not None:
            parsed[key] = list(values)
    return parsed


def _string_tuple(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list | tuple) and value and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def linear_tracker_options(settings: Settings) -> LinearTrackerOptions:
    """The project selectors of ``settings.tracker.options`` (an empty slug counts as unset)."""
    options = settings.tracker.options
    slug = options.get("projectSlug")
    return LinearTrackerOptions(
        project_slug=slug if isinstance(slug, str) and slug else None,
        project_slugs=_string_tuple(options.get("projectSlugs")),
        project_labels=_string_tuple(options.get("projectLabels")),
    )


def linear_endpoint(settings: Settings) -> str:
    """``tracker.endpoint``, else Linear's public GraphQL endpoint."""
    return settings.tracker.endpoint or DEFAULT_ENDPOINT


def validate_dispatch(settings: Settings) -> None:
    """Raise ``ValueError`` unless an API key and exactly one project selector are configured."""
    if not settings.tracker.api_key:
        msg = "tracker.api_key is required"
        raise ValueError(msg)
    options = linear_tracker_options(settings)
    configured = sum(
        1 for selector in (options.project_slug, options.project_slugs, options.project_labels) if selector
    )
    if configured == 0:
        raise ValueError(SELECTOR_REQUIRED)
    if configured > 1:
        raise ValueError(_SELECTORS_EXCLUSIVE)


def project_url(settings: Settings) -> str | None:
    """The Linear web page of the (singular) configured project."""
    slug = linear_tracker_options(settings).project_slug
    if slug is None:
        return None
    return f"https://linear.app/project/{quote(slug, safe='')}/issues"


def validate_tool_options(options: Mapping[str, Any]) -> None:
    """Check ``tools.linear``: only ``apiKey``/``api_key``/``endpoint``, each a string, the endpoint a URL."""
    reject_unknown_keys(options, _TOOL_OPTION_KEYS, "tools.linear")
    for key, value in options.items():
        if value is not None and not isinstance(value, str):
            msg = f"tools.linear.{key} must be a string"
            raise ValueError(msg)
        if key == "endpoint" and value is not None:
            check_url(value, "tools.linear.endpoint")


@frozen(kw_only=True)
class ToolCredentials:
    """Where ``linear_graphql`` sends requests, and with which key."""

    endpoint: str
    api_key: str | None


def tool_credentials(settings: Settings) -> ToolCredentials:
    """The pack's key and endpoint: ``tools.linear`` first, then the tracker's when it is Linear.

    A non-Linear dispatch tracker's key is never sent to Linear.
    """
    pack = (settings.tool_options or {}).get(KIND) or {}
    tracker = settings.tracker if settings.tracker.kind == KIND else None

    def pack_string(*keys: str) -> str | None:
        for key in keys:
            value = pack.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    api_key = pack_string("apiKey", "api_key") or (tracker.api_key if tracker is not None else None) or None
    endpoint = pack_string("endpoint") or (tracker.endpoint if tracker is not None else None) or DEFAULT_ENDPOINT
    return ToolCredentials(endpoint=endpoint, api_key=api_key)
