"""How ``lorenz call`` answers a tool that asks its client for input: ``--answer NAME=JSON`` (a form's
content, or ``accept``/``decline``/``cancel``), ``--yes`` (a confirmation: booleans true, the rest
their defaults), ``--decline``, else on a terminal a prompt per form field (:mod:`.form_fields`);
without a terminal, a question nobody answered fails the call saying which flag to pass. Roots are
the current directory; a sampling request fails the call (the CLI has no model), as a client
without one answers it over MCP. The call's
``ClientInput`` asks now (``ASK``), so the tool goes on in the same call."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lorenz.client_input import ASK, ClientInput
from lorenz.settings.suggest import did_you_mean

from .form_fields import Field, confirmation, example, fields_of, parse_typed, printable, problems
from .output import Progress, UsageError, paint
from .workspace import warn

__all__ = ["Answerer", "parse_answers"]

_ACTIONS = ("accept", "decline", "cancel")


def parse_answers(values: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--answer NAME=JSON`` values as the MCP results they give, by request name: a JSON object is
    accepted as the form's content; ``accept``, ``decline`` or ``cancel`` is that action alone."""
    answers: dict[str, dict[str, Any]] = {}
    for value in values:
        name, equals, text = value.partition("=")
        name = name.strip()
        if not equals or not name:
            raise UsageError(f"--answer {value!r}: write NAME=JSON, e.g. --answer confirm='{{\"confirm\": true}}'")
        if name in answers:
            raise UsageError(f"--answer {name}: given twice")
        if text.strip() in _ACTIONS:
            answers[name] = {"action": text.strip()}
            continue
        try:
            content = json.loads(text)
        except json.JSONDecodeError as exc:
            msg = f"--answer {name}: not JSON ({exc.msg}, column {exc.colno}) nor accept, decline or cancel"
            raise UsageError(msg) from exc
        if not isinstance(content, dict):
            msg = f"--answer {name}: the form's content must be a JSON object, not {type(content).__name__}"
            raise UsageError(msg)
        answers[name] = {"action": "accept", "content": content}
    return answers


class _Unanswered(Exception):
    """A question the flags do not answer and no terminal can: the call's failure says which flag."""


class Answerer:
    """The client of one ``lorenz call``: answers each request of each round the tool asks, on the
    CLI's own event loop (stdin is read there), one request at a time."""

    def __init__(
        self,
        tool: str,
        given: Mapping[str, Mapping[str, Any]],
        *,
        yes: bool,
        decline: bool,
        line: Progress,
    ) -> None:
        self._tool = tool
        self._given = dict(given)
        self._yes = yes
        self._decline = decline
        self._line = line
        self._asked: list[str] = []
        self._loop = asyncio.get_running_loop()
        self._turn = asyncio.Lock()

    def client_input(self) -> ClientInput:
        return ClientInput(mode=ASK, ask=self.ask)

    async def ask(self, requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        """Each request's wire result, by name."""
        if asyncio.get_running_loop() is not self._loop:  # a pack's own loop: the terminal is on ours
            future = asyncio.run_coroutine_threadsafe(self.ask(requests), self._loop)
            return await asyncio.wrap_future(future)
        answers: dict[str, Any] = {}
        async with self._turn:
            for name, wire in requests.items():
                self._asked.append(name)
                answers[name] = await self._answer(name, wire.get("method"), wire.get("params") or {})
        return answers

    def warn_unasked(self) -> None:
        """Note each ``--answer`` the tool never asked for (a typo, or a question it did not need)."""
        for name in self._given:
            if name not in self._asked:
                warn(f"--answer {name}: {self._tool} asked no question of that name")

    async def _answer(self, name: str, method: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        if method == "roots/list":
            cwd = Path.cwd()
            return {"roots": [{"uri": cwd.as_uri(), "name": cwd.name or str(cwd)}]}
        if method != "elicitation/create":
            message = f"{name!r} asks the client's model to write a reply ({method}), and lorenz call has no model"
            warn(f"{self._tool}: {message}")
            raise _Unanswered(message)
        if name in self._given:
            return self._checked(name, params, self._given[name])
        url = params.get("mode") == "url"
        fields = [] if url else fields_of(params.get("requestedSchema"))
        if self._yes and not url:
            content = confirmation(fields)
            if content is not None:
                return {"action": "accept", "content": content}
        if self._decline:
            return {"action": "decline"}
        if _interactive():
            with self._line.hold():
                return await _prompt(self._tool, name, params, fields)
        raise self._unanswered(name, params, fields)

    def _checked(self, name: str, params: Mapping[str, Any], answer: Mapping[str, Any]) -> dict[str, Any]:
        """An ``--answer`` that fits the form it answers (the tool would refuse one that does not,
        with less to go on)."""
        if answer["action"] != "accept" or params.get("mode") == "url":
            return {"action": answer["action"]}
        fields = fields_of(params.get("requestedSchema"))
        found = problems(fields, answer.get("content", {}))
        if found:
            message = f"--answer {name}: {'; '.join(found)}"
            warn(message)
            raise _Unanswered(message)
        return dict(answer)

    def _unanswered(self, name: str, params: Mapping[str, Any], fields: list[Field]) -> _Unanswered:
        question = printable(params.get("message") or "")
        if params.get("mode") == "url":
            flags = f"open {printable(params.get('url'))}, then pass --answer {name}=accept; or --decline"
        else:
            content = json.dumps(example(fields), ensure_ascii=False)
            yes = ", --yes" if confirmation(fields) is not None else ""
            flags = f"pass --answer {name}='{content}'{yes} or --decline"
        typos = [given for given in self._given if did_you_mean(given, [name])]
        given = f" (--answer {typos[0]}: did you mean {name}?)" if typos else ""
        message = f"{name!r} ({question}): stdin is not a terminal, so {flags}{given}"
        warn(f"{self._tool} asks {message}")
        return _Unanswered(message)


def _interactive() -> bool:
    """Whether a person can be asked: stdin to type on and stderr to read the questions, terminals both."""
    try:
        return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


async def _read_line() -> str | None:
    """One line the user typed on stdin (a terminal: a read ends at its line), without blocking the
    loop; ``None`` at the end of input (Ctrl-D)."""
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    data = os.read(fd, 65536)
    return data.decode("utf-8", "replace").rstrip("\r\n") if data else None


def _say(text: str = "", end: str = "\n") -> None:
    sys.stderr.write(text + end)
    sys.stderr.flush()


_DECLINED: Any = object()
_SKIPPED: Any = object()


async def _prompt(tool: str, name: str, params: Mapping[str, Any], fields: list[Field]) -> dict[str, Any]:
    """Ask on the terminal (stderr, so stdout keeps only the result): a link to open and a yes, or
    each form field in turn, typed by the form's schema. Ctrl-D declines."""
    _say(f"{paint(f'{tool} asks:', 'bold', sys.stderr)} {printable(params.get('message') or name)}")
    if params.get("mode") == "url":
        _say(f"  open {paint(printable(params.get('url')), 'cyan', sys.stderr)}")
        field = Field(name="open", kind="boolean", required=True, title="Did you open it, and go on?")
        fields = [field]
    else:
        _say("  (Enter keeps the [default]; Ctrl-D declines)")
    content: dict[str, Any] = {}
    for field in fields:
        value = await _ask_field(field)
        if value is _DECLINED:
            _say()
            return {"action": "decline"}
        if value is not _SKIPPED:
            content[field.name] = value
    if params.get("mode") == "url":
        return {"action": "accept" if content["open"] else "decline"}
    return {"action": "accept", "content": content}


async def _ask_field(field: Field) -> Any:
    """One field's value as typed (its default on Enter; skipped when optional)."""
    if field.title or field.description:
        about = " — ".join(text for text in (field.title, field.description) if text)
        _say(f"  {paint(about, 'bold', sys.stderr)}")
    for number, (value, label) in enumerate(field.choices, start=1):
        _say(f"    {number}) {printable(label if label == value else f'{label} ({value})')}")
    hint = {"boolean": "y/n", "choice": "number or value", "choices": "numbers or values, comma separated"}
    default = ""
    if field.has_default:
        shown = field.default if isinstance(field.default, str) else json.dumps(field.default, ensure_ascii=False)
        default = f" [{printable(shown)}]"
    optional = "" if field.required or field.has_default else " (optional)"
    name = printable(field.name)  # the server's key: words on the terminal, never escape sequences
    while True:
        _say(f"  {name} ({hint.get(field.kind, field.kind)}){optional}{default}: ", end="")
        text = await _read_line()
        if text is None:
            return _DECLINED
        if not text.strip():
            if field.has_default:
                return field.default
            if not field.required:
                return _SKIPPED
            _say(f"  {name} is required")
            continue
        try:
            return parse_typed(field, text)
        except ValueError as exc:
            _say(f"  {exc}")
