"""Cost of loading a WORKFLOW.md: YAML 1.2 front matter, then typed settings.

Run: .venv/bin/python bench/bench_settings.py
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lorenz.contracts import TrackerContext
from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import parse_config, parse_workflow_content
from lorenz.settings.options import reject_unknown_options, string_option

WORKFLOW = (
    """---
tracker:
  kind: primary
  dispatch:
    only_routes: [Backend, frontend, docs]
trackers:
  primary:
    provider: local
    path: ./board
    id_prefix: DEMO-
    active_states: [Todo, In Progress, Review]
  linear:
    provider: linear
    api_key: $LINEAR_API_KEY
tools:
  local: {path: ./other-board}
  linear: {api_key: $PACK_KEY, endpoint: https://linear.example/graphql}
server:
  host: ""
  port: "4040"
  token: $MCP_TOKEN
  allowed_origins: ["http://app.example:*"]
---
You are working on {{ issue.identifier }}: {{ issue.title }}.
"""
    + "Body line.\n" * 50
)


class Local:
    kind = "local"
    config_aliases: Mapping[str, str] = {"id_prefix": "idPrefix"}

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        reject_unknown_options(options, ["path", "idPrefix"], self.kind)
        return {key: string_option(options, key) for key in ("path", "idPrefix")}

    def create_client(self, settings: Any, context: TrackerContext) -> Any:
        raise NotImplementedError


def timed(label: str, fn: Callable[[], object], repeat: int) -> None:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    per_call = (time.perf_counter() - start) / repeat
    unit, scale = ("µs", 1e6) if per_call < 1e-3 else ("ms", 1e3)
    print(f"{label:45s} {per_call * scale:9.1f} {unit}/call")


def main() -> None:
    trackers = TrackerRegistry()
    trackers.register(Local())
    env = {"PACK_KEY": "pack-secret", "MCP_TOKEN": "mcp-secret", "LINEAR_API_KEY": "lin"}
    config = parse_workflow_content(WORKFLOW).config
    timed("parse_workflow_content (front matter + body)", lambda: parse_workflow_content(WORKFLOW), 500)
    timed(
        "parse_config (bundle, tools, server)",
        lambda: parse_config(config, env=env, trackers=trackers, base_dir=Path()),
        5000,
    )


if __name__ == "__main__":
    main()
