"""A pack's own prompts (:func:`prompt`): typed arguments from an attrs class, rendered by an async
handler into a string (one user message) or a list of messages (:func:`message`).

Prompt arguments are strings on the wire; each is structured into the arguments class strictly,
as template parameters are, and a missing or refused one is named in the error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import attrs
from attrs import field, frozen

from lorenz.arguments import ArgumentProblem, unrecognized_key
from lorenz.contracts import PromptArgument, PromptSpec
from lorenz.results import ToolResult

from .completions import completers
from .content import ContentBlock, TextBlock, rendered
from .resources import PackContext, parse_strings, refused, run_completion, run_handler, string_fields
from .structure import ArgumentError
from .tool import NAME_RE

__all__ = ["Prompt", "PromptMessage", "message", "prompt"]


@frozen
class PromptMessage:
    """One message of a rendered prompt: ``role`` (``user`` or ``assistant``) and one content block."""

    role: Literal["user", "assistant"]
    content: ContentBlock

    def wire(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content.wire()}


def message(role: Literal["user", "assistant"], content: str | ContentBlock) -> PromptMessage:
    """A prompt message: ``message("assistant", "Here is the forecast.")`` or with an ``image(...)``."""
    if role not in ("user", "assistant"):
        raise ValueError(f"a prompt message's role is 'user' or 'assistant', not {role!r}")
    _, blocks = rendered([content], "prompt message")
    assert blocks is not None
    return PromptMessage(role, blocks[0])


def _messages(value: Any, label: str) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [PromptMessage("user", TextBlock(value)).wire()]
    if not isinstance(value, Sequence):
        raise TypeError(f"{label} returned {type(value).__name__}, not a str or a list of messages")
    out = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            item = PromptMessage("user", TextBlock(item))
        if not isinstance(item, PromptMessage):
            raise TypeError(f"{label}: message {index} is a {type(item).__name__}, not a str or message(...)")
        out.append(item.wire())
    return out


PromptHandler = Callable[[PackContext, Any], Awaitable[Any]]


@frozen(kw_only=True, eq=False)
class Prompt:
    """A prompt definition. Made by :func:`prompt`; checked when it is made."""

    name: str
    handler: PromptHandler
    description: str | None = None
    title: str | None = None
    arguments: type | None = None
    #: How arguments complete (``completion/complete``): a function or a list of choices by name.
    complete: Mapping[str, Any] | None = None
    _schema: Mapping[str, Any] = field(init=False, repr=False)
    _keywords: Any = field(init=False, repr=False)
    _completers: Mapping[str, Any] = field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise ValueError(f"prompt name {self.name!r} must match {NAME_RE.pattern}")
        if self.arguments is not None and not attrs.has(self.arguments):
            raise TypeError(f"prompt {self.name}: arguments must be an attrs class, not {self.arguments!r}")
        schema, keywords = string_fields(self.arguments, f"prompt {self.name}") if self.arguments else ({}, None)
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_keywords", keywords)
        found = completers(self.complete, self.arguments, schema, f"prompt {self.name}")
        object.__setattr__(self, "_completers", found)

    def spec(self) -> PromptSpec:
        properties = self._schema.get("properties") or {}
        required = set(self._schema.get("required") or ())
        arguments = tuple(
            PromptArgument(name=name, description=prop.get("description"), required=name in required)
            for name, prop in properties.items()
        )
        return PromptSpec(name=self.name, description=self.description, title=self.title, arguments=arguments)

    def parse(self, arguments: Mapping[str, Any] | None) -> Any:
        """The arguments as the arguments class (``None`` without one); raises :class:`ArgumentError`."""
        if self.arguments is None:
            if arguments:
                raise ArgumentError(*(ArgumentProblem((key,), unrecognized_key(key)) for key in arguments))
            return None
        return parse_strings(dict(arguments or {}), self.arguments, self._schema, self._keywords)

    async def render(self, arguments: Mapping[str, Any] | None, ctx: PackContext) -> ToolResult:
        label = f"prompt {self.name}"
        try:
            args = self.parse(arguments)
        except ArgumentError as exc:
            return refused(f"arguments for {label}", exc)

        def shape(value: Any) -> dict[str, Any]:
            out: dict[str, Any] = {"messages": _messages(value, label)}
            if self.description is not None:
                out["description"] = self.description
            return out

        return await run_handler(label, lambda: self.handler(ctx, args), ctx, shape)

    async def complete_argument(
        self, argument: Mapping[str, Any], arguments: Mapping[str, Any], ctx: PackContext
    ) -> ToolResult:
        """Suggestions for ``argument`` (``{"name", "value"}``), the others already chosen being ``arguments``."""
        params = list(self._schema.get("properties") or ())
        return await run_completion(f"prompt {self.name}", self._completers, params, argument, arguments, ctx)


def prompt(
    name: str,
    *,
    description: str | None = None,
    arguments: type | None = None,
    title: str | None = None,
    complete: Mapping[str, Any] | None = None,
) -> Callable[[PromptHandler], Prompt]:
    """Define a prompt from an async handler ``(ctx, args)`` returning a ``str`` or a list of
    messages (``args`` is ``None`` without an ``arguments`` class)::

    @prompt("weather_brief", arguments=BriefArgs, description="Brief the agent on a city's weather.")
    async def brief(ctx: PackContext, args: BriefArgs) -> str: ...

    ``complete={"city": suggest}`` completes an argument, as for :func:`resource_template`.
    """

    def decorate(handler: PromptHandler) -> Prompt:
        return Prompt(
            name=name, handler=handler, description=description, title=title, arguments=arguments, complete=complete
        )

    return decorate
