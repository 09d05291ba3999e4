"""URI templates of resources, RFC 6570 level 1: ``{name}`` matches one non-empty,
percent-decoded path segment."""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["match_template", "template_pattern", "template_variables"]

_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def template_variables(template: str) -> list[str]:
    """The ``{name}`` variables of ``template``, in order."""
    return _VARIABLE.findall(template)


def template_pattern(template: str) -> re.Pattern[str]:
    """A regular expression matching the URIs of ``template``, one group per variable."""
    parts, last = [], 0
    for match in _VARIABLE.finditer(template):
        parts.append(re.escape(template[last : match.start()]))
        parts.append(f"(?P<{match.group(1)}>[^/?#]+)")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts))


def match_template(pattern: re.Pattern[str], uri: str) -> dict[str, str] | None:
    """``{variable: decoded value}`` when ``uri`` is one of the template's URIs."""
    found = pattern.fullmatch(uri)
    return None if found is None else {name: unquote(value) for name, value in found.groupdict().items()}
