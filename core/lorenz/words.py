"""Wording shared by every text Lorenz prints or logs: a count with its noun in the right number."""

from __future__ import annotations

__all__ = ["counted", "plural"]


def plural(n: int, noun: str) -> str:
    """``noun`` for one, ``nouns`` otherwise (the nouns Lorenz counts take a plain ``s``)."""
    return noun if n == 1 else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """``1 pack``, ``2 packs``, ``0 tools``."""
    return f"{n} {plural(n, noun)}"
