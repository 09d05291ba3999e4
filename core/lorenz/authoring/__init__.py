"""Typed tool packs: define tools from attrs classes, with error contracts, enrichment and disabled tools.

A :class:`Pack` of :func:`tool`-decorated functions, whose arguments and results are attrs
classes, is a normal :class:`lorenz.ToolProvider`. ``docs/writing-a-pack.md`` builds one step by
step.
"""

from __future__ import annotations

from lorenz.sandbox.permissions import Permissions

from .content import (
    AudioBlock,
    ContentBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from .enrichment import Enrich
from .failures import (
    BASELINE_ERRORS,
    failure_from,
    forbidden,
    not_found,
    rate_limited,
    service_unavailable,
    timeout,
    unauthorized,
    validation_error,
)
from .pack import DisabledTool, Pack, disabled
from .schema import SchemaError, describe, input_schema, output_schema, widened_output_schema
from .structure import ArgumentError, structure_strict, unstructure
from .tool import CallContext, ErrorContract, FormattedResult, Tool, ToolFailure, failure_result, hints, tool

__all__ = [
    "BASELINE_ERRORS",
    "ArgumentError",
    "AudioBlock",
    "CallContext",
    "ContentBlock",
    "DisabledTool",
    "EmbeddedResourceBlock",
    "Enrich",
    "ErrorContract",
    "FormattedResult",
    "ImageBlock",
    "Pack",
    "Permissions",
    "ResourceLinkBlock",
    "SchemaError",
    "TextBlock",
    "Tool",
    "ToolFailure",
    "audio",
    "describe",
    "disabled",
    "embedded_resource",
    "failure_from",
    "failure_result",
    "forbidden",
    "hints",
    "image",
    "input_schema",
    "not_found",
    "output_schema",
    "rate_limited",
    "resource_link",
    "service_unavailable",
    "structure_strict",
    "text",
    "timeout",
    "tool",
    "unauthorized",
    "unstructure",
    "validation_error",
    "widened_output_schema",
]
