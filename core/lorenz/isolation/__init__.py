"""Isolated packs: a pack named in ``server.isolated_packs`` runs in supervised child processes.

The host mounts an :class:`~lorenz.isolation.proxy.IsolatedPack` in its place (an ordinary
``ToolProvider``); :mod:`.pool` owns the processes, :mod:`.supervisor` restarts them,
:mod:`.protocol` is the pipe between them, :mod:`.child` is the child's side, :mod:`.survey`
keeps discovery from importing isolated plugins and :mod:`.plan` decides what is isolated and
with which slice of the settings. See ``docs/isolated-packs.md``. Internal: not part of the
public API (docs/api.md).
"""
