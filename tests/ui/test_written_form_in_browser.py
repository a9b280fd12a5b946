"""The review page shows a candidate as promotion writes it: a statement naming local paths
(`/home/alice/…`, `C:\\Users\\bob\\…`) is shown with `{local-path}` where each path was and a
line saying so, as `teamlore memory review` prints it, in Chromium on the real server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import draft_batch, release_repository, store_all, teamlore_cli
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.server import UiServer

TEXT = (
    "Run the release script from /home/alice/shop/release.sh, or "
    "C:\\Users\\bob\\shop\\release.ps1 on Windows, and read /Users/carol/.netrc first."
)
WRITTEN = (
    "Run the release script from {local-path}, or {local-path} on Windows, and read "
    "{local-path} first."
)
NOTICE = "3 local references will be written as {local-path}"


def test_the_page_shows_what_promotion_writes(tmp_path: Path, home: Path) -> None:
    pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
    from ui_world import launched_chromium

    repo = release_repository(tmp_path, home)  # puts tests/memory on the path
    from recall_world import WINDOW

    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(WINDOW))["sources"][0]
    staged = run_operation("memory.stage", ctx, draft_batch(task, TEXT))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))
    env = {"TEAMLORE_HOME": str(home), "COLUMNS": "80"}
    reviewed = teamlore_cli("memory", "review", "--format", "json", cwd=repo, env=env)
    (item,) = json.loads(reviewed.stdout)["items"]
    running = UiServer(repo, home=home).start()
    try:
        with launched_chromium() as browser:
            page = browser.new_page()
            page.goto(running.login_url("/queue"))
            queue = page.locator("body").inner_text()
            page.goto(running.base_url + f"/candidate/{item['candidateId']}")
            title = page.locator("section.summary h1.content").inner_text()
            claim = page.locator("article#s-s1 p.claim").inner_text()
            notices = page.locator(".written-notice").all_inner_texts()
            shown = page.locator("body").inner_text()
    finally:
        running.stop()
    # what the CLI review shows (`writtenText`), the page shows, and the person confirms
    assert claim == item["statements"][0]["writtenText"] == WRITTEN
    assert title == item["writtenContent"] == WRITTEN
    assert notices == [NOTICE, NOTICE]  # under the content and under statement s1
    for page_text in (queue, shown):
        assert "/home/alice" not in page_text and "C:\\Users\\bob" not in page_text
        assert "/Users/carol" not in page_text
    assert WRITTEN[:60] in queue
    assert "run-the-release-script-from-local-path-or-on-windows-and" in shown  # each word once
