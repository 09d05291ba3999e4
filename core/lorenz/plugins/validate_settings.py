"""Whether settings can work with these plugins: :func:`validate_dispatch_config` (the tracker and
``tools:``) and :func:`check_pack_settings` (what each mounted pack still lacks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from lorenz.settings.errors import ConfigError
from lorenz.settings.model import Settings, TrackerSettings
from lorenz.settings.suggest import did_you_mean, shown
from lorenz.settings.tools import reword_for_instance

from .containment import PluginError, call_plugin

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider, TrackerProvider

    from .registry import ToolRegistry, TrackerRegistry

__all__ = [
    "check_pack_settings",
    "has_tracker",
    "name_unset_variable",
    "needs_tracker_kind",
    "validate_dispatch_config",
]

P = ParamSpec("P")
R = TypeVar("R")

#: Which distribution ships each bundled tracker kind, for the message when it is not installed.
_BUNDLED_TRACKERS = {
    "local": "lorenz-local",
    "jira": "lorenz-jira",
    "jira-mcp": "lorenz-jira",
    "linear": "lorenz-linear",
    "slack": "lorenz-slack",
}


def has_tracker(settings: Settings) -> bool:
    """False for a workflow that configures ``tools:`` and no tracker at all: it only serves packs."""
    return not (settings.tool_options and settings.tracker == TrackerSettings())


def validate_dispatch_config(settings: Settings, trackers: TrackerRegistry, tools: ToolRegistry | None = None) -> None:
    """Check the tracker kind is registered, let its provider veto, then check ``tools:``.

    In order, unless the workflow has no tracker (:func:`has_tracker`): ``tracker.kind is
    required`` / ``unsupported tracker.kind: …`` (naming the distribution to install for a bundled
    kind); the provider's ``validate_dispatch`` (its message about a key whose ``$VAR`` is unset
    becomes :func:`name_unset_variable`'s); then, only when ``tools`` is given, for each
    ``tools.<pack>``: ``unsupported tool pack: …``, ``tools.<pack> is not supported by the
    "<pack>" pack`` (options given to a pack without ``validate_options``), or the pack's own
    ``validate_options``. Raises :class:`ConfigError` with the first problem's message.
    """
    if has_tracker(settings):
        provider = _tracker(settings.tracker.kind, trackers)
        validate = getattr(provider, "validate_dispatch", None)
        if callable(validate):
            try:
                _call(validate, settings)
            except ConfigError as exc:
                reworded = name_unset_variable(str(exc), settings)
                if reworded == str(exc):
                    raise
                raise ConfigError(reworded) from exc
    if tools is None or settings.tool_options is None:
        return
    for name, options in settings.tool_options.items():
        instance = settings.tool_instances.get(name)
        served_by = instance.provider if instance is not None else name
        pack: ToolProvider | None = None
        if served_by == name:
            pack = _call(tools.require, name)
        else:
            pack = tools.get(served_by)
            if pack is None:
                known = tools.names()
                msg = (
                    f"tools.{name}.provider: unsupported tool pack: {shown(served_by)}"
                    f"{did_you_mean(served_by, known)} (known tool packs: {', '.join(known) or 'none'})"
                )
                raise ConfigError(msg)
        validate_options = getattr(pack, "validate_options", None)
        if callable(validate_options):
            try:
                _call(validate_options, options)
            except ConfigError as exc:
                raise ConfigError(reword_for_instance(str(exc), served_by, name)) from exc
        elif options:
            msg = f'tools.{name} is not supported by the "{served_by}" pack'
            raise ConfigError(msg)


def _tracker(kind: str | None, trackers: TrackerRegistry) -> TrackerProvider:
    if kind and trackers.get(kind) is None:
        known = trackers.kinds()
        distribution = _BUNDLED_TRACKERS.get(kind)
        install = (
            f"the {kind} tracker comes with {distribution}: pip install {distribution}"
            if distribution
            else "pip install the plugin that provides it"
        )
        if not known:
            msg = f"unsupported tracker.kind: {shown(kind)} (no tracker plugins are installed; {install})"
            raise ConfigError(msg)
        if distribution:
            msg = f"unsupported tracker.kind: {shown(kind)} (known kinds: {', '.join(known)}; {install})"
            raise ConfigError(msg)
    return _call(trackers.require, kind)


def name_unset_variable(problem: str, settings: Settings) -> str:
    """``<key>: $NAME is not set`` when ``problem`` is about a key whose ``$NAME`` reference
    resolved to nothing (``tracker.api_key is required …`` → ``tracker.api_key: $JIRA_API_KEY is
    not set``); otherwise ``problem`` unchanged."""
    for key, name in settings.unset_variables.items():
        if problem == key or problem.startswith((f"{key} ", f"{key}:")):
            return f"{key}: ${name} is not set"
    return problem


def check_pack_settings(settings: Settings, packs: Sequence[ToolProvider]) -> list[str]:
    """``pack <name>: <problem>`` for each problem a mounted pack's optional ``check_settings`` hook
    reports (a pack whose every call would fail with these settings), in mount order.

    A hook that raises, or returns anything but strings, is reported as a problem of its own.
    """
    problems: list[str] = []
    for pack in packs:
        hook = getattr(pack, "check_settings", None)
        if not callable(hook):
            continue
        owner = f"pack {pack.name}"
        try:
            found = call_plugin(owner, "check_settings", _strings, hook, settings)
        except PluginError as exc:
            problems.append(str(exc))
            continue
        problems.extend(f"{owner}: {name_unset_variable(problem, settings)}" for problem in found)
    return problems


def needs_tracker_kind(settings: Settings, kinds: Sequence[str], keys: Sequence[str]) -> list[str]:
    """``check_settings`` for a pack that reads ``keys`` from a tracker of one of ``kinds``: no
    problem when the workflow's tracker is one, else ``reads <keys> from a <kinds> tracker, but
    tracker.kind is <kind>`` (or ``… but this workflow has no tracker``)."""
    kind = settings.tracker.kind
    if kind in kinds:
        return []
    actual = f"tracker.kind is {kind}" if kind else "this workflow has no tracker"
    return [f"reads {', '.join(keys)} from a {' or '.join(kinds)} tracker, but {actual}"]


def _strings(hook: Callable[[Settings], Any], settings: Settings) -> list[str]:
    found = hook(settings)
    problems = [] if found is None else list(found)
    if not all(isinstance(problem, str) for problem in problems):
        msg = f"check_settings must return problems (strings), got {problems!r:.80}"
        raise TypeError(msg)
    return problems


def _call(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a registry lookup or plugin hook; its message passes through as a ConfigError."""
    try:
        return function(*args, **kwargs)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(str(exc)) from exc
