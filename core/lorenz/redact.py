"""Diagnostic redaction: scrub credentials out of text before it reaches an error, a log or an agent.

The rules (trackers.md §0.7), applied in order by :func:`redact_text`:

1. every registered secret (at least 3 characters after trimming) becomes ``[REDACTED]``, longest first;
2. ``Bearer <token>`` / ``Basic <token>`` (any case) become ``Bearer [REDACTED]`` / ``Basic [REDACTED]``;
3. URL userinfo ``scheme://user:pass@`` becomes ``scheme://[REDACTED]@``;
4. the value of an assignment whose key looks secret (``api_key=…``, ``"token": "…"``,
   ``Authorization: Token …``) becomes ``[REDACTED]``;
5. ``op://…`` (1Password) references become ``[REDACTED]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

__all__ = ["REDACTED", "is_secret_key", "redact_text", "redact_value", "redacted_traceback", "registered_secrets"]

REDACTED = "[REDACTED]"

_T = TypeVar("_T")

_MIN_SECRET_LENGTH = 3

_SECRET_KEY = re.compile(
    r"api[_-]?key|apikey|authorization|auth[_-]?token|access[_-]?token|refresh[_-]?token|password|secret|token",
    re.IGNORECASE,
)

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=%-]"

_AUTH_SCHEME = re.compile(rf"\b(bearer|basic)\s+{_TOKEN_CHARS}+", re.IGNORECASE)

# The scheme is bounded (≤64 chars) and the userinfo stops at whitespace, `/`, `?`, `#` and the characters
# a URL never holds raw (`"<>`), so a hostile body cannot make this backtrack quadratically; the run reaches
# the *last* `@` of the authority, which also covers an unescaped `@` inside a password.
_URL_USERINFO = re.compile(r'(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,63})://[^\s/?#@"<>]+(?:@[^\s/?#@"<>]*)*@')

_OP_REFERENCE = re.compile(r"(?<![A-Za-z0-9+.-])op://[^\s\"'<>,}\]]+", re.IGNORECASE)

# `Authorization: Token abc` / `authorization=Bot xyz`: keep the scheme word, redact the credential
# (the generic rule below would redact only the scheme word and leave the credential behind).
_AUTHORIZATION_HEADER = re.compile(
    r"""(?P<lead>(?P<q>\\?["']|)(?:proxy-)?authorization(?P=q)\s*[:=]\s*)"""
    r"""(?P<scheme>[A-Za-z][\w-]{0,63})[ \t]+(?!\[REDACTED\])[^\s"',}\]]+""",
    re.IGNORECASE,
)

# Keys are identifiers that *contain* a secret-looking word (`client_secret`, `x-api-key`, `nextToken`),
# bounded to 64 chars on each side so the lazy prefix cannot go quadratic on a long word.
_ASSIGNMENT = re.compile(
    r"""(?P<lead>(?P<q>\\?["']|)(?<![\w.-])[\w.-]{0,64}?"""
    r"""(?:api[_-]?key|apikey|authorization|auth[_-]?token|access[_-]?token|refresh[_-]?token"""
    r"""|password|secret|token)[\w-]{0,64}(?P=q)\s*[:=]\s*)"""
    r"""(?P<value>"""
    r"""\\"(?:[^"\\\n]|\\[^"\n])*(?:\\"|\\?$)"""  # JSON-escaped quotes: \"…\"
    r"""|"(?:[^"\\\n]|\\.)*(?:"|$)"""  # "…" (an unterminated value is redacted to the line end)
    r"""|'[^'\n]*(?:'|$)"""  # '…'
    # bare value; a whole `$NAME` is an environment variable's name (`api_key: $JIRA_API_KEY is not set`)
    r"""|(?!\[REDACTED\])(?![A-Za-z][\w-]*[ \t]+\[REDACTED\])(?!(?-i:\$[A-Z_][A-Z0-9_]*)(?![^\s"',}\]]))"""
    r"""[^\s"',}\]]+"""
    r""")""",
    re.IGNORECASE | re.MULTILINE,
)


def is_secret_key(key: str) -> bool:
    """Whether a config/option key names a secret (case-insensitive substring match, core.md §7.6)."""
    return _SECRET_KEY.search(key) is not None


def registered_secrets(secrets: Iterable[str]) -> tuple[str, ...]:
    """The usable secrets: trimmed, at least 3 characters, deduplicated, longest first."""
    usable = {s.strip() for s in secrets if isinstance(s, str)}
    return tuple(sorted((s for s in usable if len(s) >= _MIN_SECRET_LENGTH), key=lambda s: (-len(s), s)))


def _redact_assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.startswith('\\"'):
        redacted = f'\\"{REDACTED}\\"' if value.endswith('\\"') and len(value) >= 4 else f'\\"{REDACTED}'
    elif value[0] in "\"'":
        quote = value[0]
        redacted = f"{quote}{REDACTED}{quote}" if len(value) >= 2 and value.endswith(quote) else quote + REDACTED
    else:
        redacted = REDACTED
    return match.group("lead") + redacted


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with registered ``secrets`` and credential-looking fragments replaced by ``[REDACTED]``."""
    if not text:
        return text
    # One secret at a time, longest first, so a short secret cannot split a longer one it overlaps.
    for secret in registered_secrets(secrets):
        text = text.replace(secret, REDACTED)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1).capitalize()} {REDACTED}", text)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}://{REDACTED}@", text)
    text = _AUTHORIZATION_HEADER.sub(lambda m: f"{m.group('lead')}{m.group('scheme')} {REDACTED}", text)
    text = _ASSIGNMENT.sub(_redact_assignment, text)
    return _OP_REFERENCE.sub(REDACTED, text)


def redact_value(obj: _T, secrets: Iterable[str] = ()) -> _T:
    """Deep-copy mappings, lists and tuples, applying :func:`redact_text` to every string value.

    Mapping keys are kept as they are; any mapping comes back as a ``dict``. Other values are returned
    unchanged.
    """
    usable = registered_secrets(secrets)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redact_text(value, usable)
        if isinstance(value, Mapping):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, tuple):
            return tuple(walk(item) for item in value)
        return value

    return cast(_T, walk(obj))


def redacted_traceback(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """``exc``'s formatted traceback with secrets redacted, for logs (exception text may quote them)."""
    import traceback

    return redact_text("".join(traceback.format_exception(exc)).rstrip(), secrets)
