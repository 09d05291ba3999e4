"""The workspace the host serves, kept current with WORKFLOW.md on disk.

:class:`LiveWorkspace` holds one immutable :class:`Snapshot` and swaps in a new one when the
workflow file changed; a new config that fails to load is logged (redacted) and the last good
snapshot keeps serving. On the event loop, ``await current_async()`` only stats (or asks
:mod:`.workflow_watch`); the reload runs in a thread (:mod:`.background`), and a slow one does not
hold requests up for long.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from attrs import evolve

from lorenz.redact import redact_text
from lorenz.results import error_message
from lorenz.settings import workflow_path
from lorenz.words import counted
from lorenz.workspace import find_workflow, open_workspace

from .background import BackgroundReload
from .edits import CodeEdits
from .installed import InstalledWatch
from .rediscover import Rediscovery, workflow_needs_rediscovery
from .snapshot import Snapshot, request_snapshot
from .workflow_watch import WorkflowWatch, file_signature

if TYPE_CHECKING:
    import asyncio

    from lorenz.plugins.model import Discovery
    from lorenz.workspace import Workspace


__all__ = ["LiveWorkspace", "Snapshot", "request_snapshot"]

logger = logging.getLogger("lorenz.host")

T = TypeVar("T")


#: How many times one reload re-reads a file that keeps changing while it is being loaded.
_RELOAD_ATTEMPTS = 3

#: The ``server.*`` settings a process reads once, when it starts serving: a reload that changes
#: one is said on ``/healthz`` (``settingsNeedRestart``) and in the log, and only a restart
#: (``SIGHUP`` replaces ``--workers`` one at a time) applies it. Every other setting is read
#: live, per request or per call, by every worker (docs/deploy.md has the table).
RESTART_ONLY = ("host", "port", "mcp_port", "workers", "stateful", "json_response", "fast_path", "access_log")


class LiveWorkspace:
    """The served workspace, re-read from disk when WORKFLOW.md changes.

    ``workflow`` is what the user named (``None``: ``$LORENZ_WORKFLOW`` or ``./WORKFLOW.md``,
    else the embedded default); reloading resolves it the same way, so a WORKFLOW.md created
    next to an embedded-default server is picked up. ``reload=False`` pins the first config.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        workflow: str | os.PathLike[str] | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        reload: bool = True,
        plugins: Sequence[object] = (),
    ) -> None:
        self._workflow = workflow
        self._plugins = tuple(plugins)
        #: Installed distributions changed: the next reload re-runs discovery.
        self._installed = InstalledWatch()
        self._rediscover = False
        self._rediscovery: Rediscovery | None = Rediscovery() if reload else None
        #: The newest discovery, kept for the next load when the one it ran for failed.
        self._discovery: Discovery | None = None
        self._cwd = Path.cwd() if cwd is None else cwd
        self._env = dict(os.environ if env is None else env)
        self._reload = reload
        self._lock = threading.Lock()
        #: The reloads :meth:`current_async` starts.
        self._background = BackgroundReload(self.check, lambda: self._watched)
        self._snapshot = Snapshot.build(workspace, 0)
        #: The server settings this process started serving with (those of :data:`RESTART_ONLY` hold).
        self._started = self._snapshot.settings.server
        #: A pack said its tools changed: the next look re-mounts, even with WORKFLOW.md unchanged.
        self._remount = False
        #: Called with a resource's URI when a pack says it changed (from any thread).
        self.resource_listeners: list[Callable[[str], None]] = []
        self._snapshot.attach(self.remount, self.resource_updated)
        #: Every reload mounts through the first workspace's pool: a pack it keeps keeps its processes.
        self._isolation = workspace.isolation
        self._watched = self._watch_path(workspace)
        self._signature = file_signature(self._watched)
        #: Edits to the mounted packs' code (:mod:`.edits`); ``reload_code`` is set by ``--reload``.
        self.edits: CodeEdits | None = CodeEdits() if reload else None
        if self.edits is not None:
            self.edits.watch(self._snapshot)
        #: The kernel's reports of changes to ``_watched``, on the loop serving requests.
        self._kernel_watch: WorkflowWatch | None = None
        #: The message of the last failed reload, cleared by a successful one.
        self.last_error: str | None = None
        #: Run on every new snapshot before it is served (the MCP layer builds its wire models);
        #: raising rejects the new config like a load error.
        self.prepare: Callable[[Snapshot], object] | None = None

    @classmethod
    def open(
        cls,
        workflow: str | os.PathLike[str] | None = None,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        plugins: tuple[object, ...] | list[object] = (),
        reload: bool = True,
    ) -> LiveWorkspace:
        """Open and validate the workflow (raising ``ConfigError``/``RegistryError``/``MountError``)."""
        workspace = open_workspace(workflow, cwd=cwd, env=env, plugins=tuple(plugins))
        return cls(workspace, workflow=workflow, cwd=cwd, env=env, reload=reload, plugins=plugins)

    def _watch_path(self, workspace: Workspace) -> Path | None:
        path = workspace.settings.workflow_path
        if path is not None:
            return Path(path)
        found = find_workflow(self._workflow, cwd=self._cwd, env=self._env)
        if found is not None:
            return found
        return Path(workflow_path(self._cwd, self._env))

    @property
    def env(self) -> Mapping[str, str]:
        """The environment the workflow is resolved in."""
        return self._env

    @property
    def reloads(self) -> bool:
        """Whether WORKFLOW.md changes are picked up."""
        return self._reload

    @property
    def watched_path(self) -> Path | None:
        return self._watched

    def snapshot(self) -> Snapshot:
        """The snapshot being served, without looking at the disk."""
        return self._snapshot

    def current(self) -> Snapshot:
        """The snapshot to serve this request with, reloading first if WORKFLOW.md (or the set of
        installed distributions) changed.

        Blocks while reloading (a reload may run ``op read`` and other slow resolvers): on the
        event loop use :meth:`current_async`."""
        if self.changed():
            self.check()
        return self._snapshot

    def changed(self) -> bool:
        """Whether WORKFLOW.md changed since the last look (one ``stat``, no reload), or
        distributions were installed or removed (looked at once a second at most)."""
        if not self._reload:
            return self._remount  # a pack's tools changed: mounted again, WORKFLOW.md left unread
        if self._installed.changed():
            self._rediscover = True
        if self._rediscover or self._remount or (self.edits is not None and self.edits.pending()):
            return True
        watch = self._kernel_watch
        if watch is not None and watch.vouches():
            return False
        changed = file_signature(self._watched) != self._signature
        if watch is not None and not changed:
            watch.looked()
        return changed

    @property
    def kernel_watched(self) -> bool:
        """Whether the kernel's reports of changes to WORKFLOW.md stand in for a look per request."""
        return self._kernel_watch is not None

    def watch_on(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """Let requests served on ``loop`` (running) skip the ``stat`` of WORKFLOW.md while the
        kernel reports no change to it (Linux: :mod:`~lorenz.host.reload.workflow_watch`); returns what
        stops that. Only for requests that reach ``loop`` through its own sockets or pipes."""
        watch = WorkflowWatch.start(self._watched, loop) if self._reload and self._watched is not None else None
        if watch is None:
            return lambda: None
        self._kernel_watch = watch

        def stop() -> None:
            if self._kernel_watch is watch:
                self._kernel_watch = None
            watch.close()

        return stop

    async def current_async(self) -> Snapshot:
        """:meth:`current` for the event loop: only a ``stat`` runs inline.

        When the file changed, one reload starts in a thread of its own (:mod:`.background`),
        however many requests arrive meanwhile. They wait for it until
        :data:`~.background.RELOAD_WAIT_SECONDS` after it started (so an edit is served at once),
        then get the last good snapshot while a slow reload (``op read``) carries on; the requests
        after it finishes get the new one.
        """
        # A reload already running when this request came may have read the file before the edit
        # the request follows: once it is done, look again (a few times: the file may keep changing).
        for _ in range(_RELOAD_ATTEMPTS):
            if not self.changed() or not await self._background.run():
                break  # unchanged; or a slow reload: the last good snapshot serves until it is done
        return self._snapshot

    def check(self) -> bool:
        """Reload if the workflow file changed since the last look; True when a new config was
        swapped in. A failed load is logged once per file version and the old config stays; a
        file that changed again while it was loading (a half-written save) is read again."""
        with self._lock:
            try:
                return self._check()
            finally:
                # The processes of isolated packs only a failed or replaced load mounted stop here.
                self._isolation.keep_only(self._snapshot.packs)

    def _check(self) -> bool:
        """:meth:`check`, under its lock."""
        if not self._reload:
            return self._remounted()
        discovery, edited = None, False
        if self.edits is not None and self.edits.pending():
            edited = True
            self._discovery = self.edits.apply(
                self._snapshot, self._discovery or self._snapshot.workspace.discovery, self._isolation
            )
            self._remount = True
        installs, self._rediscover = self._rediscover, False
        for _ in range(_RELOAD_ATTEMPTS):
            signature = file_signature(self._watched)
            # Asked again on each attempt: an edit made while loading may mount or isolate a pack
            # the discovery in hand left unimported.
            basis = self._snapshot.workspace.discovery if discovery is None else discovery
            isolation = signature != self._signature and workflow_needs_rediscovery(self._watched, basis)
            if installs or isolation:
                installs = False
                # A site directory's mtime moved but no plugin came, went or changed: nothing to reload.
                found = self._discover(always=isolation)
                if found is not None:
                    discovery = self._discovery = found
            packs_only = signature == self._signature and discovery is None and not edited  # a pack's tools changed
            if packs_only and not self._remount:
                return False
            self._remount = False
            snapshot, error = self._load(discovery)
            if file_signature(self._watched) == signature:
                break
            if snapshot is not None:
                snapshot.detach()
            # Changed again while loading (still being written): what was read is not the
            # file's next version, so neither serve it nor report it; read it again.
        else:
            return False  # it keeps changing: the next look tries again
        if snapshot is None:
            self._signature = signature
            # Redacted with the last good config's secrets (the failed config's are unknown).
            self.last_error = redact_text(error_message(error), self._snapshot.settings.secrets)
            logger.error(
                "lorenz: reloading %s failed; still serving the last good config: %s",
                self._watched,
                self.last_error,
            )
            return False
        self._discovery = None
        if self.edits is not None:
            self.edits.watch(snapshot)
        self._warn_restart_only(snapshot)
        # The snapshot first: a request on the loop that sees the new signature (the file
        # unchanged since this load) must be served the new snapshot, not the one it replaces.
        where = "the embedded default" if snapshot.workspace.embedded_default else self._watched
        replaced = self._serve(snapshot, f"reloaded {where}", packs_only)
        self._signature, self.last_error = signature, None
        replaced.detach()  # after the new one attached: what both mount keeps running
        return True

    def _serve(self, snapshot: Snapshot, done: str, packs_only: bool) -> Snapshot:
        """Serve ``snapshot`` from now on, and say so; the snapshot it replaces."""
        replaced, self._snapshot = self._snapshot, snapshot
        why = " (a pack's tools changed)" if packs_only else ""
        tools, packs = counted(len(snapshot.specs), "tool"), counted(len(snapshot.packs), "pack")
        logger.info("lorenz: %s: %s from %s%s", done, tools, packs, why)
        return replaced

    def _discover(self, *, always: bool) -> Discovery | None:
        """Discovery run afresh, for an environment where distributions came or went (or, ``always``,
        for another ``server.isolated_packs``, which decides what discovery leaves unimported);
        ``None`` when no plugin distribution changed and ``always`` is false."""
        self._installed.mark()
        if self._rediscovery is None:
            self._rediscovery = Rediscovery()
        discovery = self._rediscovery.run(
            self._discovery or self._snapshot.workspace.discovery,
            plugins=self._plugins,
            env=self._env,
            workflow=self._watched,
            always=always,
        )
        if discovery is None or self.edits is None:
            return discovery
        return evolve(discovery, restart_needed=(*discovery.restart_needed, *self.edits.stale()))

    def _load(self, discovery: Discovery | None = None) -> tuple[Snapshot | None, Exception | None]:
        """The snapshot of the workflow as it is on disk now (over ``discovery`` when discovery
        ran afresh), or the error loading it."""
        try:
            # Once a file is served, reload that file: its deletion is an error to report,
            # not a silent switch to the embedded default.
            served_file = not self._snapshot.workspace.embedded_default
            workspace = open_workspace(
                self._watched if served_file and self._workflow is None else self._workflow,
                cwd=self._cwd,
                env=self._env,
                discovery=discovery or self._discovery or self._snapshot.workspace.discovery,
                isolation=self._isolation,
            )
        except Exception as exc:
            return None, exc
        return self._built(workspace)

    def _built(self, workspace: Workspace) -> tuple[Snapshot | None, Exception | None]:
        """The snapshot serving ``workspace``, attached and prepared, or the error building it."""
        try:
            snapshot = Snapshot.build(workspace, self._snapshot.generation + 1)
        except Exception as exc:
            return None, exc
        snapshot.attach(self.remount, self.resource_updated)
        try:
            if self.prepare is not None:
                self.prepare(snapshot)
        except Exception as exc:
            snapshot.detach()
            return None, exc
        return snapshot, None

    def _remounted(self) -> bool:
        """Without reloads: the served config mounted again as it stands, when a pack's tools
        changed (an upstream server listed late, or changed its list); WORKFLOW.md is not read."""
        if not self._remount:
            return False
        self._remount = False
        snapshot, error = self._built(evolve(self._snapshot.workspace))  # the same packs, mounted afresh
        if snapshot is None:
            why = redact_text(error_message(error), self._snapshot.settings.secrets)
            logger.error("lorenz: mounting the served config again failed; still serving it as it was: %s", why)
            return False
        self._serve(snapshot, "mounted the served config again", packs_only=True).detach()
        return True

    def remount(self) -> None:
        """Mount the workflow again at the next look, though WORKFLOW.md did not change (a pack's
        tools changed); from any thread."""
        self._remount = True

    def resource_updated(self, uri: str) -> None:
        """A pack's resource ``uri`` changed: tell the listeners (the MCP layer); from any thread."""
        for listener in list(self.resource_listeners):
            listener(uri)

    def run_host(self, main: Coroutine[Any, Any, T]) -> T:
        """Run the host's main coroutine on the event loop the isolated packs are supervised from
        (``lorenz serve`` gives its pool a loop of its own, so calls to them never change threads)."""
        return self._isolation.run(main)

    async def aclose(self) -> None:
        """Detach the served snapshot's packs and stop the isolated packs' processes (at shutdown)."""
        await anyio.to_thread.run_sync(self._snapshot.detach)
        await self._isolation.aclose()

    def restart_needed(self) -> tuple[str, ...]:
        """The :data:`RESTART_ONLY` settings (``server.stateful``...) whose value on disk is not the
        one this process serves with."""
        return self._pending_restart(self._snapshot)

    def _pending_restart(self, snapshot: Snapshot) -> tuple[str, ...]:
        now = snapshot.settings.server
        return tuple(f"server.{key}" for key in RESTART_ONLY if getattr(now, key) != getattr(self._started, key))

    def _warn_restart_only(self, new: Snapshot) -> None:
        pending = self._pending_restart(new)
        if pending and pending != self.restart_needed():
            logger.warning(
                "lorenz: %s changed in %s and needs a restart: this process serves with the value it started "
                "with until then (SIGHUP replaces --workers one at a time)",
                ", ".join(pending),
                self._watched,
            )
