"""The pipe between the host and an isolated pack's process: length-prefixed JSON, nothing pickled.

A frame is a 4-byte big-endian length, then that many bytes of UTF-8 JSON (:mod:`.frames`) holding
one object with an ``op``. The host writes :class:`Launch`, then ``call``/``cancel``/``stop`` frames; the child
answers :class:`Ready` (or :class:`Failed`, or a :class:`Survey`), then one :class:`Reply` per
call, matched by ``id`` and echoing the call's ``nonce``, and before it any :class:`Event` (progress,
a log message for the client) the call's context sent. A ``call`` frame's ``kind`` is ``tool``
(the default), ``resource``, ``prompt`` or ``completion``; a call or reply frame holds only the
fields that are set. The host trusts nothing a child sends: every frame is bounded in size and
structured strictly (:data:`CONVERTER`; replies and events, on each call's way back, by hand in
:mod:`.replies`), or the child is killed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Literal, NoReturn, TypeVar

from attrs import frozen
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from lorenz.client_input import InputRequired
from lorenz.contracts import PromptSpec, ResourceSpec, ToolSpec
from lorenz.results import FormattedResult, ToolResult, tool_failure
from lorenz.sandbox.permissions import Permissions
from lorenz.sandbox.policy import Sandbox
from lorenz.strict import flatten_errors, make_strict_converter
from lorenz.toolcall.wire import compact_json, json_safe, scrub_surrogates

from .frames import HEADER, ProtocolError

__all__ = [
    "CONVERTER",
    "EXIT_OUT_OF_MEMORY",
    "ASKABLE",
    "MAX_EVENT_MESSAGE_CHARS",
    "DisabledEntry",
    "Event",
    "Failed",
    "InputRound",
    "Launch",
    "Ready",
    "Reply",
    "Source",
    "Survey",
    "SurveyFailure",
    "encode",
    "exit_out_of_memory",
    "reply_result",
    "structure",
]

#: The exit code of a child whose pack ran out of memory (``server.pack_memory_mb``).
EXIT_OUT_OF_MEMORY = 86
#: The longest progress or log message taken from a pack's process (the rest is cut).
MAX_EVENT_MESSAGE_CHARS = 16 * 1024

M = TypeVar("M")


@frozen(kw_only=True)
class Source:
    """Where the child imports the plugin from: an entry point of ``lorenz.tool_packs`` of one
    distribution, or (for a ``-p`` plugin module) a module name."""

    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None
    module: str | None = None

    @property
    def label(self) -> str:
        if self.distribution is None:
            return f"module {self.module}"
        return f"{self.distribution} {self.version}" if self.version else self.distribution


@frozen(kw_only=True)
class Launch:
    """The first frame to a child: what to load and with which settings."""

    mode: Literal["serve", "survey", "permissions", "lint"]
    source: Source
    pack: str | None = None
    #: The pack's settings slice, unstructured with :data:`CONVERTER`.
    settings: Mapping[str, Any] | None = None
    memory_mb: int | None = None
    sys_path: tuple[str, ...] = ()
    #: The policy to confine itself to before importing the pack (``server.sandboxed_packs``).
    sandbox: Sandbox | None = None


@frozen(kw_only=True)
class DisabledEntry:
    """One tool the pack keeps disabled (``disabled_tools``), for the landing page."""

    spec: ToolSpec
    reason: str = ""
    hint: str | None = None
    since: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name


@frozen(kw_only=True)
class Ready:
    """The child loaded its pack: what the host mounts in its place."""

    op: Literal["ready"]
    pid: int
    specs: tuple[ToolSpec, ...] = ()
    validates_arguments: bool = False
    skills: tuple[str, ...] = ()
    disabled: tuple[DisabledEntry, ...] = ()
    #: The resources, resource templates and prompts the pack serves from its process.
    resources: tuple[ResourceSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    #: The enabled tools declared with ``needs_client_input=True`` (``lorenz check`` warns).
    asking: tuple[str, ...] = ()
    #: The message of the ``ValueError`` the pack's ``validate_options`` raised, if it did.
    options_error: str | None = None


@frozen(kw_only=True)
class Failed:
    """The child could not load its pack (the plugin failed, ``tool_specs`` raised...)."""

    op: Literal["failed"]
    error: str
    traceback: str | None = None


@frozen(kw_only=True)
class SurveyFailure:
    """A :class:`lorenz.plugins.model.PluginFailure` as a survey reports it."""

    group: str
    name: str
    distribution: str | None = None
    version: str | None = None
    error: str
    traceback: str | None = None


@frozen(kw_only=True)
class Survey:
    """What one entry point registers, found by importing it in a child instead of the host."""

    op: Literal["survey"]
    packs: tuple[str, ...] = ()
    trackers: tuple[str, ...] = ()
    #: The call middleware, catalog shapers and call-record sinks it provides (run in the host,
    #: so a workflow naming one imports it there).
    middleware: tuple[str, ...] = ()
    #: Its ``lorenz`` commands: ``{name: its line in lorenz --help}`` (run by importing it).
    commands: Mapping[str, str] = {}
    failures: tuple[SurveyFailure, ...] = ()
    #: What each pack declares it needs (its ``permissions``), by pack name.
    permissions: Mapping[str, Permissions] = {}
    #: Packs whose permissions are a function of their settings (computed once those are known).
    settings_dependent: tuple[str, ...] = ()
    #: Each pack's tools as it lists them without settings (``lorenz tools --all`` of an unmounted
    #: pack the host never imports); a pack whose ``tool_specs`` raised is left out.
    specs: Mapping[str, tuple[ToolSpec, ...]] = {}
    #: ``lorenz lint``'s report of its packs (``LintReport.to_dict()``), in a ``lint`` child only.
    lint: Mapping[str, Any] | None = None


#: What a pack may ask its client during a call.
ASKABLE = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})


@frozen(kw_only=True)
class InputRound:
    """The questions of one round (MCP request wire dicts by name) and the state it resumes from."""

    requests: Mapping[str, Mapping[str, Any]]
    state: str


@frozen(kw_only=True)
class Reply:
    """The outcome of one call: a :class:`~lorenz.results.ToolResult`'s fields."""

    op: Literal["result"]
    id: int
    nonce: str
    success: bool
    result: Any = None
    error: str | None = None
    text: str | None = None
    #: A typed tool's content blocks in MCP wire form (images, resource links...).
    content: list[dict[str, Any]] | None = None
    #: The permission a sandboxed call was refused (``read``, ``write``, ``subprocess``), counted
    #: by the host like the proxy's refusals.
    denied: str | None = None
    #: A typed tool's round of questions for the client (``requests``, ``state``): the host asks
    #: them, or hands them to a 2026-07-28 client sealed, and sends the call again with the answers.
    input_required: InputRound | None = None
    #: How the call ended in the process (``success``, ``failure``, ``crash``, ``timeout``,
    #: ``cancelled``); the host takes only ``cancelled`` from it: a cancel stopped the work.
    outcome: str | None = None

    def to_result(self) -> ToolResult:
        if self.input_required is not None:
            asked = self.input_required
            odd = sorted({str(wire.get("method")) for wire in asked.requests.values()} - ASKABLE)
            if odd:
                return tool_failure(f"the pack asked the client something it cannot be asked: {', '.join(odd)}")
            return InputRequired(requests=asked.requests, state=asked.state)
        if self.text is not None:
            content = tuple(self.content) if self.content is not None else None
            return FormattedResult(
                success=self.success, result=self.result, error=self.error, text=self.text, content=content
            )
        return ToolResult(success=self.success, result=self.result, error=self.error)


@frozen(kw_only=True)
class Event:
    """Something a call's context sent before its reply: ``progress`` (``done``, ``total``,
    ``message``) or a ``log`` message for the client (``level``, ``message``)."""

    op: Literal["progress", "log"]
    id: int
    nonce: str
    done: float = 0.0
    total: float | None = None
    level: str = "info"
    message: str | None = None


def _converter() -> Any:
    converter = make_strict_converter(forbid_extra_keys=False)
    camel = {  # nested classes first: a class's hook takes theirs as registered when it is made
        ToolSpec: {"input_schema": "inputSchema", "output_schema": "outputSchema"},
        ResourceSpec: {"mime_type": "mimeType"},
        Ready: {"validates_arguments": "validatesArguments", "options_error": "optionsError"},
        Launch: {"memory_mb": "memoryMb", "sys_path": "sysPath"},
        Source: {"entry_point": "entryPoint"},
    }
    for cls, renames in camel.items():
        overrides: dict[str, Any] = {name: override(rename=wire) for name, wire in renames.items()}
        converter.register_structure_hook(cls, make_dict_structure_fn(cls, converter, **overrides))
        converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **overrides))
    return converter


#: Structures (host side: untrusted) and unstructures every message, and the settings slice.
CONVERTER = _converter()


def encode(message: Any, *, fast: bool = False, plain: bool | None = None) -> bytes:
    """One frame: an attrs message (unstructured) or a plain mapping, as length-prefixed JSON.

    What JSON cannot hold becomes its string form or null, and lone surrogates U+FFFD, as on the
    MCP wire: a pack's odd result is sent, not lost. ``fast``: a call or a reply, written by
    pydantic_core when it is plain data (``plain``: known to be, or not; else surveyed)."""
    data = message if isinstance(message, Mapping) else CONVERTER.unstructure(message)
    body = compact_json(data, plain=plain) if fast else None
    if body is None:
        try:
            body = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError):
            body = json.dumps(scrub_surrogates(json_safe(data)), ensure_ascii=False, separators=(",", ":")).encode()
    return HEADER.pack(len(body)) + body


def reply_result(
    request_id: int, nonce: str, result: ToolResult, *, denied: str | None = None, outcome: str | None = None
) -> dict[str, Any]:
    """The ``result`` frame's content for one call (``denied``: the permission it was refused;
    ``outcome``: how it ended). Only what is set is sent: a reply is read as a :class:`Reply`
    with the rest at its defaults, and ``outcome`` matters only when it is not the result's own."""
    reply: dict[str, Any] = {"op": "result", "id": request_id, "nonce": nonce, "success": result.success}
    if result.result is not None:
        reply["result"] = result.result
    if result.error is not None:
        reply["error"] = result.error
    text = getattr(result, "text", None)
    if isinstance(text, str):
        reply["text"] = text
    content = getattr(result, "content", None)
    if isinstance(content, tuple):
        reply["content"] = list(content)
    if denied is not None:
        reply["denied"] = denied
    if outcome is not None and outcome not in ("success", "failure"):
        reply["outcome"] = outcome
    if isinstance(result, InputRequired):
        reply["inputRequired"] = {"requests": dict(result.requests), "state": result.state}
    return reply


def structure(frame: Any, cls: type[M]) -> M:
    """``frame`` as message ``cls``; raises :class:`ProtocolError` when it is not one."""
    if not isinstance(frame, dict):
        msg = f"a frame that is not an object but {type(frame).__name__}"
        raise ProtocolError(msg)
    try:
        message: M = CONVERTER.structure(frame, cls)
    except Exception as exc:
        problems = "; ".join(f"{'.'.join(map(str, p.path)) or '$'}: {p.error}" for p in flatten_errors(exc)[:3])
        msg = f"a malformed {cls.__name__.lower()} frame ({problems or type(exc).__name__})"
        raise ProtocolError(msg) from None
    return message


def exit_out_of_memory() -> NoReturn:
    """End a pack's process whose pack ran out of memory, saying so on stderr."""
    os.write(2, b"lorenz: this pack ran out of memory (server.pack_memory_mb); exiting\n")
    os._exit(EXIT_OUT_OF_MEMORY)
