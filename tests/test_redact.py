"""lorenz.redact: registered secrets, auth schemes, URL userinfo, assignments and op:// references."""

from __future__ import annotations

from typing import Any

import pytest

from lorenz.redact import REDACTED, is_secret_key, redact_text, redact_value, registered_secrets


def test_registered_secret_is_replaced_everywhere() -> None:
    """Every occurrence of a registered secret becomes [REDACTED]."""
    assert redact_text("key s3cr3t-value failed; retry with s3cr3t-value", ["s3cr3t-value"]) == (
        "key [REDACTED] failed; retry with [REDACTED]"
    )


def test_secrets_are_trimmed_and_short_ones_ignored() -> None:
    """Secrets are trimmed before use and those under 3 characters are not registered."""
    assert registered_secrets(["  abcd  ", "ab", " x ", "", "abcd"]) == ("abcd",)
    assert redact_text("ab abcd", ["ab", "  abcd "]) == "ab [REDACTED]"


def test_longest_secret_wins_over_an_overlapping_shorter_one() -> None:
    """A short secret that overlaps a longer one cannot leave part of the longer one visible."""
    assert redact_text("id=abcdefgh!", ["abcd", "bcdefgh"]) == "id=a[REDACTED]!"
    assert "efgh" not in redact_text("abcdefgh", ["abcd", "bcdefgh"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bearer abc.DEF_ghi-123~+/=%", "Bearer [REDACTED]"),
        ("header bearer xyz", "header Bearer [REDACTED]"),
        ("BASIC dXNlcjpwYXNz tail", "Basic [REDACTED] tail"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"),
    ],
)
def test_bearer_and_basic_tokens_are_redacted_case_insensitively(text: str, expected: str) -> None:
    """Bearer/Basic credentials are replaced whatever the case of the scheme word."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GET https://user:pass@example.test/x failed", "GET https://[REDACTED]@example.test/x failed"),
        ("git+ssh://token@host/repo", "git+ssh://[REDACTED]@host/repo"),
        ("https://u:p@ss@host/p?mail=a@b", "https://[REDACTED]@host/p?mail=a@b"),
        ("https://example.test/path?mail=a@b", "https://example.test/path?mail=a@b"),
    ],
)
def test_url_userinfo_is_redacted(text: str, expected: str) -> None:
    """URL credentials before the host are replaced; an @ in the path or query is left alone."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("api_key=abc123 next", "api_key=[REDACTED] next"),
        ("api-key: abc123", "api-key: [REDACTED]"),
        ("apiKey=abc123,other=1", "apiKey=[REDACTED],other=1"),
        ('{"token": "two words", "n": 1}', '{"token": "[REDACTED]", "n": 1}'),
        ("{'password': 'hunter2'}", "{'password': '[REDACTED]'}"),
        ('{"client_secret":"s3"}', '{"client_secret":"[REDACTED]"}'),
        (
            "auth_token=a access_token=b refresh_token=c",
            "auth_token=[REDACTED] access_token=[REDACTED] refresh_token=[REDACTED]",
        ),
        ("[secret=abc]", "[secret=[REDACTED]]"),
        ('{\\"token\\": \\"abc\\"}', '{\\"token\\": \\"[REDACTED]\\"}'),
        ('"token": "unterminated value', '"token": "[REDACTED]'),
        ('{\\"token\\": \\"cut here\\', '{\\"token\\": \\"[REDACTED]'),
        ("Authorization: Token abc123", "Authorization: Token [REDACTED]"),
        ("path=/tmp/board", "path=/tmp/board"),
    ],
)
def test_secret_looking_assignments_are_redacted(text: str, expected: str) -> None:
    """The value after a secret-looking key and `:`/`=` is replaced; other assignments are kept."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tracker.api_key: $JIRA_API_KEY is not set", "tracker.api_key: $JIRA_API_KEY is not set"),
        ("server.tokens.0.token: $CI_TOKEN_2 is not set", "server.tokens.0.token: $CI_TOKEN_2 is not set"),
        # anything but a whole upper-case `$NAME` is still a value
        ("api_key=$lower_case", "api_key=[REDACTED]"),
        ("token: $ABCdef", "token: [REDACTED]"),
        ("password: $SECRET$1", "password: [REDACTED]"),
        ("token=$X/y", "token=[REDACTED]"),
    ],
)
def test_an_environment_variable_name_is_not_a_credential(text: str, expected: str) -> None:
    """A whole `$NAME` after a secret-looking key names a variable (`… $JIRA_API_KEY is not set`)."""
    assert redact_text(text) == expected


def test_op_references_are_redacted() -> None:
    """1Password op:// references are replaced whole, but a scheme merely ending in `op` is not."""
    assert redact_text("could not read op://Private/jira/token here") == "could not read [REDACTED] here"
    assert redact_text("shop://store/item") == "shop://store/item"


def test_redaction_is_idempotent() -> None:
    """Redacting already-redacted text changes nothing."""
    text = 'Authorization: Bearer abc {"token": "x"} https://u:p@h/ op://v/i api_key=k'
    once = redact_text(text, ["abcdef"])
    assert redact_text(once, ["abcdef"]) == once
    assert once.count(REDACTED) == 5


def test_plain_text_is_untouched() -> None:
    """Text without credentials comes back unchanged."""
    text = "jira api status 500: Internal Server Error (issue ABC-1)"
    assert redact_text(text, ["zzz-not-there"]) == text
    assert redact_text("") == ""


def test_redact_value_deep_copies_and_redacts_every_string() -> None:
    """Nested mappings, lists and tuples are copied with every string redacted; other values kept."""
    original: dict[str, Any] = {
        "error": {"message": "bad key sekrit", "hints": ["Bearer tok", ("op://v/i", 3)]},
        "n": 1,
    }
    redacted = redact_value(original, ["sekrit"])
    assert redacted == {
        "error": {"message": "bad key [REDACTED]", "hints": ["Bearer [REDACTED]", ("[REDACTED]", 3)]},
        "n": 1,
    }
    assert original["error"]["message"] == "bad key sekrit"
    assert redact_value("Basic abc") == "Basic [REDACTED]"
    assert redact_value(None) is None


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("api_key", True),
        ("API-KEY", True),
        ("apiKey", True),
        ("Authorization", True),
        ("auth_token", True),
        ("accessToken", True),
        ("refresh-token", True),
        ("db_password", True),
        ("client_secret", True),
        ("github_token", True),
        ("path", False),
        ("endpoint", False),
        ("keys", False),
    ],
)
def test_is_secret_key(key: str, expected: bool) -> None:
    """Secret-looking option keys are recognised by case-insensitive substring."""
    assert is_secret_key(key) is expected


def test_redacted_traceback_hides_secrets() -> None:
    """A logged traceback keeps its frames but not the secrets its message quotes."""
    from lorenz.redact import redacted_traceback

    try:
        raise RuntimeError("upstream said: token sk-live-123456 rejected")
    except RuntimeError as exc:
        text = redacted_traceback(exc, ["sk-live-123456"])
    assert "Traceback" in text
    assert "RuntimeError" in text
    assert "sk-live-123456" not in text
