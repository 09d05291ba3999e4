"""What a pack's resource, prompt and completion handlers get: :class:`PackContext`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from attrs import field

from .failures import kit_logger
from .logs import ClientLog

if TYPE_CHECKING:
    import httpx

    from lorenz.settings.model import Settings

__all__ = ["PackContext"]


@attrs.define(kw_only=True)
class PackContext:
    """What a resource or prompt handler gets: ``settings``, the host's ``http`` client, the pack's
    structured ``options``, and ``log`` (the server log, and the client's when it asked)."""

    settings: Settings
    http: httpx.AsyncClient
    options: Any
    log_sink: Any = field(default=None, repr=False)
    log: ClientLog = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.log = ClientLog(kit_logger(), self.log_sink)
