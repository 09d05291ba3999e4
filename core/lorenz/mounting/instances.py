"""A pack mounted under a ``tools:`` key of its own (``provider:``), or with its tools renamed.

:class:`InstancePack` is the seam: the host sees the instance's key and the served names, the pack
sees its own name and its own tool names, and ``settings.tool_options[<pack name>]`` holding the
instance's options, so a pack written for one mount works mounted several times unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import evolve, frozen

from lorenz.contracts import PackInstance, PromptSpec, ResourceSpec, ToolContext, ToolProvider, ToolSpec
from lorenz.results import ToolResult, tool_failure, tool_success
from lorenz.settings.errors import ConfigError
from lorenz.settings.model import Settings, ToolInstance
from lorenz.settings.tools import TOOL_NAME_RE, reword_for_instance

__all__ = ["InstancePack", "check_served_names", "instance_settings", "provider_of"]


def provider_of(pack: ToolProvider) -> str:
    """The name of the pack that serves ``pack`` (its own name unless it is an instance)."""
    return str(getattr(pack, "provider", pack.name))


def instance_settings(settings: Settings, instance: ToolInstance) -> Settings:
    """``settings`` as the instance's pack sees them: its options under the pack's own name."""
    options = dict(settings.tool_options or {})
    own = options.pop(instance.key, None)
    if own is None:
        options.pop(instance.provider, None)
    else:
        options[instance.provider] = own
    return evolve(settings, tool_options=options or None)


@frozen(kw_only=True)
class _Disabled:
    """A pack's disabled tool under its served name."""

    name: str
    spec: Any
    reason: str
    hint: str | None = None
    since: str | None = None


class InstancePack:
    """The :class:`~lorenz.ToolProvider` mounted for an instance: ``name`` is the ``tools:`` key,
    ``provider`` the pack serving it, ``inner`` that pack (or its isolated proxy)."""

    def __init__(self, instance: ToolInstance, pack: ToolProvider) -> None:
        self.name = instance.key
        self.provider = instance.provider
        self.instance = instance
        self.inner = pack
        self.isolated = bool(getattr(pack, "isolated", False))
        self.validates_arguments = bool(getattr(pack, "validates_arguments", False))
        self.dynamic_tools = bool(getattr(pack, "dynamic_tools", False))
        self._views: tuple[Settings, Settings] | None = None

    def __repr__(self) -> str:
        return f"InstancePack({self.name!r}, provider={self.provider!r})"

    @property
    def skills(self) -> Sequence[str]:
        return tuple(getattr(self.inner, "skills", None) or ())

    def view(self, settings: Settings) -> Settings:
        """:func:`instance_settings`, kept for the last settings seen (a typed pack parses its
        options once per object it is handed)."""
        cached = self._views
        if cached is not None and cached[0] is settings:
            return cached[1]
        view = instance_settings(settings, self.instance) if self.name != self.provider else settings
        self._views = (settings, view)
        return view

    def own_name(self, served: str) -> str:
        """The pack's own name for the tool served as ``served``."""
        for old, new in self.instance.rename.items():
            if new == served:
                return old
        prefix = self.instance.prefix
        if prefix and served.startswith(prefix) and served[len(prefix) :] not in self.instance.rename:
            return served[len(prefix) :]
        return served

    def reworded(self, text: str) -> str:
        """A message of the pack naming ``tools.<pack>``, naming ``tools.<key>`` instead."""
        return reword_for_instance(text, self.provider, self.name)

    # -- the ToolProvider contract ------------------------------------------------------------

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        served = self.instance.served
        return [evolve(spec, name=served(spec.name)) for spec in self.inner.tool_specs(self.view(settings))]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        enabled = context.enabled
        mapped: Callable[[str], bool] | None = None
        if enabled is not None:
            served = self.instance.served

            def mapped(tool: str) -> bool:
                return enabled(served(tool))

        inner = evolve(context, settings=self.view(context.settings), enabled=mapped)
        return await self.inner.execute_tool(self.own_name(name), input, inner)

    # Resources keep the pack's URIs (results link to them; two instances declaring one URI is a
    # collision at mount); prompts are named like tools, with the instance's prefix and renames.

    def resource_specs(self, settings: Settings) -> list[ResourceSpec]:
        hook = getattr(self.inner, "resource_specs", None)
        return list(hook(self.view(settings))) if callable(hook) else []

    async def read_resource(self, uri: str, context: ToolContext) -> ToolResult:
        read = getattr(self.inner, "read_resource", None)
        if not callable(read):
            return tool_failure(f"Resource not found: {uri}", reason="not_found")
        result: ToolResult = await read(uri, evolve(context, settings=self.view(context.settings)))
        return result

    def prompt_specs(self, settings: Settings) -> list[PromptSpec]:
        hook = getattr(self.inner, "prompt_specs", None)
        if not callable(hook):
            return []
        served = self.instance.served
        return [
            evolve(spec, name=served(spec.name)) if isinstance(spec, PromptSpec) else spec
            for spec in hook(self.view(settings))
        ]

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None, context: ToolContext) -> ToolResult:
        render = getattr(self.inner, "get_prompt", None)
        if not callable(render):
            return tool_failure(f"Unknown prompt: {name}", reason="not_found")
        inner = evolve(context, settings=self.view(context.settings))
        result: ToolResult = await render(self.own_name(name), arguments, inner)
        return result

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str],
        context: ToolContext,
    ) -> ToolResult:
        complete = getattr(self.inner, "complete", None)
        if not callable(complete):
            return tool_success({"values": []})
        if ref.get("type") == "ref/prompt":
            ref = {**ref, "name": self.own_name(str(ref.get("name")))}
        inner = evolve(context, settings=self.view(context.settings))
        result: ToolResult = await complete(ref, argument, context_arguments, inner)
        return result

    async def subscribe_resource(self, uri: str, context: ToolContext) -> ToolResult:
        return await self._watch("subscribe_resource", uri, context)

    async def unsubscribe_resource(self, uri: str, context: ToolContext) -> ToolResult:
        return await self._watch("unsubscribe_resource", uri, context)

    async def _watch(self, hook: str, uri: str, context: ToolContext) -> ToolResult:
        method = getattr(self.inner, hook, None)
        if not callable(method):
            return tool_failure(f"pack {self.name} does not tell of changes to its resources")
        result: ToolResult = await method(uri, evolve(context, settings=self.view(context.settings)))
        return result

    def attach(self, instance: PackInstance) -> None:
        self._forward("attach", instance)

    def detach(self, instance: PackInstance) -> None:
        self._forward("detach", instance)

    def health(self, instance: PackInstance) -> str | None:
        found = self._forward("health", instance)
        return self.reworded(str(found)) if found else None

    def starting(self, instance: PackInstance) -> bool:
        return bool(self._forward("starting", instance))

    def _forward(self, hook: str, instance: PackInstance) -> Any:
        """An optional lifecycle hook of the pack, with the instance's view of the settings."""
        method = getattr(self.inner, hook, None)
        if not callable(method):
            return None
        return method(evolve(instance, name=self.name, settings=self.view(instance.settings)))

    def validate_options(self, options: Mapping[str, Any]) -> None:
        validate = getattr(self.inner, "validate_options", None)
        if not callable(validate):
            if options:
                msg = f'tools.{self.name} is not supported by the "{self.provider}" pack'
                raise ValueError(msg)
            return
        try:
            validate(options)
        except ValueError as exc:
            raise ValueError(self.reworded(str(exc))) from exc

    def check_settings(self, settings: Settings) -> list[str]:
        hook = getattr(self.inner, "check_settings", None)
        if not callable(hook):
            return []
        found = hook(self.view(settings))
        return [self.reworded(p) if isinstance(p, str) else p for p in ([] if found is None else list(found))]

    def disabled_tools(self, settings: Settings) -> list[_Disabled]:
        hook = getattr(self.inner, "disabled_tools", None)
        if not callable(hook):
            return []
        out = []
        for entry in hook(self.view(settings)):
            spec = getattr(entry, "spec", None)
            spec = spec() if callable(spec) else spec
            name = self.instance.served(str(getattr(entry, "name", "")))
            out.append(
                _Disabled(
                    name=name,
                    spec=evolve(spec, name=name) if isinstance(spec, ToolSpec) else spec,
                    reason=str(getattr(entry, "reason", "") or "disabled by its pack"),
                    hint=getattr(entry, "hint", None),
                    since=getattr(entry, "since", None),
                )
            )
        return out


def check_served_names(
    pack: InstancePack, own: Sequence[str], prompts: Sequence[str] = (), *, lenient: bool = False
) -> list[tuple[str, str]]:
    """Raise :class:`ConfigError` for a ``rename`` of a tool (or prompt) the pack does not have, or
    a served name that is not a valid tool name. ``own``: every tool the pack has, enabled or not.
    ``lenient`` (a pack whose tools someone else lists, which may list a renamed tool later): the
    missing renames are returned as ``(tool, problem)`` instead, and served names left to the mount."""
    key = pack.name
    missing = []
    for old in pack.instance.rename:
        if old not in own and old not in prompts:
            listed = ", ".join(own) or "none"
            msg = f'tools.{key}.rename: the "{pack.provider}" pack has no tool {old} (its tools: {listed})'
            if not lenient:
                raise ConfigError(msg)
            missing.append((old, msg))
    if lenient:
        return missing
    for name in own:
        served = pack.instance.served(name)
        if not TOOL_NAME_RE.match(served):
            msg = (
                f"tools.{key}.prefix: {served} is not a valid tool name "
                "(1-128 letters, digits, '_', '-' or '.'): use a shorter prefix or rename the tool"
            )
            raise ConfigError(msg)
    return missing
