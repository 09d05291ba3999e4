"""Lorenz Slack tracker: human bot-mentions in watched channels are issues; status lives in the thread."""

from __future__ import annotations

__version__ = "0.1.0"
