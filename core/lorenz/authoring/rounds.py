"""Running a handler's input rounds: call it, and while it returns ``ctx.request_input(...)`` get the
answers (now, through the host, or by answering ``input_required`` and being retried with them and
the state minted here), then call it again. Bounded: :data:`MAX_ROUNDS` rounds a call, answers of
at most :data:`MAX_ANSWER_BYTES` each; a name is asked once, so a decline stays final."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from lorenz.client_input import ASK, RETRY, ClientInput, InputRequired, InvalidInputRequest
from lorenz.results import ToolResult, error_message, failure_result

from .inputs import InputRound, Inputs, InputView, view_of

if TYPE_CHECKING:
    from .enrichment import Enrich
    from .logs import ClientLog

__all__ = ["MAX_ANSWER_BYTES", "MAX_ROUNDS", "run_rounds"]

#: Rounds of questions one call may ask.
MAX_ROUNDS = 8
#: The largest answer (its JSON) a client may give to one request.
MAX_ANSWER_BYTES = 64 * 1024
_STATE_VERSION = 1
_KINDS = ("elicit", "elicit_url", "sampling", "roots")


class Asking(Protocol):
    """What the rounds need of a tool (a :class:`lorenz.authoring.tool.Tool`)."""

    @property
    def name(self) -> str: ...
    @property
    def handler(self) -> Callable[[Any, Any], Awaitable[Any]]: ...
    def enricher(self) -> Enrich: ...


class AskingContext(Protocol):
    """What the rounds read and set on a call's context (a :class:`lorenz.authoring.tool.CallContext`)."""

    client_input: ClientInput | None
    inputs: Inputs
    enrich: Enrich

    @property
    def log(self) -> ClientLog: ...


class _Refused(Exception):
    """A round that cannot go on: its message is the call's failure."""

    def __init__(self, message: str, reason: str, recovery: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.recovery = recovery

    def result(self) -> ToolResult:
        return failure_result(str(self), reason=self.reason, recovery=self.recovery)


@attrs.define
class _Ledger:
    """Every answer so far, how many rounds it took, and what the last round is waiting for."""

    tool: str
    rounds: int = 0
    answers: dict[str, InputView] = attrs.field(factory=dict)
    pending: dict[str, str] = attrs.field(factory=dict)

    @classmethod
    def resume(cls, tool: str, client: ClientInput | None) -> _Ledger:
        """The ledger a 2026-07-28 retry carries back (its state, then its answers)."""
        ledger = cls(tool)
        if client is None or client.state is None:
            if client is not None and client.responses:
                raise _Refused(f"{tool} got input responses without the requestState they answer", "invalid_input")
            return ledger
        try:
            state = json.loads(client.state)
            assert state["v"] == _STATE_VERSION and state["t"] == tool
            ledger.rounds = int(state["r"])
            for name, item in state["a"].items():
                ledger.answers[name] = InputView(kind=item["k"], action=item["x"], content=item.get("c"))
            pending = {str(name): str(kind) for name, kind in state["p"].items()}
            assert all(kind in _KINDS for kind in pending.values())
        except Exception:
            raise _Refused(f"{tool} got a requestState it did not mint", "invalid_input") from None
        ledger.take(pending, client.responses or {})
        return ledger

    def take(self, asked: Mapping[str, str], responses: Mapping[str, Any]) -> None:
        """Record the answers to ``asked``; one never given counts as cancelled, never as consent."""
        for name, kind in asked.items():
            answer = responses.get(name)
            size = len(json.dumps(answer, ensure_ascii=False, default=str).encode("utf-8"))
            if size > MAX_ANSWER_BYTES:
                message = f"the client's answer to {name!r} is {size} bytes, over the {MAX_ANSWER_BYTES}-byte limit"
                raise _Refused(f"{self.tool}: {message}", "input_too_large")
            self.answers[name] = view_of(kind, answer)  # type: ignore[arg-type]

    def check(self, ask: InputRound) -> None:
        if not ask.requests:
            raise _Refused(f"{self.tool} asked the client for no input", "internal_error")
        again = sorted(name for name in ask.requests if name in self.answers)
        if again:
            names = ", ".join(repr(name) for name in again)
            message = (
                f"{self.tool} asked for {names} again; each request name is asked once per call "
                "(a declined or cancelled answer is final)"
            )
            raise _Refused(message, "internal_error")
        if self.rounds >= MAX_ROUNDS:
            raise _Refused(f"{self.tool} asked the client for input more than {MAX_ROUNDS} times", "too_many_rounds")

    def state(self, ask: InputRound) -> str:
        answers = {
            name: {"k": view.kind, "x": view.action, **({"c": view.content} if view.content is not None else {})}
            for name, view in self.answers.items()
        }
        pending = {name: request.kind for name, request in ask.requests.items()}
        payload = {"v": _STATE_VERSION, "t": self.tool, "r": self.rounds + 1, "a": answers, "p": pending}
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _unavailable(tool: str, client: ClientInput | None) -> _Refused:
    why = (client.refusal if client is not None else None) or "this call has no client to ask"
    return _Refused(f"{tool} needs input from the client, but {why}", "client_input_unavailable")


async def run_rounds(tool: Asking, context: AskingContext, args: Any) -> Any:
    """The handler's output once it stops asking, or the ``ToolResult`` that ends the call here."""
    client: ClientInput | None = context.client_input
    try:
        # A call that resumes nothing (all but a 2026-07-28 retry) keeps the context's empty
        # answers, and gets a ledger only if it asks.
        resuming = client is not None and (client.state is not None or bool(client.responses))
        ledger = _Ledger.resume(tool.name, client) if resuming else None
        while True:
            if ledger is not None:
                context.inputs = Inputs(dict(ledger.answers))
            output = await tool.handler(context, args)
            if not isinstance(output, InputRound):
                return output
            if ledger is None:
                ledger = _Ledger(tool.name)
            ledger.check(output)
            if client is None or client.mode not in (ASK, RETRY):
                raise _unavailable(tool.name, client)
            if client.mode == RETRY:
                wire = {name: request.wire() for name, request in output.requests.items()}
                return InputRequired(requests=wire, state=ledger.state(output))
            await context.log.flush()  # what it logged so far, before the question
            assert client.ask is not None
            try:
                responses = await client.ask({name: request.wire() for name, request in output.requests.items()})
            except InvalidInputRequest as exc:
                raise _Refused(exc.answer(tool.name), "invalid_input_request") from None
            except Exception as exc:
                text = f"{tool.name} asked the client for input and got no answer: {error_message(exc)}"
                raise _Refused(text, "client_input_failed") from None
            ledger.rounds += 1
            ledger.take({name: request.kind for name, request in output.requests.items()}, responses)
            context.enrich = tool.enricher()  # each entry starts afresh
    except _Refused as refused:
        return refused.result()
