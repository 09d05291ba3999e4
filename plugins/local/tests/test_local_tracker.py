"""The `local` tracker: options, dispatch validation, the runtime client and the board resolver."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from lorenz import ConfigError, Settings, TrackerContext, TrackerSettings, discover
from lorenz.testing import parse_config, validate_dispatch_config
from lorenz_local import plugin
from lorenz_local.client import LocalTrackerClient
from lorenz_local.paths import resolve_board_dir
from lorenz_local.store import BoardStore
from lorenz_local.tracker import LocalTrackerProvider

pytestmark = pytest.mark.anyio

ONLY_LOCAL = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}


def settings_for(config: dict[str, Any], tmp_path: Path, env: dict[str, str] | None = None) -> Settings:
    trackers = discover(env=ONLY_LOCAL).trackers
    return parse_config(config, env=env or {}, trackers=trackers, base_dir=tmp_path)


def client_for(tracker: dict[str, Any], tmp_path: Path, *, env: dict[str, str] | None = None) -> LocalTrackerClient:
    env = env or {}
    settings = settings_for({"tracker": {"kind": "local", **tracker}}, tmp_path, env)
    return LocalTrackerProvider().create_client(settings, TrackerContext(env=env, cwd=tmp_path))


def test_entry_point_discovery_finds_tracker_and_pack() -> None:
    """The installed distribution registers tracker `local` and pack `local` through its entry point."""
    discovery = discover(env=ONLY_LOCAL)
    assert discovery.failures == ()
    assert discovery.trackers.get("local") is plugin.TRACKER
    assert discovery.tools.get("local") is plugin.PACK
    info = next(p for p in discovery.plugins if p.distribution == "lorenz-local")
    assert (info.packs, info.trackers) == (("local",), ("local",))


def test_options_default_path_and_prefix(tmp_path: Path) -> None:
    """With no options the board is `.lorenz/local` with prefix `BOARD-`."""
    settings = settings_for({"tracker": {"kind": "local"}}, tmp_path)
    assert dict(settings.tracker.options) == {"path": ".lorenz/local", "idPrefix": "BOARD-"}


def test_id_prefix_alias_and_camel_case_key(tmp_path: Path) -> None:
    """`id_prefix` is an alias of `idPrefix`; both are accepted."""
    snake = settings_for({"tracker": {"kind": "local", "path": "b", "id_prefix": "XXX-"}}, tmp_path)
    camel = settings_for({"tracker": {"kind": "local", "path": "b", "idPrefix": "YYY_"}}, tmp_path)
    assert snake.tracker.options["idPrefix"] == "XXX-"
    assert camel.tracker.options["idPrefix"] == "YYY_"


def test_invalid_prefix_message(tmp_path: Path) -> None:
    """A bad prefix is refused with the exact message."""
    with pytest.raises(ConfigError) as info:
        settings_for({"tracker": {"kind": "local", "id_prefix": "bad/prefix"}}, tmp_path)
    assert str(info.value) == (
        'tracker.id_prefix "bad/prefix" is invalid: must start alphanumeric, then only letters, digits, "_" or "-"'
    )


def test_unknown_and_mistyped_options(tmp_path: Path) -> None:
    """Unknown keys are listed in order; a non-string path is refused."""
    with pytest.raises(ConfigError, match=r'^unsupported tracker option\(s\) for kind "local": surprise, other$'):
        settings_for({"tracker": {"kind": "local", "surprise": 1, "other": 2}}, tmp_path)
    with pytest.raises(ConfigError, match=r"^tracker.path must be a string$"):
        settings_for({"tracker": {"kind": "local", "path": 3}}, tmp_path)


def test_validate_dispatch_requires_a_path(tmp_path: Path) -> None:
    """A blank path fails dispatch validation; a configured one passes."""
    discovery = discover(env=ONLY_LOCAL)
    blank = settings_for({"tracker": {"kind": "local", "path": ""}}, tmp_path)
    with pytest.raises(ValueError, match=r"^tracker.path \(board directory\) is required for the local tracker$"):
        validate_dispatch_config(blank, discovery.trackers, discovery.tools)
    with pytest.raises(ValueError, match="tracker.path"):
        LocalTrackerProvider().validate_dispatch(Settings(tracker=TrackerSettings(kind="local")))
    good = settings_for({"tracker": {"kind": "local", "path": "board"}}, tmp_path)
    validate_dispatch_config(good, discovery.trackers, discovery.tools)


def test_provider_contract() -> None:
    """Kind `local`, the id_prefix alias, and the `local` pack mounted by default."""
    provider = LocalTrackerProvider()
    assert provider.kind == "local"
    assert provider.config_aliases == {"id_prefix": "idPrefix"}
    assert provider.default_tool_packs(Settings()) == ["local"]
    assert not hasattr(provider, "env_fallbacks")
    assert not hasattr(provider, "default_endpoint")


async def test_client_fetches_candidates_by_state_and_id(tmp_path: Path) -> None:
    """Candidates are the active states; by-state and by-id lookups work."""
    board = tmp_path / "board"
    store = BoardStore(board)
    store.create("Active", status="Todo")
    store.create("Done", status="Done")
    client = client_for({"path": str(board), "active_states": ["Todo"], "terminal_states": ["Done"]}, tmp_path)
    assert [issue.id for issue in await client.fetch_candidate_issues()] == ["BOARD-1"]
    assert [issue.id for issue in await client.fetch_issues_by_states(["Done"])] == ["BOARD-2"]
    assert [issue.title for issue in await client.fetch_issues_by_ids(["BOARD-2"])] == ["Done"]


async def test_active_states_match_case_insensitively(tmp_path: Path) -> None:
    """A `todo` file is a candidate for active state `Todo`."""
    (tmp_path / "BOARD-1.md").write_text("---\nstatus: todo\n---\n# lower\n")
    client = client_for({"path": str(tmp_path), "active_states": ["Todo"]}, tmp_path)
    assert [issue.title for issue in await client.fetch_candidate_issues()] == ["lower"]


async def test_malformed_file_is_skipped_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A malformed BOARD-99 is logged once, naming the file, and the poll still succeeds."""
    BoardStore(tmp_path).create("Active")
    (tmp_path / "BOARD-99.md").write_text("---\nstatus: [broken\n---\n")
    client = client_for({"path": str(tmp_path), "active_states": ["Todo"]}, tmp_path)
    with caplog.at_level(logging.WARNING, logger="lorenz_local"):
        candidates = await client.fetch_candidate_issues()
    assert [issue.id for issue in candidates] == ["BOARD-1"]
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "local tracker: skipping malformed board file BOARD-99 in " in warnings[0]
    assert str(tmp_path) in warnings[0]


async def test_tilde_path_uses_home_from_env(tmp_path: Path) -> None:
    """`~/board` resolves against HOME from the parser's env, not the working directory."""
    home = tmp_path / "home"
    BoardStore(home / "board").create("FromTilde")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    client = client_for({"path": "~/board"}, elsewhere, env={"HOME": str(home)})
    assert [issue.title for issue in await client.fetch_candidate_issues()] == ["FromTilde"]


async def test_env_variable_in_path(tmp_path: Path) -> None:
    """`$BOARD_ROOT/board` substitutes the variable from the env."""
    BoardStore(tmp_path / "root" / "board").create("FromVar")
    client = client_for({"path": "$BOARD_ROOT/board"}, tmp_path, env={"BOARD_ROOT": str(tmp_path / "root")})
    assert [issue.title for issue in await client.fetch_candidate_issues()] == ["FromVar"]


async def test_custom_prefix_board(tmp_path: Path) -> None:
    """The client reads a board of the configured prefix."""
    BoardStore(tmp_path, id_prefix="OPS-").create("Ops")
    client = client_for({"path": str(tmp_path), "id_prefix": "OPS-"}, tmp_path)
    assert [issue.id for issue in await client.fetch_candidate_issues()] == ["OPS-1"]


@pytest.mark.parametrize(
    ("configured", "env", "expected"),
    [
        (None, {}, "/home/user/project/.lorenz/local"),
        ("~/board", {"HOME": "/home/operator"}, "/home/operator/board"),
        ("~", {"HOME": "/home/operator"}, "/home/operator"),
        ("~/board", {"USERPROFILE": "/users/op"}, "/users/op/board"),
        ("$BOARD_ROOT/board", {"BOARD_ROOT": "/srv/boards"}, "/srv/boards/board"),
        ("${BOARD_ROOT}/board", {"BOARD_ROOT": "/srv/boards"}, "/srv/boards/board"),
        ("$MISSING/board", {}, "/board"),
        ("boards/team", {}, "/home/user/project/boards/team"),
        ("boards/../team", {}, "/home/user/project/team"),
        ("/abs/board", {}, "/abs/board"),
        ("~user/board", {"HOME": "/h"}, "/home/user/project/~user/board"),
        ("a~/b", {"HOME": "/h"}, "/home/user/project/a~/b"),
    ],
)
def test_resolve_board_dir(configured: str | None, env: dict[str, str], expected: str) -> None:
    """Env substitution, then `~`, then relative-to-cwd, as the one shared resolver."""
    assert str(resolve_board_dir(configured, cwd="/home/user/project", env=env)) == expected
