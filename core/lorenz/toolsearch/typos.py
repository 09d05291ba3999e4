"""The catalog's words within a small edit distance of a misspelt query word.

Candidates come from a deletion dictionary (each word under every string one or two deletions
away, the symmetric-delete method), so a lookup costs a few dozen dictionary probes whatever the
catalog's size; each candidate is then checked by its optimal-string-alignment distance, in which
swapping two neighbouring letters ("stauts") is one edit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

__all__ = ["Vocabulary", "edit_distance"]

# Words this short have too many neighbours one edit away ("get" / "set" / "let") to guess from.
_SHORTEST = 4


def _allowed_edits(word: str) -> int:
    """How many edits a word of this length may carry and still be recognised."""
    if len(word) < _SHORTEST:
        return 0
    return 1 if len(word) < 8 else 2


def _deletions(word: str, depth: int) -> set[str]:
    found = {word}
    frontier = {word}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w))}
        found |= frontier
    return found


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


class Vocabulary:
    """The words of one catalog, to find those a misspelt word was meant to be."""

    def __init__(self, words: Iterable[str]) -> None:
        self._words = frozenset(words)
        self._by_deletion: defaultdict[str, set[str]] = defaultdict(set)
        for word in self._words:
            for key in _deletions(word, _allowed_edits(word)):
                self._by_deletion[key].add(word)

    def near(self, word: str) -> list[str]:
        """The catalog's words ``word`` may be a typo of, nearest first; none when it is a word of it."""
        edits = _allowed_edits(word)
        if edits == 0 or word in self._words:
            return []
        candidates: set[str] = set()
        for key in _deletions(word, edits):
            candidates |= self._by_deletion.get(key, set())
        scored = []
        for candidate in candidates:
            distance = edit_distance(word, candidate)
            if distance <= min(edits, _allowed_edits(candidate)):
                scored.append((distance, candidate))
        return [candidate for _, candidate in sorted(scored)]
