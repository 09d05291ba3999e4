"""Asking the client for input: the requests a handler builds (:func:`elicit`, :func:`elicit_url`,
:func:`create_message`, :func:`list_roots`), the round it returns (``return ctx.request_input({...})``)
and the answers it is re-entered with (``ctx.inputs``). :mod:`.rounds` runs the rounds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from attrs import field, frozen

from lorenz.arguments import ArgumentProblem

from .failures import validation_error
from .schema import input_schema
from .structure import ArgumentError, structure_strict

__all__ = [
    "InputRequest",
    "InputRound",
    "InputView",
    "Inputs",
    "Root",
    "Roots",
    "SampledMessage",
    "create_message",
    "elicit",
    "elicit_url",
    "list_roots",
]

T = TypeVar("T")

#: The integers a form answers with: those every JSON client holds exactly (JavaScript's safe range).
MAX_FORM_INTEGER = 2**53 - 1

Kind = Literal["elicit", "elicit_url", "sampling", "roots"]
Action = Literal["accept", "decline", "cancel"]

_METHODS: dict[str, str] = {
    "elicit": "elicitation/create",
    "elicit_url": "elicitation/create",
    "sampling": "sampling/createMessage",
    "roots": "roots/list",
}


@frozen(kw_only=True)
class InputRequest:
    """One request for the client, built by :func:`elicit`, :func:`elicit_url`, :func:`create_message`
    or :func:`list_roots`; ``schema`` is the attrs class an elicitation's answer is structured into."""

    kind: Kind
    params: Mapping[str, Any] = field(factory=dict)
    schema: type | None = None

    def wire(self) -> dict[str, Any]:
        """The request as MCP sends it: ``{"method": ..., "params": ...}``."""
        return {"method": _METHODS[self.kind], "params": dict(self.params)}


@frozen
class InputRound:
    """What ``ctx.request_input`` returns: the handler returns it, and is called again (with the same
    arguments) once the client answered, with the answers on ``ctx.inputs``."""

    requests: Mapping[str, InputRequest]


@frozen(kw_only=True)
class InputView:
    """One answer as the client gave it: ``kind`` of request, ``action`` (``accept``, ``decline`` or
    ``cancel``; ``None`` when it was never asked) and the raw ``content``."""

    kind: Kind | None = None
    action: Action | None = None
    content: Any = None

    @property
    def asked(self) -> bool:
        return self.action is not None


@frozen(kw_only=True)
class Root:
    """A root the client exposes (``file:///...``)."""

    uri: str
    name: str | None = None


@frozen(kw_only=True)
class Roots:
    """The answer to :func:`list_roots`: ``ctx.inputs.accepted("roots", Roots)``."""

    roots: list[Root]


@frozen(kw_only=True)
class SampledMessage:
    """The answer to :func:`create_message`: ``ctx.inputs.accepted("draft", SampledMessage)``
    (``text`` is ``None`` when the model answered with something other than text)."""

    role: str
    model: str
    text: str | None = None
    stop_reason: str | None = None


@frozen
class Inputs:
    """``ctx.inputs``: the answers of every round so far, by request name."""

    answers: Mapping[str, InputView] = field(factory=dict)

    def view(self, name: str) -> InputView:
        """The answer to ``name`` as given (an empty view when ``name`` was never asked)."""
        return self.answers.get(name, InputView())

    def accepted(self, name: str, type_: type[T]) -> T | None:
        """The accepted answer to ``name`` as ``type_`` (structured strictly), or ``None`` when it was
        not asked, or declined or cancelled. An answer that does not fit ``type_`` (or a form's
        integer past :data:`MAX_FORM_INTEGER`) is a ``validation_error`` failure naming the problem,
        whose recovery says the answer was at fault, not the arguments."""
        answer = self.answers.get(name)
        if answer is None or answer.action != "accept":
            return None
        content = answer.content if answer.content is not None else {}
        try:
            if answer.kind == "elicit":
                _check_form_integers(content)
            return structure_strict(content, type_)
        except ArgumentError as exc:
            problems = "; ".join(str(problem) for problem in exc.located)
            recovery = (
                f"The arguments were fine; the client's answer to {name!r} was not. Call the tool again "
                "and answer the question with values of the types its form asks for."
            )
            message = f"The client's answer to {name!r} does not fit: {problems}"
            raise validation_error(message, recovery=recovery) from None

    def __contains__(self, name: object) -> bool:
        return name in self.answers


def _check_form_integers(content: Any) -> None:
    """Refuse a form answer's integer no JSON client holds exactly (``10**30`` in an ``int`` field)."""
    if not isinstance(content, Mapping):
        return
    for key, value in content.items():
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_FORM_INTEGER:
            message = f"must be between -{MAX_FORM_INTEGER} and {MAX_FORM_INTEGER}"
            raise ArgumentError(ArgumentProblem((str(key),), message))


def _flat_property(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """An elicitation property: one primitive type (a nullable field is just optional); an integer
    is bounded to :data:`MAX_FORM_INTEGER` either way, so the client's form knows it too."""
    out = {key: value for key, value in schema.items() if key != "default" or value is not None}
    types = out.get("type")
    if isinstance(types, list):
        real = [kind for kind in types if kind != "null"]
        if len(real) == 1:
            out["type"] = real[0]
    if out.get("type") == "integer":
        out.setdefault("minimum", -MAX_FORM_INTEGER)
        out.setdefault("maximum", MAX_FORM_INTEGER)
    primitive = out.get("type") in ("string", "number", "integer", "boolean") or "enum" in out
    if not primitive and not (out.get("type") == "array" and isinstance(out.get("items"), Mapping)):
        msg = f"elicit: field {name!r} must be a string, number, integer, boolean, enum or list of strings"
        raise ValueError(msg)
    return out


def elicit(message: str, *, schema: type) -> InputRequest:
    """Ask the user to fill a form (``elicitation/create``) whose fields are ``schema``'s (an attrs
    class of flat, primitive fields); read the answer with ``ctx.inputs.accepted(name, schema)``."""
    full = input_schema(schema)
    properties = {name: _flat_property(name, sub) for name, sub in (full.get("properties") or {}).items()}
    requested: dict[str, Any] = {"type": "object", "properties": properties}
    if full.get("required"):
        requested["required"] = list(full["required"])
    return InputRequest(
        kind="elicit", params={"mode": "form", "message": message, "requestedSchema": requested}, schema=schema
    )


def elicit_url(message: str, url: str) -> InputRequest:
    """Send the user to ``url`` (a sign-in, a payment) out of band; ``accept`` means they agreed to go."""
    return InputRequest(kind="elicit_url", params={"mode": "url", "message": message, "url": url})


def create_message(
    messages: str | Sequence[str | Mapping[str, Any]],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float | None = None,
) -> InputRequest:
    """Ask the client's model for a completion (``sampling/createMessage``). ``messages`` is a user
    text, or a list of texts (user turns) and wire ``SamplingMessage`` maps."""
    items = [messages] if isinstance(messages, str) else list(messages)
    wire = [
        {"role": "user", "content": {"type": "text", "text": item}} if isinstance(item, str) else dict(item)
        for item in items
    ]
    params: dict[str, Any] = {"messages": wire, "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if temperature is not None:
        params["temperature"] = temperature
    return InputRequest(kind="sampling", params=params)


def list_roots() -> InputRequest:
    """Ask the client for its roots (``roots/list``): ``ctx.inputs.accepted(name, Roots)``."""
    return InputRequest(kind="roots")


def view_of(request_kind: Kind, answer: Any) -> InputView:
    """The :class:`InputView` of a client's wire answer to a request of ``request_kind``."""
    if not isinstance(answer, Mapping):
        return InputView(kind=request_kind, action="cancel")
    if request_kind in ("elicit", "elicit_url"):
        action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            action = "cancel"
        content = answer.get("content") if request_kind == "elicit" else None
        return InputView(kind=request_kind, action=action, content=content)  # type: ignore[arg-type]
    if request_kind == "roots":
        roots = [
            {"uri": root["uri"], **({"name": root["name"]} if isinstance(root.get("name"), str) else {})}
            for root in answer.get("roots") or []
            if isinstance(root, Mapping) and isinstance(root.get("uri"), str)
        ]
        return InputView(kind="roots", action="accept", content={"roots": roots})
    content = answer.get("content")
    text = content.get("text") if isinstance(content, Mapping) and content.get("type") == "text" else None
    sampled: dict[str, Any] = {"role": str(answer.get("role", "assistant")), "model": str(answer.get("model", ""))}
    if isinstance(text, str):
        sampled["text"] = text
    if isinstance(answer.get("stopReason"), str):
        sampled["stop_reason"] = answer["stopReason"]
    return InputView(kind="sampling", action="accept", content=sampled)
