"""The landing page's list of what a pack offers beside its tools: its resources, resource templates
and prompts (each with its title and description, a prompt with its arguments), after its tools.

Shown for the packs the caller's grant may call, as ``resources/list`` and ``prompts/list`` show
them to it (:func:`lorenz.host.grants.visible_packs`).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lorenz.contracts import PromptSpec, ResourceSpec
    from lorenz.host.reload.live import Snapshot

__all__ = ["offers_block"]


def _item(code: str, spec: ResourceSpec | PromptSpec, extra: str = "") -> str:
    title = f' <span class="muted">({escape(spec.title)})</span>' if spec.title else ""
    about = f" — {escape(spec.description)}" if spec.description else ""
    return f"<li><code>{escape(code)}</code>{title}{extra}{about}</li>"


def offers_block(snapshot: Snapshot, pack: str) -> list[str]:
    """``pack``'s resources, templates and prompts as lists (nothing when it offers none)."""
    offers = snapshot.workspace.mounted.offers
    resources = [_item(spec.uri, spec) for spec, owner in offers.resources if owner.name == pack]
    resources += [_item(spec.uri, spec, " (template)") for spec, owner, _ in offers.templates if owner.name == pack]
    prompts = []
    for spec, owner in offers.prompts:
        if owner.name != pack:
            continue
        names = ", ".join(f"{argument.name}{'' if argument.required else '?'}" for argument in spec.arguments)
        prompts.append(_item(spec.name, spec, f' <span class="muted">({escape(names)})</span>' if names else ""))
    parts = []
    if resources:
        parts += ["<p>Resources:</p>", "<ul>", *resources, "</ul>"]
    if prompts:
        parts += ["<p>Prompts:</p>", "<ul>", *prompts, "</ul>"]
    return parts
