"""What a tool's definition costs an agent's context, estimated without a tokenizer.

The estimate is the UTF-8 bytes of the tool's compact ``tools/list`` JSON (name, title,
description, inputSchema, outputSchema, annotations) divided by 4, rounded up: about what
English text and JSON cost in the common tokenizers, and the same on every machine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["BYTES_PER_TOKEN", "context_tokens"]

BYTES_PER_TOKEN = 4


def context_tokens(wire_tool: Mapping[str, Any]) -> int:
    """The estimated tokens of one tool as ``tools/list`` serves it (its MCP wire form)."""
    encoded = json.dumps(wire_tool, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()
    return -(-len(encoded) // BYTES_PER_TOKEN)
