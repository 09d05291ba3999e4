"""Call middleware: what a plugin's ``lorenz_call_middleware`` hook provides (public API).

A :class:`MiddlewareProvider` is registered by an installed plugin and does nothing until a
workflow names it in ``server.middleware``; the host then asks it to :meth:`~MiddlewareProvider.create`
one :class:`Middleware` from its ``server.middleware_options`` entry. Each middleware wraps every
``tools/call``, ``resources/read``, ``prompts/get`` and ``completion/complete`` as
``await middleware(call, call_next)``:
it sees the :class:`Call`, may return a :func:`refusal` instead of calling on, pass changed
arguments on with :meth:`Call.with_arguments`, or change or time the result. See docs/hooks.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attrs import evolve, frozen

from .results import ToolResult, failure_result

if TYPE_CHECKING:
    from .contracts import Caller
    from .settings.model import Settings

__all__ = ["Call", "CallNext", "Middleware", "MiddlewareProvider", "refusal"]


@frozen(kw_only=True)
class Call:
    """One tool call as a middleware sees it.

    ``token_name`` is the ``name`` of the scoped bearer token the caller presented
    (``server.tokens``), ``caller`` the identity an OAuth access token established; neither
    token itself ever reaches a middleware. ``transport`` is ``http``, ``stdio`` or ``in-process``;
    ``protocol`` the MCP protocol version of the request (``None`` when not known).
    """

    tool: str
    pack: str
    arguments: Mapping[str, Any]
    token_name: str | None = None
    caller: Caller | None = None
    transport: str = "in-process"
    protocol: str | None = None
    #: The MCP method: ``tools/call``, ``resources/read`` (``tool`` is then the URI, ``arguments``
    #: ``{"uri": …}``), ``prompts/get`` (``tool`` is the prompt's name) or ``completion/complete``
    #: (``tool`` is the prompt's name or the template's URI).
    method: str = "tools/call"

    def with_arguments(self, arguments: Mapping[str, Any]) -> Call:
        """This call with other arguments, to pass to ``call_next`` (checked against the tool's
        ``inputSchema`` like the client's)."""
        return evolve(self, arguments=arguments)

    @property
    def identities(self) -> tuple[str, ...]:
        """Who is calling, most specific first: ``subject:<sub>`` and ``client:<client_id>`` for an
        OAuth caller, ``token:<name>`` for a named scoped token, else ``("anonymous",)``."""
        return identities_of(self.token_name, self.caller)


def identities_of(token_name: str | None, caller: Caller | None) -> tuple[str, ...]:
    """:attr:`Call.identities` of a token name and an OAuth caller."""
    found: list[str] = []
    if caller is not None:
        if caller.subject:
            found.append(f"subject:{caller.subject}")
        if caller.client_id:
            found.append(f"client:{caller.client_id}")
    if token_name:
        found.append(f"token:{token_name}")
    return tuple(found) or ("anonymous",)


#: What a middleware calls to run the rest of the chain (and at its end, the tool).
CallNext = Callable[[Call], Awaitable[ToolResult]]


@runtime_checkable
class Middleware(Protocol):
    """Wraps every tool call; the host contains what it raises, and bounds how long it takes."""

    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult: ...


@runtime_checkable
class MiddlewareProvider(Protocol):
    """What a plugin registers with ``lorenz_call_middleware``: a ``name`` a workflow lists in
    ``server.middleware``, and :meth:`create`, which validates that workflow's options
    (``server.middleware_options.<name>``, ``{}`` when absent) and builds the middleware. It
    raises :class:`~lorenz.ConfigError` naming the key at fault; it does no I/O (``lorenz check``
    calls it too)."""

    name: str

    def create(self, options: Mapping[str, Any], settings: Settings) -> Middleware: ...


def refusal(
    message: str,
    *,
    reason: str = "refused",
    recovery: str | None = None,
    retry_after: float | None = None,
    **details: Any,
) -> ToolResult:
    """The failure a middleware returns instead of calling on: ``reason`` (``rate_limited``,
    ``forbidden``, …), a ``recovery`` an agent can follow, and ``retryAfter`` seconds when waiting
    helps (the refusal is then retryable)."""
    if retry_after is not None:
        details["retryAfter"] = round(retry_after, 3)
    return failure_result(message, reason=reason, retryable=retry_after is not None, recovery=recovery, **details)
