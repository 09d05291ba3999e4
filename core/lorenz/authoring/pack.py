"""A pack of typed tools as a normal :class:`~lorenz.contracts.ToolProvider`, and disabled tools."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
from attrs import field, frozen

from lorenz.arguments import ArgumentProblem
from lorenz.plugins.declared import DeclaredPermissions
from lorenz.results import ToolResult, unsupported_tool_failure

from .structure import ArgumentError, structure_strict
from .tool import CallContext, Tool, failure_result

if TYPE_CHECKING:
    from lorenz.contracts import PromptSpec, ResourceSpec, ToolContext, ToolSpec
    from lorenz.settings.model import Settings

    from .prompts import Prompt
    from .resources import PackContext, Resource, ResourceTemplate

__all__ = ["DisabledTool", "Pack", "disabled"]


@frozen(kw_only=True, eq=False)
class DisabledTool:
    """A tool kept out of ``tools/list`` (calls to it are refused) but shown, muted, on the host's
    landing page with ``reason`` and ``hint`` (how to enable it, e.g. an option line).

    ``unless(options)`` makes it conditional: the tool is enabled when it returns true for the
    pack's structured options. Without ``unless`` it is always disabled.
    """

    tool: Tool[Any, Any]
    reason: str
    hint: str | None = None
    since: str | None = None
    unless: Callable[[Any], bool] | None = None

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def spec(self) -> ToolSpec:
        """The tool as it would be advertised if enabled."""
        return self.tool.spec()

    def is_disabled(self, options: Any) -> bool:
        return self.unless is None or not self.unless(options)

    def to_dict(self) -> dict[str, Any]:
        """``{name, title, description, annotations?, reason, hint?, since?}``, for pages and JSON."""
        spec = self.tool.spec()
        out: dict[str, Any] = {"name": spec.name, "title": spec.title, "description": spec.description}
        if spec.annotations is not None:
            out["annotations"] = dict(spec.annotations)
        out["reason"] = self.reason
        if self.hint is not None:
            out["hint"] = self.hint
        if self.since is not None:
            out["since"] = self.since
        return out


def disabled(
    tool: Tool[Any, Any],
    *,
    reason: str,
    hint: str | None = None,
    since: str | None = None,
    unless: Callable[[Any], bool] | None = None,
) -> DisabledTool:
    """Mark ``tool`` disabled: ``disabled(set_alert, reason="Writes are off.", hint="tools.weather.allow_writes: true",
    unless=lambda options: options.allow_writes)``."""
    return DisabledTool(tool=tool, reason=reason, hint=hint, since=since, unless=unless)


def _entries(values: Iterable[Tool[Any, Any] | DisabledTool]) -> tuple[Tool[Any, Any] | DisabledTool, ...]:
    return tuple(values)


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(value) for value in values)


def _resources(values: Iterable[Resource | ResourceTemplate]) -> tuple[Resource | ResourceTemplate, ...]:
    return tuple(values)


def _prompts(values: Iterable[Prompt]) -> tuple[Prompt, ...]:
    return tuple(values)


def _duplicates(values: list[str]) -> list[str]:
    return sorted({value for value in values if values.count(value) > 1})


@attrs.define(eq=False)
class _Routes:
    """A pack's tools as called under one ``Settings``: its options and enabled tools by name."""

    settings: Settings
    options: Any
    tools: dict[str, Tool[Any, Any]]
    _enabled_here: Callable[[str], bool] | None = None

    def enabled_here(self) -> Callable[[str], bool]:
        """What ``ctx.is_enabled`` answers when the host said nothing (an isolated pack, a bare
        ``ToolContext``): this pack's enabled tools, less the operator's ``server.disabled_tools``."""
        if self._enabled_here is None:
            patterns = tuple(self.settings.server.disabled_tools)
            names = {name for name in self.tools if not any(fnmatch.fnmatchcase(name, p) for p in patterns)}
            self._enabled_here = names.__contains__
        return self._enabled_here


@attrs.define(kw_only=True, eq=False)
class Pack:
    """A tool pack built from typed tools; register it like any other ``ToolProvider``.

    ``options`` is an attrs class for the workflow's ``tools.<name>`` map: it is validated when the
    workflow loads (unknown keys and wrong types name the option) and handed to every handler as
    ``ctx.options``. Without it the pack accepts no options.

    ``resources`` (:func:`resource`, :func:`resource_template`) and ``prompts`` (:func:`prompt`)
    are served beside the tools, to callers that may call at least one of them.
    """

    #: Read by the host: this pack refuses bad arguments itself (``Unrecognized key: "x"``),
    #: so the host skips its own JSON Schema check.
    validates_arguments: ClassVar[bool] = True

    name: str
    tools: tuple[Tool[Any, Any] | DisabledTool, ...] = field(converter=_entries)
    options: type | None = None
    description: str = ""
    skills: tuple[str, ...] = field(default=(), converter=_strings)
    resources: tuple[Resource | ResourceTemplate, ...] = field(default=(), converter=_resources)
    prompts: tuple[Prompt, ...] = field(default=(), converter=_prompts)
    #: What the pack needs when it runs sandboxed (``server.sandboxed_packs``): hosts, paths,
    #: environment variables, subprocesses; or a function of the pack's settings computing them.
    #: Read in a survey process, shown by ``lorenz plugins -v``.
    permissions: DeclaredPermissions | None = None

    #: ``(raw options, structured options)`` of the last settings seen: parse once per workflow load.
    _parsed: tuple[object, Any] | None = field(init=False, default=None, repr=False)
    #: Where a call goes under the last settings seen (built once per workflow load, not per call).
    _routes: _Routes | None = field(init=False, default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        for what, names in (
            ("tool(s)", [entry.name for entry in self.tools]),
            ("resource URI(s)", [entry.spec().uri for entry in self.resources]),
            ("prompt(s)", [entry.name for entry in self.prompts]),
        ):
            duplicates = _duplicates(names)
            if duplicates:
                msg = f"pack {self.name} declares the {what} {', '.join(duplicates)} more than once"
                raise ValueError(msg)
        offered = (*self.resources, *self.prompts)
        if offered:  # a pack that offers none never imports them
            from .prompts import Prompt  # a pack that offers none never imports them
            from .resources import Resource, ResourceTemplate  # a pack that offers none never imports them
        for entry in offered:
            if not isinstance(entry, Resource | ResourceTemplate | Prompt):
                msg = f"pack {self.name}: {entry!r} is not a resource(...), resource_template(...) or prompt(...)"
                raise TypeError(msg)

    # -- options ----------------------------------------------------------------------------

    def parse_options(self, raw: Mapping[str, Any] | None) -> Any:
        """The structured options (raises ``ValueError("tools.<pack>.<key>: ...")``)."""
        raw = dict(raw or {})
        if self.options is None:
            if raw:
                msg = f'tools.{self.name} is not supported by the "{self.name}" pack'
                raise ValueError(msg)
            return raw
        try:
            return structure_strict(raw, self.options)
        except ArgumentError as exc:
            label = f"tools.{self.name}"
            problems = [str(ArgumentProblem((label, *problem.path), problem.message)) for problem in exc.located]
            raise ValueError("; ".join(problems)) from None

    def validate_options(self, options: Mapping[str, Any]) -> None:
        """The ``ToolProvider`` hook the core calls for ``tools.<pack>`` while loading a workflow."""
        self.parse_options(options)

    def _options_for(self, settings: Settings) -> Any:
        raw = (settings.tool_options or {}).get(self.name)
        cached = self._parsed
        if cached is not None and cached[0] is raw:
            return cached[1]
        parsed = self.parse_options(raw)
        self._parsed = (raw, parsed)
        return parsed

    # -- the ToolProvider contract ----------------------------------------------------------

    def enabled_tools(self, settings: Settings) -> list[Tool[Any, Any]]:
        options = self._options_for(settings)
        out: list[Tool[Any, Any]] = []
        for entry in self.tools:
            if isinstance(entry, DisabledTool):
                if not entry.is_disabled(options):
                    out.append(entry.tool)
            else:
                out.append(entry)
        return out

    def disabled_tools(self, settings: Settings) -> list[DisabledTool]:
        """The tools disabled under ``settings``: the host leaves them out of ``tools/list`` and
        shows them muted (with ``reason`` and ``hint``) on its landing page."""
        options = self._options_for(settings)
        return [entry for entry in self.tools if isinstance(entry, DisabledTool) and entry.is_disabled(options)]

    def client_input_tools(self, settings: Settings) -> list[str]:
        """The enabled tools declared with ``needs_client_input=True`` (``lorenz check`` asks)."""
        return [entry.name for entry in self.enabled_tools(settings) if entry.needs_client_input]

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        return [entry.spec() for entry in self.enabled_tools(settings)]

    def _routes_for(self, settings: Settings) -> _Routes:
        routes = self._routes
        if routes is None or routes.settings is not settings:
            options = self._options_for(settings)
            enabled = {entry.name: entry for entry in self.enabled_tools(settings)}
            routes = self._routes = _Routes(settings, options, enabled)
        return routes

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        try:
            routes = self._routes_for(context.settings)
        except ValueError as exc:
            return failure_result(str(exc), reason="invalid_options")
        target = routes.tools.get(name)
        if target is None:
            off = next((entry for entry in self.disabled_tools(context.settings) if entry.name == name), None)
            if off is not None:
                hint = f" To enable it: {off.hint}" if off.hint else ""
                return failure_result(
                    f"Tool {json.dumps(name)} is disabled: {off.reason}{hint}",
                    reason="tool_disabled",
                    recovery="Use another available tool; this one is turned off in this deployment.",
                )
            return unsupported_tool_failure(name, list(routes.tools))
        call = CallContext(
            settings=context.settings,
            http=context.http,
            options=routes.options,
            tool=target,
            progress_sink=context.progress_sink,
            log_sink=getattr(context, "log_sink", None),
            enabled=getattr(context, "enabled", None) or routes.enabled_here(),
            client_input=getattr(context, "client_input", None),
            caller=getattr(context, "caller", None),
        )
        return await target.run(input, call)

    # -- resources and prompts (optional ToolProvider members) ------------------------------

    def resource_specs(self, settings: Settings) -> list[ResourceSpec]:
        return [entry.spec() for entry in self.resources]

    def prompt_specs(self, settings: Settings) -> list[PromptSpec]:
        return [entry.spec() for entry in self.prompts]

    def _pack_context(self, context: ToolContext) -> PackContext:
        options = self._options_for(context.settings)
        log_sink = getattr(context, "log_sink", None)
        from .resources import PackContext  # only a pack with resources or prompts

        return PackContext(settings=context.settings, http=context.http, options=options, log_sink=log_sink)

    async def read_resource(self, uri: str, context: ToolContext) -> ToolResult:
        """Read ``uri`` (a static resource's, or one of a template's): its contents in wire form."""
        target = next((entry for entry in self.resources if entry.matches(uri)), None)
        if target is None:
            return failure_result(f"Resource not found: {uri}", reason="not_found")
        try:
            ctx = self._pack_context(context)
        except ValueError as exc:
            return failure_result(str(exc), reason="invalid_options")
        return await target.read(uri, ctx)

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None, context: ToolContext) -> ToolResult:
        """Render prompt ``name`` with ``arguments``: ``{"description"?, "messages": [...]}``."""
        target = next((entry for entry in self.prompts if entry.name == name), None)
        if target is None:
            return failure_result(f"Unknown prompt: {name}", reason="not_found")
        try:
            ctx = self._pack_context(context)
        except ValueError as exc:
            return failure_result(str(exc), reason="invalid_options")
        return await target.render(arguments, ctx)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, Any],
        context: ToolContext,
    ) -> ToolResult:
        """Suggestions for one argument of a prompt (``{"type": "ref/prompt", "name"}``) or a resource
        template (``{"type": "ref/resource", "uri"}``): ``{"values", "total"?, "hasMore"?}``, from its
        ``complete=`` or its choices."""
        target: Prompt | Resource | ResourceTemplate | None
        if ref.get("type") == "ref/prompt":
            target = next((entry for entry in self.prompts if entry.name == ref.get("name")), None)
            missing = f"Unknown prompt: {ref.get('name')}"
        else:
            target = next((entry for entry in self.resources if entry.spec().uri == ref.get("uri")), None)
            missing = f"Resource not found: {ref.get('uri')}"
        if target is None:
            return failure_result(missing, reason="not_found")
        try:
            ctx = self._pack_context(context)
        except ValueError as exc:
            return failure_result(str(exc), reason="invalid_options")
        return await target.complete_argument(argument, context_arguments, ctx)
