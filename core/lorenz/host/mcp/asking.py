"""How a tool call asks its client for input, by protocol era and transport: in the handshake era
over stdio or a stateful HTTP session the host sends the requests on the call's own stream and
waits; from 2026-07-28 the call answers ``input_required`` and the client retries it with the
answers and the ``requestState`` the SDK's boundary sealed (:class:`SealedRequestState`); a
stateless handshake-era HTTP client cannot answer, and the call says what would work.

A sealed state lives :data:`STATE_TTL_SECONDS`; for a tool not marked idempotent it is good for one
retry in this process (other workers do not know it was spent: there the lifetime bounds a replay).
The sealing key is read for every call, so a reload that sets ``server.request_state_key`` applies
at once in every worker; a state sealed under the key it replaced is refused."""

from __future__ import annotations

import hashlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.methods import is_input_required
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from lorenz.client_input import ASK, NONE, RETRY, ClientInput, InvalidInputRequest, undeclared_capability
from lorenz.results import failure_result
from lorenz.toolcall.replies import call_result

from .client_log import session_key

__all__ = [
    "JSON_REFUSAL",
    "STATELESS_REFUSAL",
    "STATE_TTL_SECONDS",
    "SealedRequestState",
    "client_capabilities",
    "client_input_for",
    "refused_requests",
]

logger = logging.getLogger("lorenz.host")

#: Why a stateless handshake-era HTTP client cannot be asked anything, and what would work.
STATELESS_REFUSAL = (
    "this client speaks a handshake-era MCP version over stateless HTTP, which cannot carry a question "
    "back to it: connect with protocol version 2026-07-28, or serve with server.stateful: true and "
    "server.json_response: false"
)
#: Why a handshake-era session answered in plain JSON cannot be asked anything.
JSON_REFUSAL = (
    "this server answers handshake-era MCP sessions with plain JSON responses, which cannot carry a "
    "question back to the client: connect with protocol version 2026-07-28, or serve with "
    "server.json_response: false"
)

_REQUESTS: dict[str, tuple[type[Any], type[Any]]] = {
    "elicitation/create": (types.ElicitRequest, types.ElicitResult),
    "sampling/createMessage": (types.CreateMessageRequest, types.CreateMessageResult),
    "roots/list": (types.ListRootsRequest, types.ListRootsResult),
}


def _invalid_request(requests: Mapping[str, Any]) -> str | None:
    """Why one of a pack's ``requests`` is not a request MCP can carry, naming it and the field at
    fault; ``None`` when all are. Checked before anything reaches the client, in both eras, so a
    pack's malformed request is its own error and never the SDK's opaque refusal of the result."""
    for name, wire in requests.items():
        method = wire.get("method") if isinstance(wire, Mapping) else None
        if method not in _REQUESTS:
            return f"input request {name!r} asks {method!r}, which is not a request a server may send a client"
        try:
            _REQUESTS[method][0].model_validate({"method": method, "params": wire.get("params") or None})
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in error["loc"])
            return f"input request {name!r} ({method}) is not valid MCP: {where}: {error['msg']}"
    return None


def refused_requests(requests: Mapping[str, Any], capabilities: Mapping[str, Any] | None) -> str | None:
    """Why ``requests`` cannot be put to a client that declared ``capabilities`` (``None``: unknown):
    one is not valid MCP (:func:`_invalid_request`), or needs a capability the client did not declare
    — which its SDK would refuse by failing the whole call at the client."""
    why = _invalid_request(requests)
    if why is not None or capabilities is None:
        return why
    for name, wire in requests.items():
        missing = undeclared_capability(wire, capabilities)
        if missing is not None:
            return (
                f"input request {name!r} ({wire['method']}) needs the client's {missing} capability, "
                "which this client did not declare"
            )
    return None


def client_capabilities(ctx: ServerRequestContext[Any, Any] | None) -> dict[str, Any] | None:
    """The capabilities the client of ``ctx`` declared, as wire JSON; ``None`` when not known."""
    declared = ctx.session.client_capabilities if ctx is not None else None
    return declared.model_dump(by_alias=True, mode="json", exclude_none=True) if declared is not None else None


def client_input_for(ctx: ServerRequestContext[Any, Any] | None) -> ClientInput | None:
    """How the call of ``ctx`` may ask its client for input."""
    if ctx is None:
        return None
    capabilities = client_capabilities(ctx)
    if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        params = ctx.params or {}
        state, responses = params.get("requestState"), params.get("inputResponses")
        return ClientInput(
            mode=RETRY,
            state=state if isinstance(state, str) else None,
            responses=responses if isinstance(responses, Mapping) else None,
            capabilities=capabilities,
        )
    if not ctx.session.can_send_request:
        stateful = session_key(ctx) is not None
        return ClientInput(mode=NONE, refusal=JSON_REFUSAL if stateful else STATELESS_REFUSAL)
    session, request_id = ctx.session, ctx.request_id

    async def ask(requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        why = refused_requests(requests, capabilities)
        if why is not None:
            raise InvalidInputRequest(why)
        answers: dict[str, Any] = {}

        async def one(name: str, wire: Mapping[str, Any]) -> None:
            request_type, result_type = _REQUESTS[wire["method"]]
            params = dict(wire.get("params") or {})
            if params.get("mode") == "url":  # the handshake era names each URL elicitation
                params.setdefault("elicitationId", uuid.uuid4().hex)
            request = request_type.model_validate({"method": wire["method"], "params": params or None})
            metadata = ServerMessageMetadata(related_request_id=request_id)  # on the call's own stream
            result = await session.send_request(request, result_type, metadata=metadata)
            answers[name] = result.model_dump(by_alias=True, mode="json", exclude_none=True)

        async with anyio.create_task_group() as group:
            for name, wire in requests.items():
                group.start_soon(one, name, wire)
        return answers

    return ClientInput(mode=ASK, ask=ask, capabilities=capabilities)


#: How long a sealed ``requestState`` may be answered with (the SDK's default, said here).
STATE_TTL_SECONDS = 600.0

_SPENT_MESSAGE = (
    "The requestState of this call was already used: the tool changes things, so each state is good "
    "for one retry; call the tool again without it"
)
_REFUSED_MESSAGE = (
    "The requestState of this call was not minted by this server for this tool and these arguments, "
    "or has expired: call the tool again without it"
)


def _refused_state(message: str = _REFUSED_MESSAGE) -> dict[str, Any]:
    reply = call_result(failure_result(message, reason="invalid_request_state"))
    return reply.wire()


class _Spent:
    """The states already retried with, each kept until it would have expired anyway."""

    def __init__(self) -> None:
        self._until: dict[bytes, float] = {}

    def spend(self, state: str) -> bool:
        """Record ``state`` as used; ``False`` when it was used before."""
        now = time.monotonic()
        while self._until:  # oldest first: drop those expired
            oldest, until = next(iter(self._until.items()))
            if until > now:
                break
            del self._until[oldest]
        digest = hashlib.sha256(state.encode("utf-8", "surrogatepass")).digest()
        if digest in self._until:
            return False
        self._until[digest] = now + STATE_TTL_SECONDS
        return True


class SealedRequestState:
    """The SDK's :class:`RequestStateBoundary` on ``tools/call`` (seals each ``requestState`` the host
    mints, verifies each one a client sends back), turning a refused one into an ``isError`` result:
    the tool never runs on state it did not mint."""

    def __init__(
        self,
        key: Callable[[], bytes | str | None],
        *,
        audience: str,
        principal: Callable[[ServerRequestContext[Any, Any]], str | None],
        single_use: Callable[[ServerRequestContext[Any, Any]], bool],
    ) -> None:
        self._key = key
        self._own = os.urandom(32)  # while server.request_state_key is unset
        self._audience = audience
        self._principal = principal
        self._single_use = single_use
        self._spent = _Spent()
        self._sealing: bytes | str | None = None
        self._boundary: RequestStateBoundary | None = None

    def _current(self) -> RequestStateBoundary:
        """The boundary for the key configured now (made afresh when a reload changed it)."""
        key = self._key() or self._own
        if self._boundary is None or key != self._sealing:
            # Bound to the caller's token by name: state minted for one token is refused for another.
            security = RequestStateSecurity(keys=[key], bind_principal=self._principal, ttl=STATE_TTL_SECONDS)
            self._boundary = RequestStateBoundary(security, default_audience=self._audience)
            self._sealing = key
        return self._boundary

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        boundary = self._current()
        if ctx.params is None or ctx.params.get("requestState") is None:  # a first call: nothing to verify
            result = await call_next(ctx)
            if not is_input_required(result):
                return result

            async def answered(_: ServerRequestContext[Any, Any]) -> HandlerResult:
                return result

            return await boundary(ctx, answered)  # seals the state the call minted
        entered = False
        state = ctx.params["requestState"]

        async def enter(inner: ServerRequestContext[Any, Any]) -> HandlerResult:
            nonlocal entered
            entered = True
            # Verified: spent now, before the tool runs, so that a replay racing it is refused too.
            if isinstance(state, str) and self._single_use(ctx) and not self._spent.spend(state):
                return _refused_state(_SPENT_MESSAGE)
            return await call_next(inner)

        try:
            return await boundary(ctx, enter)
        except MCPError as exc:
            data = exc.error.data
            if entered or not isinstance(data, dict) or data.get("reason") != "invalid_request_state":
                raise
            return _refused_state()
