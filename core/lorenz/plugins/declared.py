"""What a pack declares it needs: its ``permissions`` attribute, fixed :class:`Permissions` or
computed from the settings its process gets (``Pack(permissions=...)``), read as the host reads any
attribute of a plugin's pack: whatever the pack's function raises or returns is checked."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias

from lorenz.sandbox.permissions import Permissions, parse_permissions

if TYPE_CHECKING:
    from lorenz.settings.model import Settings

__all__ = ["DeclaredPermissions", "depends_on_settings", "permissions_of"]

#: What a pack's ``permissions`` may be: fixed, or computed from the settings its process gets
#: (its ``tools.<pack>`` slice and the tracker), e.g. the host of a configured base URL.
DeclaredPermissions: TypeAlias = "Permissions | Callable[[Settings], Permissions]"


def depends_on_settings(pack: object) -> bool:
    """Whether ``pack`` computes its permissions from its settings (a callable ``permissions``)."""
    declared = getattr(pack, "permissions", None)
    return callable(declared) and not isinstance(declared, Permissions)


def permissions_of(pack: object, settings: Settings | None = None) -> Permissions | None:
    """What ``pack`` declares (its ``permissions`` attribute), ``None`` if nothing usable. A
    callable is called with ``settings`` (``None``: unknown yet, so nothing usable); raising, or
    returning anything but :class:`Permissions`, is ``ValueError`` naming the pack."""
    declared = getattr(pack, "permissions", None)
    if isinstance(declared, Permissions):
        return declared
    if depends_on_settings(pack):
        if settings is None:
            return None
        name = getattr(pack, "name", "?")
        try:
            computed = declared(settings)  # type: ignore[misc]
        except Exception as exc:
            # Not the message: it may quote the settings, secrets included.
            msg = f"pack {name}: its permissions(settings) raised {type(exc).__name__}"
            raise ValueError(msg) from None
        if not isinstance(computed, Permissions):
            msg = f"pack {name} permissions(settings) returned {type(computed).__name__}, not Permissions"
            raise ValueError(msg)
        return computed
    if isinstance(declared, Mapping):
        try:
            return parse_permissions(declared, f"pack {getattr(pack, 'name', '?')} permissions")
        except ValueError:
            return None
    return None
