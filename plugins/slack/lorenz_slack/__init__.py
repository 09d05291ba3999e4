"""Lorenz Slack tracker: human bot-mentions in watched channels are issues; status lives in the thread.

Names load on first use, so registering the plugin (:mod:`.plugin`) does not import the client,
the thread fold or the Web API transport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorenz import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "InMemorySlackTransport": ".memory",
    "SeedMessage": ".memory",
    "SlackApiError": ".transport",
    "SlackToolPack": ".tools",
    "SlackTrackerClient": ".client",
    "SlackTrackerProvider": ".tracker",
    "SlackTransport": ".transport",
    "SlackTransportError": ".transport",
    "SlackWebTransport": ".web_transport",
    "execute_slack_tool": ".handlers",
    "slack_tool_specs": ".tools",
    "state_from_thread": ".fold",
    "strip_broadcast_mentions": ".sanitize",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    # `X as X`: mypy --strict (no implicit re-export) then sees `from lorenz_slack import X` as public.
    from .client import SlackTrackerClient as SlackTrackerClient
    from .fold import state_from_thread as state_from_thread
    from .handlers import execute_slack_tool as execute_slack_tool
    from .memory import InMemorySlackTransport as InMemorySlackTransport
    from .memory import SeedMessage as SeedMessage
    from .sanitize import strip_broadcast_mentions as strip_broadcast_mentions
    from .tools import SlackToolPack as SlackToolPack
    from .tools import slack_tool_specs as slack_tool_specs
    from .tracker import SlackTrackerProvider as SlackTrackerProvider
    from .transport import SlackApiError as SlackApiError
    from .transport import SlackTransport as SlackTransport
    from .transport import SlackTransportError as SlackTransportError
    from .web_transport import SlackWebTransport as SlackWebTransport
