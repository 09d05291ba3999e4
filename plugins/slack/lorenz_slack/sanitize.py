"""Broadcast-mention sanitising: the bot never pings a whole channel or a user group."""

from __future__ import annotations

import re

__all__ = ["strip_broadcast_mentions"]

_BROADCAST = re.compile(r"<!(channel|here|everyone)(?:\|[^>]*)?>", re.IGNORECASE)
_SUBTEAM = re.compile(r"<!subteam\^[A-Z0-9]+(?:\|[^>]*)?>", re.IGNORECASE)


def strip_broadcast_mentions(text: str) -> str:
    """Turn ``<!channel>``/``<!here>``/``<!everyone>`` into plain ``@channel``… and user-group
    mentions into ``@group``; user mentions (``<@U…>``) are left alone."""
    text = _BROADCAST.sub(lambda m: "@" + m.group(1).lower(), text)
    return _SUBTEAM.sub("@group", text)
