"""A typed tool's call plan (``lorenz.authoring.plan``): built once, and the calls it serves read as
before — the default text byte for byte ``json.dumps(indent=2)``, whichever encoder writes it,
arguments refused in the same words, the pack's routing following a new ``Settings``."""

from __future__ import annotations

import datetime as dt
import enum
import json
from typing import Any, Literal

import attrs
import httpx
import pytest
from attrs import field, frozen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorenz import Settings, ToolContext
from lorenz.authoring import CallContext, Pack, describe, disabled, tool
from lorenz.authoring.plan import call_plan

pytestmark = pytest.mark.anyio


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@frozen(kw_only=True)
class Person:
    name: str
    email: str | None = None


@frozen(kw_only=True)
class Item:
    id: str
    labels: list[str]
    assignee: Person | None
    score: int
    done: bool
    colour: Colour
    size: Literal["s", "m"]
    tags: dict[str, int]
    since: dt.date
    pair: tuple[str, ...]


@frozen(kw_only=True)
class Found:
    items: list[Item]
    total: int
    note: str | None = field(default=None, metadata=describe("A note.", omit_none=True))


@frozen(kw_only=True)
class Measured:
    value: float
    extra: Any = None


@frozen(kw_only=True)
class Query:
    query: str = field(metadata=describe("Words.", minLength=1))
    limit: int = field(default=5, metadata=describe("At most.", minimum=1, maximum=50))


@tool(name="plan_search", description="d", input=Query, output=Found)
async def search(ctx: CallContext, args: Query) -> Found:
    raise AssertionError("rendered directly in these tests")


@tool(name="plan_measure", description="d", input=Query, output=Measured)
async def measure(ctx: CallContext, args: Query) -> Measured:
    return Measured(value=float(args.limit) / 3)


def test_the_plan_is_built_once_and_knows_which_outputs_are_plain_json() -> None:
    assert search.plan() is search.plan()
    assert call_plan(search).plain_output is True
    assert call_plan(search).omitted == ("note",)
    assert call_plan(measure).plain_output is False  # a float (other exponents), an Any


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)  # non-ASCII, no lone surrogates
_ITEMS = st.builds(
    Item,
    id=_TEXT,
    labels=st.lists(_TEXT, max_size=3),
    assignee=st.none() | st.builds(Person, name=_TEXT, email=st.none() | _TEXT),
    score=st.integers(),
    done=st.booleans(),
    colour=st.sampled_from(Colour),
    size=st.sampled_from(["s", "m"]),
    tags=st.dictionaries(_TEXT, st.integers(), max_size=3),
    since=st.dates(),
    pair=st.lists(_TEXT, max_size=2).map(tuple),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ITEMS, max_size=4), st.integers(), st.none() | _TEXT)
def test_the_default_text_of_a_plain_output_is_json_dumps_byte_for_byte(
    items: list[Item], total: int, note: str | None
) -> None:
    data, text = search.render(Found(items=items, total=total, note=note))
    assert text == json.dumps(data, indent=2, ensure_ascii=False, default=str)
    assert ("note" in data) is (note is not None)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(), st.none() | st.floats() | st.text(max_size=4) | st.datetimes())
def test_the_default_text_of_other_outputs_is_json_dumps_too(value: float, extra: Any) -> None:
    data, text = measure.render(Measured(value=value, extra=extra))
    assert text == json.dumps(data, indent=2, ensure_ascii=False, default=str)


def test_a_lone_surrogate_in_a_plain_output_is_written_as_before() -> None:
    person = Person(name="a\ud800")
    item = Item(
        id="x", labels=[], assignee=person, score=1, done=True, colour=Colour.RED, size="s", tags={},
        since=dt.date(2026, 1, 2), pair=(),
    )  # fmt: skip
    data, text = search.render(Found(items=[item], total=1))
    assert text == json.dumps(data, indent=2, ensure_ascii=False)
    assert "\ud800" in text  # left for the host to scrub


def test_a_subclass_of_the_output_is_rendered_as_its_own_class() -> None:
    @frozen(kw_only=True)
    class MoreFound(Found):
        ratio: float

    data, text = search.render(MoreFound(items=[], total=0, ratio=1e-7))
    assert data == {"items": [], "total": 0, "ratio": 1e-7}
    assert text == json.dumps(data, indent=2)  # "1e-07", as the json module writes it


async def test_arguments_are_refused_in_the_same_words_by_the_precompiled_checks() -> None:
    pack = Pack(name="plan", tools=[measure])
    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=Settings(), http=http)
        ok = await pack.execute_tool("plan_measure", {"query": "x", "limit": 6}, context)
        short = await pack.execute_tool("plan_measure", {"query": "", "limit": 60}, context)
        wrong = await pack.execute_tool("plan_measure", {"query": 1, "querry": 2}, context)
    assert ok.success and ok.result == {"value": 2.0, "extra": None}
    assert short.error == "invalid arguments for tool plan_measure: query: must not be empty; limit: must be at most 50"
    assert wrong.error == (
        "invalid arguments for tool plan_measure: "
        'Unrecognized key: "querry" (did you mean "query"?); query: must be a string'
    )


@frozen(kw_only=True)
class Options:
    allow: bool = False


async def test_the_packs_routing_follows_a_new_settings() -> None:
    gated = attrs.evolve(measure, name="plan_gated")
    pack = Pack(name="plan", tools=[measure, disabled(gated, reason="off", unless=lambda o: o.allow)], options=Options)
    async with httpx.AsyncClient() as http:
        before = ToolContext(settings=Settings(tool_options={"plan": {}}), http=http)
        after = ToolContext(settings=Settings(tool_options={"plan": {"allow": True}}), http=http)
        refused = await pack.execute_tool("plan_gated", {"query": "x"}, before)
        allowed = await pack.execute_tool("plan_gated", {"query": "x"}, after)
        again = await pack.execute_tool("plan_gated", {"query": "x"}, before)
    assert refused.result["error"]["reason"] == "tool_disabled"
    assert allowed.success
    assert again.result["error"]["reason"] == "tool_disabled"
