"""``provider: mcp`` entries of the ``tools:`` map, as ``lorenz mount --provider mcp`` and ``lorenz import``
write them: where the secrets go (never into WORKFLOW.md), and writing several entries at once, previewed
as a diff or validated as ``lorenz check`` validates settings (without starting any server).

The rule for secrets (docs/mcp-servers.md): every ``env`` value and every header value becomes a ``$VAR``
reference the host resolves from its own environment when the server starts; a value that is a reference
already (``$X``, ``${X}``, VS Code's ``${env:X}``) is kept as one. An ``env`` entry is read from the variable
of its own name; a header from ``<KEY>_TOKEN`` (``Authorization``, keeping its scheme: ``Bearer $KEY_TOKEN``)
or ``<KEY>_<HEADER>``. A command argument or URL that carries a secret is refused: WORKFLOW.md cannot hold
it as a reference there.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from attrs import frozen

from lorenz.plugins.discovery import discover
from lorenz.plugins.validate_settings import validate_dispatch_config
from lorenz.redact import is_secret_key, redact_text
from lorenz.settings import load_settings

from .output import UsageError, paint
from .workflow_edit import set_tool_entries, workflow_target, write_validated
from .workspace import load_plugin_modules

__all__ = ["Entry", "Secret", "exports", "mcp_entry", "variable_name", "write_entries"]

_WHOLE_REFERENCE = re.compile(r"^\$(?:\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_SCHEME = re.compile(r"^(Bearer|Basic|Token)\s+(.*)$", re.IGNORECASE | re.DOTALL)


@frozen
class Secret:
    """A variable an entry reads, to be exported before serving: ``where`` names the value it stands for
    (left out of WORKFLOW.md), ``None`` for a reference that was one already."""

    variable: str
    where: str | None


@frozen
class Entry:
    """One ``tools.<key>`` entry to write, and the variables it reads that the user must export."""

    key: str
    options: Mapping[str, Any]
    secrets: tuple[Secret, ...] = ()


def variable_name(*parts: str) -> str:
    """An environment variable's name from ``parts`` (``github``, ``X-Api-Key`` → ``GITHUB_X_API_KEY``)."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_").upper()
    return name if name and not name[0].isdigit() else f"_{name}"


def _reference(value: str, variable: str, where: str, secrets: list[Secret]) -> str:
    """``value`` as WORKFLOW.md holds it: a reference kept (``${env:X}`` → ``$X``); anything else, or
    nothing, ``$variable``."""
    match = _WHOLE_REFERENCE.match(value.strip())
    if match is not None:
        variable = match.group(1) or match.group(2)
    secrets.append(Secret(variable, where if value and match is None else None))
    return f"${variable}"


def _header(key: str, name: str, value: str, where: str, secrets: list[Secret]) -> str:
    """A header's value as a reference; ``Authorization`` keeps its scheme (``Bearer`` when none is given)."""
    scheme = _SCHEME.match(value.strip())
    if name.lower() == "authorization" and (scheme is not None or not value.strip()):
        kind, credential = (scheme.group(1), scheme.group(2)) if scheme is not None else ("Bearer", "")
        return f"{kind} {_reference(credential, variable_name(key, 'token'), where, secrets)}"
    return _reference(value, variable_name(key, name), where, secrets)


def _check_command(command: Sequence[str], where: str) -> None:
    """Refuse an argument that passes a secret (``--api-key=…``, ``--token …``): it cannot be a reference."""
    for index, part in enumerate(command):
        flag, sep, value = part.partition("=")
        if not flag.startswith("-") or not is_secret_key(flag):
            continue
        given = value if sep else (command[index + 1] if index + 1 < len(command) else "")
        if given and not given.startswith("-") and _WHOLE_REFERENCE.match(given) is None:
            msg = (
                f"{where}: {flag} passes a secret on the command line, which WORKFLOW.md must not hold; "
                "pass it in env (most servers read it from a variable) and run this again"
            )
            raise UsageError(msg)


def _check_url(url: str, where: str) -> None:
    """Refuse a URL carrying a password or a secret query parameter: url takes no ``$VAR``."""
    parts = urlsplit(url)
    secret = [name for name, _ in parse_qsl(parts.query) if is_secret_key(name)]
    if parts.password or secret:
        what = f"the query parameter {secret[0]}" if secret else "a password"
        msg = f"{where}: the URL carries {what}, which WORKFLOW.md must not hold; send it in a header instead"
        raise UsageError(msg)


def _at(where: str, section: str, name: str) -> str:
    if not where:
        return f"--{'env' if section == 'env' else 'header'} {name}"
    return f"{where}.{section}.{name}"


def mcp_entry(
    key: str,
    *,
    where: str,
    command: Sequence[str] | None = None,
    url: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    cwd: str | None = None,
    prefix: str | None = None,
) -> Entry:
    """The ``tools.<key>`` entry for one upstream, its secrets replaced by references (module docstring);
    ``where`` names the source of the values in messages (``claude_desktop_config.json: mcpServers.git``;
    empty: the command line's ``--env``/``--header``)."""
    secrets: list[Secret] = []
    options: dict[str, Any] = {"provider": "mcp"}
    if command is not None:
        _check_command(command, where)
        options["command"] = list(command)
    if url is not None:
        _check_url(url, where)
        options["url"] = url
    if env:
        options["env"] = {
            name: _reference(value, variable_name(name), _at(where, "env", name), secrets)
            for name, value in env.items()
        }
    if headers:
        options["headers"] = {
            name: _header(key, name, value, _at(where, "headers", name), secrets) for name, value in headers.items()
        }
    if cwd:
        options["cwd"] = cwd
    if prefix:
        options["prefix"] = prefix
    return Entry(key, options, tuple(secrets))


def write_entries(args: Any, entries: Sequence[Entry], *, dry_run: bool) -> tuple[Path, bool] | None:
    """Set the ``tools.<key>`` of each entry in the workflow ``args`` names (one is created from the
    embedded default when there is none): with ``dry_run``, print the diff; else validate the edited
    file (:func:`_validate`) and replace the original. ``(the file, whether it was created)``, or ``None``
    when it says so already."""
    path, front = workflow_target(args, create=True)
    created = not path.exists()
    text = set_tool_entries(front, {entry.key: entry.options for entry in entries})
    if text is None:
        return None
    content = front.joined(text)
    if dry_run:
        before = "" if created else front.joined(front.text)
        lines = difflib.unified_diff(
            before.splitlines(keepends=True), content.splitlines(keepends=True), f"a/{path.name}", f"b/{path.name}"
        )
        for line in lines:
            colour = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1]) if line[:3] not in ("+++", "---") else None
            print(paint(line.rstrip("\n"), colour))
        return path, created
    write_validated(path, content, lambda candidate: _validate(args, candidate, path))
    return path, created


def _validate(args: Any, candidate: Path, shown_as: Path) -> None:
    """What ``lorenz check`` checks before it mounts anything: the settings, and each entry's options by
    its pack's own ``validate_options`` (the ``mcp`` pack's for these); no server is started."""
    discovery = discover(plugins=load_plugin_modules(args))
    if discovery.tools.get("mcp") is None:
        install = "pip install lorenz-mcp; in a checkout, pip install -e plugins/mcp"
        raise UsageError(f"not written: the mcp pack is not installed ({install})")
    try:
        settings = load_settings(candidate, env=os.environ, trackers=discovery.trackers)
        validate_dispatch_config(settings, discovery.trackers, discovery.tools)
    except Exception as exc:
        text = " ".join(redact_text(str(exc)).split()).replace(str(candidate), str(shown_as))
        raise UsageError(f"not written: {text.replace(candidate.name, shown_as.name)}") from exc


def exports(secrets: Sequence[Secret]) -> list[str]:
    """The lines telling the user which variables to export, and which value each stands for (never the
    value itself)."""
    seen: dict[str, str | None] = {}
    for secret in secrets:
        if seen.get(secret.variable) is None:
            seen[secret.variable] = secret.where
    width = max((len(name) for name in seen), default=0)
    notes = {name: f"the value of {where}" if where else "read when the server starts" for name, where in seen.items()}
    return [f"  export {(name + '=…').ljust(width + 2)}  # {note}" for name, note in notes.items()]
