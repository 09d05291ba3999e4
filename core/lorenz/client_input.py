"""Asking the client for input during a tool call: what the host offers a pack (:class:`ClientInput`)
and the result a pack returns when the client must answer before the call can go on
(:class:`InputRequired`). Requests and answers are MCP wire dicts; nothing here imports the SDK."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from attrs import field, frozen

from lorenz.results import ToolResult

if TYPE_CHECKING:
    from lorenz.settings.model import ServerSettings

__all__ = [
    "ASK",
    "NONE",
    "RETRY",
    "AskClient",
    "ClientInput",
    "InputRequired",
    "InvalidInputRequest",
    "Mode",
    "serving_warnings",
    "undeclared_capability",
]

#: The host asks the client now (``elicitation/create``, ...) and the pack goes on in the same call.
ASK: Final = "ask"
#: The call answers ``input_required``; the client retries it with the answers (2026-07-28).
RETRY: Final = "retry"
#: No client can answer on this path; ``ClientInput.refusal`` says what would work.
NONE: Final = "none"

Mode = Literal["ask", "retry", "none"]

#: Sends each named request (``{"method": ..., "params": ...}``) and returns each answer's wire result.
AskClient = Callable[[Mapping[str, Mapping[str, Any]]], Awaitable[Mapping[str, Any]]]


class InvalidInputRequest(ValueError):
    """A pack asked for input with a request MCP cannot carry; ``str()`` names the request and field."""

    def answer(self, tool: object) -> str:
        """The failure message of ``tool``'s call, the same in every era."""
        return f"{tool} asked the client for input with a request it cannot be sent: {self}"


@frozen(kw_only=True)
class ClientInput:
    """How a call may ask its client for input (``ToolContext.client_input``).

    ``state`` and ``responses`` are what a 2026-07-28 client sent back on a retry: the state the
    previous round minted (verified by the host) and the answers it collected."""

    mode: Mode
    ask: AskClient | None = field(default=None, repr=False)
    state: str | None = field(default=None, repr=False)
    responses: Mapping[str, Any] | None = field(default=None, repr=False)
    refusal: str | None = None
    #: What the client declared it can answer (the wire ``ClientCapabilities``); ``None`` if unknown.
    capabilities: Mapping[str, Any] | None = field(default=None, repr=False)

    def undeclared(self, request: Mapping[str, Any]) -> str | None:
        """The capability the client did not declare that ``request`` (a wire request) needs, such
        as ``"roots"`` or ``"elicitation.url"``; ``None`` when it declared it, or is not known."""
        if self.capabilities is None:
            return None
        return undeclared_capability(request, self.capabilities)


@frozen(kw_only=True)
class InputRequired(ToolResult):
    """The call cannot finish before the client answers ``requests``; retried with ``state``."""

    success: bool = True
    requests: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    state: str = ""

    def wire(self) -> dict[str, Any]:
        """The ``InputRequiredResult`` (its ``requestState`` is sealed by the host on the way out)."""
        return {"resultType": "input_required", "inputRequests": dict(self.requests), "requestState": self.state}


def serving_warnings(server: ServerSettings, *, workers: int, asking_tools: Iterable[str] = ()) -> list[str]:
    """What a workflow served this way cannot do for calls that ask their client for input."""
    warnings: list[str] = []
    if workers > 1 and server.request_state_key is None:
        warnings.append(
            f"{workers} workers and no server.request_state_key: each worker seals requestState with a key "
            "of its own, so a 2026-07-28 client's retry that reaches another worker is refused; set "
            "server.request_state_key to one secret shared by every worker and replica"
        )
    tools = sorted(asking_tools)
    if tools and (not server.stateful or server.json_response):
        warnings.append(
            f"{', '.join(tools)} need{'s' if len(tools) == 1 else ''} input from the client, which a "
            "handshake-era HTTP client cannot give with plain JSON responses or stateless HTTP (the default): "
            "only 2026-07-28 clients and stdio can answer; set server.stateful: true and "
            "server.json_response: false to let handshake-era HTTP clients answer too"
        )
    return warnings


def undeclared_capability(request: Mapping[str, Any], capabilities: Mapping[str, Any]) -> str | None:
    """The capability in ``capabilities`` (a client's wire ``ClientCapabilities``) that ``request``
    needs and the client did not declare; ``None`` when nothing is missing. A client that declares
    ``elicitation`` with neither mode declares form elicitation only."""
    method, params = request.get("method"), request.get("params") or {}
    if not isinstance(params, Mapping):
        params = {}
    if method == "roots/list":
        return None if _declared(capabilities, "roots") else "roots"
    if method == "sampling/createMessage":
        sampling = capabilities.get("sampling")
        if not isinstance(sampling, Mapping):
            return "sampling"
        if params.get("tools") and not isinstance(sampling.get("tools"), Mapping):
            return "sampling.tools"
        return None
    if method == "elicitation/create":
        elicitation = capabilities.get("elicitation")
        if not isinstance(elicitation, Mapping):
            return "elicitation"
        mode = "url" if params.get("mode") == "url" else "form"
        if mode == "form" and not elicitation:
            return None
        return None if _declared(elicitation, mode) else f"elicitation.{mode}"
    return None


def _declared(capabilities: Mapping[str, Any], name: str) -> bool:
    return isinstance(capabilities.get(name), Mapping)
