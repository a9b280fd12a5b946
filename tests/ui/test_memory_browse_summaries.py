"""Memory › Browse lists each entry by its first sentence beside its id: a list of Chinese
entries was a list of ids told apart by a hash (`fact-9ea705c1c4`)."""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx

from support import entry_file, git, initialized_repository
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.server import UiServer

NIGHTLY = "对账任务每天凌晨两点运行。失败时先查渠道侧的回调日志。"
LONG = "部署前先执行 alembic upgrade head，" * 12


def test_entries_are_listed_by_their_first_sentence_beside_their_id(tmp_path: Path) -> None:
    home = tmp_path / "state"
    repo = initialized_repository(tmp_path, home)
    entries = repo / ".threadshare/memory/entries"
    (entries / "fact-9ea705c1c4.md").write_text(entry_file("fact-9ea705c1c4", NIGHTLY))
    (entries / "alembic-upgrade-head-0123456789.md").write_text(
        entry_file("alembic-upgrade-head-0123456789", LONG)
    )
    git(repo, "add", "-A")
    listing = run_operation("memory.list", OpContext(cwd=repo, home=home), {"kind": "entry"})
    summaries = {d["id"]: d["summary"] for d in listing["documents"]}
    assert summaries["fact-9ea705c1c4"] == "对账任务每天凌晨两点运行。"
    long = summaries["alembic-upgrade-head-0123456789"]
    assert long.endswith("…") and LONG.startswith(long[:-1].rstrip("，"))

    server = UiServer(repo, home=home).start()
    try:
        with httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60) as client:
            assert client.get(server.login_url("/memory")).status_code == 200
            page = client.get("/memory").text
    finally:
        server.stop()
    assert (
        '<a href="/memory/entry/fact-9ea705c1c4">对账任务每天凌晨两点运行。</a> '
        '<span class="sub">fact-9ea705c1c4</span>'
    ) in page
