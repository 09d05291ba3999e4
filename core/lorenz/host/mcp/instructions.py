"""The server's ``instructions``: what a client's model reads first about this server."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lorenz.host.reload.live import Snapshot

__all__ = ["EMBEDDED_INSTRUCTIONS", "INSTRUCTIONS", "instructions_for"]

#: ``instructions`` for a workflow whose body is empty.
INSTRUCTIONS = "Tools from the Lorenz tool packs mounted by this workflow."
#: ``instructions`` for the embedded default (no WORKFLOW.md): what the local board's tools are for.
EMBEDDED_INSTRUCTIONS = (
    "You are connected to Lorenz serving the local Markdown issue board (.lorenz/local in the server's "
    "directory). Find work with local_query (filter with where, sort with order_by, pick fields with select), "
    "read one issue with local_read_issue, and record progress with local_update_status, local_comment and "
    "local_create_issue. Write a WORKFLOW.md next to the server to configure another tracker or more packs; "
    "its Markdown body replaces these instructions."
)


def instructions_for(snapshot: Snapshot) -> str:
    """The server's ``instructions``: the WORKFLOW.md body (trimmed), else a default."""
    body = str(snapshot.settings.body or "").strip()
    if body:
        return body
    return EMBEDDED_INSTRUCTIONS if snapshot.workspace.embedded_default else INSTRUCTIONS
