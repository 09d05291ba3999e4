"""Tool and field names for OpenAPI operations: ``{pack}_{verb}_{noun}`` from the operation id (or
method and path), snake_case, deduplicated and within the kit's naming rules (lint: lowercase
snake_case after the prefix, at most 64 characters)."""

from __future__ import annotations

import keyword
import re

__all__ = ["MAX_TOOL_NAME", "class_name", "snake", "tool_names"]

MAX_TOOL_NAME = 64
_VERBS = {"get": "get", "head": "head", "post": "create", "put": "replace", "patch": "update", "delete": "delete"}


def snake(text: str) -> str:
    """``showPetById`` → ``show_pet_by_id``, ``X-Request-ID`` → ``x_request_id``; never empty."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    words = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    words = re.sub(r"_+", "_", words) or "value"
    if words[0].isdigit():
        words = "n" + words
    return words + "_" if keyword.iskeyword(words) else words


def class_name(text: str) -> str:
    """``show_pet_by_id`` → ``ShowPetById``."""
    return "".join(part.capitalize() for part in snake(text).split("_"))


def _from_path(method: str, path: str) -> str:
    """``GET /pets/{petId}`` → ``get_pets_by_pet_id``; ``GET /pets`` → ``list_pets``."""
    segments = [s for s in path.split("/") if s]
    nouns = [snake(s) for s in segments if not s.startswith("{")]
    params = [snake(s.strip("{}")) for s in segments if s.startswith("{")]
    verb = _VERBS.get(method, method)
    if method == "get" and (not segments or not segments[-1].startswith("{")):
        verb = "list"
    name = "_".join([verb, *nouns[-2:]] if nouns else [verb, "root"])
    return name + ("_by_" + "_".join(params[-1:]) if params else "")


def tool_names(pack: str, operations: list[tuple[str | None, str, str]]) -> list[str]:
    """One unique name per ``(operation id, method, path)``, in order."""
    out: list[str] = []
    taken: set[str] = set()
    budget = MAX_TOOL_NAME - len(pack) - 1
    for operation_id, method, path in operations:
        stem = snake(operation_id) if operation_id else _from_path(method, path)
        stem = stem.removeprefix(pack + "_").rstrip("_")[:budget].rstrip("_")
        name, n = f"{pack}_{stem}", 2
        while name in taken:
            suffix = f"_{n}"
            name, n = f"{pack}_{stem[: budget - len(suffix)].rstrip('_')}{suffix}", n + 1
        taken.add(name)
        out.append(name)
    return out
