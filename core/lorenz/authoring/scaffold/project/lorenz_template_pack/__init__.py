"""The ``template_pack`` Lorenz tool pack."""

from __future__ import annotations

from .tools import PACK

__all__ = ["PACK"]
