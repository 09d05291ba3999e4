"""What the host keeps asked of one upstream across its restarts: the resources it watches
(``resources/subscribe``, subscribed to again after a restart, whose updates are handed to the host)
and the log level (``logging/setLevel``) its calls in flight asked for.

Runs on the upstream's loop. The upstream speaks the handshake era, where both requests still exist
(the SDK warns they are deprecated at 2026-07-28: silenced here).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["NotOffered", "Watched"]

logger = logging.getLogger("lorenz_mcp")


class NotOffered(Exception):
    """The upstream does not offer resource subscriptions."""


class Watched:
    """One upstream's subscriptions and log level (see the module docstring); ``label()`` names it
    in the log, ``describe`` redacts an error for it."""

    def __init__(self, label: Callable[[], str], describe: Callable[[BaseException], str]) -> None:
        self._label = label
        self._describe = describe
        #: Called with the URI of a subscribed resource that changed.
        self.listeners: list[Callable[[str], None]] = []
        self.uris: set[str] = set()
        #: The level last set on the upstream (``None``: never, since it started).
        self._level: str | None = None

    async def send(self, client: Any, uri: str, *, subscribe: bool = True) -> None:
        """``resources/subscribe`` (or ``unsubscribe``) of ``uri``; :class:`NotOffered` when the
        upstream has no subscriptions to subscribe to."""
        resources = client.server_capabilities.resources
        if resources is None or not resources.subscribe:
            if subscribe:
                raise NotOffered
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await (client.subscribe_resource(uri) if subscribe else client.unsubscribe_resource(uri))

    def updated(self, uri: str) -> None:
        """The upstream said ``uri`` changed: tell the host, if it watches it."""
        if uri not in self.uris:
            return
        for listener in dict.fromkeys(self.listeners):  # one host attached twice over a reload
            try:
                listener(uri)
            except Exception as exc:  # the host's callback; it must not stop the upstream's loop
                logger.warning("pack %s: telling the host about %s failed: %s", self._label(), uri, exc)

    async def restarted(self, client: Any) -> None:
        """A new connection: its level is unset, and each watched resource is subscribed to again
        (and said to have changed: an update may have been missed meanwhile)."""
        self._level = None
        for uri in sorted(self.uris):
            try:
                await self.send(client, uri)
            except Exception as exc:
                logger.warning("pack %s: subscribing to %s again failed: %s", self._label(), uri, self._describe(exc))
                continue
            self.updated(uri)

    async def follow_level(self, client: Any, wanted: str | None) -> None:
        """Set the upstream's log level to ``wanted`` (the least severe one a call in flight asked
        for) when it differs from the one set and the upstream has logging; a refusal is logged,
        never the call's failure."""
        if wanted is None or wanted == self._level or client.server_capabilities.logging is None:
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.set_logging_level(wanted)
        except Exception as exc:
            logger.warning(
                "pack %s: setting the log level to %s failed: %s", self._label(), wanted, self._describe(exc)
            )
            return
        self._level = wanted
