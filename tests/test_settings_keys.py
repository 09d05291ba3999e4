"""Every WORKFLOW.md key is checked (issue 13): unknown keys at each level, did-you-mean, the daemon's
sections and deprecations as warnings."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lorenz.contracts import TrackerContext
from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import ConfigError, Settings, load_settings, parse_config
from lorenz.settings.options import (
    UnknownOptionsError,
    reject_unknown_keys,
    reject_unknown_options,
    string_option,
)
from lorenz.settings.parse import OTHER_HOST_KEYS
from lorenz.settings.suggest import did_you_mean, unknown_keys


class Board:
    """A provider declaring its keys through `reject_unknown_options`, with a snake alias for one."""

    kind = "board"
    config_aliases: Mapping[str, str] = {"id_prefix": "idPrefix"}

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, ["path", "idPrefix", "colorScheme"], self.kind)
        return {key: string_option(options, key) for key in options}

    def create_client(self, settings: Settings, context: TrackerContext) -> Any:
        raise NotImplementedError


class Lenient:
    """A provider whose `parse_options` keeps whatever it is given."""

    kind = "lenient"

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        return dict(options)

    def create_client(self, settings: Settings, context: TrackerContext) -> Any:
        raise NotImplementedError


def parse(config: Mapping[str, Any]) -> Settings:
    trackers = TrackerRegistry()
    trackers.register(Board())
    trackers.register(Lenient())
    return parse_config(config, env={}, trackers=trackers, base_dir=Path())


def error(config: Mapping[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse(config)
    return str(info.value)


def test_did_you_mean() -> None:
    """The closest candidate is suggested, nothing when none is close; each key gets its own."""
    assert did_you_mean("toolz", ["tracker", "tools"]) == ' (did you mean "tools"?)'
    assert did_you_mean("zzz", ["tracker", "tools"]) == ""
    assert unknown_keys(["prot", "zzz", "hots"], ["host", "port"]) == (
        'prot (did you mean "port"?), zzz, hots (did you mean "host"?)'
    )


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("toolz", 'unknown top-level key "toolz" (did you mean "tools"?)'),
        ("sever", 'unknown top-level key "sever" (did you mean "server"?)'),
        ("trackr", 'unknown top-level key "trackr" (did you mean "tracker"?)'),
        ("Tools", 'unknown top-level key "Tools" (did you mean "tools"?)'),
        ("pollling", 'unknown top-level key "pollling" (did you mean "polling"?)'),
        ("banana", 'unknown top-level key "banana" (known keys: server, tools, tracker, trackers)'),
    ],
)
def test_unknown_top_level_key(key: str, message: str) -> None:
    """An unknown top-level key is an error naming it, before anything else is checked."""
    assert error({key: {"kind": "x"}, "tracker": {"kind": "board", "bad": 1}}) == message


def test_unknown_top_level_key_comes_before_missing_kind() -> None:
    """`trackr:` names `trackr` instead of saying `tracker.kind is required`."""
    assert error({"trackr": {"kind": "board"}}) == 'unknown top-level key "trackr" (did you mean "tracker"?)'


@pytest.mark.parametrize("key", [*OTHER_HOST_KEYS, "statusOverrides"])
def test_daemon_sections_warn(key: str) -> None:
    """Sections the daemon reads are accepted, with one warning each, in file order."""
    settings = parse({key: {"anything": 1}, "tracker": {"kind": "board"}})
    assert settings.warnings == (f'top-level key "{key}" is read by the Lorenz daemon; this host ignores it',)


def test_deprecations_warn_after_daemon_keys() -> None:
    """A deprecated flat-shape key is a warning with the deprecation table's message."""
    settings = parse({"polling": {}, "tracker": {"kind": "board", "path": "./b", "idPrefix": "B-"}})
    assert settings.warnings == (
        'top-level key "polling" is read by the Lorenz daemon; this host ignores it',
        "`tracker.path` is deprecated; use `trackers.board.path` instead. Provider options under `tracker` "
        "(flat shape) are deprecated; move them into a `trackers.<name>` bundle with `provider:` selected by "
        "`tracker.kind`.",
        "`tracker.id_prefix` is deprecated; use `trackers.board.id_prefix` instead. Provider options under "
        "`tracker` (flat shape) are deprecated; move them into a `trackers.<name>` bundle with `provider:` "
        "selected by `tracker.kind`.",
    )
    assert parse({"tracker": {"kind": "b"}, "trackers": {"b": {"provider": "board", "path": "./b"}}}).warnings == ()


def test_loaded_warnings_name_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a file, each warning starts with the file's name (relative to the working directory)."""
    path = tmp_path / "WORKFLOW.md"
    path.write_text("---\ntracker: {kind: memory}\nagent: {max_turns: 3}\n---\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    settings = load_settings(path, env={}, trackers=TrackerRegistry())
    assert settings.warnings == (
        'WORKFLOW.md: top-level key "agent" is read by the Lorenz daemon; this host ignores it',
    )


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"prot": 1}, 'server contains unsupported keys: prot (did you mean "port"?)'),
        ({"hots": "x", "zeta": 1}, 'server contains unsupported keys: hots (did you mean "host"?), zeta'),
        ({"tokens": [{"tokn": "abc"}]}, 'server.tokens.0 contains unsupported keys: tokn (did you mean "token"?)'),
        # a wrong type still comes before an unknown key
        ({"host": 5, "prot": 1}, "server.host must be a string"),
    ],
)
def test_server_typos(server: Mapping[str, Any], message: str) -> None:
    """Strict sections suggest the closest field."""
    assert error({"tracker": {"kind": "board"}, "server": server}) == message


def test_dispatch_typo() -> None:
    """`tracker.dispatch` is strict too."""
    assert error({"tracker": {"kind": "board", "dispatch": {"acept_unrouted": True}}}) == (
        'tracker.dispatch contains unsupported keys: acept_unrouted (did you mean "accept_unrouted"?)'
    )


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("pth", "path"),
        ("id_prefx", "id_prefix"),  # the alias, as the workflow spells it
        ("colorSchem", "colorScheme"),  # no alias: the provider's own spelling
        ("api_kye", "api_key"),  # a core tracker key
        ("activ_states", "active_states"),
    ],
)
def test_provider_option_typos_suggest_the_workflow_spelling(key: str, suggestion: str) -> None:
    """Keys the provider does not know are errors suggesting a key the workflow can write."""
    bundle = {"tracker": {"kind": "main"}, "trackers": {"main": {"provider": "board", key: "x"}}}
    assert error(bundle) == f'unsupported tracker option(s) for kind "board": {key} (did you mean "{suggestion}"?)'


def test_reject_unknown_options_alone_suggests_known_keys() -> None:
    """Called outside a workflow parse, the helper suggests among its own known keys."""
    with pytest.raises(UnknownOptionsError) as info:
        reject_unknown_options({"pth": 1, "other": 2}, ["path"], "board")
    assert str(info.value) == 'unsupported tracker option(s) for kind "board": pth (did you mean "path"?), other'
    assert (info.value.kind, info.value.unknown, info.value.known) == ("board", ("pth", "other"), ("path",))


def test_lenient_provider_keeps_its_options() -> None:
    """A provider that does not declare its keys is not second-guessed."""
    assert parse({"tracker": {"kind": "lenient", "api_kye": "x"}}).tracker.options == {"api_kye": "x"}


def test_kindless_tracker_typo_of_a_core_key() -> None:
    """Without a kind no provider owns other keys: one close to a core key is a typo."""
    assert error({"tracker": {"knd": "board"}}) == 'tracker contains unsupported keys: knd (did you mean "kind"?)'
    # anything else waits for the kind check (`tracker.kind is required`)
    assert parse({"tracker": {"path": "./b"}}).tracker.kind is None


def test_reject_unknown_keys_for_pack_options() -> None:
    """`tools.<pack>` validators name the key, suggesting a close one or listing the known ones."""
    reject_unknown_keys({"path": "x"}, ("path", "id_prefix"), "tools.acme")
    with pytest.raises(ConfigError, match=r'^tools\.acme\.pth is not supported \(did you mean "path"\?\)$'):
        reject_unknown_keys({"path": "x", "pth": "y"}, ("path", "id_prefix"), "tools.acme")
    with pytest.raises(ConfigError, match=r"^tools\.acme\.zzz is not supported \(known keys: path, id_prefix\)$"):
        reject_unknown_keys({"zzz": 1}, ("path", "id_prefix"), "tools.acme")
