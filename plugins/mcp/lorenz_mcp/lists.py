"""What an upstream lists (its tools, resources and prompts) against what the host was last handed,
and the listeners told when the two differ."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .offers import Offers

__all__ = ["Lists"]

logger = logging.getLogger("lorenz_mcp")


class Lists:
    """An upstream's lists, as it last answered and as the host last took them."""

    def __init__(self, label: Callable[[], str]) -> None:
        self._label = label
        #: Its tools (wire form) as last listed; ``None`` before its first listing.
        self.tools: tuple[dict[str, Any], ...] | None = None
        self.offers = Offers()
        self._reported: tuple[dict[str, Any], ...] | None = None  # last handed to the host, if asked
        self._reported_offers: Offers | None = None
        #: Called (from the upstream's loop) when the lists changed since the host last took them.
        self.listeners: list[Callable[[], None]] = []
        #: Its first start ended (listed or failed) and the listeners were told.
        self.settled = False

    def report_tools(self) -> tuple[dict[str, Any], ...]:
        """The tools, as the host now serves them."""
        tools = self._reported = self.tools or ()
        return tools

    def report_offers(self) -> Offers:
        """The resources, templates and prompts, as the host now serves them."""
        offers = self._reported_offers = self.offers
        return offers

    def listen(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever the lists change from what the host last took, and at once if
        they have already: a first listing that came after the mount's wait, but before the host
        attached, would otherwise go unheard."""
        self.listeners.append(listener)
        if self._changed():
            listener()

    def _changed(self) -> bool:
        tools = self._reported is not None and (self.tools or ()) != self._reported
        return tools or (self._reported_offers is not None and self.offers != self._reported_offers)

    def notify(self, *, settled: bool = False) -> None:
        """Tell the listeners the lists changed (or, ``settled``, that a first start failed: a
        command waiting for it to start waits no more)."""
        if not (settled or self._changed()):
            return
        for listener in list(self.listeners):
            try:
                listener()
            except Exception as exc:  # the host's callback; it must not stop the supervisor
                logger.warning("pack %s: telling the host about new tools failed: %s", self._label(), exc)
