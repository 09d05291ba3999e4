"""What parsing a workflow hands the tracker it names: :class:`TrackerContext` (the
``parse_options``/``create_client`` hooks' argument), and :class:`TrackerLookup`, where it finds that
tracker (the plugins' tracker registry). Parsing builds the context, so it is defined here, below
the contracts (:mod:`lorenz.contracts`), which re-export it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from attrs import field, frozen

if TYPE_CHECKING:
    import httpx

__all__ = ["ResolveSecret", "TrackerContext", "TrackerLookup"]


class TrackerLookup(Protocol):
    """The tracker registered for a kind (:class:`lorenz.plugins.registry.TrackerRegistry`)."""

    def get(self, kind: str | None, /) -> object | None: ...


class ResolveSecret(Protocol):
    def __call__(self, value: str | None, fallback_env: str | None = None, /) -> str | None: ...


@frozen(kw_only=True)
class TrackerContext:
    """What a tracker's ``parse_options``/``create_client`` hooks get.

    ``resolve_secret(value, fallback_env)`` resolves ``$VAR`` (and the fallback variable) and
    registers the result for redaction; it is only set while parsing.
    """

    env: Mapping[str, str]
    cwd: Path = field(factory=Path.cwd)
    resolve_secret: ResolveSecret | None = None
    http: httpx.AsyncClient | None = None
