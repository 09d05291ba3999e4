"""The workpad: one bot message per thread holding the agent's plan and note, edited in place."""

from __future__ import annotations

import secrets as _random
import time
from typing import Any

from attrs import frozen

from lorenz import Settings

from .fold import Workpad
from .ids import issue_id
from .models import WORKPAD_METADATA_EVENT, SlackMetadata
from .options import slack_options
from .sanitize import strip_broadcast_mentions
from .transport import SlackApiError, SlackTransport

__all__ = [
    "PLAN_LIMIT",
    "TOTAL_LIMIT",
    "WorkpadContent",
    "make_metadata_seq",
    "normalize_workpad_content",
    "render_workpad_blocks",
    "upsert_workpad",
    "workpad_fallback_text",
]

PLAN_LIMIT = 2000
NOTE_LIMIT = 2000
TOTAL_LIMIT = 2800
CLIPPED = "\n… (clipped)"
_REPOST_CODES = frozenset({"message_not_found", "cant_update_message", "edit_window_closed"})
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = _BASE36[digit] + digits
        if number == 0:
            return digits


def make_metadata_seq() -> str:
    """A unique marker for one post: ``<epoch ms base36>-<8 random base36 chars>``."""
    suffix = "".join(_random.choice(_BASE36) for _ in range(8))
    return f"{_base36(int(time.time() * 1000))}-{suffix}"


@frozen(kw_only=True)
class WorkpadContent:
    plan: str | None = None
    note: str | None = None


def _clamp(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(CLIPPED))] + CLIPPED


def normalize_workpad_content(content: WorkpadContent) -> WorkpadContent:
    """Sanitise both sections and clip them so plan + note fit one Slack section budget."""
    plan = _clamp(strip_broadcast_mentions(content.plan), PLAN_LIMIT) if content.plan is not None else None
    note = None
    if content.note is not None:
        note = _clamp(strip_broadcast_mentions(content.note), min(NOTE_LIMIT, TOTAL_LIMIT - len(plan or "")))
    return WorkpadContent(plan=plan, note=note)


def _present(text: str | None) -> bool:
    return text is not None and text.strip() != ""


def render_workpad_blocks(settings: Settings, issue: str, content: WorkpadContent) -> list[dict[str, Any]]:
    """Block Kit for the workpad; the Cancel/Details buttons only with Socket Mode (an app token)."""
    content = normalize_workpad_content(content)
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Lorenz workpad*"}}]
    if _present(content.plan):
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": content.plan}})
    if _present(content.note):
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": content.note}]})
    if slack_options(settings).app_token:
        blocks.append(
            {
                "type": "actions",
                "block_id": "lorenz_workpad_actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": "lorenz_details",
                        "text": {"type": "plain_text", "text": "Details"},
                        "value": issue,
                    },
                    {
                        "type": "button",
                        "action_id": "lorenz_cancel",
                        "style": "danger",
                        "text": {"type": "plain_text", "text": "Cancel"},
                        "value": issue,
                        "confirm": {
                            "title": {"type": "plain_text", "text": "Cancel this issue?"},
                            "text": {
                                "type": "plain_text",
                                "text": "Posts a Cancelled status; the running agent is stopped by the daemon.",
                            },
                            "confirm": {"type": "plain_text", "text": "Cancel issue"},
                            "deny": {"type": "plain_text", "text": "Keep working"},
                        },
                    },
                ],
            }
        )
    return blocks


def workpad_fallback_text(content: WorkpadContent) -> str:
    """The plain-text body of the workpad message (notifications, clients without blocks)."""
    content = normalize_workpad_content(content)
    text = "Lorenz workpad"
    if _present(content.plan):
        text += f"\n\n{content.plan}"
    if _present(content.note):
        text += f"\n\n{content.note}"
    return text


async def upsert_workpad(
    settings: Settings,
    transport: SlackTransport,
    channel: str,
    root_ts: str,
    content: WorkpadContent,
    existing: Workpad | None,
) -> str:
    """Edit the existing workpad, or post one; returns the workpad's ts.

    A workpad Slack can no longer edit (deleted, too old) is reposted; any other update error
    propagates so a transient failure never leaves two workpads.
    """
    issue = issue_id(channel, root_ts)
    content = normalize_workpad_content(content)
    payload: dict[str, Any] = {"issue": issue, "seq": make_metadata_seq()}
    if content.plan is not None:
        payload["plan"] = content.plan
    if content.note is not None:
        payload["note"] = content.note
    metadata = SlackMetadata(event_type=WORKPAD_METADATA_EVENT, payload=payload)
    blocks = render_workpad_blocks(settings, issue, content)
    text = workpad_fallback_text(content)
    if existing is not None:
        try:
            await transport.update_message(channel, existing.ts, text, metadata=metadata, blocks=blocks)
        except SlackApiError as exc:
            if exc.code not in _REPOST_CODES:
                raise
        else:
            return existing.ts
    return await transport.post_reply(channel, root_ts, text, metadata=metadata, blocks=blocks)
