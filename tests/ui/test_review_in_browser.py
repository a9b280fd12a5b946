"""A person reviews the demo's candidates in a real headless Chromium: queue → candidate →
confirm two statements (keyboard), reject one (mouse) → prepare → promote; the entry file
appears in the repository, the rejected candidate is discarded with a reason, and the memory
and sessions pages show the result. Hostile transcript text renders as text, never as markup.
Screenshots of every page are saved under .pytest-artifacts/ui/."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from ui_world import (
    ARTIFACTS,
    HOSTILE_CLAIM,
    HOSTILE_TEXT,
    World,
    build_world,
    launched_chromium,
)

from support import git
from teamlore.ui.server import UiServer

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("ui-browser"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[UiServer]:
    running = world.server()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def page(browser: Any, server: UiServer) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: errors.append(str(e)))
    opened.goto(server.login_url("/queue"))
    yield opened
    context.close()
    assert errors == [], "no script errors and no CSP violations"


def shot(page: Any, name: str) -> None:
    folder = ARTIFACTS / "ui"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=False)


def statement(page: Any, statement_id: str) -> Any:
    return page.locator(f"article#s-{statement_id}")


def test_the_whole_review_in_the_browser(page: Any, server: UiServer, world: World) -> None:
    expect = playwright_api.expect
    # queue: the demo's two entry candidates and a Skill candidate, nothing decided yet
    expect(page.locator("h1")).to_contain_text("Review queue")
    rows = page.locator("table.queue tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("table.queue .kind.skill")).to_have_count(1)
    shot(page, "queue")

    # a Skill candidate: its own summary template, the SKILL.md diff, the same decisions
    page.locator("table.queue tr:has(.kind.skill) a").first.click()
    expect(page.locator("section.kind-skill h1")).to_have_text("export-preview-escaping")
    expect(statement(page, "s1").locator(".claim")).to_have_text(HOSTILE_CLAIM)
    expect(page.locator("pre.diff")).to_contain_text('+name: "export-preview-escaping"')
    assert page.evaluate("window.__pwned") is None
    shot(page, "candidate-skill")
    page.keyboard.press("c")
    expect(page.locator(".flash.ok")).to_contain_text("ready for the plan")
    page.get_by_role("link", name="Plan", exact=True).click()
    page.locator("#prepare").click()
    expect(page.locator("table.files")).to_contain_text("skills/export-preview-escaping/SKILL.md")
    page.locator("#promote").click()
    expect(page.locator(".outcome")).to_contain_text("written")
    skill_file = world.repo / ".threadshare/memory/skills/export-preview-escaping/SKILL.md"
    assert "Escape every user text" in skill_file.read_text(encoding="utf-8")
    page.get_by_role("link", name="Queue").click()
    expect(rows).to_have_count(2)

    # candidate: confirm both generated statements with the keyboard
    page.get_by_role("link", name="Invoice export must sort rows by id").click()
    expect(page.locator("section.summary h1")).to_contain_text("Invoice export must sort rows")
    expect(page.locator("pre.diff")).to_contain_text("+id: invoice-export-must-sort-rows-by-id")
    expect(statement(page, "fact")).to_contain_text("no confirmation needed")
    expect(page.locator("article.statement.current")).to_have_id("s-claim")
    shot(page, "candidate")
    page.keyboard.press("c")
    expect(statement(page, "claim")).to_have_class(re.compile(r"\bconfirmed\b"))
    expect(page.locator("article.statement.current")).to_have_id("s-cause")
    page.keyboard.press("c")
    expect(statement(page, "cause")).to_contain_text("confirmed")
    expect(page.locator(".flash.ok")).to_contain_text("ready for the plan")
    shot(page, "candidate-confirmed")

    # the other candidate: reject its generated statement with the mouse
    page.keyboard.press("n")
    expect(page.locator("section.summary h1")).to_contain_text("LOCK_TIMEOUT")
    statement(page, "claim").get_by_role("button", name="Reject").click()
    expect(statement(page, "claim")).to_contain_text("rejected")

    # plan: the confirmed candidate is ready, the rejected and the undecided ones stay out
    page.get_by_role("link", name="Plan", exact=True).click()
    expect(page.locator("section.plan-ready")).to_contain_text("Invoice export")
    expect(page.locator("section.plan-out").first).to_contain_text("rejected")
    shot(page, "plan")
    page.locator("#prepare").click()
    expect(page.locator("h1")).to_contain_text("Promotion plan")
    expect(page.locator("table.files")).to_contain_text(".threadshare/memory/entries/invoice-")
    expect(page.locator("pre.diff")).to_contain_text("claim_support: mixed")
    shot(page, "plan-detail")
    target = page.locator("table.files code").first.inner_text()
    assert not (world.repo / target).exists()

    # promote: the entry file appears in the working tree, nothing is committed
    page.locator("#promote").click()
    expect(page.locator(".outcome")).to_contain_text("written")
    shot(page, "promoted")
    written = (world.repo / target).read_text(encoding="utf-8")
    assert "Invoice export must sort rows by id" in written
    assert "github.com/acme/acme-billing" in written
    assert git(world.repo, "status", "--porcelain") == "?? .threadshare/"
    confirmed = [s["statementId"] for i in world.review()["items"] for s in i["statements"]]
    assert confirmed == ["claim", "fact"]  # only the rejected entry candidate is left

    # discard the rejected candidate with a reason
    page.get_by_role("link", name="Queue").click()
    page.locator("table.queue a").first.click()
    page.locator("#reason").fill("the 30 s value was a one-off for that staging run")
    page.get_by_role("button", name="Discard", exact=True).click()
    expect(page.locator(".flash.ok")).to_contain_text("Discarded")
    expect(page.locator(".empty")).to_contain_text("Nothing is waiting for review")
    assert world.review()["items"] == []
    with sqlite3.connect(world.home / "memory-state.sqlite3") as db:
        reasons = [r[0] for r in db.execute("SELECT reason FROM candidate_discards")]
    assert reasons == ["the 30 s value was a one-off for that staging run"]

    page.get_by_role("link", name="Queue").click()
    expect(page.locator(".empty")).to_contain_text("Nothing is waiting for review")


def test_memory_and_sessions_pages(page: Any, server: UiServer) -> None:
    expect = playwright_api.expect
    page.goto(server.base_url + "/memory")
    expect(page.locator("table.docs")).to_contain_text("invoice-export-must-sort-rows-by-id")
    page.locator("[data-search]").fill("invoice export")
    page.keyboard.press("Enter")
    expect(page.locator("ol.results")).to_contain_text("invoice-export-must-sort-rows-by-id")
    shot(page, "memory")
    page.locator("ol.results a").first.click()
    expect(page.locator(".body")).to_contain_text("Invoice export must sort rows by id")
    shot(page, "memory-document")

    page.goto(server.base_url + "/sessions?q=" + "迁移")
    expect(page.locator("ol.results li").first).to_contain_text("claude")
    shot(page, "sessions")
    page.locator("ol.results a").first.click()
    expect(page.locator("table.tools").first).to_contain_text("alembic upgrade head")
    expect(page.locator("td.exit.nonzero").first).to_have_text("1")
    shot(page, "session")
    page.locator("table.tools a").last.click()  # a linked commit, rendered by git show
    expect(page.locator("pre.diff")).to_contain_text("LOCK_TIMEOUT = '30s'")
    shot(page, "git-show")


def test_a_hostile_transcript_renders_as_text(page: Any, server: UiServer) -> None:
    expect = playwright_api.expect
    page.goto(server.base_url + "/sessions?q=preview+textarea")
    page.locator("ol.results a").first.click()
    expect(page.locator("article.session-turn").first).to_contain_text(HOSTILE_TEXT)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("article.session-turn script, article.session-turn img").count() == 0
    expect(page.locator("td.exit.nonzero")).to_have_text("3")
    shot(page, "hostile-session")


def test_keyboard_help_toggles(page: Any, server: UiServer) -> None:
    page.goto(server.base_url + "/queue")
    help_box = page.locator("#help")
    assert help_box.is_hidden()
    page.keyboard.press("?")
    assert help_box.is_visible()
    page.keyboard.press("?")
    assert help_box.is_hidden()


def test_screenshots_were_saved(browser: Any) -> None:
    """After the page tests above (skipped with them when no browser can be had)."""
    names = {p.stem for p in (ARTIFACTS / "ui").glob("*.png")}
    assert {"queue", "candidate", "plan", "plan-detail", "memory", "sessions"} <= names
    assert all(p.stat().st_size > 10_000 for p in (ARTIFACTS / "ui").glob("*.png"))
