"""What a ``*_query`` tool's query envelope looks like to an agent: its inputSchema properties and the
bounds :mod:`lorenz.query` enforces.

Apart from the DSL's parsing and evaluation so that a pack lists its query tool (``lorenz tools``, a
server's ``tools/list``) without loading them.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_CONTAINS",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_NODES",
    "MAX_IN_VALUES",
    "MAX_LIMIT",
    "MAX_ORDER_BY_KEYS",
    "MAX_SELECT_FIELDS",
    "MAX_STRING_LENGTH",
    "query_input_properties",
]

MAX_FILTER_DEPTH = 12
MAX_FILTER_NODES = 200
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
# Size bounds, so that the cost of a query stays small whatever its size (docs/performance.md
# has the measurements).
MAX_IN_VALUES = 1000
MAX_CONTAINS = 16
MAX_STRING_LENGTH = 4096
MAX_ORDER_BY_KEYS = 8
MAX_SELECT_FIELDS = 64

#: Where nested ``where`` filters refer back to: the envelope's properties sit at the schema root.
_FILTER = "#/properties/where"


def _where_keys() -> dict[str, Any]:
    """A ``where`` node's keys (the node is strict: a misspelled key is refused)."""
    return {
        "field": {"type": "string", "description": "Predicate: the row field to test."},
        "op": {
            "enum": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "exists"],
            "description": "Predicate: the comparison.",
        },
        "value": {"description": "Predicate: the operand (an array for in/nin, a boolean for exists)."},
        "ci": {"type": "boolean", "description": "For contains: ignore case."},
        "and": {"type": "array", "items": {"$ref": _FILTER}, "description": "Filters that must all match."},
        "or": {"type": "array", "items": {"$ref": _FILTER}, "description": "Filters of which one must match."},
        "not": {"$ref": _FILTER, "description": "A filter that must not match."},
    }


def query_input_properties(select_description: str) -> dict[str, dict[str, Any]]:
    """The inputSchema properties of the query envelope a read tool accepts (put them at the root
    of its inputSchema: nested ``where`` filters refer to ``#/properties/where``).

    ``where``, ``select``, ``order_by``, ``limit`` and ``offset``, described for the agent;
    ``select_description`` says which row fields the tool offers and its default projection.
    """
    return {
        "where": {
            "type": "object",
            "description": (
                "Row filter: {field, op, value} (op eq/ne/lt/lte/gt/gte/in/nin/contains/exists; "
                "contains takes an optional boolean ci) or {and: [...]}, {or: [...]}, {not: {...}}. "
                f"At most {MAX_FILTER_NODES} nodes, {MAX_FILTER_DEPTH} levels deep and {MAX_CONTAINS} contains; "
                f"in/nin lists of at most {MAX_IN_VALUES} values; strings of at most {MAX_STRING_LENGTH} characters."
            ),
            "properties": _where_keys(),
            "additionalProperties": False,
        },
        "select": {
            "type": "array",
            "items": {"type": "string"},
            "description": f"{select_description} At most {MAX_SELECT_FIELDS} fields.",
        },
        "order_by": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "description": "The row field to sort by."},
                    "dir": {"enum": ["asc", "desc"], "description": "'asc' (default) or 'desc'."},
                },
                "required": ["field"],
                "additionalProperties": False,
            },
            "description": (
                "Sort keys in priority order: [{field, dir}] with dir 'asc' (default) or 'desc'; "
                f"at most {MAX_ORDER_BY_KEYS} keys."
            ),
        },
        "limit": {
            "type": "number",
            "description": f"Maximum rows to return: an integer >= 1, default {DEFAULT_LIMIT}, capped at {MAX_LIMIT}.",
        },
        "offset": {
            "type": "number",
            "description": "Matching rows to skip before the first returned: an integer >= 0.",
        },
    }
