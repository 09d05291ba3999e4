"""The workspace the host serves, kept current with WORKFLOW.md on disk.

:class:`LiveWorkspace` holds one immutable :class:`Snapshot` (the workspace plus everything
derived from it that a request needs: the wire tools, the owning pack of each tool, compiled
argument validators). ``current()`` stats the workflow file (its ``(mtime_ns, size)``) and
swaps in a new snapshot when it changed; a new config that fails to load is logged with its
exact message and the last good snapshot keeps serving.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import frozen

from ..contracts import ToolProvider, ToolSpec
from ..results import error_message

if TYPE_CHECKING:
    from ..workspace import Workspace

#: A compiled ``jsonschema`` validator (the package ships no type stubs).
Validator = Any

__all__ = ["LiveWorkspace", "Snapshot", "Validator", "compile_schema"]

logger = logging.getLogger("lorenz.host")

_VALIDATORS: dict[str, Validator | None] = {}
_VALIDATORS_LOCK = threading.Lock()


def compile_schema(schema: Mapping[str, Any] | None) -> Validator | None:
    """A compiled JSON Schema validator, cached by the schema's canonical JSON (so a reload that
    keeps a tool's schema reuses it); ``None`` for no schema or a schema that is itself invalid."""
    if schema is None:
        return None
    from jsonschema import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    key = json.dumps(schema, sort_keys=True, default=str)
    with _VALIDATORS_LOCK:
        if key in _VALIDATORS:
            return _VALIDATORS[key]
    cls = validator_for(schema, default=Draft202012Validator)
    validator: Validator | None
    try:
        cls.check_schema(dict(schema))
        validator = cls(schema)
    except SchemaError as exc:
        logger.warning("lorenz: ignoring an invalid JSON Schema: %s", exc.message)
        validator = None
    with _VALIDATORS_LOCK:
        _VALIDATORS[key] = validator
    return validator


@frozen(kw_only=True, eq=False)
class Snapshot:
    """One loaded configuration and what serving it needs, computed once per (re)load."""

    workspace: Workspace
    generation: int
    packs: tuple[ToolProvider, ...]
    specs: tuple[ToolSpec, ...]
    #: ``{tool name: the pack declaring it}``
    owners: Mapping[str, ToolProvider]
    by_name: Mapping[str, ToolSpec]
    input_validators: Mapping[str, Validator | None]
    output_validators: Mapping[str, Validator | None]
    #: The SDK's ``types.Tool`` objects, built lazily by the MCP layer and cached here.
    wire: dict[str, Any]

    @classmethod
    def build(cls, workspace: Workspace, generation: int) -> Snapshot:
        packs = tuple(workspace.packs())
        owners: dict[str, ToolProvider] = {}
        specs: list[ToolSpec] = []
        for pack in packs:
            for spec in pack.tool_specs(workspace.settings):
                if spec.name in owners:  # open_workspace already refused collisions; stay safe
                    continue
                owners[spec.name] = pack
                specs.append(spec)
        return cls(
            workspace=workspace,
            generation=generation,
            packs=packs,
            specs=tuple(specs),
            owners=owners,
            by_name={spec.name: spec for spec in specs},
            input_validators={spec.name: compile_schema(spec.input_schema) for spec in specs},
            output_validators={spec.name: compile_schema(spec.output_schema) for spec in specs},
            wire={},
        )

    @property
    def settings(self) -> Any:
        return self.workspace.settings

    def pack_of(self, tool: str) -> str | None:
        pack = self.owners.get(tool)
        return pack.name if pack is not None else None


def _signature(path: Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


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
    ) -> None:
        self._workflow = workflow
        self._cwd = Path.cwd() if cwd is None else cwd
        self._env = dict(os.environ if env is None else env)
        self._reload = reload
        self._lock = threading.Lock()
        self._snapshot = Snapshot.build(workspace, 0)
        self._watched = self._watch_path(workspace)
        self._signature = _signature(self._watched)
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
        from ..workspace import open_workspace

        workspace = open_workspace(workflow, cwd=cwd, env=env, plugins=tuple(plugins))
        return cls(workspace, workflow=workflow, cwd=cwd, env=env, reload=reload)

    def _watch_path(self, workspace: Workspace) -> Path | None:
        path = workspace.settings.workflow_path
        if path is not None:
            return Path(path)
        from ..workspace import find_workflow

        found = find_workflow(self._workflow, cwd=self._cwd, env=self._env)
        if found is not None:
            return found
        from ..settings import workflow_path

        return Path(workflow_path(self._cwd, self._env))

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
        """The snapshot to serve this request with, reloading first if WORKFLOW.md changed."""
        if self._reload and _signature(self._watched) != self._signature:
            self.check()
        return self._snapshot

    def check(self) -> bool:
        """Reload if the workflow file changed since the last look; True when a new config was
        swapped in. A failed load is logged once per file version and the old config stays."""
        with self._lock:
            signature = _signature(self._watched)
            if signature == self._signature:
                return False
            self._signature = signature
            from ..workspace import open_workspace

            try:
                # Once a file is served, reload that file: its deletion is an error to report,
                # not a silent switch to the embedded default.
                served_file = not self._snapshot.workspace.embedded_default
                workspace = open_workspace(
                    self._watched if served_file and self._workflow is None else self._workflow,
                    cwd=self._cwd,
                    env=self._env,
                    discovery=self._snapshot.workspace.discovery,
                )
                snapshot = Snapshot.build(workspace, self._snapshot.generation + 1)
                if self.prepare is not None:
                    self.prepare(snapshot)
            except Exception as exc:
                self.last_error = error_message(exc)
                logger.error(
                    "lorenz: reloading %s failed; still serving the last good config: %s",
                    self._watched,
                    self.last_error,
                )
                return False
            self._warn_restart_only(self._snapshot, snapshot)
            self._snapshot = snapshot
            self.last_error = None
            logger.info(
                "lorenz: reloaded %s: %d tools from %d packs",
                self._watched,
                len(snapshot.specs),
                len(snapshot.packs),
            )
            return True

    @staticmethod
    def _warn_restart_only(old: Snapshot, new: Snapshot) -> None:
        before, after = old.settings.server, new.settings.server
        changed = [
            key for key in ("host", "port", "stateful", "json_response") if getattr(before, key) != getattr(after, key)
        ]
        if changed:
            logger.warning("lorenz: server.%s changed; restart lorenz serve to apply", ", server.".join(changed))
