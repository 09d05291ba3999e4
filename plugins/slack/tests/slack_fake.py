"""A loopback fake of the Slack Web API (Starlette under uvicorn on 127.0.0.1:0).

Holds channels of root messages (newest-first in history), threads of replies, reactions with
their reactors, users and message metadata. Paging is by offset cursors with a configurable page
size; faults (429 + ``Retry-After``, 5xx, HTML, ``ok: false``) are scripted per method.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

BOT = "U_BOT"
TOKEN = "xoxb-test-token"
TEAM_URL = "https://example.slack.com/"


def _key(ts: str) -> Decimal:
    return Decimal(ts)


class FakeSlack:
    """State and routes of the fake; ``url`` is the ``/api`` base once served."""

    def __init__(self) -> None:
        self.url = ""
        self.lock = threading.Lock()
        self.reset()
        self.app = Starlette(routes=[Route("/api/{method}", self._handle, methods=["GET", "POST"])])

    def reset(self) -> None:
        self.channels: dict[str, list[dict[str, Any]]] = {}
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.faults: dict[str, list[tuple[int, dict[str, str], str]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.history_page_size = 200
        self.replies_page_size = 200
        #: chat.postMessage calls that are applied but answered with a 502 (ambiguous delivery).
        self.ambiguous_posts = 0
        self._clock = 1_700_000_500

    # ------------------------------------------------------------------ seeding

    def add_root(
        self,
        channel: str,
        ts: str,
        text: str,
        *,
        user: str | None = "U_HUMAN",
        bot_reactions: tuple[str, ...] = (),
        human_reactions: tuple[str, ...] = (),
        **extra: Any,
    ) -> dict[str, Any]:
        """Add a root message; ``bot_reactions`` list the bot among their reactors."""
        message: dict[str, Any] = {"ts": ts, "text": text, **extra}
        if user is not None:
            message["user"] = user
        reactions: dict[str, list[str]] = {}
        for name in bot_reactions:
            reactions.setdefault(name, []).append(BOT)
        for name in human_reactions:
            reactions.setdefault(name, []).append("U_SOMEONE")
        message["_reactions"] = reactions
        self.channels.setdefault(channel, []).append(message)
        return message

    def add_reply(
        self, channel: str, root_ts: str, ts: str, text: str, *, user: str | None = "U_HUMAN", **extra: Any
    ) -> None:
        reply: dict[str, Any] = {"ts": ts, "text": text, "thread_ts": root_ts, **extra}
        if user is not None:
            reply["user"] = user
        self.threads.setdefault((channel, root_ts), []).append(reply)

    def add_user(self, user_id: str, **fields: Any) -> None:
        self.users[user_id] = {"id": user_id, **fields}

    def fail(
        self, method: str, status: int, body: str | Mapping[str, Any] = "", headers: Mapping[str, str] | None = None
    ) -> None:
        """Script the next answer of ``method``."""
        text = body if isinstance(body, str) else json.dumps(body)
        self.faults.setdefault(method, []).append((status, dict(headers or {}), text))

    def calls(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == method]

    def thread(self, channel: str, root_ts: str) -> list[dict[str, Any]]:
        return list(self.threads.get((channel, root_ts), []))

    def root(self, channel: str, ts: str) -> dict[str, Any] | None:
        return next((m for m in self.channels.get(channel, []) if m["ts"] == ts), None)

    def bot_reactions(self, channel: str, ts: str) -> list[str]:
        root = self.root(channel, ts)
        assert root is not None
        return [name for name, users in root["_reactions"].items() if BOT in users]

    # ------------------------------------------------------------------ rendering

    def _render_root(self, channel: str, message: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in message.items() if not k.startswith("_")}
        reactions = message.get("_reactions") or {}
        if reactions:
            out["reactions"] = [{"name": n, "users": list(u), "count": len(u)} for n, u in reactions.items() if u]
        replies = self.threads.get((channel, message["ts"]), [])
        if replies:
            out["thread_ts"] = message["ts"]
            out["reply_count"] = len(replies)
            out["latest_reply"] = max((r["ts"] for r in replies), key=_key)
        return out

    def _next_ts(self) -> str:
        self._clock += 1
        return f"{self._clock}.000100"

    # ------------------------------------------------------------------ handlers

    async def _handle(self, request: Request) -> Response:
        method = request.path_params["method"]
        params: dict[str, Any] = dict(request.query_params)
        body: dict[str, Any] = {}
        if request.method == "POST":
            raw = await request.body()
            body = json.loads(raw) if raw else {}
        with self.lock:
            self.requests.append(
                {
                    "method": method,
                    "verb": request.method,
                    "params": params,
                    "body": body,
                    "headers": dict(request.headers),
                }
            )
            if request.headers.get("authorization") != f"Bearer {TOKEN}":
                return JSONResponse({"ok": False, "error": "invalid_auth"})
            queue = self.faults.get(method)
            if queue:
                status, headers, text = queue.pop(0)
                media = "application/json" if text.startswith("{") else "text/html"
                return Response(text, status_code=status, headers=headers, media_type=media)
            handler = getattr(self, "_" + method.replace(".", "_"), None)
            if handler is None:
                return JSONResponse({"ok": False, "error": "unknown_method"})
            answer = handler(params if request.method == "GET" else body)
            if method == "chat.postMessage" and self.ambiguous_posts > 0:
                self.ambiguous_posts -= 1
                return Response("<html>bad gateway</html>", status_code=502, media_type="text/html")
            return JSONResponse(answer)

    def _conversations_history(self, p: Mapping[str, Any]) -> dict[str, Any]:
        channel = p.get("channel", "")
        if channel not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        limit = int(p.get("limit", 100))
        inclusive = p.get("inclusive") == "true"
        messages = sorted(self.channels[channel], key=lambda m: _key(m["ts"]), reverse=True)
        if "latest" in p:
            latest = _key(p["latest"])
            messages = [m for m in messages if _key(m["ts"]) < latest or (inclusive and _key(m["ts"]) == latest)]
        if "oldest" in p:
            oldest = _key(p["oldest"])
            messages = [m for m in messages if _key(m["ts"]) > oldest or (inclusive and _key(m["ts"]) == oldest)]
            if "latest" not in p and "cursor" not in p and len(messages) > limit:
                messages = messages[-limit:]  # the ones closest to `oldest`
        offset = int(p.get("cursor") or 0)
        size = min(limit, self.history_page_size)
        page = messages[offset : offset + size]
        more = offset + size < len(messages)
        return {
            "ok": True,
            "messages": [self._render_root(channel, m) for m in page],
            "has_more": more,
            "response_metadata": {"next_cursor": str(offset + size) if more else ""},
        }

    def _conversations_replies(self, p: Mapping[str, Any]) -> dict[str, Any]:
        channel, ts = p.get("channel", ""), p.get("ts", "")
        root = self.root(channel, ts)
        if root is None:
            return {"ok": False, "error": "thread_not_found"}
        oldest = _key(p.get("oldest") or "0")
        replies = sorted(self.threads.get((channel, ts), []), key=lambda r: _key(r["ts"]))
        replies = [r for r in replies if _key(r["ts"]) > oldest]
        offset = int(p.get("cursor") or 0)
        size = min(int(p.get("limit", 100)), self.replies_page_size)
        page = replies[offset : offset + size]
        more = offset + size < len(replies)
        with_metadata = p.get("include_all_metadata") == "true"
        rendered = [{k: v for k, v in r.items() if with_metadata or k != "metadata"} for r in page]
        return {
            "ok": True,
            "messages": [self._render_root(channel, root), *rendered],
            "response_metadata": {"next_cursor": str(offset + size) if more else ""},
        }

    def _auth_test(self, _p: Mapping[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": TEAM_URL, "user_id": BOT}

    def _users_info(self, p: Mapping[str, Any]) -> dict[str, Any]:
        user = self.users.get(p.get("user", ""))
        return {"ok": True, "user": user} if user is not None else {"ok": False, "error": "user_not_found"}

    def _chat_getPermalink(self, p: Mapping[str, Any]) -> dict[str, Any]:
        ts = p.get("message_ts", "")
        return {"ok": True, "permalink": f"{TEAM_URL}archives/{p.get('channel')}/p{ts.replace('.', '')}"}

    def _chat_postMessage(self, b: Mapping[str, Any]) -> dict[str, Any]:
        channel = b.get("channel", "")
        if channel not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        ts = self._next_ts()
        message: dict[str, Any] = {"ts": ts, "text": b.get("text", ""), "user": BOT, "bot_id": "B_BOT"}
        if "metadata" in b:
            message["metadata"] = b["metadata"]
        if "blocks" in b:
            message["blocks"] = b["blocks"]
        thread_ts = b.get("thread_ts")
        if thread_ts:
            message["thread_ts"] = thread_ts
            self.threads.setdefault((channel, thread_ts), []).append(message)
        else:
            message["_reactions"] = {}
            self.channels[channel].append(message)
        return {"ok": True, "ts": ts, "channel": channel}

    def _find(self, channel: str, ts: str) -> dict[str, Any] | None:
        found = self.root(channel, ts)
        if found is not None:
            return found
        for (c, _root), replies in self.threads.items():
            if c == channel:
                for reply in replies:
                    if reply["ts"] == ts:
                        return reply
        return None

    def _chat_update(self, b: Mapping[str, Any]) -> dict[str, Any]:
        message = self._find(b.get("channel", ""), b.get("ts", ""))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message["text"] = b.get("text", "")
        message["edited"] = {"user": BOT, "ts": self._next_ts()}
        for key in ("metadata", "blocks"):
            if key in b:
                message[key] = b[key]
        return {"ok": True, "channel": b.get("channel"), "ts": b.get("ts")}

    def _reactions_add(self, b: Mapping[str, Any]) -> dict[str, Any]:
        root = self.root(b.get("channel", ""), b.get("timestamp", ""))
        if root is None:
            return {"ok": False, "error": "message_not_found"}
        users = root["_reactions"].setdefault(b.get("name", ""), [])
        if BOT in users:
            return {"ok": False, "error": "already_reacted"}
        users.append(BOT)
        return {"ok": True}

    def _reactions_remove(self, b: Mapping[str, Any]) -> dict[str, Any]:
        root = self.root(b.get("channel", ""), b.get("timestamp", ""))
        if root is None:
            return {"ok": False, "error": "message_not_found"}
        users = root["_reactions"].get(b.get("name", ""), [])
        if BOT not in users:
            return {"ok": False, "error": "no_reaction"}
        users.remove(BOT)
        return {"ok": True}


def slack_settings(
    url: str = "https://slack.invalid/api",
    *,
    channels: tuple[str, ...] = ("C1",),
    bot: str | None = BOT,
    users: tuple[str, ...] = (),
    api_key: str | None = TOKEN,
    active_states: tuple[str, ...] = ("Todo", "In Progress"),
    terminal_states: tuple[str, ...] = ("Done", "Cancelled"),
    **options: Any,
) -> Any:
    """Settings of a ``slack`` dispatch tracker pointed at ``url`` (options in their stored, camelCase form)."""
    from lorenz import Settings, TrackerSettings

    stored: dict[str, Any] = {"channels": list(channels), "users": list(users), **options}
    if bot is not None:
        stored["botUserId"] = bot
    return Settings(
        tracker=TrackerSettings(
            kind="slack",
            endpoint=url,
            api_key=api_key,
            active_states=active_states,
            terminal_states=terminal_states,
            options=stored,
        ),
        secrets=frozenset({TOKEN}),
    )
