"""The ``tracker:`` selector and ``trackers:`` bundles → :class:`TrackerSettings`."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import Factory, frozen

from ._kinds import FlexBool, Routes, camel_to_snake, normalize_aliases
from ._structure import structure
from .context import TrackerContext, TrackerLookup
from .errors import ConfigError
from .model import DEFAULT_ACTIVE_STATES, DEFAULT_TERMINAL_STATES, DispatchSettings, TrackerSettings
from .options import UnknownOptionsError, check_url, unknown_options_message
from .secrets import SecretRecorder, resolve_configured_secret, resolve_secret_source, unset_reference
from .suggest import did_you_mean, unknown_keys

__all__ = ["CORE_TRACKER_KEYS", "parse_tracker"]


_ACCEPT_UNROUTED = FlexBool(True)


@frozen(kw_only=True)
class _Dispatch:
    accept_unrouted: FlexBool = _ACCEPT_UNROUTED
    only_routes: Routes | None = None
    route_label_prefix: str = "Lorenz:"


@frozen(kw_only=True)
class _TrackerRecord:
    """The core keys of a tracker record; every other key is a provider option."""

    kind: str | None = None
    provider: str | None = None
    endpoint: str | None = None
    api_key: str | None = None
    assignee: str | None = None
    active_states: tuple[str, ...] | None = None
    terminal_states: tuple[str, ...] | None = None
    dispatch: _Dispatch = Factory(_Dispatch)


CORE_TRACKER_KEYS = frozenset(
    ("kind", "provider", "endpoint", "api_key", "assignee", "active_states", "terminal_states", "dispatch")
)


@frozen
class _Record:
    core: _TrackerRecord
    #: Every key, core ones in snake_case, others verbatim and in order.
    raw: dict[str, Any]


def _validate(raw: Mapping[str, Any], label: str) -> _Record:
    normalized = normalize_aliases(raw, CORE_TRACKER_KEYS)
    core = {key: value for key, value in normalized.items() if key in CORE_TRACKER_KEYS}
    return _Record(structure(core, _TrackerRecord, label), normalized)


def _trimmed(value: str | None) -> str | None:
    return (value or "").strip() or None


def _effective_record(selector: Mapping[str, Any], bundles: Mapping[str, Any]) -> tuple[str | None, _Record]:
    """Pick the record that configures the dispatch tracker and the provider kind it names."""
    if any(not str(name).strip() for name in bundles):
        msg = "trackers names must not be blank"
        raise ConfigError(msg)
    chosen = _validate(selector, "tracker")
    selected = _trimmed(chosen.core.kind)
    if selected is None:
        if bundles:  # a tools-only workflow has no tracker at all, but bundles mean one was meant
            msg = f"tracker.kind is required (it selects one of trackers: {', '.join(map(str, bundles))})"
            raise ConfigError(msg)
        return None, chosen
    if selected in bundles:
        bundle = _validate(bundles[selected], f"trackers.{selected}")
        kind = _trimmed(bundle.core.provider)
        if kind is None:
            msg = f"trackers.{selected}.provider is required"
            raise ConfigError(msg)
        merged = {k: v for k, v in chosen.raw.items() if k not in ("kind", "provider")}
        merged.update({k: v for k, v in bundle.raw.items() if k not in ("kind", "provider")})
        return kind, _validate(merged, f"trackers.{selected}")
    if bundles:
        msg = f"trackers.{selected} is required by tracker.kind"
        raise ConfigError(msg)
    return selected, chosen


def parse_tracker(
    selector: Mapping[str, Any],
    bundles: Mapping[str, Any],
    *,
    env: Mapping[str, str],
    trackers: TrackerLookup,
    base_dir: Path,
    record_secret: SecretRecorder,
    unset: dict[str, str],
) -> TrackerSettings:
    """Select, merge, alias and resolve the dispatch tracker's settings.

    Each whole-value ``$VAR`` that resolves to nothing is noted in ``unset`` under its key.
    """
    kind, record = _effective_record(selector, bundles)
    core = record.core
    provider = trackers.get(kind)
    fallbacks: Mapping[str, str] = getattr(provider, "env_fallbacks", None) or {}

    api_key = resolve_configured_secret(
        core.api_key, env, fallback_env_name=fallbacks.get("api_key"), register=record_secret
    )
    assignee, from_op = resolve_secret_source(core.assignee, env, fallback_env_name=fallbacks.get("assignee"))
    if from_op:
        record_secret(assignee)
    for key, configured, resolved in (("api_key", core.api_key, api_key), ("assignee", core.assignee, assignee)):
        if not resolved and (name := unset_reference(configured, env)):
            unset[f"tracker.{key}"] = name
    if core.endpoint is not None:
        check_url(core.endpoint, "tracker.endpoint")
    endpoint = core.endpoint if core.endpoint is not None else getattr(provider, "default_endpoint", None)

    options = {key: copy.deepcopy(value) for key, value in record.raw.items() if key not in CORE_TRACKER_KEYS}
    if kind is None:
        _reject_core_key_typos(options)
    if provider is not None:
        options = _provider_options(
            provider, options, env=env, base_dir=base_dir, record_secret=record_secret, unset=unset
        )

    return TrackerSettings(
        kind=kind,
        endpoint=endpoint,
        api_key=api_key,
        assignee=assignee,
        active_states=core.active_states if core.active_states is not None else DEFAULT_ACTIVE_STATES,
        terminal_states=core.terminal_states if core.terminal_states is not None else DEFAULT_TERMINAL_STATES,
        dispatch=_dispatch(core.dispatch),
        options=options,
    )


def _provider_options(
    provider: object,
    options: dict[str, Any],
    *,
    env: Mapping[str, str],
    base_dir: Path,
    record_secret: SecretRecorder,
    unset: dict[str, str],
) -> dict[str, Any]:
    aliases: Mapping[str, str] = getattr(provider, "config_aliases", None) or {}
    for alias, canonical in aliases.items():
        if alias in options:
            options[canonical] = options.pop(alias)
    parse_options = getattr(provider, "parse_options", None)
    if not callable(parse_options):
        return options

    def resolve_secret(value: str | None, fallback_env: str | None = None, /) -> str | None:
        return resolve_configured_secret(value, env, fallback_env_name=fallback_env, register=record_secret)

    context = TrackerContext(env=env, cwd=base_dir, resolve_secret=resolve_secret)
    try:
        parsed = dict(parse_options(options, context) or {})
    except UnknownOptionsError as exc:
        # suggest what the workflow may write: a core key, or a provider key as its alias spells it
        spelled = {canonical: alias for alias, canonical in aliases.items()}
        candidates = [*sorted(CORE_TRACKER_KEYS), *(spelled.get(key, key) for key in exc.known)]
        raise ConfigError(unknown_options_message(exc.kind, exc.unknown, candidates)) from None
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(str(exc)) from exc
    for key, value in options.items():
        if not parsed.get(key) and (name := unset_reference(value, env)):
            unset[f"tracker.{camel_to_snake(str(key))}"] = name
    return parsed


def _reject_core_key_typos(options: Mapping[str, Any]) -> None:
    """Without a kind no provider owns the other keys; one very close to a core key is a typo
    (``knd``); the others wait for ``tracker.kind is required``."""
    typos = [str(key) for key in options if did_you_mean(str(key), CORE_TRACKER_KEYS, cutoff=0.8)]
    if typos:
        msg = f"tracker contains unsupported keys: {unknown_keys(typos, sorted(CORE_TRACKER_KEYS))}"
        raise ConfigError(msg)


def _dispatch(raw: _Dispatch) -> DispatchSettings:
    only_routes: tuple[str, ...] | None = None
    if raw.only_routes is not None:
        routes: dict[str, None] = {}
        for route in raw.only_routes:
            normalized = route.strip().lower()
            if not normalized:
                msg = "tracker.dispatch.only_routes must not contain blank routes"
                raise ConfigError(msg)
            routes.setdefault(normalized)
        only_routes = tuple(routes)
    return DispatchSettings(
        accept_unrouted=raw.accept_unrouted,
        only_routes=only_routes,
        route_label_prefix=raw.route_label_prefix.strip(),
    )
