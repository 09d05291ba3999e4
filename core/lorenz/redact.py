"""Diagnostic redaction: scrub credentials out of text before it reaches an error, a log or an agent.

:func:`redact_text` replaces, in order: every registered secret and secret-looking environment
variable's value (longest first, also JSON- or repr-escaped) and, when given, each argument value
(``«argument issueId»``); ``Bearer``/``Basic`` tokens; URL userinfo; the value of an assignment whose
key looks secret (``api_key=…``, ``"token": "…"``); ``op://`` references; and, given a workflow
directory, it shortens absolute paths (:func:`shorten_paths`).
"""

from __future__ import annotations

import functools
import json
import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

__all__ = [
    "MIN_ENV_SECRET_LENGTH",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "environment_secrets",
    "is_secret_env_name",
    "is_secret_key",
    "redact_text",
    "redact_value",
    "redacted_traceback",
    "registered_secrets",
    "shorten_paths",
]

REDACTED = "[REDACTED]"

_T = TypeVar("_T")

#: Shorter secrets are not registered: redacting them would mangle ordinary text.
MIN_SECRET_LENGTH = 3
#: Shorter values of secret-looking environment variables are flags (``TOKENIZERS_PARALLELISM=false``).
MIN_ENV_SECRET_LENGTH = 8
#: String leaves of a call's arguments checked against a text; past that the text is withheld.
MAX_ARGUMENT_VALUES = 1000
#: Characters of an argument's name kept in its placeholder.
_MAX_ARGUMENT_NAME = 64


class _Lazy:
    """A regular expression compiled when first used: compiling these at import cost every command's
    start-up some 6 ms, and a command that fails nothing never uses them."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags = pattern, flags

    @functools.cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self._pattern, self._flags)


_SECRET_WORDS = (
    r"api[_-]?key|apikey|authorization|auth[_-]?token|access[_-]?token|refresh[_-]?token|password|secret|token"
)
_SECRET_KEY = _Lazy(_SECRET_WORDS, re.IGNORECASE)
# Environment names also spell a credential as a word of its own (STRIPE_KEY, DB_PASSWD, GPG_PASSPHRASE).
_SECRET_ENV_NAME = _Lazy(rf"{_SECRET_WORDS}|(?:^|_)(?:key|passwd|passphrase|credentials?)(?:_|$)", re.IGNORECASE)

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=%-]"

_AUTH_SCHEME = _Lazy(rf"\b(bearer|basic)\s+{_TOKEN_CHARS}+", re.IGNORECASE)

# The scheme is bounded (≤64 chars) and the userinfo stops at whitespace, `/`, `?`, `#` and the characters
# a URL never holds raw (`"<>`), so a hostile body cannot make this backtrack quadratically; the run reaches
# the *last* `@` of the authority, which also covers an unescaped `@` inside a password.
_URL_USERINFO = _Lazy(r'(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,63})://[^\s/?#@"<>]+(?:@[^\s/?#@"<>]*)*@')

_OP_REFERENCE = _Lazy(r"(?<![A-Za-z0-9+.-])op://[^\s\"'<>,}\]]+", re.IGNORECASE)

# `Authorization: Token abc` / `authorization=Bot xyz`: keep the scheme word, redact the credential
# (the generic rule below would redact only the scheme word and leave the credential behind).
_AUTHORIZATION_HEADER = _Lazy(
    r"""(?P<lead>(?P<q>\\?["']|)(?:proxy-)?authorization(?P=q)\s*[:=]\s*)"""
    r"""(?P<scheme>[A-Za-z][\w-]{0,63})[ \t]+(?!\[REDACTED\])[^\s"',}\]]+""",
    re.IGNORECASE,
)

# Keys are identifiers that *contain* a secret-looking word (`client_secret`, `x-api-key`, `nextToken`),
# bounded to 64 chars on each side so the lazy prefix cannot go quadratic on a long word.
_ASSIGNMENT = _Lazy(
    r"""(?P<lead>(?P<q>\\?["']|)(?<![\w.-])[\w.-]{0,64}?"""
    rf"""(?:{_SECRET_WORDS})[\w-]{{0,64}}(?P=q)\s*[:=]\s*)"""
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
    """Whether a config/option key names a secret (case-insensitive substring match)."""
    return _SECRET_KEY.compiled.search(key) is not None


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential (``*TOKEN*``, ``*_KEY``, …)."""
    return _SECRET_ENV_NAME.compiled.search(name) is not None


def registered_secrets(secrets: Iterable[str]) -> tuple[str, ...]:
    """The usable secrets: trimmed, at least 3 characters, deduplicated, longest first."""
    usable = {s.strip() for s in secrets if isinstance(s, str)}
    return tuple(sorted((s for s in usable if len(s) >= MIN_SECRET_LENGTH), key=lambda s: (-len(s), s)))


#: The process environment last scanned, and the secrets found in it.
_ENVIRONMENT: tuple[Any, tuple[str, ...]] = (None, ())


def environment_secrets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Values (at least :data:`MIN_ENV_SECRET_LENGTH` characters) of the secret-looking variables of
    ``env``, by default the process environment: redacted even where no workflow names them."""
    global _ENVIRONMENT
    if env is not None:
        return _secret_values(env)
    # Decoding the environment costs more than redacting a line: scan it again only when it changed.
    raw = getattr(os.environ, "_data", None)
    seen = tuple(raw.items()) if isinstance(raw, dict) else None
    cached = _ENVIRONMENT
    if seen is None or seen != cached[0]:
        cached = _ENVIRONMENT = (seen, _secret_values(os.environ))
    return cached[1]


def _secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(
        value.strip()
        for name, value in env.items()
        if is_secret_env_name(name) and len(value.strip()) >= MIN_ENV_SECRET_LENGTH
    )


def _quoted_forms(value: str) -> frozenset[str]:
    """``value`` as a message may quote it: as is, JSON-escaped, repr-escaped."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], repr(value)[1:-1]}
    return frozenset(form for form in forms if len(form) >= MIN_SECRET_LENGTH)


_NESTED = (str, Mapping, list, tuple)


#: A secret's forms, kept (secrets are few and long-lived; argument values are neither).
_secret_forms = functools.lru_cache(maxsize=256)(_quoted_forms)


def _argument_values(arguments: Any) -> list[tuple[str, str]] | None:
    """``(value, placeholder)`` for each string in a call's arguments (nested keys included: they are
    data too); ``None`` when there are more than :data:`MAX_ARGUMENT_VALUES` to check."""
    if isinstance(arguments, Mapping):
        stack = [(f"«argument {str(name)[:_MAX_ARGUMENT_NAME]}»", value) for name, value in arguments.items()]
    else:
        stack = [("«argument»", arguments)]
    found: list[tuple[str, str]] = []
    while stack:  # iterative: arguments may nest deeper than the recursion limit
        label, value = stack.pop()
        if isinstance(value, str):
            found.append((value, label))
            if len(found) > MAX_ARGUMENT_VALUES:
                return None
        elif isinstance(value, Mapping):
            stack += [(label, key) for key in value if isinstance(key, str)]
            stack += [(label, item) for item in value.values() if isinstance(item, _NESTED)]
        elif isinstance(value, list | tuple):
            stack += [(label, item) for item in value if isinstance(item, _NESTED)]
    return found


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


#: What an error text becomes when its call's arguments are too many to check it against.
WITHHELD = "«error text withheld: the call's arguments hold too many values to check it against»"


def redact_text(
    text: str,
    secrets: Iterable[str] = (),
    *,
    arguments: Any = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> str:
    """``text`` with registered ``secrets``, the environment's secrets and credential-looking fragments
    replaced by ``[REDACTED]``.

    For text that is stored or logged about a call, ``arguments`` are the call's: each string value
    in them becomes ``«argument NAME»``. For the text of an unexpected exception, ``base_dir`` is the
    workflow directory: absolute paths are shortened (:func:`shorten_paths`).
    """
    if not text:
        return text
    usable = registered_secrets([*secrets, *environment_secrets()])
    replacements = {form: REDACTED for secret in usable for form in _secret_forms(secret)}
    if arguments is not None:
        values = _argument_values(arguments)
        if values is None:
            return WITHHELD
        for value, label in values:
            if MIN_SECRET_LENGTH <= len(value) <= len(text):  # escaping only lengthens a value
                for form in _quoted_forms(value):
                    replacements.setdefault(form, label)
    # One at a time, longest first, so a short secret cannot split a longer one it overlaps.
    for form in sorted(replacements, key=lambda form: (-len(form), form)):
        if form in text:
            text = text.replace(form, replacements[form])
    text = _AUTH_SCHEME.compiled.sub(lambda m: f"{m.group(1).capitalize()} {REDACTED}", text)
    text = _URL_USERINFO.compiled.sub(lambda m: f"{m.group(1)}://{REDACTED}@", text)
    text = _AUTHORIZATION_HEADER.compiled.sub(lambda m: f"{m.group('lead')}{m.group('scheme')} {REDACTED}", text)
    text = _ASSIGNMENT.compiled.sub(_redact_assignment, text)
    text = _OP_REFERENCE.compiled.sub(REDACTED, text)
    return text if base_dir is None else shorten_paths(text, base_dir)


# An absolute path: quoted (it may hold spaces), or bare and not part of a URL or a relative path;
# at least two segments, so ``/mcp`` or ``and/or`` stay as they are.
_PATH_STOP = r"""\s'"`<>()\[\]{},;"""
_ABSOLUTE_PATH = _Lazy(
    r"""(?P<q>['"`])(?P<quoted>/[^/'"`\n][^'"`\n]*/[^'"`\n]*)(?P=q)"""
    rf"""|(?<![\w.:/~\\%+@-])(?P<bare>/[^/{_PATH_STOP}][^{_PATH_STOP}]*/[^{_PATH_STOP}]*)"""
)


def shorten_paths(text: str, base_dir: str | os.PathLike[str]) -> str:
    """``text`` with each absolute path shortened: one inside ``base_dir`` (the workflow directory)
    becomes relative to it, any other ``…/name``. URLs are left as they are.

    For the text of an exception from plugin code that leaves the host: the agent learns which file,
    not where the server keeps it or whose home directory it is in.
    """
    base = posixpath.normpath(os.fspath(base_dir))
    bases = {base, posixpath.normpath(os.path.realpath(base))}

    def shorten(path: str) -> str:
        path = posixpath.normpath(path)
        for root in bases:
            if path == root:
                return "."
            if path.startswith(root.rstrip("/") + "/"):
                return path[len(root.rstrip("/")) + 1 :]
        name = posixpath.basename(path)
        return f"…/{name}" if name not in ("", "..") else "…"

    def replace(match: re.Match[str]) -> str:
        if match.group("quoted") is not None:
            return f"{match.group('q')}{shorten(match.group('quoted'))}{match.group('q')}"
        return shorten(match.group("bare"))

    return _ABSOLUTE_PATH.compiled.sub(replace, text)


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
