"""What mounted packs serve besides tools: resources, resource templates and prompts
(``ToolProvider.resource_specs`` / ``prompt_specs``), each with the pack that owns it.

A URI, a template or a prompt name two packs declare is an :class:`OfferCollision`, which mounting
raises as a ``MountError``, as it does for a tool name, unless the later claim is a ``dynamic_tools``
pack's (an upstream server's): that one is left out and named instead (the packs whose offers are
their own claim first). A pack whose hook raises or returns something else serves none of them
(and says so in the log); its tools still mount.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.contracts import PromptSpec, ResourceSpec, ToolProvider
from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.uri_templates import match_template, template_pattern

from .instances import provider_of
from .tool_names import dynamic, shown_name

if TYPE_CHECKING:
    from lorenz.settings.model import Settings

__all__ = ["OfferCollision", "Offered", "offered"]


@frozen(kw_only=True, eq=False)
class Offered:
    """The mounted packs' resources, templates and prompts, each with its pack, in mount order."""

    resources: tuple[tuple[ResourceSpec, ToolProvider], ...] = ()
    templates: tuple[tuple[ResourceSpec, ToolProvider, re.Pattern[str]], ...] = ()
    prompts: tuple[tuple[PromptSpec, ToolProvider], ...] = ()

    def resource(self, uri: str) -> tuple[ResourceSpec, ToolProvider] | None:
        """The resource or template serving ``uri`` (a static URI first)."""
        for spec, pack in self.resources:
            if spec.uri == uri:
                return spec, pack
        for spec, pack, pattern in self.templates:
            if match_template(pattern, uri) is not None:
                return spec, pack
        return None

    def prompt(self, name: str) -> tuple[PromptSpec, ToolProvider] | None:
        return next(((spec, pack) for spec, pack in self.prompts if spec.name == name), None)

    @property
    def empty(self) -> bool:
        return not (self.resources or self.templates or self.prompts)


def _specs(pack: ToolProvider, hook: str, kind: type, settings: Settings) -> list[Any]:
    method = getattr(pack, hook, None)
    if not callable(method):
        return []
    specs = list(method(settings))
    for spec in specs:
        if not isinstance(spec, kind):
            msg = f"{hook} returned a {type(spec).__name__}, not a {kind.__name__}"
            raise TypeError(msg)
    return specs


class OfferCollision(ValueError):
    """A URI, template or prompt name two packs declare (mounting raises it as a ``MountError``)."""


def _claim(owner: dict[str, str], what: str, key: str, pack: str, providers: dict[str, str]) -> None:
    first = owner.setdefault(key, pack)
    if first == pack:
        return
    msg = f'{what} collision: {shown_name(key)} is declared by both the "{first}" and "{pack}" packs'
    provider = providers.get(pack, pack)
    instances = providers.get(first, first) == provider
    if instances:
        msg += f' (both are instances of the "{provider}" pack)'
    if what == "prompt name":
        msg += f"; serve one under other names with prefix: or rename: (tools: {{{pack}: {{prefix: {pack}_}}}})"
    elif instances:
        # A URI is the pack's own (its results link to it): one of the two must not serve it.
        msg += (
            f"; a resource keeps its pack's URI (prefix: does not change it): serve the resources of one"
            f" only, e.g. tools: {{{pack}: {{resources: false}}}} where the pack has that option (lorenz-mcp does)"
        )
    raise OfferCollision(msg)


def offered(
    packs: Sequence[ToolProvider], settings: Settings, dropped: list[tuple[str, tuple[str, str], str]] | None = None
) -> Offered:
    """What ``packs`` serve besides tools; raises :class:`OfferCollision` for a URI, template or
    prompt name two packs declare, except that a ``dynamic_tools`` pack's clashing one is left out
    and appended to ``dropped`` as ``(pack, ("resource" or "prompt", its URI or name), error)``."""
    resources: list[tuple[ResourceSpec, ToolProvider]] = []
    templates: list[tuple[ResourceSpec, ToolProvider, re.Pattern[str]]] = []
    prompts: list[tuple[PromptSpec, ToolProvider]] = []
    uris: dict[str, str] = {}
    names: dict[str, str] = {}
    providers = {pack.name: provider_of(pack) for pack in packs}

    def claim(owner: dict[str, str], what: str, key: str, pack: ToolProvider) -> bool:
        try:
            _claim(owner, what, key, pack.name, providers)
        except OfferCollision as exc:
            if not dynamic(pack) or dropped is None:
                raise
            kind = "prompt" if what == "prompt name" else "resource"
            dropped.append((pack.name, (kind, shown_name(key)), f"{exc}; it is left out"))
            return False
        return True

    for pack in sorted(packs, key=dynamic):  # the packs whose offers are their own claim first
        try:
            pack_resources = call_plugin(
                f"pack {pack.name}", "resource_specs", _specs, pack, "resource_specs", ResourceSpec, settings
            )
            pack_prompts = call_plugin(
                f"pack {pack.name}", "prompt_specs", _specs, pack, "prompt_specs", PromptSpec, settings
            )
        except PluginError as exc:
            import logging  # only then: `lorenz tools` loads no logging

            logging.getLogger("lorenz").warning("lorenz: pack %s serves no resources or prompts: %s", pack.name, exc)
            continue
        for spec in pack_resources:
            if not claim(uris, "resource template" if spec.template else "resource URI", spec.uri, pack):
                continue
            if spec.template:
                templates.append((spec, pack, template_pattern(spec.uri)))
            else:
                resources.append((spec, pack))
        for prompt in pack_prompts:
            if claim(names, "prompt name", prompt.name, pack):
                prompts.append((prompt, pack))
    order = {id(pack): index for index, pack in enumerate(packs)}  # served in mount order
    return Offered(
        resources=tuple(sorted(resources, key=lambda item: order[id(item[1])])),
        templates=tuple(sorted(templates, key=lambda item: order[id(item[1])])),
        prompts=tuple(sorted(prompts, key=lambda item: order[id(item[1])])),
    )
