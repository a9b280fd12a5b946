"""What review shows of what a session held, on a real indexed session, through the real CLI
(text and JSON), the real MCP server (SDK stdio client) and the review page:

- a draft naming a provider session id and a home path reviewed as `1 local reference will be
  written as {local-path}, 1 as {session-id}`, then `blocked session.provider-session-id`:
  promotion refuses such a candidate (prepare says LINT_BLOCKED), so review no longer says the
  id will be written as `{session-id}`. A UUID that is no session id does not block and is
  written as `{session-id}`: review still says so;
- a token the person typed in the session (`my token is ghp_…`) was printed whole in the
  evidence excerpt; it is masked (core/secrets/mask.py), as in the transcript recall hands an
  agent."""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
from team_mcp import running_team_server

from support import draft_batch, memory_init, store_all, teamlore_cli
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.server import UiServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW, CodexSession, make_repo, sync

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"  # a GitHub token's shape: 40 characters
TYPED = f"Thanks. Also my token is {TOKEN} for the release bot."


def session_repository(tmp_path: Path, home: Path) -> tuple[Path, str]:
    """A registered repository with one indexed Codex session whose first turn holds a token
    the person typed; (its root, the session's provider id)."""
    root = make_repo(tmp_path / "shop")
    session = CodexSession("a1", root)
    session.user(f"The release script fails on tag push; fix it. {TYPED}")
    session.shell("pytest -q tests/test_release.py", "1 failed: test_tag_push", exit_code=1)
    session.answer("The tag check compared against the wrong prefix.")
    session.turn("use the v prefix", "Changed the tag check to expect a v prefix.")
    session.turn("anything else?", "Run pytest tests/test_release.py before pushing tags.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", root)
    memory_init(root, home)
    return root, session.session_id


def quarantine(repo: Path, home: Path, text: str) -> None:
    """`text` staged as one candidate citing the session's first turn, and stored."""
    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(WINDOW))["sources"][0]
    staged = run_operation("memory.stage", ctx, draft_batch(task, text))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))


def review(repo: Path, *args: str) -> str:
    proc = teamlore_cli("memory", "review", *args, cwd=repo, env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def reviewed_over_mcp(repo: Path) -> dict[str, Any]:
    with running_team_server(repo) as server:
        (reviewed,) = server.calls(("threadshare_memory_review", {}))
    return reviewed


def test_review_never_says_a_session_id_that_blocks_will_be_written_as_a_placeholder(
    tmp_path: Path, home: Path
) -> None:
    repo, session_id = session_repository(tmp_path, home)
    quarantine(repo, home, f"Session {session_id} ran from /home/alice/src/shop and failed.")

    printed = review(repo)
    assert "blocked session.provider-session-id" in printed
    assert "as {session-id}" not in printed
    assert "\n  1 local reference will be written as {local-path}\n" in printed
    assert session_id not in printed and "/home/alice" not in printed
    (item,) = json.loads(review(repo, "--format", "json"))["items"]
    assert reviewed_over_mcp(repo)["items"] == [item]
    assert item["blocked"] is True
    (statement,) = item["statements"]
    for written, notice in (
        (item["writtenContent"], item["writtenNotice"]),
        (statement["writtenText"], statement["writtenNotice"]),
    ):
        assert notice == "1 local reference will be written as {local-path}"
        # the id is shown as its finding names it; promotion writes nothing for it
        assert written == "Session 019a…[36 chars] ran from {local-path} and failed."

    # which is true: promotion refuses it, it does not write `{session-id}`
    from teamlore.memory.promotion.queue import prepare_request_from_review

    request = prepare_request_from_review([{**item, "blocked": False}])
    proc = teamlore_cli(
        "memory",
        "prepare",
        "--request",
        "-",
        "--format",
        "json",
        cwd=repo,
        input=json.dumps(request),
    )
    assert json.loads(proc.stdout)["error"]["code"] == "LINT_BLOCKED"


def test_a_uuid_that_is_no_session_id_is_said_to_be_written_as_a_placeholder(
    tmp_path: Path, home: Path
) -> None:
    repo, _ = session_repository(tmp_path, home)
    quarantine(repo, home, "Clear the build cache 3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c first.")
    (item,) = json.loads(review(repo, "--format", "json"))["items"]
    assert item["blocked"] is False
    assert item["writtenContent"] == "Clear the build cache {session-id} first."
    assert item["writtenNotice"] == "1 local reference will be written as {session-id}"
    assert "{session-id}" in item["files"][0]["preview"]  # what promotion writes, as said


def test_a_token_typed_in_the_session_is_masked_in_every_evidence_excerpt(
    tmp_path: Path, home: Path
) -> None:
    repo, _ = session_repository(tmp_path, home)
    quarantine(repo, home, "The release bot needs its token before a tag is pushed.")

    printed = review(repo)
    document = review(repo, "--format", "json")
    over_mcp = reviewed_over_mcp(repo)
    running = UiServer(repo, home=home).start()
    try:
        with httpx.Client(base_url=running.base_url, follow_redirects=True, timeout=60) as client:
            assert client.get(running.login_url("/queue")).status_code == 200
            candidate = json.loads(document)["items"][0]["candidateId"]
            page = client.get(f"/candidate/{candidate}").text
    finally:
        running.stop()
    for shown in (printed, document, json.dumps(over_mcp), page):
        assert TOKEN not in shown and TOKEN[:12] not in shown
    (item,) = over_mcp["items"]
    excerpts = [e["excerpt"] for s in item["statements"] for e in s["evidence"] if e["excerpt"]]
    assert excerpts and all("my token is …[40 chars]" in e for e in excerpts), excerpts
    assert "my token is …[40 chars]" in printed
    assert "my token is …[40 chars]" in html.unescape(re.sub(r"<[^>]+>", "", page))
