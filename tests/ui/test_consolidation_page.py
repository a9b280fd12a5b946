"""A candidate kind the page has only a template for: a consolidation (scene update + doctrine
create) is listed, shown operation by operation, confirmed, prepared and promoted through the
page's forms on the real server — with no code of its own in ui/. The repository is not
registered for sessions, so entry and Skill review are refused and said so, while consolidation
review (which needs no session index) works."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from ui_world import decision_forms

from memory.consolidation.consolidation_world import (
    DOCTRINE_TEXT,
    World,
    update_scene_and_create_doctrine,
)
from teamlore.ui.server import UiServer

SCENE = ".threadshare/memory/scenes/team-memory-design.md"
DOCTRINE = ".threadshare/memory/doctrine.md"
RECORD = ".threadshare/memory/consolidated.json"


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    staged = World(tmp_path, home)
    staged.stage(update_scene_and_create_doctrine(staged.synthesize(full=True)["task"]))
    return staged


@pytest.fixture()
def client(world: World) -> Iterator[httpx.Client]:
    server = UiServer(world.root, home=world.home).start()
    with httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60) as opened:
        assert opened.get(server.login_url("/queue")).status_code == 200
        yield opened
    server.stop()


def csrf(page: str) -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page)
    assert found
    return found.group(1)


@pytest.mark.parametrize("ignored", [False, True], ids=["tracked", "ignored-by-git"])
def test_a_consolidation_is_reviewed_and_promoted_through_the_page(
    world: World, client: httpx.Client, ignored: bool
) -> None:
    """Promoted where git ignores the tree, the page says which files the team will not get:
    the new doctrine and consolidation record, not the scene git already tracks."""
    if ignored:
        (world.root / ".git" / "info" / "exclude").write_text(".threadshare/\n")
    queue = client.get("/queue", params={"kind": "consolidation"}).text
    assert "REPOSITORY_NOT_REGISTERED" in queue  # entry and skill review need the session index
    link = re.search(r'href="(/candidate/[^"]+)"', queue)
    assert link and 'class="kind consolidation"' in queue
    page = client.get(link.group(1)).text
    assert "team-memory-design" in page and "<td>update" in page and "<td>create" in page
    assert "UPDATE scene team-memory-design" in page and "+++ proposed" in page
    forms = decision_forms(page, csrf(page))
    assert [f["statement"] for f in forms] == ["op-scene", "op-doctrine"]
    for form in forms:
        decided = client.post(link.group(1) + "/decide", data=form)
        assert decided.status_code == 200
    assert "ready for the plan" in decided.text
    plan = client.post("/plan/prepare", data={"csrf": csrf(page)})
    assert plan.status_code == 200 and SCENE in plan.text and DOCTRINE in plan.text
    digest = re.search(r'name="planDigest" value="([0-9a-f]+)"', plan.text)
    assert digest
    plan_path = str(plan.url.path)
    assert not (world.root / DOCTRINE).exists()
    promoted = client.post(
        f"{plan_path}/promote", data={"csrf": csrf(page), "planDigest": digest.group(1)}
    )
    assert promoted.status_code == 200 and "Promoted" in promoted.text
    warning = (
        '<p class="warning">git ignores 2 files (.git/info/exclude:1 .threadshare/): your team'
        f" will not get <code>{RECORD}</code>, <code>{DOCTRINE}</code>."
    )
    assert (warning in promoted.text) is ignored
    assert "heat: 2" in world.read(SCENE).decode()
    assert world.read(DOCTRINE).decode() == DOCTRINE_TEXT
    assert "Nothing is waiting for review" in client.get("/queue").text
