"""Discovery without importing isolated plugins: each is imported in a short-lived child instead.

When the workflow isolates packs, every plugin not shipped with Lorenz is surveyed: a child
imports its entry point and reports the packs and trackers it registers (or how it failed, a
crash included). A plugin whose packs all run isolated and that provides no tracker (trackers run
in the host) is then never imported by the host: a :class:`~.stand_ins.StandIn` registers an
:class:`~.stand_ins.IsolatedPackStub` per pack in its place, under the plugin's own name and
distribution, so name clashes, ``lorenz plugins`` and ``/healthz`` treat it like any other plugin.
When the workflow sandboxes packs, each survey child (and each child computing a pack's
permissions) is confined with :mod:`lorenz.sandbox.discovery`'s strict policy before it imports
the plugin.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from attrs import evolve

from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.plugins.hint import listing_hint
from lorenz.plugins.model import PluginFailure
from lorenz.plugins.paths import plugin_files
from lorenz.redact import redact_text
from lorenz.sandbox.discovery import child_sandbox, discard, referenced_names, strict_env
from lorenz.sandbox.host import SandboxUnavailable
from lorenz.sandbox.permissions import Permissions
from lorenz.settings.server import MCP_TOKEN_ENV

from . import reaper, survey_cache
from .frames import MAX_CONTROL_FRAME_BYTES, FrameReader, ProtocolError
from .plan import is_isolated
from .protocol import Failed, Launch, Source, Survey, encode, structure
from .stand_ins import IsolatedPackStub, StandIn, TrackerStub

if TYPE_CHECKING:
    from lorenz.plugins.hint import SandboxHint
    from lorenz.plugins.model import Mounts
    from lorenz.sandbox.policy import Sandbox

__all__ = [
    "SURVEY_TIMEOUT_SECONDS",
    "child_command",
    "computed_permissions",
    "describe_exit",
    "lint_report",
    "stand_ins_for",
    "survey_source",
]

logger = logging.getLogger("lorenz.isolation")

#: How long importing one plugin in its survey process may take.
SURVEY_TIMEOUT_SECONDS = 30.0


def child_command() -> list[str]:
    """How the host starts a child: this interpreter, this environment."""
    return [sys.executable, "-m", "lorenz.isolation.child"]


def describe_exit(code: int) -> str:
    """``signal 11``, ``exit code 3``."""
    return f"signal {-code}" if code < 0 else f"exit code {code}"


def stand_ins_for(
    plugins: Sequence[tuple[str, str | None, str | None, bool]],
    isolate: Sequence[str],
    sandbox: SandboxHint | None = None,
    *,
    unimported: bool = False,
    mounts: Mounts | None = None,
) -> dict[int, StandIn | PluginFailure]:
    """For each plugin ``(entry point, distribution, version, bundled)`` by index: a
    :class:`StandIn` when the host must not import it, its failure when it failed in its survey
    (the host does not import it either), nothing when the host imports it as usual. Surveys run in
    parallel; with ``sandbox`` (the workflow sandboxes packs) each is confined: a named pack's
    distribution is known only once it was imported, and ``"*"`` matches every surveyed one (none
    is shipped with Lorenz). With ``mounts``, a plugin providing none of the packs the workflow
    mounts unisolated, nor its tracker, stands in too. ``unimported``: every plugin not bundled
    stands in, surveyed under the strict policy whatever the workflow says; so are the surveys of a
    plain workflow (``mounts`` without ``isolate``), which import no third-party plugin it does not
    mount (:func:`~lorenz.plugins.hint.listing_hint`)."""
    if unimported or not isolate:  # listing, or a plain workflow: nothing loosens the strict policy
        sandbox = sandbox or listing_hint()
    sources = {
        index: Source(distribution=dist, version=version, entry_point=name)
        for index, (name, dist, version, bundled) in enumerate(plugins)
        if dist is not None and not bundled
    }
    running: dict[int, tuple[subprocess.Popen[bytes], Sandbox | None, str | None]] = {}
    out: dict[int, StandIn | PluginFailure] = {}
    outcomes: dict[int, tuple[Survey | str, bool]] = {}
    for index, source in sources.items():
        key = _cache_key(source, sandbox)
        cached = _report(survey_cache.load(key) or b"") if key is not None else None
        if isinstance(cached, Survey) and not cached.failures:
            outcomes[index] = (cached, True)
            continue
        try:
            process, confined = _start(source, sandbox)
        except SandboxUnavailable as exc:
            out[index] = _failure(source, str(exc))
            continue
        running[index] = (process, confined, key if confined is not None else None)
    deadline = time.monotonic() + SURVEY_TIMEOUT_SECONDS
    for index, (process, confined, key) in running.items():
        outcomes[index] = (_finish(sources[index], process, deadline, keep=key), confined is not None)
        discard(confined)
    for index, (outcome, was_confined) in sorted(outcomes.items()):
        source = sources[index]
        note = f" (imported confined at discovery: {sandbox.reason})" if was_confined and sandbox else ""
        if isinstance(outcome, str):
            out[index] = _failure(source, outcome + note)
        elif outcome.failures:
            first = outcome.failures[0]
            out[index] = PluginFailure(
                group=first.group,
                name=first.name,
                distribution=first.distribution,
                version=first.version,
                error=first.error + note,
                traceback=first.traceback,
            )
        elif unimported or not _host_needs(outcome, source, isolate, mounts):
            out[index] = StandIn(
                [
                    IsolatedPackStub(
                        pack,
                        source,
                        outcome.permissions.get(pack),
                        settings_dependent=pack in outcome.settings_dependent,
                        listed_specs=outcome.specs.get(pack),
                    )
                    for pack in outcome.packs
                ],
                [TrackerStub(kind, source) for kind in outcome.trackers],
                frozenset(pack for pack in outcome.packs if not is_isolated(pack, source.distribution, isolate)),
                outcome.commands,
            )
    return out


def _host_needs(survey: Survey, source: Source, isolate: Sequence[str], mounts: Mounts | None) -> bool:
    """Whether the host must import the surveyed plugin: for a tracker or call middleware (both run
    in the host) or an unisolated pack, those the workflow names when ``mounts`` says which."""
    if mounts is None:
        in_host = bool(survey.trackers or survey.middleware)
        return in_host or any(not is_isolated(p, source.distribution, isolate) for p in survey.packs)
    if mounts.tracker is not None and mounts.tracker in survey.trackers:
        return True
    if mounts.middleware.intersection(survey.middleware):
        return True
    mounted = [pack for pack in survey.packs if pack in mounts.packs]
    return any(not is_isolated(pack, source.distribution, isolate) for pack in mounted)


def _failure(source: Source, error: str) -> PluginFailure:
    return PluginFailure(
        group=ENTRY_POINT_GROUP,
        name=source.entry_point or "",
        distribution=source.distribution,
        version=source.version,
        error=error,
    )


def survey_source(source: Source) -> Survey | str:
    """What the plugin of ``source`` registers and declares, learnt in a survey child (the caller
    never imports it), or why that failed."""
    process, _ = _start(source)
    return _finish(source, process, time.monotonic() + SURVEY_TIMEOUT_SECONDS)


def computed_permissions(
    source: Source, pack: str, settings: Any, env: dict[str, str], confine: SandboxHint | None = None
) -> Permissions | str:
    """The permissions ``pack`` computes from ``settings`` (its slice, unstructured), in a child
    started like a survey (the host does not import the pack); or why there are none. With
    ``confine``, the child runs under the strict policy and sees only the variables ``settings``
    names (``$NAME``) and ``HOME`` (so that ``~`` resolves as in the host)."""
    try:
        sandbox = _sandbox_for(source, confine)
    except SandboxUnavailable as exc:
        return str(exc)
    if sandbox is not None:
        env = strict_env(env, sandbox, keep={"HOME", *referenced_names(settings)})
    launch = Launch(
        mode="permissions", source=source, pack=pack, settings=settings, sys_path=tuple(sys.path), sandbox=sandbox
    )
    try:
        outcome = _finish(source, _spawn(launch, env), time.monotonic() + SURVEY_TIMEOUT_SECONDS)
    finally:
        discard(sandbox)
    if isinstance(outcome, str):
        return outcome
    return outcome.permissions.get(pack) or Permissions()


def lint_report(source: Source) -> dict[str, Any] | str:
    """``lorenz lint``'s report (``LintReport.to_dict()``) of the packs of ``source``'s plugin,
    made in a child under the strict policy (the caller never imports it); or why there is none."""
    try:
        sandbox = _sandbox_for(source, listing_hint())
    except SandboxUnavailable as exc:
        return str(exc)
    env = _plugin_env()
    launch = Launch(mode="lint", source=source, sys_path=tuple(sys.path), sandbox=sandbox)
    try:
        outcome = _finish(source, _spawn(launch, strict_env(env, sandbox) if sandbox else env), _deadline())
    finally:
        discard(sandbox)
    if isinstance(outcome, str):
        return outcome
    return dict(outcome.lint or {})


def _deadline() -> float:
    return time.monotonic() + SURVEY_TIMEOUT_SECONDS


def _plugin_env() -> dict[str, str]:
    # The workflow's secrets are not known yet (settings need the registries), but the host's own
    # bearer token never belongs to a plugin.
    return {name: value for name, value in os.environ.items() if name != MCP_TOKEN_ENV}


def _sandbox_for(source: Source, confine: SandboxHint | None) -> Sandbox | None:
    if confine is None:
        return None
    return child_sandbox(
        f"plugin {source.entry_point or source.module} ({source.label})",
        fallback=confine.fallback,
        workflow_dir=confine.workflow_dir,
        sys_path=sys.path,
        reason=confine.reason,
        plugin_files=plugin_files(source.entry_point, source.distribution),
    )


def _start(source: Source, confine: SandboxHint | None = None) -> tuple[subprocess.Popen[bytes], Sandbox | None]:
    """A survey child of ``source`` and its policy; raises :class:`SandboxUnavailable`."""
    sandbox = _sandbox_for(source, confine)
    env = _plugin_env()
    if sandbox is not None:
        env = strict_env(env, sandbox)
    launch = Launch(mode="survey", source=source, sys_path=tuple(sys.path), sandbox=sandbox)
    return _spawn(launch, env), sandbox


def _spawn(launch: Launch, env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        child_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    stdin, process.stdin = process.stdin, None  # written here, so that the surveys run side by side
    assert stdin is not None
    with contextlib.suppress(OSError):  # it died already: _finish says how
        stdin.write(encode(launch))
    with contextlib.suppress(OSError):
        stdin.close()
    return process


def _cache_key(source: Source, sandbox: SandboxHint | None) -> str | None:
    """Where a survey of ``source`` confined by ``sandbox`` is kept (unconfined ones are not)."""
    if sandbox is None or source.distribution is None:
        return None
    return survey_cache.cache_key(
        source.distribution,
        source.version,
        source.entry_point,
        reason=sandbox.reason,
        workflow_dir=sandbox.workflow_dir,
        plugin_files=plugin_files(source.entry_point, source.distribution),
    )


def _report(stdout: bytes) -> Survey | str | None:
    """The survey in a child's output, why it failed, or ``None`` when it sent nothing. A survey
    child sends its pack's tools in a second frame: without it (the pack crashed or hung listing
    them), the survey stands alone."""
    try:
        frames = FrameReader(MAX_CONTROL_FRAME_BYTES).feed(stdout)
        if frames and isinstance(frames[0], dict) and frames[0].get("op") == "failed":
            return str(structure(frames[0], Failed).error)
        if frames:
            survey: Survey = structure(frames[0], Survey)
            if len(frames) > 1:
                survey = evolve(survey, specs=structure(frames[1], Survey).specs)
            return survey
    except ProtocolError as exc:
        return f"its survey process sent {exc}"
    return None


def _finish(
    source: Source, process: subprocess.Popen[bytes], deadline: float, *, keep: str | None = None
) -> Survey | str:
    """The survey's report, or why there is none; kept in the cache under ``keep`` when the
    plugin was surveyed whole (no failure, no time-out)."""
    try:
        stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
        late = False
    except subprocess.TimeoutExpired:
        reaper.kill(process)  # and whatever the import started
        try:
            stdout, stderr = process.communicate(timeout=reaper.KEEPER_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            reaper.kill_group(process)
            stdout, stderr = process.communicate()
        late = True
    _log(source, stderr)
    report = _report(stdout)
    if isinstance(report, Survey) and not report.failures and keep is not None and not late:
        survey_cache.store(keep, stdout)
    if report is not None:
        return report
    if late:
        return f"importing it did not finish within {SURVEY_TIMEOUT_SECONDS:g} s (in its survey process)"
    return f"importing it crashed its survey process ({describe_exit(process.returncode)})"


def _log(source: Source, stderr: bytes) -> None:
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.strip():
            logger.warning("lorenz: plugin %s (%s, survey): %s", source.entry_point, source.label, redact_text(line))
