"""Naming unknown keys: ``toolz (did you mean "tools"?)``."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable

__all__ = ["did_you_mean", "quoted", "shown", "unknown_keys"]


def quoted(key: str) -> str:
    """``"key"``, escaped as JSON (a key may hold a quote or a line break)."""
    return json.dumps(key, ensure_ascii=False)


def shown(key: str) -> str:
    """``key`` as is, or :func:`quoted` when it holds a character that does not print."""
    return key if key.isprintable() else quoted(key)


def did_you_mean(key: str, candidates: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`` (did you mean "<closest candidate>"?)``, or ``""`` when none is ``cutoff`` close
    (:func:`difflib.get_close_matches`)."""
    matches = difflib.get_close_matches(key, list(candidates), n=1, cutoff=cutoff)
    return f" (did you mean {quoted(matches[0])}?)" if matches else ""


def unknown_keys(keys: Iterable[str], candidates: Iterable[str]) -> str:
    """The keys joined by ``", "``, each followed by its suggestion, if any."""
    known = list(candidates)
    return ", ".join(f"{shown(key)}{did_you_mean(key, known)}" for key in keys)
