"""The tool search index: ranking, word forms, typos, and the caller's allowed set."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorenz.contracts import ToolSpec
from lorenz.toolsearch.cost import context_tokens
from lorenz.toolsearch.index import MAX_QUERY_CHARS, CatalogSearch, ToolIndex
from lorenz.toolsearch.typos import Vocabulary, edit_distance


def _tool(name: str, description: str, title: str | None = None, /, **properties: str) -> ToolSpec:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: {"type": "string", "description": text} for key, text in properties.items()},
    }
    return ToolSpec(name=name, description=description, title=title, input_schema=schema)


CATALOG = (
    _tool("tracker_comment", "Add a comment to an issue.", "Comment on issue", issueId="The issue's id.", body="Text."),
    _tool(
        "tracker_update_status", "Move an issue to a new status.", "Update status", issueId="Issue id.", status="State."
    ),
    _tool("tracker_create_issue", "Create an issue in the tracker.", "Create issue", title="Short summary."),
    _tool("chat_user_info", "Profile of a chat user: name, display name.", "User info", userId="A 'U…' id."),
    _tool("weather_forecast", "Daily forecast: high, low and chance of precipitation.", city="One of the cities."),
    _tool("time_convert", "Convert a time between timezones.", source_timezone="IANA name.", target_timezone="IANA."),
)
NAMES = frozenset(tool.name for tool in CATALOG)


def _first(index: ToolIndex, query: str) -> str:
    hits = index.search(query, allowed=NAMES)
    assert hits, query
    return hits[0].spec.name


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("leave a comment on the ticket", "tracker_comment"),
        ("move the issue to Done", "tracker_update_status"),
        ("please create a ticket for this bug", "tracker_create_issue"),
        ("what is the display name of this user", "chat_user_info"),
        ("forecast for tomorrow in Oslo", "weather_forecast"),
        ("convert 9am from one timezone to another", "time_convert"),
    ],
)
def test_the_right_tool_ranks_first(query: str, expected: str) -> None:
    assert _first(ToolIndex(CATALOG), query) == expected


def test_word_forms_match_through_the_porter_stemmer() -> None:
    index = ToolIndex(CATALOG)
    assert _first(index, "commenting") == "tracker_comment"
    assert _first(index, "forecasts") == "weather_forecast"
    assert _first(index, "converting") == "time_convert"


@pytest.mark.parametrize(
    ("query", "expected"),
    [("comemnt", "tracker_comment"), ("forcast", "weather_forecast"), ("timezoens", "time_convert")],
)
def test_a_typo_still_finds_the_tool(query: str, expected: str) -> None:
    index = ToolIndex(CATALOG)
    assert _first(index, query) == expected
    assert query not in index.match_expression(query).split('"')[3:], "the typo was widened to a word of the catalog"


def test_argument_names_are_searched_as_words() -> None:
    # ``userId`` is indexed as "user Id", so an agent writing "user id" finds it.
    index = ToolIndex([_tool("a_lookup", "Look something up.", userId="Whose."), _tool("b_other", "Other things.")])
    assert [hit.spec.name for hit in index.search("user id", allowed={"a_lookup", "b_other"})] == ["a_lookup"]


def test_a_tool_outside_the_allowed_set_is_never_returned() -> None:
    index = ToolIndex(CATALOG)
    assert (
        index.search("comment on an issue", allowed={"tracker_update_status"})[0].spec.name == "tracker_update_status"
    )
    assert index.search("comment on an issue", allowed=set()) == []
    assert index.search("comment", allowed=lambda name: name != "tracker_comment") == []


def test_fts5_syntax_in_a_query_is_just_text() -> None:
    index = ToolIndex(CATALOG)
    for query in ['"', "NEAR(issue comment", "comment*", "issue AND NOT status", "name:comment", "^comment"]:
        assert all(hit.spec.name in NAMES for hit in index.search(query, allowed=NAMES))


def test_bad_arguments_are_refused_with_the_argument_named() -> None:
    index = ToolIndex(CATALOG)
    with pytest.raises(ValueError, match="^query: "):
        index.search("x" * (MAX_QUERY_CHARS + 1), allowed=NAMES)
    with pytest.raises(ValueError, match="^limit: "):
        index.search("comment", allowed=NAMES, limit=0)
    with pytest.raises(TypeError, match="^allowed: "):
        index.search("comment", allowed=["tracker_comment"])  # type: ignore[arg-type]
    assert index.search("the of and", allowed=NAMES) == []


_WORDS = ["issue", "comment", "status", "user", "time", "zone", "forecast", "create", "query", "thread", "list"]
_word_lists = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def _catalogs(draw: st.DrawFn) -> list[ToolSpec]:
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True), min_size=1, max_size=12, unique=True))
    return [_tool(name, draw(_word_lists), draw(st.none() | _word_lists), arg=draw(_word_lists)) for name in names]


@settings(max_examples=150, deadline=None)
@given(
    catalog=_catalogs(),
    data=st.data(),
    query=st.lists(st.sampled_from([*_WORDS, "comemnt", "statsu", "zzz", '"', "OR", "*"]), max_size=5).map(" ".join)
    | st.text(max_size=40),
    limit=st.integers(min_value=1, max_value=20),
    as_callable=st.booleans(),
)
def test_no_query_escapes_the_allowed_set(
    catalog: list[ToolSpec], data: st.DataObject, query: str, limit: int, as_callable: bool
) -> None:
    names = [tool.name for tool in catalog]
    allowed = set(data.draw(st.lists(st.sampled_from(names), unique=True)))
    hits = ToolIndex(catalog).search(query, allowed=allowed.__contains__ if as_callable else allowed, limit=limit)
    assert {hit.spec.name for hit in hits} <= allowed
    assert len(hits) <= limit
    assert [hit.score for hit in hits] == sorted(hit.score for hit in hits)


def test_the_index_is_rebuilt_when_the_catalog_changes() -> None:
    search = CatalogSearch()
    index = search.index_for(CATALOG)
    assert search.index_for(list(CATALOG)) is index
    added = (*CATALOG, _tool("chat_post", "Post a message to a channel.", "Post message"))
    rebuilt = search.index_for(added)
    assert rebuilt is not index
    assert rebuilt.search("post a message", allowed={"chat_post"})[0].spec.name == "chat_post"
    removed = search.index_for(CATALOG[1:])
    assert removed.search("comment on an issue", allowed=NAMES)
    assert "tracker_comment" not in {hit.spec.name for hit in removed.search("comment on an issue", allowed=NAMES)}


def test_edit_distance_counts_a_swap_of_neighbours_as_one() -> None:
    assert edit_distance("stauts", "status") == 1
    assert edit_distance("comemnt", "comment") == 1
    assert edit_distance("forcast", "forecast") == 1
    assert edit_distance("kitten", "sitting") == 3


def test_vocabulary_widens_only_unknown_words_long_enough_to_guess() -> None:
    vocabulary = Vocabulary(["comment", "status", "get", "set", "forecast", "forecasts"])
    assert vocabulary.near("comment") == []
    assert vocabulary.near("gte") == []  # three letters: too many neighbours to guess
    assert vocabulary.near("statsu") == ["status"]
    assert vocabulary.near("forcasts") == ["forecasts", "forecast"]


def test_context_tokens_are_the_compact_json_bytes_over_four_rounded_up() -> None:
    assert context_tokens({"name": "abc"}) == 4  # {"name":"abc"} is 14 bytes
    assert context_tokens({"name": "abcdef"}) == 5  # 17 bytes
    assert context_tokens({"name": "é"}) == 4  # 13 bytes: counted in UTF-8, not characters
