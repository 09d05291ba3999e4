"""How long does ``lorenz new-pack --from-openapi`` take on a large API, and what does it make?

The document is tests/fixtures/openapi/github_like.py (some 300 operations in the shape of GitHub's
description), mirrored whole (``--max-tools 1000``) and curated by tag (``--include issues,pulls``).
Reports, per run: the document's operations, the tools generated, the time to read, validate and
inline the document, the whole generation, the generated module's lines, the catalog's estimated
context tokens, and the time of ``lorenz lint`` and of a tool search over the result.

Run: .venv/bin/python bench/openapi_generate.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lorenz.authoring.lint import lint_path
from lorenz.authoring.openapi import Selection, new_openapi_pack
from lorenz.authoring.openapi.load import load_document
from lorenz.toolsearch.cost import context_tokens
from lorenz.toolsearch.index import ToolIndex

ROOT = Path(__file__).resolve().parents[1]


def _document() -> dict[str, Any]:
    path = ROOT / "tests" / "fixtures" / "openapi" / "github_like.py"
    spec = importlib.util.spec_from_file_location("github_like", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made: dict[str, Any] = module.document()
    return made


def _wire(spec: Any) -> dict[str, Any]:
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "outputSchema": spec.output_schema,
        "annotations": spec.annotations,
    }


def _run(name: str, source: Path, selection: Selection, rounds: int) -> None:
    times: list[float] = []
    loads: list[float] = []
    for round_ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            load_document(str(source))
            loads.append(time.perf_counter() - started)
            started = time.perf_counter()
            new_openapi_pack(name, str(source), Path(tmp) / "project", selection)
            times.append(time.perf_counter() - started)
            if round_ < rounds - 1:
                continue
            project = Path(tmp) / "project"
            lines = len((project / f"lorenz_{name}" / "generated.py").read_text("utf-8").splitlines())
            sys.path.insert(0, str(project))
            pack = importlib.import_module(f"lorenz_{name}").PACK
            specs = [tool.spec() for tool in pack.tools]
            tokens = sum(context_tokens(_wire(spec)) for spec in specs)
            started = time.perf_counter()
            diagnostics = lint_path(project).diagnostics
            lint = time.perf_counter() - started
            index = ToolIndex(specs)
            started = time.perf_counter()
            index.search("list the issues of a repository", allowed={s.name for s in specs})
            search = time.perf_counter() - started
            sys.path.remove(str(project))
    print(
        f"{name}: {len(specs)} tools, generated.py {lines} lines, {tokens} context tokens; "
        f"load+validate+inline median {statistics.median(loads):.2f} s, generation median "
        f"{statistics.median(times):.2f} s (of {rounds}); lorenz lint {lint:.1f} s "
        f"({len(diagnostics)} findings); one search {search * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    document = _document()
    operations = sum(len(item) for item in document["paths"].values())
    print(f"document: {operations} operations, {len(json.dumps(document)) // 1024} KiB of JSON")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "github.json"
        source.write_text(json.dumps(document), encoding="utf-8")
        _run("gh", source, Selection(max_tools=1000), args.rounds)
        _run("ghc", source, Selection(include=["issues", "pulls"]), args.rounds)


if __name__ == "__main__":
    main()
