"""Does the tool search find the right tool, and how fast over a large catalog?

Quality: the needs in ``tool_search_fixtures/queries.py`` over the bundled packs, the weather
example, server-everything and mcp-server-time (their real ``tools/list``, captured by
``tool_search_fixtures/fetch.py``); reports recall@1, recall@5 (bar: 0.9) and MRR, and each miss.
Speed: the same needs over a synthetic catalog of ``--tools`` tools holding the real ones;
reports the index's build time and the search's p50 and p95 (bar: p50 2 ms at 1,000 tools).

Run: .venv/bin/python bench/tool_search.py [--tools 1000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tool_search_fixtures.queries import QUERIES

from lorenz.contracts import ToolSpec
from lorenz.toolsearch.index import ToolIndex

HERE = Path(__file__).parent
ROOT = HERE.parent


def _spec(wire: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name=wire["name"],
        description=wire.get("description") or "",
        input_schema=wire.get("inputSchema") or {"type": "object"},
        title=wire.get("title"),
        annotations=wire.get("annotations"),
        output_schema=wire.get("outputSchema"),
    )


def installed_tools() -> list[dict[str, Any]]:
    """Every bundled pack's tools and the weather example's, as ``lorenz tools --all --json`` lists them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "examples" / "weather")}
    with tempfile.TemporaryDirectory() as empty:
        out = subprocess.run(
            [sys.executable, "-m", "lorenz", "-p", "lorenz_weather.plugin", "tools", "--all", "--json"],
            cwd=empty,
            env=env,
            capture_output=True,
            check=True,
            text=True,
            timeout=60,
        )
    tools: list[dict[str, Any]] = json.loads(out.stdout)["tools"]
    return tools


def catalog() -> list[ToolSpec]:
    wires = installed_tools()
    for name in ("everything", "time"):
        wires += json.loads((HERE / "tool_search_fixtures" / f"{name}.json").read_text())
    return [_spec(wire) for wire in wires]


def quality(specs: list[ToolSpec]) -> tuple[float, float, float]:
    names = {spec.name for spec in specs}
    missing = sorted({expected for _, expected in QUERIES} - names)
    if missing:
        raise SystemExit(f"the catalog lacks expected tools: {missing}")
    index = ToolIndex(specs)
    ranks: list[int | None] = []
    for query, expected in QUERIES:
        found = [hit.spec.name for hit in index.search(query, allowed=names, limit=len(specs))]
        rank = found.index(expected) + 1 if expected in found else None
        ranks.append(rank)
        if rank != 1:
            print(f"  rank {rank}: {query!r} -> {expected} (first: {found[:3]})")
    n = len(QUERIES)
    at1 = sum(rank == 1 for rank in ranks) / n
    at5 = sum(rank is not None and rank <= 5 for rank in ranks) / n
    mrr = sum(1 / rank for rank in ranks if rank is not None) / n
    return at1, at5, mrr


_SYLLABLES = [consonant + vowel for consonant in "bcdfgklmnprstvz" for vowel in "aeio"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))


def synthetic(specs: list[ToolSpec], size: int, seed: int = 43) -> list[ToolSpec]:
    """``size`` tools: the real ones, and made-up ones whose words mix the real catalog's with new ones."""
    rng = random.Random(seed)
    real_words = sorted({w for spec in specs for w in spec.description.lower().split() if w.isalpha()})
    words = real_words + [_word(rng) for _ in range(3000)]
    made: list[ToolSpec] = []
    for i in range(size - len(specs)):
        prefix = _word(rng)
        name = f"{prefix}_{rng.choice(words)}_{rng.choice(words)}_{i}"
        description = " ".join(rng.choice(words) for _ in range(rng.randint(12, 40))) + "."
        properties = {
            rng.choice(words): {"type": "string", "description": " ".join(rng.choice(words) for _ in range(6))}
            for _ in range(rng.randint(0, 4))
        }
        made.append(
            ToolSpec(
                name=name,
                description=description,
                title=" ".join(rng.choice(words) for _ in range(3)),
                input_schema={"type": "object", "properties": properties},
            )
        )
    return [*specs, *made]


def speed(specs: list[ToolSpec], rounds: int) -> tuple[float, float, float]:
    started = time.perf_counter()
    index = ToolIndex(specs)
    build = time.perf_counter() - started
    names = {spec.name for spec in specs}
    samples: list[float] = []
    for _ in range(rounds):
        for query, _expected in QUERIES:
            started = time.perf_counter()
            index.search(query, allowed=names, limit=5)
            samples.append(time.perf_counter() - started)
    samples.sort()
    return build, statistics.median(samples), samples[int(len(samples) * 0.95)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=1000, help="size of the synthetic catalog")
    parser.add_argument("--rounds", type=int, default=20, help="times each need is searched for the timing")
    args = parser.parse_args()
    specs = catalog()
    print(f"{len(QUERIES)} needs over {len(specs)} real tools")
    at1, at5, mrr = quality(specs)
    print(f"recall@1 {at1:.3f}  recall@5 {at5:.3f} (bar 0.9)  MRR {mrr:.3f}")
    large = synthetic(specs, args.tools)
    big1, big5, big_mrr = quality(large)
    print(f"the same over {len(large)} tools: recall@1 {big1:.3f}  recall@5 {big5:.3f}  MRR {big_mrr:.3f}")
    build, p50, p95 = speed(large, args.rounds)
    timing = f"search p50 {p50 * 1e3:.3f} ms (bar 2 ms), p95 {p95 * 1e3:.3f} ms"
    print(f"{len(large)} tools: build {build * 1e3:.1f} ms, {timing}")


if __name__ == "__main__":
    main()
