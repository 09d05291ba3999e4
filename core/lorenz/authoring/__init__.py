"""Typed tool packs: tools from attrs classes (error contracts, enrichment, disabled tools), resources and prompts.

A :class:`Pack` of :func:`tool`-decorated functions, whose arguments and results are attrs
classes, is a normal :class:`lorenz.ToolProvider`. ``docs/writing-a-pack.md`` builds one step by
step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorenz.lazy import lazy_exports

# Eager: the function ``tool`` shares its name with its module, which importing the module would
# otherwise bind here in its place.
from .define import hints, tool
from .tool import CallContext, ErrorContract, FormattedResult, Tool, ToolFailure, failure_result

#: Each name's module: importing ``lorenz.authoring`` loads none of them, a name its module on first use
#: (a pack that only lists its tools never loads the call-time ones: inputs, rounds, content rendering).
_EXPORTS: dict[str, str] = {
    "Permissions": "lorenz.sandbox.permissions",
    "Completions": "lorenz.authoring.completions",
    "AudioBlock": "lorenz.authoring.content",
    "ContentBlock": "lorenz.authoring.content",
    "EmbeddedResourceBlock": "lorenz.authoring.content",
    "ImageBlock": "lorenz.authoring.content",
    "ResourceLinkBlock": "lorenz.authoring.content",
    "TextBlock": "lorenz.authoring.content",
    "audio": "lorenz.authoring.content",
    "embedded_resource": "lorenz.authoring.content",
    "image": "lorenz.authoring.content",
    "resource_link": "lorenz.authoring.content",
    "text": "lorenz.authoring.content",
    "Enrich": "lorenz.authoring.enrichment",
    "BASELINE_ERRORS": "lorenz.authoring.failures",
    "failure_from": "lorenz.authoring.failures",
    "forbidden": "lorenz.authoring.failures",
    "not_found": "lorenz.authoring.failures",
    "rate_limited": "lorenz.authoring.failures",
    "service_unavailable": "lorenz.authoring.failures",
    "timeout": "lorenz.authoring.failures",
    "unauthorized": "lorenz.authoring.failures",
    "validation_error": "lorenz.authoring.failures",
    "InputRequest": "lorenz.authoring.inputs",
    "InputRound": "lorenz.authoring.inputs",
    "Inputs": "lorenz.authoring.inputs",
    "InputView": "lorenz.authoring.inputs",
    "Root": "lorenz.authoring.inputs",
    "Roots": "lorenz.authoring.inputs",
    "SampledMessage": "lorenz.authoring.inputs",
    "create_message": "lorenz.authoring.inputs",
    "elicit": "lorenz.authoring.inputs",
    "elicit_url": "lorenz.authoring.inputs",
    "list_roots": "lorenz.authoring.inputs",
    "DisabledTool": "lorenz.authoring.pack",
    "Pack": "lorenz.authoring.pack",
    "disabled": "lorenz.authoring.pack",
    "Prompt": "lorenz.authoring.prompts",
    "PromptMessage": "lorenz.authoring.prompts",
    "message": "lorenz.authoring.prompts",
    "prompt": "lorenz.authoring.prompts",
    "PackContext": "lorenz.authoring.resources",
    "Resource": "lorenz.authoring.resources",
    "ResourceTemplate": "lorenz.authoring.resources",
    "resource": "lorenz.authoring.resources",
    "resource_template": "lorenz.authoring.resources",
    "MAX_ANSWER_BYTES": "lorenz.authoring.rounds",
    "MAX_ROUNDS": "lorenz.authoring.rounds",
    "SchemaError": "lorenz.authoring.schema",
    "camel_case": "lorenz.authoring.schema",
    "describe": "lorenz.authoring.schema",
    "input_schema": "lorenz.authoring.schema",
    "output_schema": "lorenz.authoring.schema",
    "widened_output_schema": "lorenz.authoring.schema",
    "ArgumentError": "lorenz.authoring.structure",
    "structure_strict": "lorenz.authoring.structure",
    "unstructure": "lorenz.authoring.structure",
}

__all__ = [
    "BASELINE_ERRORS",
    "MAX_ANSWER_BYTES",
    "MAX_ROUNDS",
    "ArgumentError",
    "AudioBlock",
    "CallContext",
    "Completions",
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

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

if TYPE_CHECKING:
    from lorenz.sandbox.permissions import Permissions

    from .completions import Completions
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
