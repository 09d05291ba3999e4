"""The source of a generated pack's ``generated.py``: the template's helpers (``template/``, a real
module ruff and mypy check), then what the document says: the hosts, one option per credential its
security schemes need, and one ``@tool`` per selected operation with its input and output classes,
annotations from the method and error contracts from the documented responses."""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Mapping, Sequence
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen

from .emit import Expr, Raw, call, docstring, lit, signature, statement
from .names import class_name, snake
from .operations import Operation, json_schema_of
from .schema_to_attrs import Field, Model, Models, json_schema

__all__ = [
    "TEMPLATE",
    "TOOL_MARK",
    "Api",
    "Credential",
    "api_of",
    "examples_of",
    "render_generated",
    "spelled",
    "tool_blocks",
]

TEMPLATE = files(__package__ or "lorenz.authoring.openapi").joinpath("template")
#: The line before each tool's code in generated.py: what ``--update`` compares tool by tool.
TOOL_MARK = "# -- tool "
#: Where the template's own example of what a document gives starts (it is replaced).
_CUT = "# -- from the document"
_SPELLINGS = re.compile(r"template_api|template-api|TemplateApi|TEMPLATE_API")
_HINTS = {
    "get": {"read_only": True, "idempotent": True, "open_world": True},
    "head": {"read_only": True, "idempotent": True, "open_world": True},
    "put": {"read_only": False, "destructive": False, "idempotent": True, "open_world": True},
    "delete": {"read_only": False, "destructive": True, "idempotent": True, "open_world": True},
    "post": {"read_only": False, "destructive": False, "idempotent": False, "open_world": True},
    "patch": {"read_only": False, "destructive": False, "idempotent": False, "open_world": True},
}
#: Documented status → the contract the template declares.
_CONTRACTS = {"400": "INVALID", "409": "INVALID", "422": "INVALID", "401": "UNAUTHORIZED", "403": "FORBIDDEN"}
_CONTRACTS |= {"404": "NOT_FOUND", "429": "RATE_LIMITED"}
#: Names the generated module binds before the tools: no handler or class may take one.
_BOUND = frozenset(
    {"attrs", "base64", "describe", "failure_from", "field", "frozen", "hints", "httpx", "os", "quote", "re"}
    | {"redact_text", "structure_strict", "tool", "types", "typing", "unstructure", "Sequence", "Any", "Literal"}
    | {"TypeVar", "AttrsInstance", "ArgumentError", "CallContext", "ErrorContract", "Tool", "ToolFailure", "R"}
    | {"Credential", "annotations"}
)
_RESERVED_OPTIONS = frozenset({"base_url", "timeout_seconds"})
_MAX_DESCRIPTION = 1000


@frozen(kw_only=True)
class Credential:
    """One security scheme the pack's tools need: the option holding its value and how it is sent."""

    scheme: str  # its name in components.securitySchemes
    option: str
    kind: str  # header / query (an API key), bearer, basic
    name: str  # the header or query parameter
    env: str
    text: str  # what the option's description says it is


@frozen(kw_only=True)
class Api:
    """What the whole pack needs from the document."""

    title: str
    base_url: str
    hosts: tuple[str, ...]  # host:port, for Permissions(network=...)
    credentials: tuple[Credential, ...]

    def options(self, security: Sequence[Sequence[str]]) -> list[list[str]]:
        """An operation's security alternatives as credential options: those it cannot meet (a
        scheme Lorenz does not send) left out; none when it needs no credential."""
        by_scheme = {c.scheme: c.option for c in self.credentials}
        usable = [[by_scheme[s] for s in alt] for alt in security if all(s in by_scheme for s in alt)]
        if not usable or usable == [[]]:
            return []
        return sorted(usable, key=lambda alt: not alt)  # a credential when one is set, else anonymous


def _server_url(server: Mapping[str, Any]) -> str:
    url = str(server.get("url") or "")
    for name, variable in (server.get("variables") or {}).items():
        url = url.replace("{" + str(name) + "}", str((variable or {}).get("default", "")))
    return url.rstrip("/")


def _credential(pack: str, scheme: str, spec: Mapping[str, Any], taken: set[str]) -> Credential | None:
    kind, name = str(spec.get("type") or ""), str(spec.get("name") or "")
    http = str(spec.get("scheme") or "").lower()
    if kind == "apiKey" and spec.get("in") == "header":
        how, text = "header", f"The API key sent in the {name} header"
    elif kind == "apiKey" and spec.get("in") == "query":
        how, text = "query", f"The API key sent as the {name} query parameter"
    elif kind == "http" and http == "basic":
        how, text = "basic", "The user:password sent as HTTP basic authentication"
    elif (kind == "http" and http == "bearer") or kind in ("oauth2", "openIdConnect"):
        what = "bearer token" if kind == "http" else "access token (obtained by the operator)"
        how, text = "bearer", f"The {what} sent in the Authorization header"
    else:
        return None  # a cookie, mutual TLS, digest: not sent (docs/openapi-packs.md)
    option = snake(scheme)
    option = f"{option}_credential" if option in _RESERVED_OPTIONS else option
    while option in taken:
        option += "_"
    taken.add(option)
    env = f"{pack.upper()}_{option.upper().strip('_')}"
    text += f": write ${env} (resolved from the environment), never the value itself."
    return Credential(scheme=scheme, option=option, kind=how, name=name, env=env, text=text)


def api_of(document: Mapping[str, Any], ops: Sequence[Operation], pack: str) -> Api:
    urls = [_server_url(s) for s in document.get("servers") or () if isinstance(s, Mapping)]
    absolute = [u for u in urls if urlsplit(u).scheme in ("http", "https") and urlsplit(u).hostname]
    hosts: list[str] = []
    for url in absolute:
        parts = urlsplit(url)
        host = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        if host not in hosts:
            hosts.append(host)
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    used = {scheme for op in ops for alternative in op.security for scheme in alternative}
    taken: set[str] = set()
    found = [_credential(pack, str(n), s, taken) for n, s in schemes.items() if n in used and isinstance(s, Mapping)]
    title = " ".join(str((document.get("info") or {}).get("title") or "the API").split())
    return Api(
        title=title,
        base_url=absolute[0] if absolute else "",
        hosts=tuple(hosts),
        credentials=tuple(c for c in found if c is not None),
    )


def _success(op: Operation) -> tuple[str, Any] | None:
    """``("object" | "items" | "result" | "status", schema)`` for the first documented 2xx."""
    for status in sorted(str(s) for s in op.responses):
        if not status.startswith("2"):
            continue
        content = (op.responses[status] or {}).get("content")
        schema = json_schema_of(content)
        if schema is None:  # no body: the status; a body not JSON: its text
            return ("result", {"type": "string"}) if content else ("status", None)
        if isinstance(schema.get("properties"), Mapping) or "allOf" in schema:
            return ("object", schema)
        return ("items" if schema.get("type") == "array" else "result", schema)
    return None


def _example(content: Mapping[str, Any]) -> tuple[bool, Any]:
    """Whether a JSON media type of ``content`` has an example, and the first it has."""
    for media, entry in content.items():
        if json_schema_of({media: entry}) is None or not isinstance(entry, Mapping):
            continue
        if "example" in entry:
            return True, entry["example"]
        for example in (entry.get("examples") or {}).values():
            if isinstance(example, Mapping) and "value" in example:
                return True, example["value"]
        schema = entry.get("schema")
        if isinstance(schema, Mapping) and "example" in schema:
            return True, schema["example"]
    return False, None


def examples_of(tools: Sequence[tuple[str, Operation]]) -> dict[str, dict[str, Any]]:
    """Each tool's first documented 2xx answer ``{"status", "body"}``, where the document gives an
    example that its schema accepts (an example that contradicts its schema tests nothing)."""
    from jsonschema import Draft202012Validator

    out: dict[str, dict[str, Any]] = {}
    for name, op in tools:
        status = next((s for s in sorted(map(str, op.responses)) if s.startswith("2")), None)
        content = (op.responses.get(status) or {}).get("content") if status else None
        if not isinstance(content, Mapping) or (schema := json_schema_of(content)) is None:
            continue
        found, example = _example(content)
        if found and Draft202012Validator(json_schema(schema)).is_valid(example):
            out[name] = {"status": int(status) if status and status.isdigit() else 200, "body": example}
    return out


def _words(text: str) -> str:
    return " ".join(text.split())


def spelled(text: str, pack: str, cls: str) -> str:
    """A template file's text for pack ``pack`` (its class-name stem ``cls``)."""
    spellings = {"template_api": pack, "template-api": pack.replace("_", "-"), "TemplateApi": cls}
    spellings["TEMPLATE_API"] = pack.upper()
    return _SPELLINGS.sub(lambda m: spellings[m.group()], text)


def _description(op: Operation, title: str) -> str:
    paragraph = op.description.split("\n\n")[0]
    text = _words(". ".join(t.strip().rstrip(".") for t in (op.summary, paragraph) if t.strip()))
    text = text or f"{op.method.upper()} {op.path}"
    if len(text) > _MAX_DESCRIPTION:
        text = text[:_MAX_DESCRIPTION].rsplit(" ", 1)[0] + "…"
    return text.rstrip(".") + f". Calls {op.method.upper()} {op.path} on {title}."


class _Module:
    """The document's part of one generated module, tool by tool."""

    def __init__(self, pack: str, api: Api) -> None:
        self.pack, self.api = pack, api
        self.models = Models(set(_BOUND) | {f"{class_name(pack)}Options"})
        self.funcs: list[str] = []

    def tool(self, name: str, op: Operation) -> str:
        """One tool's block: the classes it introduces, its input and output classes, the tool."""
        first = len(self.models.models)
        func = name.removeprefix(self.pack + "_")
        func = f"{func}_tool" if func in _BOUND else func
        self.funcs.append(func)
        base = class_name(func)[:40]
        taken: set[str] = set()
        self.models.request = True
        params = [(p, self.models.parameter_field(p, base, taken)) for p in op.parameters]
        body: Expr | None = None
        body_fields: list[Field] = []
        if op.body is not None:
            fields = self.models.object_fields(op.body, base, taken=taken)
            if fields is not None:
                body_fields = fields
                body = lit({f.wire: Raw(f"args.{f.name}") for f in fields})
            else:
                text = "The request body, as the API takes it (JSON)."
                body_fields = [self.models.wrapper_field("body", op.body, text, base, required=op.body_required)]
                body = Raw(f"args.{body_fields[0].name}")
        fields = [f for _, f in params] + body_fields
        args = self.models.add(f"{base}Args", f"The arguments of {name}.", fields)
        self.models.request = False
        shape, schema = _success(op) or ("result", {})
        result_fields = self.models.object_fields(schema, base) if shape == "object" else None
        if result_fields is None and shape == "object":
            shape = "result"
        if shape == "status":
            text = "The HTTP status the API answered (no JSON body)."
            result_fields = [self.models.wrapper_field("status", {"type": "integer"}, text, base)]
        elif shape != "object":
            text = "The items the API answered." if shape == "items" else "What the API answered (JSON)."
            result_fields = [self.models.wrapper_field(shape, schema, text, base)]
        result = self.models.add(f"{base}Result", f"What {name} answers.", result_fields or [])
        new = self.models.models[first:]
        source = "".join(model.source() + "\n\n" for model in new)
        source += self._decorator(name, op, args, result) + signature(
            func, ["ctx: CallContext", f"args: {args.name}"], result.name
        )
        source += self._body(op, params, body, shape, result)
        return f"{TOOL_MARK}{name} (classes {self._digest(result, args)})\n{source}"

    def _decorator(self, name: str, op: Operation, args: Model, result: Model) -> str:
        errors = sorted({_CONTRACTS[s] for s in map(str, op.responses) if s in _CONTRACTS})
        errors += ["UNAVAILABLE"] if any(str(s).startswith("5") for s in op.responses) else []
        if self.api.options(op.security) and "UNAUTHORIZED" not in errors:
            errors.append("UNAUTHORIZED")  # also when no credential is set
        summary = _words(op.summary) or f"{op.method.upper()} {op.path}"
        return statement(
            "@",
            call(
                "tool",
                name=lit(name),
                title=lit(summary[:80]),
                description=lit(_description(op, self.api.title)),
                annotations=call("hints", **{key: Raw(repr(value)) for key, value in _HINTS[op.method].items()}),
                input=Raw(args.name),
                output=Raw(result.name),
                errors=lit([Raw(e) for e in errors]),
            ),
        )

    def _body(
        self, op: Operation, params: list[tuple[Mapping[str, Any], Field]], body: Expr | None, shape: str, result: Model
    ) -> str:
        by_place: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "header": {}}
        for parameter, f in params:
            by_place[str(parameter["in"])][f.wire] = Raw(f"args.{f.name}")
        keyword = {"path": "path_params", "query": "query", "header": "header"}
        arguments: dict[str, Expr] = {keyword[place]: lit(items) for place, items in by_place.items() if items}
        if body is not None:
            arguments["body"] = body
        security = self.api.options(op.security)
        if security:
            arguments["security"] = lit(security)
        request = call("_call", Raw("ctx"), lit(op.method.upper()), lit(op.path), **arguments)
        if shape == "status":
            return statement("status, _ = await ", request, "    ") + f"    return {result.name}(status=status)\n"
        received = statement("_, data = await ", request, "    ")
        data: Expr = Raw("data") if shape == "object" else lit({shape: Raw("data")})
        return received + statement("return ", call("_pick", Raw("ctx"), Raw(result.name), data), "    ")

    def _digest(self, *roots: Model) -> str:
        """A digest of the classes a tool's block uses, including shared ones defined before it: what
        ``--update`` compares (a shared class that changed changes every tool using it)."""
        by_name = {m.name: m for m in self.models.models}
        seen: dict[str, Model] = {}
        stack = list(roots)
        while stack:
            model = stack.pop()
            if model.name not in seen:
                seen[model.name] = model
                stack += [by_name[u] for u in model.uses if u in by_name]
        text = "".join(seen[n].source() for n in sorted(seen))
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def head(self) -> str:
        """The hosts, the credentials and the options class."""
        credentials = {
            c.option: call("Credential", kind=lit(c.kind), name=lit(c.name), env=lit(c.env))
            for c in self.api.credentials
        }
        out = [
            "#: The hosts the servers of the OpenAPI document name (host:port): what the pack may reach.\n",
            statement("HOSTS: tuple[str, ...] = ", lit(self.api.hosts)),
            "#: The credentials the document's securitySchemes describe, by the option that holds each.\n",
            statement("CREDENTIALS: dict[str, Credential] = ", lit(credentials)),
            "#: The environment variables the credentials are read from when their options are not set.\n",
            "CREDENTIAL_ENV: tuple[str, ...] = tuple(credential.env for credential in CREDENTIALS.values())\n",
        ]
        options: list[tuple[str, dict[str, Expr], str, dict[str, Expr]]] = [
            (
                "base_url: str = ",
                {"default": lit(self.api.base_url)},
                "The API's base URL, from the document's servers.",
                {},
            ),
            (
                "timeout_seconds: float = ",
                {"default": Raw("30.0")},
                "How long one request to the API may take, in seconds.",
                {"exclusiveMinimum": Raw("0")},
            ),
        ]
        for c in self.api.credentials:
            options.append((f"{c.option}: str | None = ", {"default": Raw("None"), "repr": Raw("False")}, c.text, {}))
        out += ["\n\n@frozen(kw_only=True)\n", f"class {class_name(self.pack)}Options:\n"]
        out.append(docstring(f"``tools.{self.pack}`` in WORKFLOW.md."))
        out.append("\n")
        for prefix, keywords, text, more in options:
            out.append(
                statement(prefix, call("field", **keywords, metadata=call("describe", lit(text), **more)), "    ")
            )
        return "".join(out)


def _docstring(title: str, command: str) -> str:
    about = textwrap.fill(
        f"They call {title}. Regenerate this module when the API changes (your own changes, which tools the pack "
        "serves, renamed or extra tools, permissions, belong in tools.py, which is never rewritten):",
        100,
    )
    run = textwrap.fill(command, 112, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False)
    text = f"The tools generated by `lorenz new-pack --from-openapi`; do not edit.\n\n{about}\n\n{run}\n"
    return '"""' + text.replace("\\", "\\\\").replace('"""', "'''") + '"""\n'


def render_generated(pack: str, cls: str, api: Api, tools: Sequence[tuple[str, Operation]], command: str) -> str:
    """The whole ``generated.py``, one tool per ``(name, operation)``; ``command`` regenerates it."""
    template = TEMPLATE.joinpath("lorenz_template_api", "generated.py").read_text("utf-8")
    helpers = spelled(template.partition(_CUT)[0], pack, cls)
    helpers = _docstring(api.title, command) + helpers.partition('"""\n')[2]
    module = _Module(pack, api)
    blocks = [module.tool(name, op) for name, op in tools]
    listing = statement("TOOLS: list[Tool[Any, Any]] = ", lit([Raw(f) for f in module.funcs]))
    cut = f"{_CUT}: everything below is written from the OpenAPI document.\n\n"
    return helpers + cut + module.head() + "\n\n" + "\n\n".join(blocks) + "\n\n" + listing


def tool_blocks(text: str) -> dict[str, str]:
    """Each tool's code in a generated module, by tool name."""
    blocks: dict[str, str] = {}
    for chunk in text.split("\n" + TOOL_MARK)[1:]:
        name, _, body = chunk.partition("\n")
        blocks[name.split()[0]] = (name + "\n" + body).split("\nTOOLS: ")[0].strip()
    return blocks
