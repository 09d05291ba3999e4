"""Editing WORKFLOW.md's ``tools:`` map for ``lorenz mount`` and ``lorenz unmount``: a ruamel round trip
of the front matter alone (comments, quoting and indentation kept), the body left byte for byte, the
result validated and then written atomically (a temporary file renamed over the original)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from lorenz.plugins.validate_settings import check_pack_settings
from lorenz.redact import redact_text
from lorenz.workspace import find_workflow, open_workspace
from lorenz.yaml12 import YamlError, load_yaml

from .output import UsageError
from .workspace import load_plugin_modules

__all__ = [
    "FrontMatter",
    "mounted_packs",
    "option_value",
    "read_front_matter",
    "set_tool_entries",
    "set_tool_pack",
    "workflow_keys",
    "workflow_target",
    "write_validated",
]

_FENCE = re.compile(r"---(\r\n|\n|\r)")
_CLOSING = re.compile(r"^---[ \t]*$", re.MULTILINE)


@frozen
class FrontMatter:
    """A workflow split where the edit goes: ``head`` (the opening fence, with a byte-order mark if
    any), the front matter's text, and ``tail`` (the closing fence and the body, never re-encoded)."""

    head: str
    text: str
    tail: str

    def joined(self, text: str) -> str:
        """The file with ``text`` as its front matter, in the line endings its opening fence uses."""
        if self.head.endswith("\r\n"):
            text = text.replace("\n", "\r\n")
        return self.head + text + self.tail


def read_front_matter(path: Path) -> FrontMatter:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from exc
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not valid UTF-8") from exc
    bom = "\ufeff" if content.startswith("\ufeff") else ""
    opening = _FENCE.match(content, len(bom))
    closing = None if opening is None else _CLOSING.search(content, opening.end())
    if opening is None or closing is None:
        msg = f'{path}: no front matter between two "---" lines to edit (lorenz check {path} says why)'
        raise UsageError(msg)
    return FrontMatter(content[: opening.end()], content[opening.end() : closing.start()], content[closing.start() :])


def _round_trip(text: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.util import load_yaml_guess_indent

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line the user wrote on one
    try:
        _, indent, offset = load_yaml_guess_indent(text) if text.strip() else (None, 2, 0)
    except Exception as exc:  # invalid YAML: lorenz check names the line
        raise UsageError(f"the front matter is not valid YAML ({' '.join(str(exc).split())[:200]})") from exc
    yaml.indent(mapping=indent or 2, sequence=(indent or 2) + (offset or 0), offset=offset or 0)
    return yaml


def _load_tools(front: FrontMatter, create: bool) -> tuple[Any, Any, Any]:
    """``(yaml, the front matter's map, its tools: map)``; the tools map is ``None`` when there is none
    and ``create`` is false."""
    from ruamel.yaml.comments import CommentedMap

    yaml = _round_trip(front.text)
    data = yaml.load(front.text) if front.text.strip() else CommentedMap()
    if data is None:
        data = CommentedMap()
    if not isinstance(data, CommentedMap):
        raise UsageError("the front matter must be a map")
    tools = data.get("tools")
    if tools is None and create:
        tools = data["tools"] = CommentedMap()
    if tools is not None and not isinstance(tools, CommentedMap):
        raise UsageError("tools must be a map")
    return yaml, data, tools


def _dumped(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    text = out.getvalue()
    return "" if text.strip() in ("{}", "") else text


def set_tool_entries(front: FrontMatter, entries: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The front matter with each ``tools.<key>`` set to exactly ``entries[key]`` (added, or replacing
    what was there): a command list and ``env``/``headers`` maps in flow style, as the docs write them;
    ``None`` when every entry says so already."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    yaml, data, tools = _load_tools(front, create=True)
    changed = False
    for key, options in entries.items():
        if tools.get(key) == dict(options):
            continue
        entry = CommentedMap()
        for name, value in options.items():
            if isinstance(value, list | tuple | Mapping):
                value = CommentedSeq(value) if isinstance(value, list | tuple) else CommentedMap(value)
                value.fa.set_flow_style()
            entry[name] = value
        tools[key] = entry
        changed = True
    return _dumped(yaml, data) if changed else None


def set_tool_pack(front: FrontMatter, pack: str, options: Mapping[str, Any] | None) -> str | None:
    """The front matter with ``tools.<pack>`` set to ``options`` (added, or its keys updated), or with
    ``tools.<pack>`` removed when ``options`` is ``None``; ``None`` when nothing changes."""
    from ruamel.yaml.comments import CommentedMap

    yaml, data, tools = _load_tools(front, create=options is not None)
    if tools is None:
        return None
    if options is None:
        if pack not in tools:
            return None
        del tools[pack]
    else:
        entry = tools.get(pack)
        if pack not in tools or entry is None:
            entry = CommentedMap()
            if not options:
                entry.fa.set_flow_style()  # `pack: {}`, as the docs write it
            tools[pack] = entry
        elif not isinstance(entry, CommentedMap):
            raise UsageError(f"tools.{pack} must be a map")
        elif all(key in entry and entry[key] == value for key, value in options.items()):
            return None  # mounted already, with these options
        entry.update(options)
    return _dumped(yaml, data)


def option_value(text: str) -> tuple[str, Any]:
    """``--option key=value``: the value read as a YAML scalar (``3`` an int, ``true`` a bool,
    ``[a, b]`` a list), else kept as the string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--option {text!r}: expected key=value")
    try:
        parsed = load_yaml(value) if value.strip() else value
    except YamlError:
        parsed = value
    return key.strip(), parsed


def write_validated(path: Path, content: str, validate: Callable[[Path], None]) -> None:
    """Write ``content`` to a temporary file beside ``path``, ``validate`` it there, then rename it
    over ``path`` (keeping its permissions); on any failure ``path`` is left as it was."""
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
        with contextlib.suppress(OSError):
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        validate(temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def workflow_target(args: Any, *, create: bool) -> tuple[Path, FrontMatter]:
    """The workflow ``args`` names (or ``./WORKFLOW.md``) and its front matter; with none and ``create``,
    ``./WORKFLOW.md`` starting from the embedded default (the local board) it was serving."""
    path = find_workflow(args.workflow, cwd=Path.cwd(), env=os.environ)
    if path is not None:
        return path, read_front_matter(path)
    if create:
        return Path.cwd() / "WORKFLOW.md", FrontMatter("---\n", "tracker: {kind: local}\n", "---\n")
    msg = f"no WORKFLOW.md in {Path.cwd()}: write one (a first line ---, tracker: {{kind: local}}, ---) or name it"
    raise UsageError(msg)


def edit_tools(args: Any, pack: str, options: Mapping[str, Any] | None) -> tuple[Path, list[str] | None]:
    """Set (``options``) or remove (``None``) ``tools.<pack>`` in the workflow ``args`` names, validated
    as ``lorenz check`` validates it before it is written; the file, and the pack's mounted tools
    (``None`` when the file already said so and was left alone)."""
    path, front = workflow_target(args, create=options is not None)
    text = set_tool_pack(front, pack, options)
    if text is None:
        return path, None
    tools: list[str] = []

    def validate(candidate: Path) -> None:
        tools.extend(_validated_tools(args, candidate, path, pack))

    write_validated(path, front.joined(text), validate)
    return path, tools


def _validated_tools(args: Any, candidate: Path, shown_as: Path, pack: str) -> list[str]:
    """The tools of ``pack`` that ``candidate`` mounts, or a :class:`UsageError` naming ``shown_as`` with what
    ``lorenz check`` would refuse."""

    def named(text: str) -> str:
        return text.replace(str(candidate), str(shown_as)).replace(candidate.name, shown_as.name)

    try:
        workspace = open_workspace(candidate, plugins=load_plugin_modules(args))
    except UsageError:
        raise
    except Exception as exc:  # what lorenz check would print, about the edited file
        raise UsageError(f"not written: {named(' '.join(redact_text(str(exc)).split()))}") from exc
    try:
        broken = [failure.error for failure in workspace.mounted.failures]
        problems = broken or check_pack_settings(workspace.settings, workspace.packs())
        if problems:
            raise UsageError(f"not written: {named('; '.join(problems))}")
        owners = workspace.tool_owners()
        return [spec.name for spec in workspace.tool_specs() if owners.get(spec.name) == pack]
    finally:
        workspace.close()


def workflow_keys(args: Any) -> list[str]:
    """The keys of the ``tools:`` map of the workflow ``args`` names, if there is one."""
    path = find_workflow(args.workflow, cwd=Path.cwd(), env=os.environ)
    return named_packs(path) if path is not None else []


def named_packs(path: Path) -> list[str]:
    """The packs ``path``'s ``tools:`` map names."""
    try:
        config = load_yaml(read_front_matter(path).text)
    except ValueError:
        return []
    tools = config.get("tools") if isinstance(config, dict) else None
    return [str(name) for name in tools] if isinstance(tools, dict) else []


def mounted_packs(path: Path) -> set[str]:
    """The packs ``path`` mounts: each ``tools:`` key, or its ``provider`` when it names one; an
    unreadable file mounts none (what is wrong with it is ``lorenz check``'s to say)."""
    try:
        config = load_yaml(read_front_matter(path).text)
    except (UsageError, ValueError):
        return set()
    tools = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(tools, dict):
        return set()
    entries = [(key, entry.get("provider") if isinstance(entry, dict) else None) for key, entry in tools.items()]
    return {str(provider) if isinstance(provider, str) else str(key) for key, provider in entries}
