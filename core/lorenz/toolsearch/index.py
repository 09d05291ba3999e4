"""A search index over a catalog of tools: SQLite FTS5, ranked by bm25.

Each tool is one row with four columns (its name, title, description, and its arguments' names
and descriptions), tokenized by ``porter unicode61`` so word forms meet ("comments" finds
"comment"). A query word the catalog never uses is widened to the catalog's words within a small
edit distance (:mod:`lorenz.toolsearch.typos`), so "comemnt" still finds it. Every search names
what its caller may see, and only those tools come back.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any

from attrs import frozen

from lorenz.contracts import ToolSpec
from lorenz.toolsearch.budget import MAX_QUERY_CHARS
from lorenz.toolsearch.typos import Vocabulary

__all__ = ["MAX_QUERY_CHARS", "Allowed", "CatalogSearch", "SearchHit", "ToolIndex"]

#: What a caller may see: the set of its tools' names, or a test of one name.
Allowed = Set[str] | Callable[[str], bool]

# bm25 weights of the columns, in order: a word in a tool's name or title says more about what it
# does than one in its description, and an argument's name more than its prose.
_COLUMNS = ("name", "title", "description", "arguments")
_WEIGHTS = (8.0, 6.0, 2.0, 1.0)
# Words an agent writes around its need that name no tool ("I want to ..."); bm25 would rank them
# low anyway, but dropping them keeps them out of the typo widening too.
# fmt: off
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in", "into",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "should", "some", "that", "the", "their",
    "them", "then", "this", "to", "want", "we", "what", "when", "which", "with", "would", "you", "your",
))
# fmt: on
_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@frozen
class SearchHit:
    """One tool a search found, best first; ``score`` is bm25's (lower is a better match)."""

    spec: ToolSpec
    score: float


def _words(text: str) -> str:
    """``issueId`` and ``get-sum`` as the words an agent would write: ``issue Id``, ``get sum``."""
    return _CAMEL.sub(" ", text)


def _arguments(schema: Mapping[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    parts: list[str] = []
    for name, prop in properties.items():
        parts.append(str(name))
        if isinstance(prop, Mapping) and isinstance(prop.get("description"), str):
            parts.append(prop["description"])
    return " ".join(parts)


def _row(spec: ToolSpec) -> tuple[str, str, str, str]:
    return (
        _words(spec.name),
        _words(spec.title or ""),
        _words(spec.description),
        _words(_arguments(spec.input_schema)),
    )


def _permits(allowed: Allowed) -> Callable[[str], bool]:
    if isinstance(allowed, Set):
        return allowed.__contains__
    if callable(allowed):
        return allowed
    raise TypeError(f"allowed: expected a set of tool names or a callable, got {type(allowed).__name__}")


class ToolIndex:
    """An immutable index of one catalog; build a new one when the catalog changes."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._specs: tuple[ToolSpec, ...] = tuple(specs)
        # One in-memory database per index, read under a lock: the host may search from threads.
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        columns = ", ".join(_COLUMNS)
        self._db.execute(f"CREATE VIRTUAL TABLE tools USING fts5({columns}, tokenize='porter unicode61')")
        self._db.execute(
            "INSERT INTO tools(tools, rank) VALUES('rank', ?)", (f"bm25({', '.join(map(str, _WEIGHTS))})",)
        )
        self._db.executemany(
            "INSERT INTO tools(rowid, name, title, description, arguments) VALUES (?, ?, ?, ?, ?)",
            ((i, *_row(spec)) for i, spec in enumerate(self._specs)),
        )
        # The same words unstemmed: the vocabulary a misspelt query word is compared with.
        self._db.execute(f"CREATE VIRTUAL TABLE words USING fts5({columns}, tokenize='unicode61')")
        self._db.executemany("INSERT INTO words VALUES (?, ?, ?, ?)", (_row(spec) for spec in self._specs))
        self._db.execute("CREATE VIRTUAL TABLE vocabulary USING fts5vocab(words, 'row')")
        self._vocabulary = Vocabulary(term for (term,) in self._db.execute("SELECT term FROM vocabulary"))
        self._db.executescript("DROP TABLE vocabulary; DROP TABLE words;")  # read once, then only memory

    @property
    def specs(self) -> Sequence[ToolSpec]:
        return self._specs

    def match_expression(self, query: str) -> str | None:
        """The FTS5 query a need becomes, or ``None`` when it names nothing to look for.

        Each word is quoted (an agent's text is never FTS5 syntax) and ORed with the catalog's
        words it may be a typo of; the words are ORed, and bm25 ranks the tools matching most.
        """
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(f"query: {len(query)} characters, more than the {MAX_QUERY_CHARS} a search takes")
        groups: list[str] = []
        for word in dict.fromkeys(_WORD.findall(_words(query).lower())):
            if word in _STOPWORDS:
                continue
            terms = [word, *self._vocabulary.near(word)]
            groups.append(" OR ".join(f'"{term}"' for term in terms))
        return " OR ".join(f"({group})" for group in groups) or None

    def search(self, query: str, *, allowed: Allowed, limit: int = 5) -> list[SearchHit]:
        """The ``limit`` tools of ``allowed`` that best match ``query``, best first.

        ``allowed`` is required and checked on every row, so no query returns a tool outside it.
        """
        if limit < 1:
            raise ValueError(f"limit: must be at least 1, got {limit}")
        permits = _permits(allowed)
        expression = self.match_expression(query)
        if expression is None:
            return []
        hits: list[SearchHit] = []
        with self._lock:
            rows = self._db.execute("SELECT rowid, rank FROM tools WHERE tools MATCH ? ORDER BY rank", (expression,))
            for rowid, rank in rows:
                spec = self._specs[rowid]
                if permits(spec.name):
                    hits.append(SearchHit(spec, rank))
                    if len(hits) == limit:
                        break
        return hits


class CatalogSearch:
    """The index of the catalog last asked about, rebuilt when the mounted catalog changes."""

    def __init__(self) -> None:
        self._index = ToolIndex(())
        self._lock = threading.Lock()

    def index_for(self, specs: Sequence[ToolSpec]) -> ToolIndex:
        """The index of ``specs``; the same catalog (compared by value, the same objects at once)
        reuses the index built for it."""
        catalog = tuple(specs)
        with self._lock:
            if catalog != self._index.specs:
                self._index = ToolIndex(catalog)
            return self._index
