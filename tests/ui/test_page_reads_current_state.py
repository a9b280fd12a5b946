"""The page shows the repository as it is now, as the CLI sees it (walk U1, against the real
server over HTTP, with the real state DB and git repository):

- a plan prepared on the page and voided since (a candidate discarded from a terminal, a target
  file edited) is shown as voided, without a Promote button, on /plan and /plan/<id> (#4);
- files of the memory tree that could not be read are named with the reason on the Memory page,
  repository-relative, as `memory status` names them (#7);
- started from a folder that holds the registered worktree, the page names the repository and
  its sessions pages work (owner rule 3, #8).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from ui_world import World, build_world, decision_forms

from teamlore.ops.registry import run_operation
from teamlore.ui.server import UiServer


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def open_page(folder: Path, world: World) -> tuple[UiServer, httpx.Client]:
    server = UiServer(folder, home=world.home).start()
    client = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60)
    assert client.get(server.login_url("/queue")).status_code == 200
    return server, client


@pytest.fixture()
def client(world: World) -> Iterator[httpx.Client]:
    server, opened = open_page(world.repo, world)
    yield opened
    opened.close()
    server.stop()


def csrf(client: httpx.Client) -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', client.get("/queue").text)
    assert found
    return found.group(1)


def confirm_every_entry(client: httpx.Client) -> list[str]:
    """Confirm every generated statement of the entry candidates through the page's forms."""
    queue = client.get("/queue", params={"kind": "entry"}).text
    links = list(dict.fromkeys(re.findall(r'href="(/candidate/[^"#?]+)"', queue)))
    assert len(links) == 2
    token = csrf(client)
    for link in links:
        forms = decision_forms(client.get(link).text, token)
        assert forms
        for form in forms:
            assert client.post(link + "/decide", data=form).status_code == 200
    return [link.rsplit("/", 1)[1] for link in links]


def prepare(client: httpx.Client) -> tuple[str, httpx.Response]:
    prepared = client.post("/plan/prepare", data={"csrf": csrf(client)})
    assert prepared.status_code == 200 and 'id="promote"' in prepared.text
    assert "Promote these 2 file(s)" in prepared.text
    return str(prepared.url.path).rsplit("/", 1)[1], prepared


def plan_line(client: httpx.Client, plan_id: str) -> str:
    listed = re.search(rf'<li><a href="/plan/{plan_id}">.*?</li>', client.get("/plan").text)
    assert listed, "the plan prepared here is listed"
    return listed.group(0)


def plans_to_promote(world: World) -> list[str]:
    status: dict[str, Any] = run_operation("memory.status", world.ctx(), {})
    return list(status["plansToPromote"])


def test_a_plan_voided_by_a_discard_in_a_terminal_is_shown_voided(
    world: World, client: httpx.Client
) -> None:
    """#4: the page kept the status it had at prepare time: /plan said `generated, not
    promoted` and /plan/<id> offered Promote for a plan `memory status` no longer lists."""
    candidates = confirm_every_entry(client)
    plan_id, _ = prepare(client)
    assert plans_to_promote(world) == [plan_id]
    assert "generated, not promoted" in plan_line(client, plan_id)

    # what `teamlore memory discard --candidate … --reason x` runs, from a terminal
    run_operation("memory.discard", world.ctx(), {"candidateId": candidates[0], "reason": "x"})
    assert plans_to_promote(world) == []

    line = plan_line(client, plan_id)
    assert "voided" in line and "generated, not promoted" not in line
    detail = client.get(f"/plan/{plan_id}")
    assert detail.status_code == 200
    assert 'class="state rejected">voided</span>' in detail.text
    assert 'id="promote"' not in detail.text and "Promote these" not in detail.text
    assert "prepare a new plan" in detail.text


def test_a_plan_voided_by_a_hand_edited_target_is_shown_voided_with_the_drift(
    world: World, client: httpx.Client
) -> None:
    """#4, the other way a plan is voided: a target file edited by hand. The refusal was right;
    a fresh GET then still showed the plan as generated with a working Promote button."""
    confirm_every_entry(client)
    plan_id, prepared = prepare(client)
    target = re.findall(
        r"<td><code>(\.threadshare/memory/entries/[^<]+)</code></td>", prepared.text
    )
    assert len(target) == 2
    (world.repo / target[0]).write_text("hand-written\n", encoding="utf-8")
    digest = re.search(r'name="planDigest" value="([0-9a-f]+)"', prepared.text)
    assert digest
    refused = client.post(
        f"/plan/{plan_id}/promote", data={"csrf": csrf(client), "planDigest": digest.group(1)}
    )
    assert refused.status_code == 409 and "PROMOTION_TARGET_DRIFT" in refused.text
    assert 'id="promote"' not in refused.text

    fresh = client.get(f"/plan/{plan_id}").text
    assert 'class="state rejected">voided</span>' in fresh
    assert 'id="promote"' not in fresh and "Promote these" not in fresh
    assert "<code>PROMOTION_TARGET_DRIFT</code>" in fresh and f"<code>{target[0]}</code>" in fresh
    assert "voided</span> (PROMOTION_TARGET_DRIFT)" in plan_line(client, plan_id)
    assert plans_to_promote(world) == []


def test_the_memory_page_names_the_files_it_could_not_read(
    world: World, client: httpx.Client
) -> None:
    """#7: a hand-written file without front matter was silently left out of the browse list,
    and search said only `coverage partial`."""
    (world.repo / ".threadshare/memory/entries/x.md").write_text("hand-written\n")
    status = run_operation("memory.status", world.ctx(), {})
    named = [(d["code"], d["file"]) for d in status["projection"]["diagnostics"]]
    assert named == [("format.missing-frontmatter", ".threadshare/memory/entries/x.md")]
    for params in ({}, {"q": "weekly"}):
        page = client.get("/memory", params=params)
        assert page.status_code == 200
        assert "<code>.threadshare/memory/entries/x.md:1</code>" in page.text
        assert "format.missing-frontmatter" in page.text
        assert "file must start with a `---` line" in page.text
        assert "coverage partial" in page.text
        assert str(world.repo) not in page.text and str(world.root) not in page.text
    (world.repo / ".threadshare/memory/entries/x.md").unlink()
    assert "could not be read" not in client.get("/memory").text


def test_started_from_the_folder_holding_the_worktree_every_page_works(world: World) -> None:
    """#8: the queue worked (owner rule 3), but the header named the folder and /sessions
    answered NOT_A_GIT_REPOSITORY: the raw working directory was the sessions filter."""
    assert world.repo.parent == world.root and world.repo.name == "acme-billing"
    server, client = open_page(world.root, world)
    try:
        queue = client.get("/queue").text
        assert '<span class="repo" title="repository">acme-billing</span>' in queue
        listed = client.get("/sessions")
        assert listed.status_code == 200 and "NOT_A_GIT_REPOSITORY" not in listed.text
        assert len(re.findall(r'<td><a href="/sessions/[0-9a-f]+">', listed.text)) == 3
        found = client.get("/sessions", params={"q": "alembic"})
        assert found.status_code == 200 and "NOT_A_GIT_REPOSITORY" not in found.text
        assert re.search(r'href="/sessions/[0-9a-f]+\?turn=', found.text)
        shown = client.get("/evidence/path", params={"path": "migrations/env.py"})
        assert shown.status_code == 200
    finally:
        client.close()
        server.stop()
