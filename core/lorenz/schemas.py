"""JSON Schema pieces for a plain pack's ``inputSchema`` and for the text of a plain result.

The bundled packs publish hand-written schemas (strict objects of described strings) and answer a
plain result as the pretty JSON the host renders; these are the one copy of each.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from .toolcall.wire import encode_payload

__all__ = ["plain_text", "strict_object_schema", "string_array_schema", "string_schema"]


def string_schema(description: str) -> dict[str, Any]:
    """``{"type": "string", "description": ...}``."""
    return {"type": "string", "description": description}


def string_array_schema(description: str) -> dict[str, Any]:
    """An array of strings, described."""
    return {"type": "array", "items": {"type": "string"}, "description": description}


def strict_object_schema(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    """An object schema refusing keys it does not list (a misspelt argument is refused, not
    silently dropped); ``required`` names the keys a call must give."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


def plain_text(payload: Any) -> str:
    """The text the host shows for a plain result with this JSON ``payload`` (pretty JSON, two
    spaces, non-ASCII kept), byte for byte. For a pack that sets ``FormattedResult`` text yet must
    answer as its plain result always did (e.g. with structured fields the text leaves out)."""
    return encode_payload(payload, max_bytes=sys.maxsize)[1]
