"""The source of a generated pack's ``generated.py``: its options (base URL, credential, timeout),
one ``@tool`` per selected operation with its input and output classes, annotations from the
method and error contracts from the documented responses, and the helper that calls the API
through ``ctx.http``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen

from .names import class_name
from .operations import Operation, json_schema_of
from .schema_to_attrs import Field, Model, model_source, object_fields, parameter_field, wrapper_field

__all__ = ["TOOL_MARK", "Api", "api_of", "doc_text", "render_generated", "tool_blocks"]

#: The line before each tool's code in generated.py: what ``--update`` compares tool by tool.
TOOL_MARK = "# -- tool "
_HELPERS = files(__package__ or "lorenz.authoring.openapi").joinpath("helpers.py.txt")
_HINTS = {
    "get": "read_only=True, idempotent=True, open_world=True",
    "head": "read_only=True, idempotent=True, open_world=True",
    "put": "read_only=False, destructive=False, idempotent=True, open_world=True",
    "delete": "read_only=False, destructive=True, idempotent=True, open_world=True",
    "post": "read_only=False, destructive=False, idempotent=False, open_world=True",
    "patch": "read_only=False, destructive=False, idempotent=False, open_world=True",
}
#: Documented status → the contract constant the generated module declares (helpers.py.txt).
_CONTRACTS = {"400": "INVALID", "409": "INVALID", "422": "INVALID", "401": "UNAUTHORIZED", "403": "FORBIDDEN"}
_CONTRACTS |= {"404": "NOT_FOUND", "429": "RATE_LIMITED"}


@frozen(kw_only=True)
class Api:
    """What the whole pack needs from the document."""

    title: str
    base_url: str
    hosts: tuple[str, ...]  # host:port, for Permissions(network=...)
    credential: str | None  # header / query / bearer / basic
    credential_name: str  # the header or query parameter name

    def env(self, pack: str) -> str:
        """The environment variable the credential is read from."""
        return f"{pack.upper()}_{'TOKEN' if self.credential == 'bearer' else 'API_KEY'}"


def _server_url(server: Mapping[str, Any]) -> str:
    url = str(server.get("url") or "")
    for name, variable in (server.get("variables") or {}).items():
        url = url.replace("{" + str(name) + "}", str((variable or {}).get("default", "")))
    return url.rstrip("/")


def api_of(document: Mapping[str, Any], ops: Sequence[Operation]) -> Api:
    urls = [_server_url(s) for s in document.get("servers") or () if isinstance(s, Mapping)]
    absolute = [u for u in urls if urlsplit(u).scheme in ("http", "https") and urlsplit(u).hostname]
    hosts = []
    for url in absolute:
        parts = urlsplit(url)
        host = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        if host not in hosts:
            hosts.append(host)
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    wanted = [name for req in document.get("security") or () for name in req]
    scheme = next((schemes[n] for n in wanted if n in schemes), None)
    if scheme is None and any(op.secured for op in ops) and schemes:
        scheme = next(iter(schemes.values()))
    credential, credential_name = None, ""
    if isinstance(scheme, Mapping):
        kind = scheme.get("type")
        if kind == "apiKey" and scheme.get("in") in ("header", "query"):
            credential, credential_name = str(scheme["in"]), str(scheme.get("name") or "")
        elif kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
            credential = "basic"
        elif kind in ("http", "oauth2", "openIdConnect"):
            credential = "bearer"  # an access token the operator obtains
    title = str((document.get("info") or {}).get("title") or "the API")
    return Api(
        title=title,
        base_url=absolute[0] if absolute else "",
        hosts=tuple(hosts),
        credential=credential,
        credential_name=credential_name,
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
        if object_fields(schema) is not None:
            return ("object", schema)
        return ("items" if schema.get("type") == "array" else "result", schema)
    return None


#: Names the generated module already binds: a handler named like one gets a ``_tool`` suffix.
_BOUND = frozenset(
    {"attrs", "base64", "describe", "failure_from", "field", "frozen", "hints", "httpx", "os", "quote", "re"}
    | {"redact_text", "structure_strict", "tool"}
)


def _words(text: str) -> str:
    return " ".join(text.split())


def doc_text(text: str) -> str:
    """``text`` safe inside a docstring."""
    return _words(text.replace("\\", "\\\\").replace('"""', "'''"))


def _tool_source(pack: str, name: str, op: Operation, api: Api) -> tuple[str, list[str]]:
    func = name.removeprefix(pack + "_")
    func = f"{func}_tool" if func in _BOUND else func
    base = class_name(func)
    taken: set[str] = set()
    params = [(p, parameter_field(p, taken)) for p in op.parameters]
    body_fields: list[Field] | None = None
    body_source = "None"
    if op.body is not None:
        body_fields = object_fields(op.body, taken=taken)
        if body_fields is not None:
            body_source = "{" + ", ".join(f"{f.wire!r}: args.{f.name}" for f in body_fields) + "}"
        else:
            text = "The request body, as the API takes it (JSON)."
            field = wrapper_field("body", op.body, text, required=op.body_required)
            body_fields = [field]
            body_source = f"args.{field.name}"
    fields = [f for _, f in params] + (body_fields or [])
    models = [Model(name=f"{base}Args", doc=f"The arguments of {name}.", fields=tuple(fields))]
    success = _success(op)
    output = f"{base}Result"
    shape, schema = success or ("result", {})
    if shape == "object":
        out_fields = object_fields(schema) or []
        convert = "_pick(ctx, {cls}, data)"
    elif shape == "status":
        out_fields = [wrapper_field("status", {"type": "integer"}, "The HTTP status the API answered (no JSON body).")]
        convert = "{cls}(status=status)"
    else:
        text = "The items the API answered." if shape == "items" else "What the API answered (JSON)."
        out_fields = [wrapper_field(shape, schema, text)]
        convert = "_pick(ctx, {cls}, {{" + repr(shape) + ": data}})"
    models.append(Model(name=output, doc=f"What {name} answers.", fields=tuple(out_fields)))
    errors = sorted({_CONTRACTS[s] for s in map(str, op.responses) if s in _CONTRACTS})
    errors += ["UNAVAILABLE"] if any(str(s).startswith("5") for s in op.responses) else []
    summary = _words(op.summary) or f"{op.method.upper()} {op.path}"
    description = _words(" ".join(t for t in (op.summary, op.description) if t)) or summary
    description = description.rstrip(".") + f". Calls {op.method.upper()} {op.path} on {_words(api.title)}."
    by_place: dict[str, list[str]] = {"path": [], "query": [], "header": []}
    for parameter, field in params:
        by_place[str(parameter["in"])].append(f"{field.wire!r}: args.{field.name}")
    call = [f"ctx, {op.method.upper()!r}, {op.path!r}"]
    keyword = {"path": "path_params", "query": "query", "header": "header"}
    call += [f"{keyword[place]}={{{', '.join(items)}}}" for place, items in by_place.items() if items]
    if body_source != "None":
        call.append(f"body={body_source}")
    if op.secured and api.credential:
        call.append("secured=True")
    received = "status, _" if shape == "status" else "_, data"
    source = (
        f"{TOOL_MARK}{name}\n"
        + "\n\n".join(model_source(m) for m in models)
        + f"""

@tool(
    name={name!r},
    title={summary[:80]!r},
    description={description!r},
    annotations=hints({_HINTS[op.method]}),
    input={base}Args,
    output={output},
    errors=[{", ".join(errors)}],
)
async def {func}(ctx: CallContext, args: {base}Args) -> {output}:
    {received} = await _call({", ".join(call)})
    return {convert.format(cls=output)}
"""
    )
    return source, [func]


def render_generated(pack: str, cls: str, api: Api, tools: Sequence[tuple[str, Operation]], command: str) -> str:
    """The whole ``generated.py``, one tool per ``(name, operation)``; ``command`` regenerates it."""
    env = api.env(pack)
    helpers = _HELPERS.read_text("utf-8")
    replacements = {
        "TITLE": doc_text(api.title),
        "COMMAND": doc_text(command),
        "PACK": pack,
        "OPTIONS": f"{cls}Options",
        "BASE_URL": repr(api.base_url),
        "HOSTS": repr(api.hosts),
        "ENV": repr(env if api.credential else ""),
        "ENV_NAME": env,
        "CREDENTIAL": repr(api.credential),
        "CREDENTIAL_NAME": repr(api.credential_name),
    }
    for key, value in replacements.items():
        helpers = helpers.replace(f"@{key}@", value)
    sources, funcs = [], []
    for name, op in tools:
        text, found = _tool_source(pack, name, op, api)
        sources.append(text)
        funcs += found
    if any("Literal[" in text for text in sources):
        helpers = helpers.replace("from typing import Any, TypeVar", "from typing import Any, Literal, TypeVar")
    listing = "TOOLS: list[Tool[Any, Any]] = [" + ", ".join(funcs) + "]\n"
    return helpers + "\n\n" + "\n\n".join(sources) + "\n\n" + listing


def tool_blocks(text: str) -> dict[str, str]:
    """Each tool's code in a generated module, by tool name."""
    blocks: dict[str, str] = {}
    for chunk in text.split("\n" + TOOL_MARK)[1:]:
        name, _, body = chunk.partition("\n")
        blocks[name.strip()] = body.split("\nTOOLS: ")[0].strip()
    return blocks
