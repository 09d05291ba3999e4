"""Slack issue ids (``<channel>:<ts>``), identifiers, permalinks and exact timestamp order."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import quote

__all__ = [
    "compare_slack_ts",
    "created_at",
    "issue_id",
    "issue_identifier",
    "permalink",
    "split_issue_id",
    "ts_sort_key",
]

_TS = re.compile(r"^(\d+)(?:\.(\d+))?$")


def issue_id(channel: str, ts: str) -> str:
    """``<channel>:<ts>``."""
    return f"{channel}:{ts}"


def split_issue_id(value: str) -> tuple[str, str] | None:
    """``(channel, ts)`` split at the first colon; ``None`` without a colon or with an empty half."""
    channel, sep, ts = value.partition(":")
    if not sep or not channel or not ts:
        return None
    return channel, ts


def issue_identifier(channel: str, ts: str) -> str:
    """The display identifier, ``SLK-<channel>-<ts with dots as dashes>``."""
    return f"SLK-{channel}-{ts.replace('.', '-')}"


def permalink(team_url: str, channel: str, ts: str) -> str:
    """``<team>/archives/<channel>/p<ts without its dot>``."""
    return f"{team_url.rstrip('/')}/archives/{quote(channel, safe='')}/p{ts.replace('.', '', 1)}"


def ts_sort_key(ts: str) -> tuple[int, str, str]:
    """A key ordering Slack timestamps exactly, as decimals (never as floats).

    Raises ``ValueError('invalid Slack timestamp: <ts>')``.
    """
    match = _TS.match(ts)
    if match is None:
        msg = f"invalid Slack timestamp: {ts}"
        raise ValueError(msg)
    integer = match.group(1).lstrip("0") or "0"
    fraction = (match.group(2) or "").rstrip("0")
    # Fractions compare as digit strings padded to equal width; right-padding a string key
    # to a fixed width does that for any realistic precision.
    return len(integer), integer, fraction.ljust(32, "0")


def compare_slack_ts(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is before, equal to or after ``b``."""
    ka, kb = ts_sort_key(a), ts_sort_key(b)
    return (ka > kb) - (ka < kb)


def created_at(ts: str) -> str | None:
    """ISO-8601 (UTC, milliseconds, ``Z``) of a Slack timestamp; ``None`` if it is not one."""
    try:
        millis = int(float(ts) * 1000)
    except ValueError:
        return None
    moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"
