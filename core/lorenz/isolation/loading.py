"""What an isolated pack's process does before it serves: import the one plugin of a source
(checked as discovery checks it in the host), survey what it registers, compute its permissions,
lint its packs, or start its pack and check it as mounting does."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

from lorenz.contracts import ToolSpec
from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.mounting.mount import _validate_options, checked_tool_specs
from lorenz.mounting.offers import offered
from lorenz.plugins.checks import normalize_distribution
from lorenz.plugins.containment import call_plugin
from lorenz.plugins.declared import depends_on_settings, permissions_of
from lorenz.plugins.discovery import load_plugin, make_manager
from lorenz.plugins.model import Discovery
from lorenz.plugins.registration import build_registries
from lorenz.sandbox.permissions import Permissions
from lorenz.settings.errors import ConfigError
from lorenz.settings.model import Settings

from .protocol import CONVERTER, DisabledEntry, Failed, Launch, Ready, Source, Survey, SurveyFailure

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider

__all__ = ["computed_permissions", "linted", "listed", "load", "start", "survey"]


def _entry_point(source: Source, name: str) -> Any:
    from importlib.metadata import entry_points

    wanted = normalize_distribution(source.distribution or "")
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
        dist = getattr(ep, "dist", None)
        found = (dist.metadata["Name"] or dist.name) if dist is not None else ""
        if normalize_distribution(found) == wanted:
            return ep
    msg = f"no entry point {source.entry_point!r} of {source.label} in {ENTRY_POINT_GROUP}"
    raise LookupError(msg)


def load(source: Source) -> Discovery:
    """What the one plugin of ``source`` registers, checked as discovery checks it in the host."""
    pm = make_manager()
    name = source.entry_point or source.module or "?"
    if source.entry_point is not None:
        loader = _entry_point(source, source.entry_point).load
    else:
        module = source.module or ""

        def loader() -> object:
            return importlib.import_module(module)

    failure = load_plugin(pm, loader, name=name, entry_point=name, dist=source.distribution, version=source.version)
    origins = {name: (source.distribution, source.version)}
    return build_registries(pm, origins=origins, failures=[failure] if failure is not None else [])


def survey(source: Source) -> tuple[Survey, Discovery]:
    """What the plugin of ``source`` registers and declares, and its discovery (whose tools
    :func:`listed` lists after the survey is sent: a pack that crashes listing them costs its
    listing, not its survey)."""
    discovery = load(source)
    report = Survey(
        op="survey",
        packs=tuple(pack for info in discovery.plugins for pack in info.packs),
        trackers=tuple(kind for info in discovery.plugins for kind in info.trackers),
        middleware=tuple(name for info in discovery.plugins for name in info.extensions),
        commands={command.name.strip(): str(command.help) for command in discovery.commands},
        failures=tuple(CONVERTER.structure(failure.to_dict(), SurveyFailure) for failure in discovery.failures),
        permissions={pack.name: declared for pack in discovery.tools if (declared := permissions_of(pack)) is not None},
        settings_dependent=tuple(pack.name for pack in discovery.tools if depends_on_settings(pack)),
    )
    return report, discovery


def listed(discovery: Discovery) -> Survey:
    """Each pack's tools, listed without settings and checked as mounting checks them (a survey
    frame with only ``specs``)."""
    out: dict[str, tuple[ToolSpec, ...]] = {}
    for pack in discovery.tools:
        try:
            out[pack.name] = tuple(call_plugin(f"pack {pack.name}", "tool_specs", checked_tool_specs, pack, Settings()))
        except Exception:  # listed as failing when asked for, as a pack in the host would be
            continue
    return Survey(op="survey", specs=out)


def linted(source: Source) -> Survey:
    """``lorenz lint``'s report of what the plugin of ``source`` registers."""
    from lorenz.authoring.lint import lint_discovery  # goes up on purpose (docs/architecture.md): only a lint child

    discovery = load(source)
    packs = tuple(pack for info in discovery.plugins for pack in info.packs)
    return Survey(op="survey", packs=packs, lint=lint_discovery(discovery).to_dict())


def computed_permissions(launch: Launch) -> Survey | Failed:
    """The permissions ``launch.pack`` computes from ``launch.settings`` (its settings slice)."""
    settings: Settings = CONVERTER.structure(launch.settings, Settings)
    name = launch.pack or ""
    pack = load(launch.source).tools.get(name)
    if pack is None:
        return Failed(op="failed", error=f"{launch.source.label} registers no pack named {name}")
    try:
        declared = permissions_of(pack, settings) or Permissions()
    except ValueError as exc:
        return Failed(op="failed", error=str(exc))
    return Survey(op="survey", packs=(name,), permissions={name: declared})


def disabled_entries(pack: ToolProvider, settings: Settings) -> tuple[DisabledEntry, ...]:
    """The pack's optional ``disabled_tools(settings)`` (muted on the landing page); a pack bug
    here costs the listing, not the pack."""
    hook = getattr(pack, "disabled_tools", None)
    if not callable(hook):
        return ()
    try:
        return tuple(
            DisabledEntry(
                spec=entry.spec, reason=str(entry.reason), hint=entry.hint, since=getattr(entry, "since", None)
            )
            for entry in hook(settings)
            if isinstance(getattr(entry, "spec", None), ToolSpec)
        )
    except Exception:
        return ()


def start(launch: Launch) -> tuple[Ready | Failed, ToolProvider | None, Settings]:
    """Import the pack and check it as mounting does: its options, then its tools."""
    settings: Settings = CONVERTER.structure(launch.settings, Settings)
    discovery = load(launch.source)
    name = launch.pack or ""
    pack = discovery.tools.get(name)
    if pack is None:
        failure = discovery.failure_for_pack(name) or (discovery.failures[0] if discovery.failures else None)
        error = failure.error if failure is not None else f"{launch.source.label} registers no pack named {name}"
        return Failed(op="failed", error=error, traceback=getattr(failure, "traceback", None)), None, settings
    try:
        _validate_options(pack, name, (settings.tool_options or {}).get(name, {}))
        specs = call_plugin(f"pack {name}", "tool_specs", checked_tool_specs, pack, settings)
    except ConfigError as exc:
        return Ready(op="ready", pid=os.getpid(), options_error=str(exc)), None, settings
    except Exception as exc:
        return Failed(op="failed", error=str(exc)), None, settings
    ready = Ready(
        op="ready",
        pid=os.getpid(),
        specs=tuple(specs),
        validates_arguments=bool(getattr(pack, "validates_arguments", False)),
        skills=tuple(str(skill) for skill in getattr(pack, "skills", None) or ()),
        disabled=disabled_entries(pack, settings),
        **_offers(pack, settings),
    )
    return ready, pack, settings


def _offers(pack: ToolProvider, settings: Settings) -> dict[str, Any]:
    """What the pack serves besides tools, as mounting collects it (a hook that raises, or a URI
    declared twice, serves none: said on stderr, which the host logs), and its asking tools."""
    found: dict[str, Any] = {}
    try:
        offers = offered([pack], settings)
        resources = [spec for spec, _ in offers.resources] + [spec for spec, _, _ in offers.templates]
        found |= {"resources": tuple(resources), "prompts": tuple(spec for spec, _ in offers.prompts)}
    except Exception as exc:
        print(f"lorenz: pack {pack.name} serves no resources or prompts: {exc}", file=sys.stderr)
    asking = getattr(pack, "client_input_tools", None)
    if callable(asking):
        with contextlib.suppress(Exception):  # only for lorenz check's warning
            found["asking"] = tuple(str(name) for name in asking(settings))
    return found
