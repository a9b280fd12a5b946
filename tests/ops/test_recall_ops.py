"""The memory.recall operation: request modes, refusals, registry exposure."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW, CodexSession, make_repo, sync

import teamlore.ops.memory.recall  # noqa: F401
from support import entry_file, memory_init
from teamlore.core import errors
from teamlore.ops.registry import REGISTRY, OpContext

DOC = {
    "format": "threadshare-memory-extraction-request@v1",
    "window": {"after": WINDOW["since"], "before": WINDOW["until"]},
}


def run(cwd: Path, home: Path, payload: dict[str, Any]) -> dict[str, Any]:
    return REGISTRY.get("memory.recall").run(OpContext(cwd=cwd, home=home), payload)


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    repo = make_repo(tmp_path / "shop")
    CodexSession("a1", repo).turn("one").turn("two").turn("three").write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    memory_init(repo, home)
    return repo


def test_registered_for_the_team_capability_as_threadshare_memory_recall() -> None:
    op = REGISTRY.get("memory.recall")
    assert (op.capability, op.mcp_tool, op.side_effect) == (
        "team",
        "threadshare_memory_recall",
        "state-write",
    )
    assert op in REGISTRY.for_capability("team") and op not in REGISTRY.for_capability("team-read")


def test_parameters_and_request_document_give_the_same_tasks(repo: Path, home: Path) -> None:
    by_params = run(repo, home, {**WINDOW, "providers": ["codex,claude"]})
    by_document = run(
        repo, home, {"request": {**DOC, "filters": {"providers": ["claude", "codex"]}}}
    )
    assert by_params["sources"] and by_params["sources"] == by_document["sources"]
    assert by_params["selection"]["requestDigest"] == by_document["selection"]["requestDigest"]
    assert len(run(repo, home, {**WINDOW, "limit": 1})["sources"]) == 1


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({}, "WINDOW_INVALID"),
        ({"since": WINDOW["since"]}, "WINDOW_INVALID"),
        ({**WINDOW, "since": "2025-01-01T00:00:00.000Z"}, "WINDOW_INVALID"),
        ({"request": DOC, "query": "x"}, "RECALL_REQUEST_INVALID"),
        ({"request": {**DOC, "projectKeys": ["p"]}}, "RECALL_REQUEST_INVALID"),
        (
            {"request": {**DOC, "filters": {"closureStates": ["hard-sealed"]}}},
            "RECALL_REQUEST_INVALID",
        ),
        ({"request": {**DOC, "format": "other@v1"}}, "RECALL_REQUEST_INVALID"),
        ({**WINDOW, "resultEvidence": ["maybe"]}, "RECALL_REQUEST_INVALID"),
        ({**WINDOW, "repository": "/elsewhere"}, "INVALID_ARGUMENT"),
        ({**WINDOW, "limit": 9}, "INVALID_ARGUMENT"),
    ],
)
def test_bad_requests_are_refused_and_write_nothing(
    repo: Path, home: Path, payload: dict[str, Any], code: str
) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        run(repo, home, payload)
    assert refused.value.code == code
    assert not (home / "memory-state.sqlite3").exists()


def test_a_session_key_as_sessions_list_shows_it_selects_that_session(
    repo: Path, home: Path
) -> None:
    """`--session-keys d92c53cd8b28`, copied from `sessions list`, matched nothing ("No sealed
    turns of this worktree match the request"), and so did a key no session has."""
    listed = REGISTRY.get("sessions.list").run(OpContext(cwd=repo, home=home), {})
    full = listed["sessions"][0]["sessionKey"]
    by_full = run(repo, home, {**WINDOW, "sessionKeys": [full]})
    by_short = run(repo, home, {**WINDOW, "sessionKeys": [full[:12]]})
    assert by_short["sources"] and by_short["sources"] == by_full["sources"]
    assert by_short["selection"]["requestDigest"] == by_full["selection"]["requestDigest"]
    with pytest.raises(errors.TeamloreError) as refused:
        run(repo, home, {**WINDOW, "sessionKeys": ["deadbeef00"]})
    assert refused.value.code == "SESSION_NOT_FOUND"


def test_an_unregistered_repository_is_refused(tmp_path: Path, home: Path) -> None:
    stray = make_repo(tmp_path / "stray")
    with pytest.raises(errors.TeamloreError) as refused:
        run(stray, home, WINDOW)
    assert refused.value.code == "REPOSITORY_NOT_REGISTERED"


def test_tasks_carry_the_scene_index_summary(repo: Path, home: Path) -> None:
    """context.sceneIndexSummary: the scenes the memory already has, one line each, so a
    candidate can be filed under one of them; None while there are none."""
    (first,) = run(repo, home, {**WINDOW, "limit": 1})["sources"]
    assert first["context"] == {"sceneIndexSummary": None}
    scenes = repo / ".threadshare" / "memory" / "scenes"
    scenes.mkdir(parents=True, exist_ok=True)
    for name, summary in (("release", "Release verification"), ("db", "Local database setup")):
        (scenes / f"{name}.md").write_text(
            "-----META-START-----\ncreated: 2026-08-21\nupdated: 2026-08-22\n"
            f'summary: "{summary}"\nheat: 3\n-----META-END-----\n## {name}\n'
        )
    (task,) = run(repo, home, {**WINDOW, "limit": 1})["sources"]
    assert task["context"]["sceneIndexSummary"] == (
        "- db: Local database setup\n- release: Release verification"
    )


def test_the_session_scoring_recipe_is_named_and_versioned(repo: Path, home: Path) -> None:
    selection = run(repo, home, {**WINDOW, "limit": 1})["selection"]
    assert selection["recipe"] == "extraction-candidates@1"
    assert selection["sessions"] and all("score" in s for s in selection["sessions"])


def test_smaller_chunks_shrink_the_skill_and_memory_contexts_too(repo: Path, home: Path) -> None:
    """An agent asks for smaller chunks because its client cuts long tool results; the Skill
    and memory contexts come in the same result and, at team scale, outweigh the chunk: each
    gets half the chunk's budget then. The default chunk keeps the 128 KiB contexts."""
    memory = repo / ".threadshare" / "memory"
    for i in range(12):
        (memory / "entries" / f"fact-{i:02d}.md").write_text(
            entry_file(f"fact-{i:02d}", f"Fact {i}. " + "y" * 3_000, kind="work_fact"),
            encoding="utf-8",
        )
        skill = memory / "skills" / f"chore-{i:02d}"
        skill.mkdir(parents=True)
        body = "1. Do it.\n" * 300
        (skill / "SKILL.md").write_text(
            f'---\nname: "chore-{i:02d}"\ndescription: "Chore {i}."\n---\n{body}', encoding="utf-8"
        )

    def content_bytes(context: dict, key: str) -> int:
        return sum(len(item["content"].encode("utf-8")) for item in context[key])

    whole = run(repo, home, {**WINDOW, "chunkBytes": 40_960})
    assert whole["memoryContext"]["returned"] == 12 and not whole["memoryContext"]["truncated"]
    assert whole["skillContext"]["returned"] == 12 and whole["skillContext"]["selection"] == "all"

    small = run(repo, home, {**WINDOW, "chunkBytes": 16_384})
    assert 0 < content_bytes(small["memoryContext"], "items") <= 8_192
    assert small["memoryContext"]["truncated"] is True
    assert 0 < content_bytes(small["skillContext"], "skills") <= 8_192
    assert small["skillContext"]["selection"] == "ranked"
    assert small["skillContext"]["truncated"] is True
    # what binds a Skill candidate to the memory does not depend on what was shown
    assert small["memoryContext"]["bindingDigest"] == whole["memoryContext"]["bindingDigest"]


def test_window_parameters_take_an_iso_date_or_instant_as_the_cli_does(
    repo: Path, home: Path
) -> None:
    """A model often writes `…T00:00:00Z` or a bare date: the parameters take what `--since`
    takes; a request document's window stays strictly canonical."""
    canonical = run(repo, home, WINDOW)
    since, until = WINDOW["since"], WINDOW["until"]
    short = {"since": since.replace(".000Z", "Z"), "until": until.replace(".000Z", "+00:00")}
    assert run(repo, home, short)["selection"] == canonical["selection"]
    with pytest.raises(errors.TeamloreError) as unparsed:  # as `--since yesterday` says it
        run(repo, home, {"since": "yesterday", "until": until})
    assert unparsed.value.error.code == "INVALID_ARGUMENT"
    assert unparsed.value.message == "'yesterday' is not an ISO-8601 date or date-time"
    with pytest.raises(errors.TeamloreError) as refused:
        run(repo, home, {"request": {**DOC, "window": {"after": short["since"], "before": until}}})
    assert refused.value.error.code == "WINDOW_INVALID"
    assert f"did you mean {since}?" in refused.value.message
