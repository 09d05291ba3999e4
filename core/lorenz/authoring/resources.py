"""A pack's own resources: static ones (:func:`resource`) and URI templates with typed parameters
(:func:`resource_template`); their handlers get a :class:`~.pack_context.PackContext`.

Template parameters are strings in the URI; each is structured into the params class strictly
(``"42"`` becomes ``42`` only for an ``int`` field), and a refused one is named in the error.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

import attrs
from attrs import field, frozen

from lorenz.arguments import ArgumentProblem
from lorenz.contracts import ResourceSpec
from lorenz.results import ToolResult, failure_result, tool_success
from lorenz.uri_templates import match_template, template_pattern, template_variables

from .completions import Completer, answer, completers, unknown_argument
from .content import EmbeddedResourceBlock, _b64
from .failures import ToolFailure, unexpected_failure
from .pack_context import PackContext
from .schema import KeywordCheck, input_schema, keyword_check, wire_name
from .structure import ArgumentError, structure_strict

__all__ = ["PackContext", "Resource", "ResourceTemplate", "resource", "resource_template"]

_SCALARS = {"string", "integer", "number", "boolean", "null"}
_INTEGER = re.compile(r"^-?[0-9]+$")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")


def string_fields(cls: type, what: str) -> tuple[Mapping[str, Any], Any]:
    """The schema of a class whose values arrive as strings (template parameters, prompt
    arguments) and a validator of its keyword constraints; refuses a field that is not a scalar."""
    schema = input_schema(cls)
    for name, prop in (schema.get("properties") or {}).items():
        kinds = prop.get("type", "string")
        kinds = {kinds} if isinstance(kinds, str) else set(kinds)
        if not kinds or not kinds <= _SCALARS:
            msg = f"{what}: {cls.__name__}.{name} must be a str, int, float or bool (or a Literal of them)"
            raise ValueError(msg)
    return schema, keyword_check(schema)


def parse_strings(
    values: Mapping[str, Any], cls: type, schema: Mapping[str, Any], keywords: KeywordCheck | None
) -> Any:
    """``values`` (strings) as ``cls``: a string becomes the int, float or bool its field takes
    when it spells one; raises :class:`ArgumentError` naming the key at fault."""
    properties = schema.get("properties") or {}
    converted: dict[str, Any] = {}
    for key, value in values.items():
        kinds = (properties.get(key) or {}).get("type", "string")
        kinds = {kinds} if isinstance(kinds, str) else set(kinds)
        if isinstance(value, str) and "string" not in kinds:
            if "integer" in kinds and _INTEGER.match(value):
                value = int(value)
            elif "number" in kinds and _NUMBER.match(value):
                value = float(value)
            elif "boolean" in kinds and value in ("true", "false"):
                value = value == "true"
        converted[key] = value
    parsed: Any = structure_strict(converted, cls)
    if keywords is not None:
        keywords.check(converted)
    return parsed


def refused(what: str, exc: ArgumentError) -> ToolResult:
    """The failure for refused parameters or arguments, each problem naming its key."""
    problems: Sequence[ArgumentProblem] = list(dict.fromkeys(exc.located))
    return failure_result(
        f"invalid {what}: " + "; ".join(str(problem) for problem in problems),
        reason="invalid_arguments",
        path=problems[0].json_path if problems else "$",
    )


def contents(uri: str, value: Any, mime_type: str | None, label: str) -> list[dict[str, Any]]:
    """What a resource handler returned as wire contents: a ``str``, ``bytes``, an
    :func:`~lorenz.authoring.embedded_resource` or a list of them."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            out.append({"uri": uri, "mimeType": mime_type or "text/plain", "text": item})
        elif isinstance(item, bytes | bytearray | memoryview):
            out.append({"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": _b64(bytes(item))})
        elif isinstance(item, EmbeddedResourceBlock):
            out.append(item.wire()["resource"])
        else:
            msg = f"{label} returned {type(item).__name__}, not str, bytes or an embedded_resource"
            raise TypeError(msg)
    return out


async def run_handler(
    label: str, call: Callable[[], Awaitable[Any]], ctx: PackContext, shape: Callable[[Any], Any]
) -> ToolResult:
    """Await a handler and shape what it returned; a raised failure or exception is a failure."""
    try:
        value = await call()
        if isinstance(value, ToolFailure):
            raise value
        result = tool_success(shape(value))
    except ToolFailure as failure:
        result = failure.to_result()
    except Exception as exc:
        result = unexpected_failure(label, exc, ctx.settings)
    await ctx.log.flush()
    return result


async def run_completion(
    label: str,
    found: Mapping[str, Completer],
    params: Collection[str],
    argument: Mapping[str, Any],
    arguments: Mapping[str, Any],
    ctx: PackContext,
) -> ToolResult:
    """Complete ``argument`` (``{"name", "value"}``) of the prompt or template ``label`` names, whose
    parameters are ``params``: one it does not take is refused, one without choices completes to nothing."""
    name, value = argument.get("name"), argument.get("value")
    if not isinstance(name, str) or not isinstance(value, str):
        return failure_result(f"{label}: the argument to complete needs a name and a value", reason="invalid_arguments")
    if name not in params:
        return unknown_argument(label, name, params)
    completer = found.get(name)
    if completer is None:
        return tool_success({"values": []})
    others = {key: str(item) for key, item in arguments.items() if key != name}
    what = f"{label}: completing {name}"
    return await run_handler(what, lambda: completer.values(ctx, value, others), ctx, lambda got: answer(got, what))


ResourceHandler = Callable[[PackContext], Awaitable[Any]]


@frozen(kw_only=True, eq=False)
class Resource:
    """A static resource: one URI, read by ``handler(ctx)``. Made by :func:`resource`."""

    uri: str
    name: str
    handler: ResourceHandler
    description: str | None = None
    title: str | None = None
    mime_type: str | None = None

    def __attrs_post_init__(self) -> None:
        if not self.uri or ("://" not in self.uri and ":" not in self.uri):
            raise ValueError(f"resource {self.name!r}: {self.uri!r} is not a URI (like 'weather://cities')")
        if template_variables(self.uri):
            raise ValueError(f"resource {self.uri}: has {{variables}}; use resource_template(...)")

    def spec(self) -> ResourceSpec:
        return ResourceSpec(
            uri=self.uri, name=self.name, description=self.description, title=self.title, mime_type=self.mime_type
        )

    def matches(self, uri: str) -> bool:
        return uri == self.uri

    async def read(self, uri: str, ctx: PackContext) -> ToolResult:
        label = f"resource {self.uri}"
        return await run_handler(
            label, lambda: self.handler(ctx), ctx, lambda value: contents(uri, value, self.mime_type, label)
        )

    async def complete_argument(
        self, argument: Mapping[str, Any], arguments: Mapping[str, Any], ctx: PackContext
    ) -> ToolResult:
        """Nothing to complete: a static resource has no parameters."""
        return await run_completion(f"resource {self.uri}", {}, (), argument, arguments, ctx)


TemplateHandler = Callable[[PackContext, Any], Awaitable[Any]]


@frozen(kw_only=True, eq=False)
class ResourceTemplate:
    """A family of resources: ``board://issues/{issue_id}``, read by ``handler(ctx, params)`` with
    the URI's parameters structured into ``params``. Made by :func:`resource_template`."""

    uri_template: str
    name: str
    handler: TemplateHandler
    params: type
    description: str | None = None
    title: str | None = None
    mime_type: str | None = None
    #: How parameters complete (``completion/complete``): a function or a list of choices by name.
    complete: Mapping[str, Any] | None = None
    _pattern: re.Pattern[str] = field(init=False, repr=False)
    _schema: Mapping[str, Any] = field(init=False, repr=False)
    _keywords: Any = field(init=False, repr=False)
    _completers: Mapping[str, Any] = field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        what = f"resource template {self.uri_template}"
        variables = template_variables(self.uri_template)
        if not variables:
            raise ValueError(f"{what}: no {{variables}}; use resource(...) for a single URI")
        if not attrs.has(self.params):
            raise TypeError(f"{what}: params must be an attrs class, not {self.params!r}")
        fields = [wire_name(self.params, item) for item in attrs.fields(self.params)]  # the template's {variables}
        missing = [name for name in variables if name not in fields]
        unused = [name for name in fields if name not in variables]
        if missing or unused:
            problems = [f"{{{name}}} is not a field of {self.params.__name__}" for name in missing]
            problems += [f"{self.params.__name__}.{name} is not in the template" for name in unused]
            raise ValueError(f"{what}: " + "; ".join(problems))
        schema, keywords = string_fields(self.params, what)
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_keywords", keywords)
        object.__setattr__(self, "_pattern", template_pattern(self.uri_template))
        object.__setattr__(self, "_completers", completers(self.complete, self.params, schema, what))

    def spec(self) -> ResourceSpec:
        return ResourceSpec(
            uri=self.uri_template,
            name=self.name,
            description=self.description,
            title=self.title,
            mime_type=self.mime_type,
            template=True,
        )

    def matches(self, uri: str) -> bool:
        return match_template(self._pattern, uri) is not None

    def parse(self, uri: str) -> Any:
        """The parameters of ``uri`` as the params class; raises :class:`ArgumentError`."""
        values = match_template(self._pattern, uri)
        if values is None:
            raise ArgumentError(ArgumentProblem((), f"{uri} does not match {self.uri_template}"))
        return parse_strings(values, self.params, self._schema, self._keywords)

    async def read(self, uri: str, ctx: PackContext) -> ToolResult:
        label = f"resource template {self.uri_template}"
        try:
            params = self.parse(uri)
        except ArgumentError as exc:
            return refused(f"parameters for {label}", exc)
        return await run_handler(
            label, lambda: self.handler(ctx, params), ctx, lambda value: contents(uri, value, self.mime_type, label)
        )

    async def complete_argument(
        self, argument: Mapping[str, Any], arguments: Mapping[str, Any], ctx: PackContext
    ) -> ToolResult:
        """Suggestions for ``argument`` (``{"name", "value"}``), the others already chosen being ``arguments``."""
        label, params = f"resource template {self.uri_template}", list(self._schema.get("properties") or ())
        return await run_completion(label, self._completers, params, argument, arguments, ctx)


def resource(
    uri: str, *, name: str, description: str | None = None, title: str | None = None, mime_type: str | None = None
) -> Callable[[ResourceHandler], Resource]:
    """Define a static resource from an async handler returning ``str``, ``bytes`` or
    :func:`~lorenz.authoring.embedded_resource` blocks::

    @resource("weather://cities", name="cities", mime_type="text/plain", description="...")
    async def cities(ctx: PackContext) -> str: ...
    """

    def decorate(handler: ResourceHandler) -> Resource:
        return Resource(uri=uri, name=name, handler=handler, description=description, title=title, mime_type=mime_type)

    return decorate


def resource_template(
    uri_template: str,
    *,
    params: type,
    name: str,
    description: str | None = None,
    title: str | None = None,
    mime_type: str | None = None,
    complete: Mapping[str, Any] | None = None,
) -> Callable[[TemplateHandler], ResourceTemplate]:
    """Define a resource template whose ``{variables}`` are the fields of ``params``::

    @resource_template("weather://forecasts/{city}", params=CityParams, name="forecast")
    async def forecast(ctx: PackContext, params: CityParams) -> str: ...

    ``complete={"city": suggest}`` completes a parameter (``completion/complete``): ``suggest`` is
    a function (sync or async) of the value typed so far, and optionally of the other parameters
    already chosen, after ``ctx`` if it takes it, returning a list of strings; or a list of choices
    matched by prefix. A ``Literal`` or ``Enum`` parameter completes from its choices by itself.
    """

    def decorate(handler: TemplateHandler) -> ResourceTemplate:
        return ResourceTemplate(
            uri_template=uri_template,
            name=name,
            handler=handler,
            params=params,
            description=description,
            title=title,
            mime_type=mime_type,
            complete=complete,
        )

    return decorate
