"""``server.catalog``'s budget: which tools a caller is listed, and the search and call tools."""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import given, settings
from hypothesis import strategies as st

from lorenz.contracts import ToolSpec
from lorenz.settings.model import CatalogSettings
from lorenz.toolsearch.budget import CALL_TOOL, SEARCH_TOOL, fit
from lorenz.toolsearch.cost import context_tokens

TOOLS = tuple(ToolSpec(name=f"pack_tool{i}", description="Does a thing. " * 40 * (i + 1)) for i in range(6))
COST = {tool.name: context_tokens(tool.to_wire()) for tool in TOOLS}
EXTRA = context_tokens(SEARCH_TOOL.to_wire()) + context_tokens(CALL_TOOL.to_wire())


def _names(tools: tuple[ToolSpec, ...]) -> list[str]:
    return [tool.name for tool in tools]


def test_a_catalog_that_fits_is_listed_whole_without_the_two_tools() -> None:
    fitted = fit(TOOLS, CatalogSettings(budget_tokens=sum(COST.values()), max_tools=6))
    assert fitted.listed == TOOLS and fitted.left_out == ()
    assert fitted.tokens == sum(COST.values())


def test_over_budget_lists_the_pinned_then_the_most_used_then_search_and_call() -> None:
    budget = EXTRA + COST["pack_tool5"] + COST["pack_tool3"] + COST["pack_tool0"]
    usage = {"pack_tool3": 9.0, "pack_tool1": 5.0, "pack_tool0": 1.0}
    fitted = fit(TOOLS, CatalogSettings(budget_tokens=budget, pinned=("*5",)), usage)
    # pack_tool1 is used more than pack_tool0 but does not fit what is left; pack_tool0 does.
    assert _names(fitted.listed) == ["pack_tool5", "pack_tool3", "pack_tool0", SEARCH_TOOL.name, CALL_TOOL.name]
    assert _names(fitted.left_out) == ["pack_tool1", "pack_tool2", "pack_tool4"]
    assert fitted.tokens == budget


def test_max_tools_counts_the_two_tools_and_search_false_leaves_them_out() -> None:
    fitted = fit(TOOLS, CatalogSettings(max_tools=3), {"pack_tool4": 2.0})
    assert _names(fitted.listed) == ["pack_tool4", SEARCH_TOOL.name, CALL_TOOL.name]
    bare = fit(TOOLS, CatalogSettings(max_tools=3, search=False), {"pack_tool4": 2.0})
    assert _names(bare.listed) == ["pack_tool4", "pack_tool0", "pack_tool1"]


def test_pinned_tools_are_listed_even_past_the_budget() -> None:
    fitted = fit(TOOLS, CatalogSettings(budget_tokens=1, pinned=("pack_tool2",)))
    assert _names(fitted.listed) == ["pack_tool2", SEARCH_TOOL.name, CALL_TOOL.name]


@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=6),
    budget=st.none() | st.integers(min_value=1, max_value=6000),
    max_tools=st.none() | st.integers(min_value=1, max_value=8),
    pinned=st.lists(st.sampled_from(["pack_tool1", "pack_tool4", "*3", "nothing"]), max_size=2).map(tuple),
    search=st.booleans(),
    usage=st.dictionaries(st.sampled_from(list(COST)), st.floats(min_value=0, max_value=100)),
)
def test_every_tool_is_listed_or_left_out_and_the_budget_holds_beyond_the_pinned(
    count: int,
    budget: int | None,
    max_tools: int | None,
    pinned: tuple[str, ...],
    search: bool,
    usage: dict[str, float],
) -> None:
    if budget is None and max_tools is None:
        max_tools = 2
    catalog = CatalogSettings(budget_tokens=budget, max_tools=max_tools, pinned=pinned, search=search)
    tools = TOOLS[:count]
    fitted = fit(tools, catalog, usage)
    own = [tool for tool in fitted.listed if tool not in (SEARCH_TOOL, CALL_TOOL)]
    assert sorted(_names((*own, *fitted.left_out))) == sorted(_names(tools))
    assert fitted.tokens == sum(context_tokens(tool.to_wire()) for tool in fitted.listed)
    if not fitted.left_out:
        assert own == list(tools)
        return
    # Past the budget only what is always listed: the pinned tools and the two tools.
    always = [tool for tool in fitted.listed if tool.name not in COST or any(fnmatchcase(tool.name, g) for g in pinned)]
    assert budget is None or fitted.tokens <= max(budget, sum(context_tokens(tool.to_wire()) for tool in always))
    assert max_tools is None or len(fitted.listed) <= max(max_tools, len(always))
