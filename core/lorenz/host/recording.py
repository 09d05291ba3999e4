"""What the host records of each ``tools/call``: the call log line, the landing page's counters,
and what the workflow's call-record sinks get.

Built from the request context the SDK hands the handler: protocol version, JSON-RPC id, the
session (stateful HTTP), the client's name and version when it said (an ``initialize`` on this
session, or the 2026-07-28 ``_meta`` client info).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lorenz.calllog.record import CallRecord, clean_error
from lorenz.calllog.stats import CallStats, ToolStats, tail_view
from lorenz.calllog.writer import CALL_LOG_ENV, CallLog
from lorenz.host.grants import grant_of
from lorenz.host.security import raw_header
from lorenz.host.tracing import current_trace_id
from lorenz.mounting.instances import provider_of

from .scope import AFTER_REPLY
from .sinks import Sinks

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from lorenz.toolcall.replies import ToolReply

    from .reload.live import LiveWorkspace, Snapshot

__all__ = ["CallRecorder"]

_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


def _client(ctx: ServerRequestContext[Any, Any] | None) -> dict[str, str] | None:
    if ctx is None:
        return None
    params = getattr(ctx.session, "client_params", None)
    info: Any = getattr(params, "client_info", None)
    if info is None and isinstance(ctx.meta, dict):
        info = ctx.meta.get(_CLIENT_INFO)
    elif info is None and ctx.meta is not None:
        info = (getattr(ctx.meta, "model_extra", None) or {}).get(_CLIENT_INFO)
    if isinstance(info, dict):
        name, version = info.get("name"), info.get("version")
    else:
        name, version = getattr(info, "name", None), getattr(info, "version", None)
    if not isinstance(name, str):
        return None
    return {"name": name, "version": str(version)} if version is not None else {"name": name}


def _after_reply(ctx: ServerRequestContext[Any, Any] | None) -> list[Callable[[], None]] | None:
    """The work to do once the answer to ``ctx``'s request is written, when the path serving it
    runs such work (:data:`AFTER_REPLY`); ``None`` otherwise."""
    scope = getattr(getattr(ctx, "request", None), "scope", None)
    later = scope.get(AFTER_REPLY) if isinstance(scope, dict) else None
    return later if isinstance(later, list) else None


def _session_id(ctx: ServerRequestContext[Any, Any] | None) -> str | None:
    scope = getattr(getattr(ctx, "request", None), "scope", None)  # an HTTP request's ASGI scope
    value = raw_header(scope, b"mcp-session-id") if isinstance(scope, dict) and "headers" in scope else None
    return value.decode("latin-1") if value is not None else None


def _error(reply: ToolReply, snapshot: Snapshot, arguments: Any) -> str | None:
    details = (reply.structured_content or {}).get("error")
    message = details.get("message") if isinstance(details, dict) else None
    text = message if isinstance(message, str) else reply.text
    return clean_error(text, snapshot.settings.secrets, arguments)  # the log keeps no argument value


def _text_bytes(reply: ToolReply) -> int:
    return len(reply.text.encode("utf-8", "replace"))


class CallRecorder:
    """Records calls into the in-memory window and, when configured, the call log (reopened when
    ``server.call_log`` changes on reload)."""

    def __init__(self, live: LiveWorkspace) -> None:
        self._live = live
        self.stats = CallStats()
        #: The workflow's call-record sinks, each fed from a queue of its own.
        self.sinks = Sinks()
        self._log: CallLog | None = None
        self._log_snapshot: Snapshot | None = None

    def _call_log(self, snapshot: Snapshot) -> CallLog | None:
        if snapshot is self._log_snapshot:  # the settings it depends on are the snapshot's
            return self._log
        self._log_snapshot = snapshot
        server = snapshot.settings.server
        path = server.call_log or self._live.env.get(CALL_LOG_ENV) or None
        if path is None:
            if self._log is not None:
                self._log.close()
                self._log = None
            return None
        if path != "-":
            path = os.path.join(snapshot.settings.base_dir, path)
        if self._log is None or not self._log.same(path, server.call_log_max_bytes, server.call_log_keep):
            if self._log is not None:
                self._log.close()
            self._log = CallLog(path, max_bytes=server.call_log_max_bytes, keep=server.call_log_keep)
        return self._log

    def log_path(self, snapshot: Snapshot) -> str | None:
        """The call log ``snapshot`` writes to (``"-"``: standard error), ``None`` when none."""
        log = self._call_log(snapshot)
        return log.path if log is not None else None

    async def view(self, snapshot: Snapshot) -> tuple[list[CallRecord], list[ToolStats]]:
        """The landing page's tables: from the call log file when there is one (every worker writes
        it, so every worker shows the same), else this process's own calls."""
        log = self._call_log(snapshot)
        if log is None or log.path == "-":
            return self.stats.snapshot()
        import anyio

        return await anyio.to_thread.run_sync(tail_view, log.path)

    def record(
        self,
        snapshot: Snapshot,
        tool: str,
        arguments: Any,
        reply: ToolReply,
        outcome: str,
        started: float,
        ctx: ServerRequestContext[Any, Any] | None,
        *,
        client_gone: bool = False,
        pack: str | None = None,
        kind: str | None = None,
        instance: str | None = None,
    ) -> None:
        """Record one call that started at ``started`` (``time.perf_counter()``) and ends now; once
        its answer is written when the path serving it allows (the client need not wait).
        ``client_gone``: the client stopped waiting before the call ended (no answer to wait for).
        A resource read or prompt render gives its ``pack``, its ``kind`` (``resource``, ``prompt``)
        and the ``instance`` (``tools:`` key) when the pack is mounted under a key of its own."""
        ended, trace_id = time.perf_counter(), current_trace_id()
        later = None if client_gone else _after_reply(ctx)
        if later is not None:
            later.append(
                lambda: self._record(
                    snapshot,
                    tool,
                    arguments,
                    reply,
                    outcome,
                    started,
                    ctx,
                    ended,
                    trace_id,
                    pack=pack,
                    kind=kind,
                    instance=instance,
                )
            )
        else:
            self._record(
                snapshot,
                tool,
                arguments,
                reply,
                outcome,
                started,
                ctx,
                ended,
                trace_id,
                client_gone,
                pack,
                kind,
                instance,
            )

    def _record(
        self,
        snapshot: Snapshot,
        tool: str,
        arguments: Any,
        reply: ToolReply,
        outcome: str,
        started: float,
        ctx: ServerRequestContext[Any, Any] | None,
        ended: float,
        trace_id: str | None,
        client_gone: bool = False,
        pack: str | None = None,
        kind: str | None = None,
        instance: str | None = None,
    ) -> None:
        duration_ms = round((ended - started) * 1000, 3)
        finished = time.time()
        error = _error(reply, snapshot, arguments) if reply.is_error else None
        log = self._call_log(snapshot)
        if pack is None and (owner := snapshot.owners.get(tool)) is not None:
            pack = provider_of(owner)  # the pack's own name; a tools: key of its own is the instance
            instance = owner.name if owner.name != pack else None
        grant = grant_of(ctx.request if ctx is not None else None)
        # Only small values are kept for later: not the reply, the arguments or the request.
        fields: dict[str, Any] = {
            "tool": tool,
            "pack": pack,
            "instance": instance,
            "distribution": snapshot.distribution_of(pack) if pack is not None else None,
            "duration_ms": duration_ms,
            "outcome": outcome,
            "error": error,
            "protocol_version": ctx.protocol_version if ctx is not None else None,
            "client": _client(ctx),
            "session_id": _session_id(ctx),
            "request_id": ctx.request_id if ctx is not None else None,
            "trace_id": trace_id,
            "token": grant.name,
            "subject": grant.caller.subject if grant.caller is not None else None,
            "client_id": grant.caller.client_id if grant.caller is not None else None,
            "client_gone": True if client_gone else None,
            "kind": kind,
        }
        extensions = snapshot.workspace.extensions
        sinks = extensions.sinks if extensions is not None else ()
        if log is None and not sinks:  # only the landing page may show it: built if it does
            self.stats.count(tool, outcome, duration_ms, lambda: CallRecord(ts=CallRecord.stamp(finished), **fields))
            return
        arguments_json = json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8", "replace")
        record = CallRecord(
            ts=CallRecord.stamp(finished), argument_bytes=len(arguments_json), result_bytes=_text_bytes(reply), **fields
        )
        self.stats.count(tool, outcome, duration_ms, record)
        if log is not None:
            log.write(record)
        if sinks:
            self.sinks.offer(sinks, record)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        self._log_snapshot = None
