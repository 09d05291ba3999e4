"""Polling several Linear projects: explicit slugs, one slug, or projects discovered by label."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from linear_fake import FakeLinear, FakeProject, linear_settings

from lorenz_linear import LinearApiError, LinearClient

pytestmark = pytest.mark.anyio


def client(fake: FakeLinear, http: httpx.AsyncClient, options: dict[str, Any]) -> LinearClient:
    return LinearClient(linear_settings(fake.url, options=options), http=http)


def add_projects(fake: FakeLinear, *specs: tuple[str, list[str]]) -> None:
    for n, (slug, labels) in enumerate(specs):
        fake.projects.append(FakeProject(id=f"p-{n}", name=slug.title(), slug_id=slug, labels=labels))


async def test_project_slugs_poll_every_listed_project(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``project_slugs`` filters the poll on all of them with ``slugId in $projectSlugs``."""
    fake.add_issue("id-a", "A-1", project="slug-a")
    fake.add_issue("id-b", "B-1", project="slug-b")
    fake.add_issue("id-c", "C-1", project="slug-c")
    issues = await client(fake, http, {"projectSlugs": ["slug-a", "slug-b"]}).fetch_candidate_issues()
    assert [i.identifier for i in issues] == ["A-1", "B-1"]
    [poll] = fake.requests
    assert poll.variables["projectSlugs"] == ["slug-a", "slug-b"]
    assert "slugId: {in: $projectSlugs}" in poll.query


async def test_single_project_slug(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``project_slug: mono`` polls ``["mono"]``."""
    await client(fake, http, {"projectSlug": "mono"}).fetch_candidate_issues()
    assert fake.requests[0].variables["projectSlugs"] == ["mono"]


async def test_project_labels_discover_projects(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``project_labels`` first finds the labelled projects, then polls their slugs."""
    add_projects(fake, ("proj-a", ["team:backend"]), ("proj-b", ["lorenz-managed"]), ("proj-c", ["other"]))
    fake.add_issue("id-a", "A-1", project="proj-a")
    labels = ["team:backend", "lorenz-managed"]
    issues = await client(fake, http, {"projectLabels": labels}).fetch_candidate_issues()
    assert [i.identifier for i in issues] == ["A-1"]
    discovery, poll = fake.requests
    assert discovery.operation == "LorenzTsProjectsByLabels"
    assert discovery.variables == {"labels": labels, "first": 100, "after": None}
    assert poll.variables["projectSlugs"] == ["proj-a", "proj-b"]


async def test_label_discovery_follows_pages(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Project discovery pages with the previous page's cursor."""
    fake.script(
        {
            "data": {
                "projects": {
                    "nodes": [{"slugId": "proj-a"}],
                    "pageInfo": {"hasNextPage": True, "endCursor": "project-cursor-1"},
                }
            }
        },
        operation="LorenzTsProjectsByLabels",
    )
    fake.script(
        {
            "data": {
                "projects": {"nodes": [{"slugId": "proj-b"}], "pageInfo": {"hasNextPage": False, "endCursor": None}}
            }
        },
        operation="LorenzTsProjectsByLabels",
    )
    await client(fake, http, {"projectLabels": ["team:backend"]}).fetch_candidate_issues()
    first, second, poll = fake.requests
    assert (first.variables["after"], second.variables["after"]) == (None, "project-cursor-1")
    assert poll.variables["projectSlugs"] == ["proj-a", "proj-b"]


async def test_labels_matching_no_project(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Labels that match no project fail the poll with ``no linear projects found for labels``."""
    with pytest.raises(LinearApiError, match="no linear projects found for labels: nonexistent-label"):
        await client(fake, http, {"projectLabels": ["nonexistent-label"]}).fetch_candidate_issues()


async def test_discovered_slugs_are_cached(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Two polls discover projects once."""
    add_projects(fake, ("proj-a", ["team:backend"]))
    linear = client(fake, http, {"projectLabels": ["team:backend"]})
    await linear.fetch_candidate_issues()
    await linear.fetch_candidate_issues()
    assert fake.operations() == ["LorenzTsProjectsByLabels", "LorenzTsPoll", "LorenzTsPoll"]


async def test_failed_discovery_is_retried_on_the_next_poll(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A failed label lookup fails that poll only; the next poll looks the projects up again."""
    add_projects(fake, ("proj-a", ["team:backend"]))
    fake.script({"errors": [{"message": "temporary label lookup failure"}]}, operation="LorenzTsProjectsByLabels")
    linear = client(fake, http, {"projectLabels": ["team:backend"]})
    with pytest.raises(LinearApiError, match="temporary label lookup failure"):
        await linear.fetch_candidate_issues()
    await linear.fetch_candidate_issues()
    assert fake.operations().count("LorenzTsProjectsByLabels") == 2
    assert fake.requests[-1].variables["projectSlugs"] == ["proj-a"]


async def test_no_selector_fails_the_poll(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Without any project selector the poll fails with the selector message and sends nothing."""
    with pytest.raises(LinearApiError, match="tracker.project_slug, tracker.project_slugs, or tracker.project_labels"):
        await client(fake, http, {}).fetch_candidate_issues()
    assert fake.requests == []
