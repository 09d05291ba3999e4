"""Typed tool packs: tools from attrs classes (error contracts, enrichment, disabled tools), resources and prompts.

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
from .inputs import (
    InputRequest,
    InputRound,
    Inputs,
    InputView,
    Root,
    Roots,
    SampledMessage,
    create_message,
    elicit,
    elicit_url,
    list_roots,
)
from .pack import DisabledTool, Pack, disabled
from .prompts import Prompt, PromptMessage, message, prompt
from .resources import PackContext, Resource, ResourceTemplate, resource, resource_template
from .rounds import MAX_ANSWER_BYTES, MAX_ROUNDS
from .schema import SchemaError, camel_case, describe, input_schema, output_schema, widened_output_schema
from .structure import ArgumentError, structure_strict, unstructure
from .tool import CallContext, ErrorContract, FormattedResult, Tool, ToolFailure, failure_result, hints, tool

__all__ = [
    "BASELINE_ERRORS",
    "MAX_ANSWER_BYTES",
    "MAX_ROUNDS",
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
    "InputRequest",
    "InputRound",
    "InputView",
    "Inputs",
    "Pack",
    "Permissions",
    "PackContext",
    "Prompt",
    "PromptMessage",
    "Resource",
    "ResourceTemplate",
    "ResourceLinkBlock",
    "Root",
    "Roots",
    "SampledMessage",
    "SchemaError",
    "TextBlock",
    "Tool",
    "ToolFailure",
    "audio",
    "create_message",
    "camel_case",
    "describe",
    "disabled",
    "elicit",
    "elicit_url",
    "embedded_resource",
    "failure_from",
    "failure_result",
    "forbidden",
    "hints",
    "image",
    "input_schema",
    "list_roots",
    "message",
    "not_found",
    "output_schema",
    "prompt",
    "rate_limited",
    "resource",
    "resource_link",
    "resource_template",
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
