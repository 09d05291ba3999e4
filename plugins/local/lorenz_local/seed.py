"""Seed a board with demo issues: ``python -m lorenz_local.seed [dir] [count] [idPrefix]``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from lorenz import Issue

from .options import DEFAULT_ID_PREFIX
from .paths import DEFAULT_BOARD_DIR
from .store import BoardStore

__all__ = ["DEMO_ISSUES", "main", "seed_board"]

#: ``(title, body, status)`` of the demo issues, in creation order.
DEMO_ISSUES: tuple[tuple[str, str, str], ...] = (
    (
        "[Demo] Create hello_world.py",
        "Create `hello_world.py` at the workspace root. Running it must print `Hello, World!`.",
        "Todo",
    ),
    (
        "[Demo] Create a Fibonacci function",
        "Add `fibonacci.py` with `fibonacci(n)` returning the n-th Fibonacci number (`fibonacci(0) == 0`), "
        "plus a few tests.",
        "Todo",
    ),
    (
        "[Demo] Document the demo workspace",
        "Write a short `README.md` describing the files in the workspace and how to run them.",
        "In Progress",
    ),
)


def seed_board(directory: str | Path, count: int | None = None, id_prefix: str = DEFAULT_ID_PREFIX) -> list[Issue]:
    """Create the first ``count`` demo issues (all three by default) through :class:`BoardStore`."""
    store = BoardStore(directory, id_prefix=id_prefix)
    chosen = DEMO_ISSUES if count is None else DEMO_ISSUES[: max(count, 0)]
    return [store.create(title, body=body, status=status) for title, body, status in chosen]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    directory = args[0] if args else DEFAULT_BOARD_DIR
    count = int(args[1]) if len(args) > 1 else None
    prefix = args[2] if len(args) > 2 else DEFAULT_ID_PREFIX
    for issue in seed_board(directory, count, prefix):
        print(f"{issue.id}\t{issue.state}\t{issue.title}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
