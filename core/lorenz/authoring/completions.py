"""Completions of a resource template's parameters and a prompt's arguments (``completion/complete``):
``complete={"city": suggest}`` on :func:`~lorenz.authoring.resource_template` or
:func:`~lorenz.authoring.prompt` names, per parameter, a function of the value typed so far (and,
if it takes them, the other arguments already chosen, after the :class:`PackContext` when it asks for
``ctx``) or a static list of choices matched by prefix. A ``Literal`` or ``Enum`` field completes
from its choices without being named.

The kit's answer is bounded to :data:`MAX_VALUES` values; what a completer raises or returns wrong
is a failure, which the host turns into a JSON-RPC error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from lorenz.results import ToolResult, failure_result

from .schema import wire_name

if TYPE_CHECKING:
    from .pack_context import PackContext

__all__ = ["MAX_VALUES", "Completer", "Completions", "answer", "completers", "unknown_argument"]

#: The most values one answer carries (the protocol's bound); the rest are counted in ``total``.
MAX_VALUES = 100

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@frozen(kw_only=True)
class Completions:
    """What a completer may return instead of a plain list: ``values`` and, when it knows of more
    than it returns, ``total`` (how many there are) and ``has_more``."""

    values: Sequence[str]
    total: int | None = None
    has_more: bool | None = None


@frozen
class Completer:
    """How one parameter completes: by calling ``suggest`` or by prefix among ``choices``."""

    suggest: Callable[..., Any] | None = None
    choices: tuple[str, ...] = ()
    #: Whether ``suggest`` takes the :class:`PackContext` first, and how many of (value, arguments) it takes.
    wants_ctx: bool = False
    takes: int = 1

    async def values(self, ctx: PackContext, value: str, arguments: Mapping[str, str]) -> Any:
        if self.suggest is None:
            folded = value.casefold()
            return [choice for choice in self.choices if choice.casefold().startswith(folded)]
        given = (value, dict(arguments))[: self.takes]
        answer = self.suggest(ctx, *given) if self.wants_ctx else self.suggest(*given)
        return await answer if inspect.isawaitable(answer) else answer


def _completer(suggest: Any, what: str) -> Completer:
    """``suggest`` (a function or a list of choices) as a :class:`Completer`; refuses what cannot be called
    as ``(value)``, ``(value, arguments)`` or either after ``ctx``."""
    if isinstance(suggest, str) or not (callable(suggest) or isinstance(suggest, Iterable)):
        raise TypeError(f"{what}: complete must be a function or a list of strings, not {type(suggest).__name__}")
    if not callable(suggest):
        choices = tuple(suggest)
        wrong = [choice for choice in choices if not isinstance(choice, str)]
        if wrong:
            raise TypeError(f"{what}: complete's choices must be strings, not {wrong[0]!r}")
        return Completer(choices=choices)
    shape = f"{what}: complete must take (value) or (value, arguments), after ctx if it wants it"
    try:
        parameters = list(inspect.signature(suggest).parameters.values())
    except (TypeError, ValueError):  # no signature to read (a builtin): given the value alone
        return Completer(suggest=suggest)
    first = parameters[0] if parameters else None
    wants_ctx = first is not None and (
        first.name == "ctx" or getattr(first.annotation, "__name__", first.annotation) == "PackContext"
    )
    rest = parameters[1:] if wants_ctx else parameters
    if any(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty for p in rest):
        raise TypeError(shape)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in rest):
        return Completer(suggest=suggest, wants_ctx=wants_ctx, takes=2)
    positional = [p for p in rest if p.kind in _POSITIONAL]
    required = [p for p in positional if p.default is p.empty]
    if not positional or len(required) > 2:
        raise TypeError(shape)
    return Completer(suggest=suggest, wants_ctx=wants_ctx, takes=min(len(positional), 2))


def _enum_choices(prop: Mapping[str, Any]) -> tuple[str, ...]:
    """A field's ``enum`` as the strings a client types (``true``, ``3``); ``null`` left out."""
    out: list[str] = []
    for choice in prop.get("enum") or ():
        if isinstance(choice, bool):
            out.append("true" if choice else "false")
        elif choice is not None:
            out.append(str(choice))
    return tuple(out)


def completers(
    complete: Mapping[str, Any] | None, cls: type | None, schema: Mapping[str, Any], what: str
) -> dict[str, Completer]:
    """Each completable parameter's :class:`Completer`, by wire name: those ``complete`` names (by wire
    or attribute name) and the fields with choices; refuses a name that is not a field of ``cls``."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    out = {name: Completer(choices=choices) for name, prop in properties.items() if (choices := _enum_choices(prop))}
    if not complete:
        return out
    if not isinstance(complete, Mapping):
        raise TypeError(f"{what}: complete must map parameter names to functions or lists, not {complete!r}")
    from lorenz.settings.suggest import did_you_mean

    by_attribute = {item.name: wire_name(cls, item) for item in attrs.fields(cls)} if cls is not None else {}
    for key, suggest in complete.items():
        name = key if key in properties else by_attribute.get(key)
        if name is None:
            known = ", ".join(properties) or "none"
            hint = did_you_mean(key, properties)
            raise ValueError(f"{what}: complete names {key!r}, which is not a parameter{hint} (it has: {known})")
        out[name] = _completer(suggest, f"{what}: {name}")
    return out


def answer(value: Any, label: str) -> dict[str, Any]:
    """A completer's return as ``{"values", "total"?, "hasMore"?}``, at most :data:`MAX_VALUES` values."""
    total, has_more = None, None
    if isinstance(value, Completions):
        value, total, has_more = value.values, value.total, value.has_more
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"{label} returned {type(value).__name__}, not a list of strings")
    values = list(value)
    for wrong in values:
        if not isinstance(wrong, str):
            raise TypeError(f"{label} returned {wrong!r} ({type(wrong).__name__}) among its values, not a string")
    if len(values) > MAX_VALUES:
        total = max(total or 0, len(values))
        values, has_more = values[:MAX_VALUES], True
    out: dict[str, Any] = {"values": values}
    if total is not None:
        out["total"] = total
    if has_more is not None:
        out["hasMore"] = has_more
    return out


def unknown_argument(label: str, name: str, params: Collection[str]) -> ToolResult:
    """The refusal of a completion for ``name``, which is not one of ``params``."""
    from lorenz.settings.suggest import did_you_mean

    known = ", ".join(params) or "none"
    text = f"{label} has no argument {name!r}{did_you_mean(name, params)} (it has: {known})"
    return failure_result(text, reason="invalid_arguments")
