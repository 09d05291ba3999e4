"""The workflow's catalog shapers (``lorenz_catalog``) run over one caller's tools.

:func:`shape_catalog` is the one place that decides what a caller sees when shapers are on: the
host lists its answer and lets the caller call only the names in it. What a shaper may change is
enforced here, not trusted: it may leave tools out, reorder them, and change a tool's
``description``, ``title`` and ``annotations``; a tool it adds or renames is ignored, and its
schemas stay the pack's. A shaper that raises, hangs past its budget or answers something else
fails closed: the caller sees and may call nothing, and is told why when it calls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence

from attrs import evolve

from lorenz.contracts import ToolSpec
from lorenz.extensions import Listing
from lorenz.redact import redact_text
from lorenz.results import ToolResult, error_message, failure_result

from .extensions import Named

__all__ = ["CatalogFailed", "shape_catalog"]

logger = logging.getLogger("lorenz.host")


class CatalogFailed(Exception):
    """A catalog shaper failed: the caller sees nothing, and a call gets :meth:`failure`."""

    def __init__(self, name: str, what: str) -> None:
        super().__init__(f"catalog shaper {name} {what}")

    def failure(self) -> ToolResult:
        return failure_result(
            str(self),
            reason="catalog_failed",
            recovery="this is a fault in the server's configuration, not in the call; tell the server's operator",
        )


async def shape_catalog(
    shapers: Sequence[Named],
    tools: Sequence[ToolSpec],
    listing: Listing,
    *,
    budget: float,
    secrets: Iterable[str] = (),
) -> tuple[ToolSpec, ...]:
    """``tools`` (already within the caller's grant) through each shaper in turn; raises
    :class:`CatalogFailed` naming the first that failed (logged here, once per failure)."""
    current = tuple(tools)
    for shaper in shapers:
        try:
            async with asyncio.timeout(budget):
                answer = await shaper.obj(current, listing)
        except TimeoutError:
            failed = CatalogFailed(shaper.name, f"did not answer within {budget:g} s")
        except Exception as exc:
            failed = CatalogFailed(shaper.name, f"raised: {redact_text(error_message(exc), secrets)}")
        else:
            try:
                current = _kept(current, answer)
                continue
            except TypeError as exc:
                failed = CatalogFailed(shaper.name, str(exc))
        logger.warning("lorenz: %s; the caller (%s) sees no tool", failed, ", ".join(listing.identities))
        raise failed
    return current


def _kept(given: tuple[ToolSpec, ...], answer: object) -> tuple[ToolSpec, ...]:
    """What a shaper answered, held to what it may change (raises ``TypeError`` on a bad answer)."""
    if not isinstance(answer, Sequence) or isinstance(answer, str | bytes):
        raise TypeError(f"returned {type(answer).__name__}, not a list of ToolSpec")
    by_name = {spec.name: spec for spec in given}
    kept: dict[str, ToolSpec] = {}
    for spec in answer:
        if not isinstance(spec, ToolSpec):
            raise TypeError(f"returned a {type(spec).__name__} among the tools, not a ToolSpec")
        original = by_name.get(spec.name)
        if original is None or spec.name in kept:
            continue  # added, renamed or repeated: a caller cannot be shown a tool the host does not serve
        if spec is not original:
            if not isinstance(spec.description, str) or not isinstance(spec.title, str | None):
                raise TypeError(f"gave tool {spec.name} a description or title that is not text")
            if spec.annotations is not None and not isinstance(spec.annotations, Mapping):
                raise TypeError(f"gave tool {spec.name} annotations that are not a mapping")
            if not _schemas_kept(spec, original):  # the pack's schemas and scopes, whatever it said
                spec = evolve(original, description=spec.description, title=spec.title, annotations=spec.annotations)
        kept[spec.name] = spec
    return tuple(kept.values())


def _schemas_kept(spec: ToolSpec, original: ToolSpec) -> bool:
    """Whether ``spec`` (an ``evolve`` of ``original``) still has its schemas and scopes: the
    common case, told by identity without comparing the schemas."""
    return (
        spec.input_schema is original.input_schema
        and spec.output_schema is original.output_schema
        and spec.auth == original.auth
    )
