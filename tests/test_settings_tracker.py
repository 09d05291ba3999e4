"""The `tracker:` selector, `trackers:` bundles and provider hooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from lorenz.contracts import TrackerContext
from lorenz.issue import Issue
from lorenz.plugins.registry import TrackerRegistry
from lorenz.plugins.validate_settings import validate_dispatch_config
from lorenz.settings import ConfigError, Settings, parse_config, resolve_env_reference
from lorenz.settings.model import DEFAULT_ACTIVE_STATES, DEFAULT_TERMINAL_STATES
from lorenz.settings.options import reject_unknown_options, string_list_option, string_option


class _Client:
    async def fetch_candidate_issues(self) -> list[Issue]:
        return []

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        return []


class LocalProvider:
    """A `local`-like board: `path` and `idPrefix` (alias `id_prefix`)."""

    kind = "local"
    config_aliases: Mapping[str, str] = {"id_prefix": "idPrefix"}

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, ["path", "idPrefix"], self.kind)
        parsed = {key: string_option(options, key) for key in ("path", "idPrefix")}
        return {key: value for key, value in parsed.items() if value is not None}

    def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
        return _Client()


class MemoryProvider:
    """A `memory`-like tracker without options."""

    kind = "memory"

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, [], self.kind)
        return {}

    def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
        return _Client()


class LinearProvider:
    """A `linear`-like tracker with API key and assignee env fallbacks."""

    kind = "linear"
    config_aliases: Mapping[str, str] = {"project_slug": "projectSlug"}
    env_fallbacks: Mapping[str, str] = {"api_key": "LINEAR_API_KEY", "assignee": "LINEAR_ASSIGNEE"}
    default_endpoint = "https://api.linear.example/graphql"

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, ["projectSlug"], self.kind)
        slug = string_option(options, "projectSlug")
        return {} if slug is None else {"projectSlug": resolve_env_reference(slug, context.env)}

    def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
        return _Client()


class JiraProvider:
    """A `jira`-like tracker resolving its own options through the context."""

    kind = "jira"
    config_aliases: Mapping[str, str] = {"base_url": "baseUrl", "project_keys": "projectKeys"}
    env_fallbacks: Mapping[str, str] = {"api_key": "JIRA_API_KEY"}

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, ["baseUrl", "email", "projectKeys"], self.kind)
        assert context.resolve_secret is not None
        base_url = resolve_env_reference(string_option(options, "baseUrl") or "", context.env)
        return {
            "baseUrl": base_url or context.env.get("JIRA_BASE_URL"),
            "email": context.resolve_secret(string_option(options, "email"), "JIRA_EMAIL"),
            "projectKeys": string_list_option(options, "projectKeys"),
        }

    def validate_dispatch(self, settings: Settings) -> None:
        for key, label in (("baseUrl", "base_url"), ("email", "email")):
            if not settings.tracker.options.get(key):
                msg = f"tracker.{label} is required for kind jira"
                raise ValueError(msg)
        if not settings.tracker.api_key:
            msg = "tracker.api_key is required for kind jira"
            raise ValueError(msg)

    def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
        return _Client()


class NotionProvider:
    """A third-party tracker written against the contract only (item 86)."""

    kind = "notion"
    config_aliases: Mapping[str, str] = {"database_id": "databaseId"}
    env_fallbacks: Mapping[str, str] = {"api_key": "NOTION_API_KEY"}
    default_endpoint = "https://api.notion.example/v1"

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, ["databaseId"], self.kind)
        database = string_option(options, "databaseId")
        return {} if database is None else {"databaseId": database}

    def validate_dispatch(self, settings: Settings) -> None:
        if not settings.tracker.api_key:
            msg = "tracker.api_key is required for kind notion (or set NOTION_API_KEY)"
            raise ValueError(msg)

    def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
        return _Client()

    def project_url(self, settings: Settings) -> str | None:
        return f"https://notion.example/{settings.tracker.options['databaseId']}"


def registry(*providers: Any) -> TrackerRegistry:
    trackers = TrackerRegistry()
    for provider in providers:
        trackers.register(provider)
    return trackers


ALL = (LocalProvider(), MemoryProvider(), LinearProvider(), JiraProvider())


def parse(config: Mapping[str, Any], env: Mapping[str, str] | None = None, trackers: Any = None) -> Settings:
    return parse_config(
        config, env=env or {}, trackers=trackers if trackers is not None else registry(*ALL), base_dir=Path("/w")
    )


def test_bundle_selects_provider_and_resolves_env() -> None:
    """A bundle's provider becomes the kind, and `$VAR` api_key/assignee resolve from env (item 62)."""
    settings = parse(
        {
            "tracker": {"kind": "dispatch"},
            "trackers": {
                "dispatch": {
                    "provider": "linear",
                    "api_key": "$LINEAR_API_KEY",
                    "project_slug": "mono",
                    "assignee": "$LINEAR_ASSIGNEE",
                }
            },
        },
        env={"LINEAR_API_KEY": "lin-key", "LINEAR_ASSIGNEE": "me@example.com"},
    )
    assert settings.tracker.kind == "linear"
    assert settings.tracker.api_key == "lin-key"
    assert settings.tracker.assignee == "me@example.com"
    assert settings.tracker.options == {"projectSlug": "mono"}
    assert settings.tracker.endpoint == "https://api.linear.example/graphql"


def test_env_fallbacks_fill_unset_keys() -> None:
    """Unset api_key and assignee fall back to the provider's env variables."""
    settings = parse({"tracker": {"kind": "linear"}}, env={"LINEAR_API_KEY": "k-1", "LINEAR_ASSIGNEE": "amy"})
    assert (settings.tracker.api_key, settings.tracker.assignee) == ("k-1", "amy")
    assert "k-1" in settings.secrets
    assert "amy" not in settings.secrets


def test_empty_env_reference_falls_back() -> None:
    """`$EMPTY` that resolves to "" falls back to the provider env variable (item 63)."""
    settings = parse(
        {"tracker": {"kind": "linear", "api_key": "$EMPTY_TOKEN", "assignee": "$EMPTY_TOKEN"}},
        env={"EMPTY_TOKEN": "", "LINEAR_API_KEY": "fallback-key", "LINEAR_ASSIGNEE": "fallback-user"},
    )
    assert settings.tracker.api_key == "fallback-key"
    assert settings.tracker.assignee == "fallback-user"


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_other_kinds_ignore_linear_env(kind: str) -> None:
    """Fallbacks apply only to the selected provider: local/memory ignore LINEAR_* (item 64)."""
    settings = parse(
        {"tracker": {"kind": kind}}, env={"LINEAR_API_KEY": "op://vault/never/read", "LINEAR_ASSIGNEE": "x"}
    )
    assert settings.tracker.api_key is None
    assert settings.tracker.assignee is None
    assert settings.secrets == frozenset()


def test_jira_bundle_resolves_through_context() -> None:
    """parse_options resolves env-backed options; its secrets are recorded; dispatch validates (item 67)."""
    env = {"JIRA_BASE_URL": "https://jira.example", "JIRA_EMAIL": "bot@example.com", "JIRA_API_KEY": "jira-token"}
    trackers = registry(*ALL)
    settings = parse(
        {"tracker": {"kind": "work"}, "trackers": {"work": {"provider": "jira", "project_keys": ["ENG"]}}},
        env=env,
        trackers=trackers,
    )
    assert settings.tracker.options == {
        "baseUrl": "https://jira.example",
        "email": "bot@example.com",
        "projectKeys": ["ENG"],
    }
    assert settings.tracker.api_key == "jira-token"
    assert {"jira-token", "bot@example.com"} <= settings.secrets
    validate_dispatch_config(settings, trackers)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"base_url": 5}, r"^tracker\.baseUrl must be a string$"),
        ({"project_keys": "ENG"}, r"^tracker\.projectKeys must be a list of strings$"),
        ({"surprise": True}, r'^unsupported tracker option\(s\) for kind "jira": surprise$'),
    ],
)
def test_jira_bundle_option_errors(extra: dict[str, Any], message: str) -> None:
    """Provider option errors pass through with the provider's camelCase key (item 68)."""
    with pytest.raises(ConfigError, match=message):
        parse({"tracker": {"kind": "work"}, "trackers": {"work": {"provider": "jira", **extra}}})


@pytest.mark.parametrize("config", [{}, {"tracker": {"kind": ""}}, {"tracker": {"kind": "   "}}])
def test_missing_kind_parses_then_fails_validation(config: dict[str, Any]) -> None:
    """No (or a blank) kind parses to None and validation says it is required (item 69)."""
    trackers = registry(*ALL)
    settings = parse(config, trackers=trackers)
    assert settings.tracker.kind is None
    with pytest.raises(ConfigError, match=r"^tracker\.kind is required$"):
        validate_dispatch_config(settings, trackers)


def test_defaults() -> None:
    """States, dispatch and endpoint take their defaults; options are empty."""
    tracker = parse({}).tracker
    assert tracker.active_states == DEFAULT_ACTIVE_STATES
    assert tracker.terminal_states == DEFAULT_TERMINAL_STATES
    assert (tracker.dispatch.accept_unrouted, tracker.dispatch.only_routes) == (True, None)
    assert tracker.dispatch.route_label_prefix == "Lorenz:"
    assert (tracker.endpoint, tracker.api_key, tracker.options) == (None, None, {})


def test_bundle_selection_with_aliases() -> None:
    """A bundle gives kind, aliased options, states and routes (item 70)."""
    settings = parse(
        {
            "tracker": {"kind": "primary"},
            "trackers": {
                "primary": {
                    "provider": "local",
                    "path": "/srv/board",
                    "id_prefix": "BOARD-",
                    "active_states": ["Ready"],
                    "dispatch": {"only_routes": ["docs"]},
                }
            },
        }
    )
    assert settings.tracker.kind == "local"
    assert settings.tracker.options == {"path": "/srv/board", "idPrefix": "BOARD-"}
    assert settings.tracker.active_states == ("Ready",)
    assert settings.tracker.dispatch.only_routes == ("docs",)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"tracker": {"kind": "primary"}, "trackers": {"primary": {}}}, r"^trackers\.primary\.provider is required$"),
        (
            {"tracker": {"kind": "primary"}, "trackers": {"primary": {"provider": "  "}}},
            r"^trackers\.primary\.provider is required$",
        ),
        (
            {"tracker": {"kind": "primary"}, "trackers": {"other": {"provider": "local"}}},
            r"^trackers\.primary is required by tracker\.kind$",
        ),
        (
            {"tracker": {"kind": "linear"}, "trackers": {"other": {"provider": "local"}}},
            r"^trackers\.linear is required by tracker\.kind$",
        ),
        (
            {"tracker": {"kind": "primary"}, "trackers": {"primary": {"provider": "local", "active_states": "Todo"}}},
            r"^trackers\.primary\.active_states must be a list of strings$",
        ),
        ({"tracker": {"kind": "x"}, "trackers": {" ": {"provider": "local"}}}, r"^trackers names must not be blank$"),
    ],
)
def test_bundle_errors(config: dict[str, Any], message: str) -> None:
    """Bundle selection errors name the bundle at fault (item 71)."""
    with pytest.raises(ConfigError, match=message):
        parse(config)


def test_unselected_bundles_are_not_validated_and_bundle_wins() -> None:
    """Other bundles may be invalid; the bundle's keys override the selector's (item 72)."""
    settings = parse(
        {
            "tracker": {"kind": "primary", "id_prefix": "SEL-", "path": "/from/selector"},
            "trackers": {
                "primary": {"provider": "local", "id_prefix": "BUN-"},
                "linear": {"active_states": "x"},
            },
        }
    )
    assert settings.tracker.options == {"path": "/from/selector", "idPrefix": "BUN-"}


def test_snake_alias_wins_across_selector_and_bundle() -> None:
    """A selector id_prefix beats a bundle idPrefix: provider aliases run after the merge."""
    settings = parse(
        {
            "tracker": {"kind": "p", "id_prefix": "SNAKE-"},
            "trackers": {"p": {"provider": "local", "idPrefix": "CAMEL-"}},
        }
    )
    assert settings.tracker.options == {"idPrefix": "SNAKE-"}


def test_bundle_kind_key_is_ignored() -> None:
    """A `kind` inside the bundle does not override its provider."""
    settings = parse({"tracker": {"kind": "p"}, "trackers": {"p": {"provider": "memory", "kind": "local"}}})
    assert settings.tracker.kind == "memory"


def test_flat_shape_ignores_provider_key() -> None:
    """Without bundles the trimmed kind is used and a `provider` key is ignored."""
    settings = parse({"tracker": {"kind": "  memory ", "provider": "local"}})
    assert settings.tracker.kind == "memory"
    assert settings.tracker.options == {}


def test_core_aliases_snake_wins() -> None:
    """For core keys the snake_case spelling wins over camelCase."""
    tracker = parse(
        {
            "tracker": {
                "kind": "memory",
                "activeStates": ["Camel"],
                "active_states": ["Snake"],
                "terminalStates": ["Gone"],
                "apiKey": "camel-key",
                "api_key": "snake-key",
            }
        }
    ).tracker
    assert tracker.active_states == ("Snake",)
    assert tracker.terminal_states == ("Gone",)
    assert tracker.api_key == "snake-key"


def test_empty_state_lists_are_kept() -> None:
    """An explicit [] is kept, not replaced by the defaults."""
    assert parse({"tracker": {"active_states": [], "terminal_states": []}}).tracker.active_states == ()


def test_endpoint_is_not_secret_resolved() -> None:
    """endpoint is not resolved, so `$EP` is refused as no URL; a URL overrides the default endpoint."""
    with pytest.raises(ConfigError, match=r"^tracker\.endpoint must be an http\(s\) URL with a host \(\$VAR is"):
        parse({"tracker": {"kind": "linear", "endpoint": "$EP"}}, env={"EP": "x"})
    assert parse({"tracker": {"kind": "linear", "endpoint": "https://l.example/gql"}}).tracker.endpoint == (
        "https://l.example/gql"
    )


@pytest.mark.parametrize("endpoint", ["not a url", "ftp://files.example", "https://", "http://[::1", "http://a b"])
def test_endpoint_must_be_an_http_url(endpoint: str) -> None:
    """tracker.endpoint is an http(s) URL with a host; the message does not echo the value."""
    with pytest.raises(ConfigError, match=r"^tracker\.endpoint must be an http\(s\) URL with a host$"):
        parse({"tracker": {"kind": "linear", "endpoint": endpoint}})


def test_only_routes_normalisation() -> None:
    """Routes are trimmed, lower-cased and de-duplicated in first-seen order (item 73)."""
    dispatch = parse(
        {"tracker": {"dispatch": {"only_routes": ["Backend", " backend ", "Frontend"], "route_label_prefix": " R: "}}}
    ).tracker.dispatch
    assert dispatch.only_routes == ("backend", "frontend")
    assert dispatch.route_label_prefix == "R:"


def test_only_routes_null_means_unrestricted() -> None:
    """only_routes: null stays None."""
    assert parse({"tracker": {"dispatch": {"only_routes": None}}}).tracker.dispatch.only_routes is None


def test_blank_route_is_an_error() -> None:
    """A blank route is rejected (item 73)."""
    with pytest.raises(ConfigError, match=r"^tracker\.dispatch\.only_routes must not contain blank routes$"):
        parse({"tracker": {"dispatch": {"only_routes": ["backend", " "]}}})


def test_dispatch_is_strict() -> None:
    """Unknown dispatch keys are listed in order (item 73)."""
    with pytest.raises(ConfigError, match=r"^tracker\.dispatch contains unsupported keys: route_agents, zeta$"):
        parse({"tracker": {"dispatch": {"route_agents": {}, "zeta": 1}}})


@pytest.mark.parametrize(("value", "expected"), [(True, True), (False, False), ("true", True), ("false", False)])
def test_accept_unrouted_accepts_booleans_and_their_strings(value: object, expected: bool) -> None:
    """accept_unrouted takes a boolean or "true"/"false" (camelCase spelling too)."""
    assert parse({"tracker": {"dispatch": {"acceptUnrouted": value}}}).tracker.dispatch.accept_unrouted is expected


@pytest.mark.parametrize("value", ["yes", "False", 1, 0, None, "1"])
def test_accept_unrouted_is_strict(value: object) -> None:
    """Anything else, even "False" or 1, is `expected a boolean` (no label)."""
    with pytest.raises(ConfigError, match=r"^expected a boolean$"):
        parse({"tracker": {"dispatch": {"accept_unrouted": value}}})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"tracker": None}, r"^tracker must be a map$"),
        ({"tracker": ["kind"]}, r"^tracker must be a map$"),
        ({"trackers": []}, r"^trackers must be a map$"),
        ({"trackers": {"a": 5}}, r"^trackers\.a must be a map$"),
        ({"tracker": {"active_states": "Todo"}}, r"^tracker\.active_states must be a list of strings$"),
        ({"tracker": {"activeStates": "Todo"}}, r"^tracker\.active_states must be a list of strings$"),
        ({"tracker": {"active_states": [1]}}, r"^tracker\.active_states\.0 must be a string$"),
        ({"tracker": {"terminal_states": ["ok", None]}}, r"^tracker\.terminal_states\.1 must be a string$"),
        ({"tracker": {"kind": 5}}, r"^tracker\.kind must be a string$"),
        ({"tracker": {"api_key": 12345}}, r"^tracker\.api_key must be a string$"),
        ({"tracker": {"assignee": None}}, r"^tracker\.assignee must be a string$"),
        ({"tracker": {"dispatch": "x"}}, r"^tracker\.dispatch must be a map$"),
        (
            {"tracker": {"dispatch": {"only_routes": "docs"}}},
            r"^tracker\.dispatch\.only_routes must be a list of strings$",
        ),
        (
            {"tracker": {"dispatch": {"routeLabelPrefix": 5}}},
            r"^tracker\.dispatch\.route_label_prefix must be a string$",
        ),
    ],
)
def test_error_messages_name_the_key(config: dict[str, Any], message: str) -> None:
    """Errors are one sentence naming the snake_case key path."""
    with pytest.raises(ConfigError, match=message):
        parse(config)


def test_first_error_in_key_order_wins() -> None:
    """With several bad keys, the first in schema order is reported."""
    with pytest.raises(ConfigError, match=r"^tracker\.kind must be a string$"):
        parse({"tracker": {"active_states": "x", "kind": 5, "dispatch": "y"}})


@pytest.mark.parametrize("value", ["abc", 5, ("a", 1)])
def test_string_lists_are_not_coerced(value: object) -> None:
    """A string is not split into characters and numbers are not stringified (cattrs strictness)."""
    with pytest.raises(ConfigError, match=r"^tracker\.active_states"):
        parse({"tracker": {"active_states": value}})


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("tracker_kind", 'unknown top-level key "tracker_kind" (did you mean "tracker"?)'),
        ("trakcers", 'unknown top-level key "trakcers" (did you mean "trackers"?)'),
        ("codex_command", 'unknown top-level key "codex_command" (known keys: server, tools, tracker, trackers)'),
    ],
)
def test_unknown_top_level_keys_are_errors(key: str, message: str) -> None:
    """Item 82 ignored these; issue 13 makes every unknown top-level key an error naming it."""
    with pytest.raises(ConfigError) as info:
        parse({key: "x", "tracker": {"kind": "memory"}})
    assert str(info.value) == message


def test_memory_rejects_options_in_order() -> None:
    """Unknown provider options are listed in input order (item 82)."""
    with pytest.raises(
        ConfigError, match=r'^unsupported tracker option\(s\) for kind "memory": project_slug, surprise$'
    ):
        parse({"tracker": {"kind": "memory", "project_slug": "x", "surprise": 1}})


def test_notion_provider_end_to_end() -> None:
    """A new provider's aliases, env fallback, default endpoint and hooks all apply (item 86)."""
    trackers = registry(NotionProvider())
    settings = parse(
        {"tracker": {"kind": "notion", "database_id": "db-eng"}}, env={"NOTION_API_KEY": "ntn-key"}, trackers=trackers
    )
    assert settings.tracker.kind == "notion"
    assert settings.tracker.api_key == "ntn-key"
    assert settings.tracker.endpoint == NotionProvider.default_endpoint
    assert settings.tracker.options == {"databaseId": "db-eng"}
    validate_dispatch_config(settings, trackers)
    provider = trackers.provider_for(settings)
    assert isinstance(provider, NotionProvider)
    assert isinstance(provider.create_client(settings, TrackerContext(env={})), _Client)
    assert provider.project_url(settings) == "https://notion.example/db-eng"


def test_notion_typo_and_missing_key() -> None:
    """A typo is an unsupported option; a missing key fails the provider's dispatch check (item 86)."""
    trackers = registry(NotionProvider())
    with pytest.raises(ConfigError) as info:
        parse({"tracker": {"kind": "notion", "database_idd": "x"}}, trackers=trackers)
    assert str(info.value) == (
        'unsupported tracker option(s) for kind "notion": database_idd (did you mean "database_id"?)'
    )
    settings = parse({"tracker": {"kind": "notion", "database_id": "db"}}, trackers=trackers)
    with pytest.raises(ConfigError, match=r"^tracker\.api_key is required for kind notion \(or set NOTION_API_KEY\)$"):
        validate_dispatch_config(settings, trackers)


def test_unknown_kind_parses_leniently() -> None:
    """An unregistered kind keeps its options verbatim and fails only validation (item 87)."""
    trackers = registry(NotionProvider())
    settings = parse({"tracker": {"kind": "github", "anything": True, "nested": {"a": [1]}}}, trackers=trackers)
    assert settings.tracker.options == {"anything": True, "nested": {"a": [1]}}
    with pytest.raises(ConfigError, match=r"^unsupported tracker\.kind: github \(known kinds: notion\)$"):
        validate_dispatch_config(settings, trackers)


def test_provider_without_parse_options_gets_aliased_copy() -> None:
    """Without parse_options the aliased options are used as a deep copy of the config."""

    class Bare:
        kind = "bare"
        config_aliases: Mapping[str, str] = {"team_id": "teamId"}

        def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
            return _Client()

    nested = {"deep": ["x"]}
    config = {"tracker": {"kind": "bare", "teamId": "camel", "team_id": "snake", "extra": nested}}
    settings = parse(config, trackers=registry(Bare()))
    assert settings.tracker.options == {"teamId": "snake", "extra": {"deep": ["x"]}}
    nested["deep"].append("mutated")
    assert settings.tracker.options["extra"] == {"deep": ["x"]}


def test_parse_options_value_error_passes_through() -> None:
    """A plain ValueError from parse_options becomes a ConfigError with the same message."""

    class Picky:
        kind = "picky"

        def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
            msg = "tracker.team must be set"
            raise ValueError(msg)

        def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
            return _Client()

    with pytest.raises(ConfigError, match=r"^tracker\.team must be set$"):
        parse({"tracker": {"kind": "picky"}}, trackers=registry(Picky()))


def test_parse_options_context_carries_env_and_base_dir() -> None:
    """parse_options sees the parser's env and the workflow directory as cwd."""
    seen: list[TrackerContext] = []

    class Spy:
        kind = "spy"

        def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
            seen.append(context)
            return dict(options)

        def create_client(self, settings: Settings, context: TrackerContext) -> _Client:
            return _Client()

    parse({"tracker": {"kind": "spy"}}, env={"A": "1"}, trackers=registry(Spy()))
    assert seen[0].env == {"A": "1"}
    assert seen[0].cwd == Path("/w")
    assert seen[0].resolve_secret is not None


def test_embedded_default_is_the_local_board() -> None:
    """The embedded default selects the `local` kind with no options, and parsing does not mutate it."""
    from lorenz.settings import EMBEDDED_DEFAULT_CONFIG

    settings = parse(EMBEDDED_DEFAULT_CONFIG)
    assert settings.tracker.kind == "local"
    assert settings.tracker.options == {}
    assert EMBEDDED_DEFAULT_CONFIG == {"tracker": {"kind": "local"}}
