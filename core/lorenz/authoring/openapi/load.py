"""Read an OpenAPI 3.0/3.1 document (a file or an ``http(s)://`` URL, JSON or YAML), inline its
``$ref`` s (local and to files beside it) with ``referencing``, so the rest of the generator sees
plain dicts, and validate it with ``openapi-spec-validator``. Each file is read once, through
:func:`_read` (every fetch has a timeout), for both.

Every problem is a :class:`OpenAPIError` naming the JSON pointer at fault.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

__all__ = ["FETCH_TIMEOUT_SECONDS", "REF_MARK", "OpenAPIError", "load_document"]

FETCH_TIMEOUT_SECONDS = 30.0
#: How deep an inlined ``$ref`` chain may go: past it a recursive schema stays an open object.
MAX_REF_DEPTH = 12
#: The key an inlined ``$ref`` leaves behind, naming the component it was (``Pet``): the generated
#: class's name. A specification extension, so the inlined document stays valid.
REF_MARK = "x-lorenz-ref"
_MAX_MESSAGE = 300


class OpenAPIError(ValueError):
    """A document that cannot be read, is not valid OpenAPI 3.x, or has a ``$ref`` that does not resolve."""


def _parse(text: str, where: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return json.loads(text) if text.lstrip().startswith("{") else YAML(typ="safe", pure=True).load(text)
    except (ValueError, YAMLError) as exc:
        raise OpenAPIError(f"{where}: not JSON or YAML: {str(exc).splitlines()[0]}") from None


def _read(uri: str) -> Any:
    """The parsed document at ``uri`` (``file://`` or ``http(s)://``)."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        import httpx

        try:
            response = httpx.get(uri, timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise OpenAPIError(f"{parts.scheme}://{parts.netloc}{parts.path}: {exc}") from None
        return _parse(response.text, parts.path)
    path = Path(parts.path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OpenAPIError(f"{path}: {exc.strerror or exc}") from None
    return _parse(text, str(path))


def _base_uri(source: str) -> str:
    if urlsplit(source).scheme in ("http", "https"):
        return source
    return Path(source).resolve().as_uri()


def load_document(source: str) -> dict[str, Any]:
    """The validated document at ``source`` with every ``$ref`` inlined."""
    base = _base_uri(source)
    cache: dict[str, Any] = {}

    def read(uri: str) -> Any:
        where = uri.partition("#")[0]
        if where not in cache:
            cache[where] = _read(where)
        return cache[where]

    document = read(base)
    if not isinstance(document, Mapping):
        raise OpenAPIError(f"{source}: the document is not a JSON object")
    version = str(document.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        found = f"openapi: {version}" if version else "no openapi key (Swagger 2.0 is not supported)"
        raise OpenAPIError(f"{source}: /openapi: expected an OpenAPI 3.0 or 3.1 document, found {found}")
    # Inlined first: a $ref that does not resolve is named by where it sits. The validator then
    # reads the document as written, its $refs through the same reads: the inlined one repeats
    # each shared schema wherever it is used (30 times slower to validate for a large API).
    inlined: dict[str, Any] = _Inliner(base, dict(document), source, read).inline(document, base, (), "")
    _validate(document, base, source, read)
    return inlined


def _validate(document: Mapping[str, Any], base: str, source: str, read: Callable[[str], Any]) -> None:
    try:
        from jsonschema_path import SchemaPath
        from openapi_spec_validator.shortcuts import get_validator_cls
        from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
    except ImportError:
        msg = "checking an OpenAPI document needs the openapi extra: pip install 'lorenz-core[openapi]'"
        raise OpenAPIError(msg) from None

    handlers = dict.fromkeys(("<all_urls>", "http", "https", "file"), read)
    path = SchemaPath.from_dict(document, base_uri=base, handlers=handlers)
    try:
        get_validator_cls(document)(path).validate()
    except OpenAPIValidationError as exc:
        pointer = "/" + "/".join(_escape(part) for part in exc.absolute_path)
        message = exc.message.splitlines()[0]
        if len(message) > _MAX_MESSAGE:  # the validator quotes the whole value at fault
            message = message[: _MAX_MESSAGE // 2] + " … " + message[-_MAX_MESSAGE // 2 :]
        raise OpenAPIError(f"{source}: {pointer}: {message}") from None


class _Inliner:
    """Replaces each ``$ref`` by what it points to, through a :mod:`referencing` registry that
    retrieves the files beside the document."""

    def __init__(self, base: str, document: dict[str, Any], source: str, read: Callable[[str], Any]) -> None:
        self.source = source
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        def retrieve(uri: str) -> Resource[Any]:
            return DRAFT202012.create_resource(read(uri))

        registry: Registry[Any] = Registry(retrieve=retrieve)  # type: ignore[call-arg]
        self.registry = registry.with_resource(base, DRAFT202012.create_resource(document))

    def inline(self, node: Any, base: str, chain: tuple[str, ...], where: str) -> Any:
        from referencing.exceptions import Unresolvable

        if isinstance(node, list):
            return [self.inline(item, base, chain, f"{where}/{i}") for i, item in enumerate(node)]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = urljoin(base, ref)
            component = ref.rpartition("/")[2] or ref
            if chain.count(target) >= 2 or len(chain) >= MAX_REF_DEPTH:
                # A cycle (Node.children: [Node]) is spelled out once, then ends as an object of any shape.
                return {"type": "object", "description": f"A {component} (recursive: not spelled out again here)."}
            try:
                resolved = self.registry.resolver(base_uri=base).lookup(ref)
            except (Unresolvable, OpenAPIError) as exc:
                problem = "no such file or pointer" if isinstance(exc, Unresolvable) else str(exc)
                raise OpenAPIError(f"{self.source}: {where}/$ref: {ref!r} does not resolve ({problem})") from None
            contents = resolved.contents
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            merged = {REF_MARK: component, **contents, **siblings} if isinstance(contents, Mapping) else contents
            return self.inline(merged, target.partition("#")[0], (*chain, target), where)
        return {key: self.inline(value, base, chain, f"{where}/{_escape(key)}") for key, value in node.items()}


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
