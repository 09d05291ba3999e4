"""The lint rules of a pack's resources and prompts (any provider with ``resource_specs`` or
``prompt_specs``): the hooks answer, URIs are URIs, templates have variables, nothing is declared
twice, and everything has a description. Template variables against a params class need no rule:
:func:`~lorenz.authoring.resource_template` refuses a mismatch when it is made."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lorenz.contracts import PromptSpec, ResourceSpec, ToolProvider
from lorenz.results import error_message
from lorenz.uri_templates import template_variables

from .diagnostics import Diagnostic

__all__ = ["offer_rules"]


def _specs(pack: ToolProvider, hook: str, kind: type, probe: Any) -> list[Any]:
    method = getattr(pack, hook, None)
    if not callable(method):
        return []
    specs = list(method(probe))
    wrong = [type(spec).__name__ for spec in specs if not isinstance(spec, kind)]
    if wrong:
        raise TypeError(f"{hook} returned a {wrong[0]}, not a {kind.__name__}")
    return specs


def offer_rules(pack: ToolProvider, probe: Any) -> Iterator[Diagnostic]:
    """Every finding about ``pack``'s resources, resource templates and prompts."""
    name = str(getattr(pack, "name", "") or "")
    try:
        resources: list[ResourceSpec] = _specs(pack, "resource_specs", ResourceSpec, probe)
        prompts: list[PromptSpec] = _specs(pack, "prompt_specs", PromptSpec, probe)
    except Exception as exc:
        yield Diagnostic(rule="offers-raised", severity="error", pack=name, message=error_message(exc))
        return
    uris: set[str] = set()
    for spec in resources:
        what = "resource template" if spec.template else "resource"
        if spec.uri in uris:
            yield Diagnostic(rule="offer-unique", severity="error", pack=name, message=f"{what} {spec.uri} twice")
        uris.add(spec.uri)
        if ":" not in spec.uri:
            message = f"{what} {spec.uri!r} is not a URI (no scheme, like 'board://')"
            yield Diagnostic(rule="resource-uri", severity="error", pack=name, message=message)
        if bool(template_variables(spec.uri)) != spec.template:
            wanted = "has no {variables}" if spec.template else "has {variables} but is not a template"
            yield Diagnostic(rule="resource-uri", severity="error", pack=name, message=f"{what} {spec.uri} {wanted}")
        if not (spec.description or "").strip():
            message = f"{what} {spec.uri} has no description"
            yield Diagnostic(rule="offer-description", severity="warning", pack=name, message=message)
    names: set[str] = set()
    for prompt in prompts:
        if prompt.name in names:
            yield Diagnostic(rule="offer-unique", severity="error", pack=name, message=f"prompt {prompt.name} twice")
        names.add(prompt.name)
        if not (prompt.description or "").strip():
            message = f"prompt {prompt.name} has no description"
            yield Diagnostic(rule="offer-description", severity="warning", pack=name, message=message)
        for argument in prompt.arguments:
            if not (argument.description or "").strip():
                message = f"prompt {prompt.name}: argument {argument.name} has no description"
                yield Diagnostic(rule="offer-description", severity="warning", pack=name, message=message)
