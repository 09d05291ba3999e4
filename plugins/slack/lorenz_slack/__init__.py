"""Lorenz Slack tracker: human bot-mentions in watched channels are issues; status lives in the thread."""

from __future__ import annotations

from .client import SlackTrackerClient
from .fold import state_from_thread
from .memory import InMemorySlackTransport, SeedMessage
from .sanitize import strip_broadcast_mentions
from .tools import SlackToolPack, execute_slack_tool, slack_tool_specs
from .tracker import SlackTrackerProvider
from .transport import SlackApiError, SlackTransport, SlackTransportError, SlackWebTransport

__version__ = "0.1.0"

__all__ = [
    "InMemorySlackTransport",
    "SeedMessage",
    "SlackApiError",
    "SlackToolPack",
    "SlackTrackerClient",
    "SlackTrackerProvider",
    "SlackTransport",
    "SlackTransportError",
    "SlackWebTransport",
    "execute_slack_tool",
    "slack_tool_specs",
    "state_from_thread",
    "strip_broadcast_mentions",
]
