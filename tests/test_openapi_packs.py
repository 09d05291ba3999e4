"""``lorenz new-pack --from-openapi``: packs generated from the Petstore 3.0 document, a 3.1
document split over two files and a document of odd shapes check clean as generated (ruff, mypy
--strict, ``lorenz lint``, their own tests) and answer against a mock of the API; curation and
invalid documents are refused by name."""

from __future__ import annotations

import base64
import importlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.authoring.lint import lint_path
from lorenz.authoring.openapi import OpenAPIError, new_openapi_pack
from lorenz.authoring.openapi.emit import call, lit, statement
from lorenz.authoring.openapi.names import MAX_TOOL_NAME, tool_names
from lorenz.authoring.openapi.operations import operations, select
from lorenz.authoring.openapi.render import examples_of
from lorenz.cli import main
from lorenz.testing import HostFactory

FIXTURES = Path(__file__).parent / "fixtures" / "openapi"
PETSTORE = FIXTURES / "petstore.yaml"
NOTES = FIXTURES / "split" / "notes.json"
ODD = FIXTURES / "odd.yaml"  # colliding names, awkward text, a key in the query, bodies of other shapes
SHOP = FIXTURES / "shop.yaml"  # nested objects, a $ref cycle, four security schemes


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("openapi")
    made = {name: root / f"lorenz-{name}" for name in ("petstore", "notes", "odd", "shop")}
    new_openapi_pack("petstore", str(PETSTORE), made["petstore"])
    new_openapi_pack("notes", str(NOTES), made["notes"])
    new_openapi_pack("odd", str(ODD), made["odd"])
    new_openapi_pack("shop", str(SHOP), made["shop"])
    sys.path[:0] = [str(path) for path in made.values()]
    yield made
    for path in made.values():
        sys.path.remove(str(path))
    for module in [m for m in sys.modules if m.split(".")[0] in {f"lorenz_{name}" for name in made}]:
        del sys.modules[module]  # a later test may generate a pack of the same name


def _pack(projects: dict[str, Path], name: str) -> ModuleType:
    return importlib.import_module(f"lorenz_{name}")


@pytest.mark.slow  # ruff, mypy and pytest on four projects: started first
def test_generated_projects_check_clean(projects: dict[str, Path]) -> None:
    """As generated: ruff check, ruff format --check, mypy --strict and `lorenz lint` all pass."""
    for name, project in projects.items():
        for command in (["ruff", "check", "."], ["ruff", "format", "--check", "."]):
            result = subprocess.run(
                [sys.executable, "-m", *command], cwd=project, capture_output=True, text=True, timeout=120
            )
            assert result.returncode == 0, f"{name}: {result.stdout}{result.stderr}"
        assert lint_path(project).diagnostics == (), name
        env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=project,
            env={**env, "PYTHONPATH": str(project)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, f"{name}: {result.stdout}{result.stderr}"
        assert f"{1 + len(_pack(projects, name).PACK.tools)} passed" in result.stdout, name
    packages = [str(project / f"lorenz_{name}") for name, project in projects.items()]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *packages],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_template_is_the_project_it_writes_for_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The template project (real files, checked as code) is, file for file, what the generator
    writes from fixtures/openapi/template_api.yaml for a pack named template_api."""
    template = files("lorenz.authoring.openapi").joinpath("template")
    monkeypatch.chdir(FIXTURES)
    new_openapi_pack("template_api", "template_api.yaml", tmp_path / "project")
    written_files = (
        "lorenz_template_api/generated.py",
        "lorenz_template_api/tools.py",
        "tests/test_template_api_pack.py",
    )
    for path in (*written_files, "tests/examples.json"):
        written = (tmp_path / "project" / path).read_text(encoding="utf-8")
        assert written == template.joinpath(path).read_text("utf-8"), path


def test_generated_module_is_marked_and_tools_follow_the_document(projects: dict[str, Path]) -> None:
    """One tool per operation (the deprecated one left out), annotations from the method, the
    servers' host and the credential's variable as permissions."""
    generated = (projects["notes"] / "lorenz_notes" / "generated.py").read_text(encoding="utf-8")
    assert "generated by `lorenz new-pack --from-openapi`" in generated.splitlines()[0]
    pack = _pack(projects, "notes").PACK
    specs = {tool.name: tool.spec() for tool in pack.tools}
    assert list(specs) == ["notes_get_note", "notes_replace_note", "notes_delete_note", "notes_get_note_text"]
    assert specs["notes_get_note"].annotations == {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}
    assert specs["notes_delete_note"].annotations["destructiveHint"] is True
    assert specs["notes_replace_note"].annotations["idempotentHint"] is True
    replace = specs["notes_replace_note"].input_schema["properties"]
    assert replace["status"]["enum"] == ["draft", "published"]
    assert replace["title"]["maxLength"] == 200
    assert "noteId" in specs["notes_replace_note"].input_schema["required"]
    assert list(pack.permissions.network) == ["notes.example.test:443"]
    assert list(pack.permissions.env) == ["NOTES_BEARER"]
    petstore = _pack(projects, "petstore").PACK
    assert list(petstore.permissions.network) == ["petstore.swagger.io:80"]
    assert [c.reason for c in petstore.tools[2].errors] == ["not_found", "rate_limited"]


def _api(routes: dict[str, httpx.Response], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return routes.get(f"{request.method} {request.url.copy_with(query=None)}", httpx.Response(500))

    return httpx.MockTransport(handler)


@pytest.mark.anyio
async def test_petstore_tools_answer_with_structured_content(
    projects: dict[str, Path], lorenz_host: HostFactory
) -> None:
    """A 200 becomes structured content matching the output schema; the query goes along."""
    pet = {"id": 7, "name": "Rex", "tag": "dog", "owner": "not in the schema"}
    seen: list[httpx.Request] = []
    routes = {
        "GET http://petstore.swagger.io/v1/pets/7": httpx.Response(200, json=pet),
        "GET http://petstore.swagger.io/v1/pets": httpx.Response(200, json=[pet]),
    }
    host = lorenz_host(_pack(projects, "petstore").PACK, transport=_api(routes, seen))
    outcome = await host.call_tool("petstore_show_pet_by_id", {"petId": "7"})
    assert outcome.mcp.is_error is not True, outcome.mcp
    assert outcome.mcp.structured_content == {"id": 7, "name": "Rex", "tag": "dog"}
    listed = await host.call_mcp("petstore_list_pets", {"limit": 5})
    assert listed.structured_content is not None
    assert listed.structured_content["items"][0]["name"] == "Rex"
    assert seen[-1].url.params["limit"] == "5"


@pytest.mark.anyio
async def test_documented_failures_keep_their_contracts(projects: dict[str, Path], lorenz_host: HostFactory) -> None:
    """404 is not_found with the contract's recovery; 429 is rate_limited with retryAfter."""
    routes = {
        "GET http://petstore.swagger.io/v1/pets/404": httpx.Response(404),
        "GET http://petstore.swagger.io/v1/pets/429": httpx.Response(429, headers={"Retry-After": "7"}),
    }
    host = lorenz_host(_pack(projects, "petstore").PACK, transport=_api(routes, []))
    missing = await host.call_tool("petstore_show_pet_by_id", {"petId": "404"})
    assert missing.mcp.is_error is True
    error = (missing.mcp.structured_content or {})["error"]
    assert error["reason"] == "not_found"
    assert error["recovery"] == "Check the identifiers in the arguments, or list or search to find the right one."
    limited = await host.call_tool("petstore_show_pet_by_id", {"petId": "429"})
    error = (limited.mcp.structured_content or {})["error"]
    assert error["reason"] == "rate_limited"
    assert error["retryAfter"] == 7
    assert error["retryable"] is True


@pytest.mark.anyio
async def test_credential_comes_from_the_option(projects: dict[str, Path], lorenz_host: HostFactory) -> None:
    """The bearer token goes in the header and never in an answer; without it, unauthorized names the option."""
    seen: list[httpx.Request] = []
    note = {"id": 5, "title": "Plan", "status": "draft"}
    routes = {"PUT https://notes.example.test/api/notes/5": httpx.Response(200, json=note)}
    pack = _pack(projects, "notes").PACK
    host = lorenz_host(pack, transport=_api(routes, seen), options={"notes": {"bearer": "s3cret-token"}})
    outcome = await host.call_tool("notes_replace_note", {"noteId": 5, "title": "Plan"})
    assert outcome.mcp.structured_content == {"id": 5, "title": "Plan", "status": "draft", "body": None, "labels": None}
    assert seen[0].headers["authorization"] == "Bearer s3cret-token"
    assert json.loads(seen[0].content) == {"title": "Plan", "status": "draft"}
    routes["GET https://notes.example.test/api/notes/5/text"] = httpx.Response(200, text="plain words")
    text = await host.call_tool("notes_get_note_text", {"noteId": 5})
    assert text.mcp.structured_content == {"result": "plain words"}
    bare = lorenz_host(pack, transport=_api(routes, []))
    refused = await bare.call_tool("notes_get_note", {"noteId": 5})
    error = (refused.mcp.structured_content or {})["error"]
    assert error["reason"] == "unauthorized"
    assert "tools.notes.bearer ($NOTES_BEARER)" in error["message"]


@pytest.mark.anyio
async def test_security_schemes_map_to_options_never_echoed(
    projects: dict[str, Path], lorenz_host: HostFactory
) -> None:
    """Each scheme is an option (and a variable) of its own; an operation takes the first of its
    alternatives whose credentials are set; a missing or refused credential is unauthorized naming
    the options; no value appears in an answer, a message or the options' repr."""
    pack = _pack(projects, "shop").PACK
    assert list(pack.permissions.env) == ["SHOP_BEARER_AUTH", "SHOP_BASIC_AUTH", "SHOP_HEADER_KEY", "SHOP_QUERY_KEY"]
    secret = "ada:basic-s3cret"
    seen: list[httpx.Request] = []
    order = {"id": 1, "status": "open", "customer": {"name": "Ada"}, "lines": []}
    routes = {
        "GET https://shop.example.test/v2/orders/1": httpx.Response(200, json=order),
        "GET https://shop.example.test/v2/orders/2": httpx.Response(401, json={"echo": secret}),
    }
    host = lorenz_host(pack, transport=_api(routes, seen), options={"shop": {"basic_auth": secret}})
    assert (await host.call_tool("shop_get_order", {"orderId": 1})).mcp.is_error is not True
    assert seen[-1].headers["authorization"] == "Basic " + base64.b64encode(secret.encode()).decode()
    refused = await host.call_tool("shop_get_order", {"orderId": 2})
    error = (refused.mcp.structured_content or {})["error"]
    assert error["reason"] == "unauthorized"
    assert error["message"].endswith(
        "answered 401 Unauthorized; the credential sent: tools.shop.basic_auth ($SHOP_BASIC_AUTH)"
    )
    missing = await host.call_tool("shop_cancel_order", {"orderId": 1})  # needs the header and the query key
    error = (missing.mcp.structured_content or {})["error"]
    assert error["message"] == (
        "No credential: set tools.shop.header_key ($SHOP_HEADER_KEY) and tools.shop.query_key ($SHOP_QUERY_KEY)."
    )
    assert "tools.shop.bearer_auth ($SHOP_BEARER_AUTH) or tools.shop.basic_auth" in str(
        (await lorenz_host(pack, transport=_api(routes, [])).call_tool("shop_get_order", {"orderId": 1})).mcp
    )
    options = importlib.import_module("lorenz_shop.generated").ShopOptions(basic_auth=secret, query_key="q-s3cret")
    assert secret not in repr(options) and "q-s3cret" not in repr(options)
    assert all(secret not in str(outcome.mcp) for outcome in (refused, missing))


@pytest.mark.anyio
async def test_odd_shapes_reach_the_api_as_documented(projects: dict[str, Path], lorenz_host: HostFactory) -> None:
    """A key in the query, a header parameter, colliding keys apart, a server variable's default."""
    seen: list[httpx.Request] = []
    answer = {"fooBar": None, "foo_bar": 1.5, "class": True, "2nd": {"x": "y"}}
    routes = {"GET https://eu.odd.example.test:8443/v2/describe": httpx.Response(200, json=answer)}
    pack = _pack(projects, "odd").PACK
    host = lorenz_host(pack, transport=_api(routes, seen), options={"odd": {"key": "k3y-value"}})
    outcome = await host.call_tool("odd_describe", {"X-Trace-Id": "t1", "level": 2})
    assert outcome.mcp.structured_content == answer
    assert dict(seen[0].url.params) == {"page": "1", "level": "2", "api_key": "k3y-value"}
    assert seen[0].headers["x-trace-id"] == "t1"
    assert (await host.call("odd_describe", {"level": 4})).success is False  # not in the enum


def _document(count: int, **extra: Any) -> dict[str, Any]:
    paths = {
        f"/things{i}": {
            "get": {
                "operationId": f"getThing{i}",
                "tags": ["even" if i % 2 == 0 else "odd"],
                **extra,
                "responses": {"204": {"description": "done"}},
            }
        }
        for i in range(count)
    }
    return {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": paths}


def test_a_large_api_is_not_mirrored_whole() -> None:
    """Over 30 operations and no selection: refused, listing the operations by tag."""
    ops = operations(_document(31))
    with pytest.raises(OpenAPIError, match=r"31 operations") as caught:
        select(ops)
    assert "even (16): GET /things0 (getThing0)" in str(caught.value)
    assert len(select(ops, include=["odd"])) == 15
    assert [op.operation_id for op in select(ops, include=["/things1*"], exclude=["getThing1"])] == [
        f"getThing{i}" for i in range(10, 20)
    ]
    with pytest.raises(OpenAPIError, match="more than --max-tools 3"):
        select(ops, include=["odd"], max_tools=3)
    with pytest.raises(OpenAPIError, match="--include nope: no operation id, tag or path matches"):
        select(ops, include=["nope"])


def test_only_examples_their_schema_accepts_are_kept() -> None:
    """The generated tests answer with the document's examples: one that contradicts its schema
    would test nothing but the document's mistake, so it is left out."""
    document = _document(3)
    answers = [{"id": 1}, {"id": "one"}, None]
    for (path, item), answer in zip(document["paths"].items(), answers, strict=True):
        schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
        media = {"schema": schema} if answer is None else {"schema": schema, "examples": {"a": {"value": answer}}}
        item["get"]["responses"] = {"201": {"description": "made", "content": {"application/json": media}}}
        item["get"]["operationId"] = path.strip("/")
    ops = operations(document)
    assert examples_of([(op.operation_id or "", op) for op in ops]) == {"things0": {"status": 201, "body": {"id": 1}}}


def test_deprecated_operations_only_when_asked() -> None:
    ops = operations(_document(2, deprecated=True))
    with pytest.raises(OpenAPIError, match="no operation is selected"):
        select(ops)
    assert len(select(ops, deprecated=True)) == 2


def test_names_are_unique_and_portable() -> None:
    """Operation ids in snake_case, method and path without one, duplicates numbered, ≤ 64 characters."""
    names = tool_names(
        "acme",
        [
            ("listPets", "get", "/pets"),
            (None, "get", "/pets/{petId}"),
            ("list_pets", "get", "/x"),
            ("x" * 80, "post", "/"),
        ],
    )
    assert names[:3] == ["acme_list_pets", "acme_get_pets_by_pet_id", "acme_list_pets_2"]
    assert all(len(name) <= MAX_TOOL_NAME for name in names)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('openapi: "3.0.0"\ninfo: {title: x}\npaths: {}\n', r'bad\.yaml: /info: "version" is a required property'),
        (
            'openapi: "3.1.0"\ninfo: {title: x, version: "1"}\npaths:\n  /a:\n    get:\n      responses:\n'
            '        "200": {description: ok, content: {application/json: {schema: {$ref: "gone.yaml#/X"}}}}\n',
            r"/paths/~1a/get/responses/200/content/application~1json/schema/\$ref: 'gone.yaml#/X' does not resolve",
        ),
        ('swagger: "2.0"\n', r"/openapi: expected an OpenAPI 3.0 or 3.1 document"),
    ],
)
def test_invalid_documents_name_the_pointer(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(OpenAPIError, match=message):
        new_openapi_pack("bad", str(tmp_path / "bad.yaml"), tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written


def test_cli_from_openapi(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz new-pack NAME --from-openapi SPEC --include ...` writes the project; errors are one line."""
    out = tmp_path / "proj"
    assert (
        main(["new-pack", "pets", "--from-openapi", str(PETSTORE), "--include", "showPetById", "--dir", str(out)]) == 0
    )
    assert "pets_show_pet_by_id" in (out / "lorenz_pets" / "generated.py").read_text(encoding="utf-8")
    assert "pets_list_pets" not in (out / "lorenz_pets" / "generated.py").read_text(encoding="utf-8")
    assert main(["new-pack", "pets", "--from-openapi", str(PETSTORE), "--tracker"]) == 1
    assert "--tracker and --from-openapi" in capsys.readouterr().err


def test_update_regenerates_only_the_generated_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--update` rewrites generated.py from the changed document, keeps the author's tools.py, and
    says which tools were added, removed and changed; a module it did not write is refused."""
    spec = tmp_path / "petstore.yaml"
    spec.write_text(PETSTORE.read_text(encoding="utf-8"), encoding="utf-8")
    project = tmp_path / "proj"
    assert main(["new-pack", "pets", "--from-openapi", str(spec), "--dir", str(project)]) == 0
    generated = project / "lorenz_pets" / "generated.py"
    assert "--update" in generated.read_text(encoding="utf-8").split('"""')[1]  # how to regenerate it
    tools = project / "lorenz_pets" / "tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    text = spec.read_text(encoding="utf-8")
    text = text.replace("operationId: createPets", "operationId: addPet")
    text = text.replace("maximum: 100\n            format: int32", "maximum: 50\n            format: int32")
    spec.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["new-pack", "pets", "--from-openapi", str(spec), "--dir", str(project), "--update"]) == 0
    out = capsys.readouterr().out
    assert out == f"updated {generated}: added pets_add_pet; removed pets_create_pets; changed pets_list_pets\n"
    assert tools.read_text(encoding="utf-8").endswith("# mine\n")
    assert "maximum=50" in generated.read_text(encoding="utf-8")
    assert main(["new-pack", "pets", "--from-openapi", str(spec), "--dir", str(project), "--update"]) == 0
    assert capsys.readouterr().out.endswith(": no tool changed\n")
    generated.write_text('"""Mine."""\n', encoding="utf-8")
    assert main(["new-pack", "pets", "--from-openapi", str(spec), "--dir", str(project), "--update"]) == 1
    assert "was not written by lorenz new-pack --from-openapi" in capsys.readouterr().err
    assert generated.read_text(encoding="utf-8") == '"""Mine."""\n'


@pytest.mark.slow
def test_generated_project_passes_nox_devcheck(tmp_path: Path) -> None:
    """The project's own `nox -s devcheck` (ruff, format, mypy --strict, lorenz lint, pytest) passes
    as generated; run by nox in this environment (`--no-venv --no-install`: nothing is fetched)."""
    project = tmp_path / "lorenz-notes-api"
    new_openapi_pack("notes_api", str(NOTES), project)  # not `notes`: the module fixture imported that
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "NOX_"))}
    env["PYTHONPATH"] = str(project)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "nox", "--no-venv", "--no-install", "--no-color", "-s", "devcheck"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Session devcheck was successful" in output
    assert "5 passed" in output  # the contract, and each of the 4 tools against a mock API


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_asks_on_a_terminal_and_refuses_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large API and no selection: a script gets the list by tag and exit 1; a person is asked."""
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(_document(31)), encoding="utf-8")
    command = ["new-pack", "big", "--from-openapi", str(spec), "--dir", str(tmp_path / "proj")]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(command) == 1
    assert "odd (15): GET /things1 (getThing1)" in capsys.readouterr().err
    assert not (tmp_path / "proj").exists()
    monkeypatch.setattr(sys, "stdin", _Terminal("odd, getThing0\n"))
    assert main(command) == 0
    assert "Operations to generate" in capsys.readouterr().err
    generated = (tmp_path / "proj" / "lorenz_big" / "generated.py").read_text(encoding="utf-8")
    assert generated.count("\n# -- tool ") == 16


def test_emitted_source_is_as_ruff_formats_it(tmp_path: Path) -> None:
    """Strings of every awkward kind (quotes, backslashes, look-alike characters, words longer than
    a line) and nested calls of every length: what emit writes, ruff format leaves as it is, ruff
    check finds nothing in, and Python reads back as the same values."""
    texts = [
        "plain",
        'say "hi"',
        "it's \"quoted\" twice's",
        "back\\slash \\d and tab\t and newline\n",
        "Caf\u00e9 \u2013 look\u2011alike \u201cquotes\u201d \U0001f600",
        "word " * 40,
        "x" * 300,
        "https://example.test/" + "very-long-path/" * 12,
    ]
    lines = []
    for i, text in enumerate(texts):
        value = call("describe", lit(text), examples=lit([text, {"key": text, "n": i}]), minimum=lit(i))
        lines.append(statement(f"value_{i} = ", call("dict", description=lit(text), metadata=value)))
        lines.append(statement(f"plain_{i} = ", lit({"k" * (i * 9): [text[:20]] * i})))
    source = tmp_path / "emitted.py"
    source.write_text(
        "def describe(*args: object, **kwargs: object) -> object:\n    return args, kwargs\n\n\n" + "".join(lines)
    )
    for command in (["format", "--check", "--diff"], ["check", "--select", "E,W,RUF,UP,F"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--line-length", "120", str(source)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    namespace: dict[str, Any] = {}
    exec(compile(source.read_text(encoding="utf-8"), str(source), "exec"), namespace)
    for i, text in enumerate(texts):
        assert namespace[f"value_{i}"]["description"] == text
        assert namespace[f"value_{i}"]["metadata"] == (
            (text,),
            {"examples": [text, {"key": text, "n": i}], "minimum": i},
        )
