"""Lay a generated pack into the project ``lorenz new-pack`` writes: the scaffold's packaging,
plugin and noxfile, with ``generated.py`` (rewritten by the generator), ``tools.py`` (the author's,
assembling the pack), a README and tests of its own, from the template project in ``template/``
(real files, checked as code, in the names of a pack called ``template_api``)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from string import Template

from attrs import frozen

from lorenz.authoring.scaffold import PackNames, check_pack_name, new_pack

from .load import OpenAPIError, load_document
from .names import tool_names
from .operations import Operation, operations, select
from .render import TEMPLATE, Api, api_of, examples_of, render_generated, spelled, tool_blocks

__all__ = ["Selection", "Update", "new_openapi_pack", "update_openapi_pack"]


@frozen(kw_only=True)
class Selection:
    """Which operations become tools (``--include``, ``--exclude``, ``--max-tools``, ``--deprecated``)."""

    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    max_tools: int | None = None
    deprecated: bool = False

    def flags(self) -> list[str]:
        out = [f"--include={','.join(self.include)}"] if self.include else []
        out += [f"--exclude={','.join(self.exclude)}"] if self.exclude else []
        out += [f"--max-tools={self.max_tools}"] if self.max_tools is not None else []
        return out + (["--deprecated"] if self.deprecated else [])


@frozen(kw_only=True)
class Update:
    """What ``--update`` changed in generated.py, by tool name."""

    path: Path
    added: list[str]
    removed: list[str]
    changed: list[str]


#: Beside the tests: each tool's documented answer (from the document's examples), which they answer with.
EXAMPLES = "tests/examples.json"


def _examples(tools: Sequence[tuple[str, Operation]]) -> str:
    return json.dumps(examples_of(tools), indent=2, ensure_ascii=False) + "\n"


def _generate(names: PackNames, spec: str, selection: Selection) -> tuple[Api, list[tuple[str, Operation]], str]:
    """Read ``spec``, choose its operations and render generated.py (nothing is written)."""
    document = load_document(spec)
    chosen = select(
        operations(document),
        include=selection.include,
        exclude=selection.exclude,
        max_tools=selection.max_tools,
        deprecated=selection.deprecated,
    )
    api = api_of(document, chosen, names.pack)
    named = tool_names(names.pack, [(op.operation_id, op.method, op.path) for op in chosen])
    tools = list(zip(named, chosen, strict=True))
    command = shlex.join(["lorenz", "new-pack", names.pack, "--from-openapi", spec, *selection.flags(), "--update"])
    return api, tools, render_generated(names.pack, names.cls, api, tools, command)


def new_openapi_pack(
    name: str, spec: str, directory: Path | None = None, selection: Selection = Selection()
) -> list[Path]:
    """Write the project for pack ``name`` generated from the OpenAPI document ``spec``; returns
    the files written. The document is read and the operations chosen before anything is written."""
    names = check_pack_name(name)
    api, tools, generated = _generate(names, spec, selection)
    written = new_pack(name, directory)
    root = written[0].parent
    module = root / names.module

    def template(path: str) -> str:
        return spelled(TEMPLATE.joinpath(path).read_text("utf-8"), names.pack, names.cls)

    (module / "tools.py").write_text(template("lorenz_template_api/tools.py"), encoding="utf-8")
    (module / "generated.py").write_text(generated, encoding="utf-8")
    test = root / "tests" / f"test_{names.pack}_pack.py"
    test.write_text(template("tests/test_template_api_pack.py"), encoding="utf-8")
    (root / EXAMPLES).write_text(_examples(tools), encoding="utf-8")
    rows = [
        f"| `{tool}` | {op.method.upper()} `{op.path}`{': ' + op.summary if op.summary else ''} |" for tool, op in tools
    ]
    credentials = [f"\n    {c.option}: ${c.env}   # a reference, never the value itself" for c in api.credentials]
    readme = Template(template("README.md")).substitute(
        title=api.title,
        source=spec,
        rows="\n".join(rows),
        base_url=api.base_url or "https://api.example.com",
        credentials="".join(credentials),
    )
    (root / "README.md").write_text(readme, encoding="utf-8")
    return [*written, module / "generated.py", root / EXAMPLES]


def update_openapi_pack(
    name: str, spec: str, directory: Path | None = None, selection: Selection = Selection()
) -> Update:
    """Regenerate ``generated.py`` (and the examples its tests answer with) of the project for pack
    ``name`` from ``spec``, leaving every other file as its author left it; says which tools were
    added, removed or changed."""
    names = check_pack_name(name)
    root = Path(directory) if directory is not None else Path.cwd() / names.distribution
    target = root / names.module / "generated.py"
    try:
        old = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise OpenAPIError(f"{target}: {exc.strerror or exc}: --update needs the project new-pack wrote") from None
    if "generated by `lorenz new-pack --from-openapi`" not in old.partition("\n")[0]:
        raise OpenAPIError(f"{target} was not written by lorenz new-pack --from-openapi: nothing updated")
    _, tools, text = _generate(names, spec, selection)
    target.write_text(text, encoding="utf-8")
    (root / EXAMPLES).write_text(_examples(tools), encoding="utf-8")
    before, after = tool_blocks(old), tool_blocks(text)
    return Update(
        path=target,
        added=[tool for tool in after if tool not in before],
        removed=[tool for tool in before if tool not in after],
        changed=[tool for tool in after if tool in before and before[tool] != after[tool]],
    )
