"""The landing page's account of each pack's permissions: a ``sandboxed`` pill, what it declares,
what the operator adds, the effective policy of a sandboxed pack and how many accesses were refused.

Shown to the full grant only: the paths and hosts are the operator's business.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from lorenz.isolation.report import PackPolicy, pack_policy

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider
    from lorenz.host.reload.live import Snapshot

__all__ = ["permissions_block", "policy_of", "sandboxed_pill"]


def policy_of(snapshot: Snapshot, pack: ToolProvider) -> PackPolicy:
    return pack_policy(pack, snapshot.settings, snapshot.workspace.discovery)


def sandboxed_pill(policy: PackPolicy) -> str:
    if not policy.sandboxed:
        return ""
    if not policy.confined:
        return ' <span class="pill" title="server.sandbox_fallback: warn">sandboxed (not confined)</span>'
    return ' <span class="pill">sandboxed</span>'


def permissions_block(policy: PackPolicy) -> list[str]:
    """The pack's permissions as a short list (before its tools)."""
    rows = [("declared", policy.describe_declared())]
    if policy.added is not None:
        rows.append((f"added (tools.{policy.pack}.permissions)", policy.added.describe()))
    effective = policy.effective_dict()
    if effective is not None:
        rows += [
            ("network (through the proxy)", ", ".join(effective["network"]) or "-"),
            ("read", ", ".join(effective["read"]) or "-"),
            ("write", ", ".join(effective["write"]) or "-"),
            ("env", ", ".join(effective["env"]) or "-"),
            ("subprocess", "yes" if effective["subprocess"] else "no"),
        ]
    items = "".join(f"<li>{escape(label)}: <code>{escape(value)}</code></li>" for label, value in rows)
    title = "Permissions (enforced)" if policy.sandboxed else "Permissions (requested when sandboxed)"
    parts = [f'<details class="permissions" data-pack="{escape(policy.pack)}"><summary>{title}']
    if policy.sandboxed:
        parts.append(f' <span class="pill" data-denials="{policy.denials}">denials: {policy.denials}</span>')
    parts.append(f"</summary><ul>{items}</ul></details>")
    return ["".join(parts)]
