"""Sandboxed packs (``server.sandboxed_packs``): declared :class:`Permissions`, enforced around an
isolated pack's process by Landlock (``landlock``, ``policy``, ``confine``) and an egress proxy in
the host (``proxy``, ``host``)."""

from .permissions import Permissions

__all__ = ["Permissions"]
