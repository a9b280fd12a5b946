"""Selection: window rules, sealed turns of that worktree, scoring."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from recall_world import BASE, CodexSession, commit, make_repo, sync

from teamlore.core import errors
from teamlore.memory.extraction.selection import (
    check_window,
    load_turns,
    normalize_request,
    select_turns,
)
from teamlore.ops.registry import OpContext, run_operation
from teamlore.repo.binding import resolve_repository
from teamlore.sessions.index_db import open_index

AFTER, BEFORE = "2026-03-01T00:00:00.000Z", "2026-03-08T00:00:00.000Z"


@pytest.mark.parametrize(
    ("after", "before", "fragment"),
    [
        ("2026-01-01T00:00:00.000Z", "2027-02-05T00:00:00.000Z", "more than 366 days"),
        (BEFORE, AFTER, "empty or reversed"),
        (AFTER, AFTER, "empty or reversed"),
        ("2026-03-01", BEFORE, "did you mean 2026-03-01T00:00:00.000Z"),
        ("2026-03-01T00:00:00Z", BEFORE, "canonical UTC instant"),
        ("2026-03-01T08:00:00.000+08:00", BEFORE, "canonical UTC instant"),
        (AFTER, "2026-02-30T00:00:00.000Z", "not a real calendar instant"),
    ],
)
def test_bad_windows_are_refused_with_a_stable_code(after: str, before: str, fragment: str) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        check_window(after, before)
    assert refused.value.code == "WINDOW_INVALID" and refused.value.exit_code == 2
    assert fragment in refused.value.message


def test_a_366_day_window_is_accepted_and_the_request_is_normalized() -> None:
    assert check_window("2024-01-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z")
    request = normalize_request(
        after=AFTER,
        before=BEFORE,
        query="  tag push ",
        providers=["codex", "claude", "codex"],
        session_keys=[" b", "a"],
    )
    assert request == {
        "format": "threadshare-memory-extraction-request@v1",
        "window": {"after": AFTER, "before": BEFORE},
        "query": "tag push",
        "filters": {
            "providers": ["claude", "codex"],
            "sessionKeys": ["a", "b"],
            "toolCapabilityKeys": [],
            "skillCapabilityKeys": [],
            "resultEvidence": [],
            "capabilityTerminalStates": [],
        },
    }
    with pytest.raises(errors.TeamloreError, match="unknown provider"):
        normalize_request(after=AFTER, before=BEFORE, providers=["cursor"])


def test_selection_takes_sealed_owner_turns_in_the_window_and_ranks_sessions(
    tmp_path: Path, home: Path
) -> None:
    repo, other = make_repo(tmp_path / "shop"), make_repo(tmp_path / "other")
    fixed = commit(repo, "src/cart.py", "x = 1\n", BASE + timedelta(seconds=30))
    codex = tmp_path / "codex"
    rich = CodexSession("a1", repo)
    rich.user("fix cart").shell("pytest", "boom", exit_code=1).answer("failing")
    rich.user("retry").patch("src/cart.py", "x = 1").shell("pytest", "ok").answer("passing")
    rich.user("commit").shell("git commit -am fix", f"{fixed}\n").answer("done")
    rich.write(codex)
    plain = CodexSession("b2", repo, start=BASE + timedelta(hours=1))
    plain.turn("q1").turn("q2").turn("q3").user("open question")  # last turn is not sealed
    plain.write(codex)
    CodexSession("c3", repo, start=BASE + timedelta(hours=2)).turn("short").turn("two").write(codex)
    CodexSession("d4", repo, start=BASE - timedelta(days=30)).turn("old").turn("a").turn("b").write(
        codex
    )
    CodexSession("e5", other).turn("x").turn("y").turn("z").write(codex)
    sync(home, codex, repo)
    sync(home, codex, other)
    conn = open_index(home)
    try:
        owner = resolve_repository(repo, home=home)
        selection = select_turns(conn, owner, normalize_request(after=AFTER, before=BEFORE))
        assert selection.matched_turns == 3 + 3 + 2
        assert [len(s.turns) for s in selection.sessions] == [3, 3]
        assert [r["reason"] for r in selection.rejected] == ["insufficient-eligible-turns"]
        best, second = selection.sessions
        assert best.contributions["directDeliveryEdges"] == 40
        assert best.contributions["recoveredFailures"] == 15
        assert best.contributions["edits"] == 2 and best.contributions["conclusiveAnswer"] == 5
        assert best.score > second.score
        assert best.turns[1].written_paths == ("src/cart.py",)
        only_shell = select_turns(
            conn,
            owner,
            normalize_request(after=AFTER, before=BEFORE, tool_capability_keys=["shell"]),
        )
        assert only_shell.matched_turns == 3
        by_query = select_turns(
            conn, owner, normalize_request(after=AFTER, before=BEFORE, query="q2")
        )
        assert by_query.matched_turns == 1 and by_query.sessions == []
        again = select_turns(conn, owner, normalize_request(after=AFTER, before=BEFORE))
        assert (again.request_digest, again.result_set_digest) == (
            selection.request_digest,
            selection.result_set_digest,
        )
    finally:
        conn.close()


def test_aborted_and_rolled_back_turns_are_never_offered(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    codex = tmp_path / "codex"
    session = CodexSession("f6", repo).turn("q1").interrupted("q2").turn("q3").turn("q4")
    session.roll_back(1).turn("q5").write(codex)
    sync(home, codex, repo)
    conn = open_index(home)
    try:
        owner = resolve_repository(repo, home=home)
        selection = select_turns(conn, owner, normalize_request(after=AFTER, before=BEFORE))
        assert selection.matched_turns == 3
        [chosen] = selection.sessions
        assert [t.user_text for t in chosen.turns] == ["q1", "q3", "q5"]
        assert load_turns(conn, owner, chosen.session_key, [1, 2, 3, 4, 5]) == chosen.turns
    finally:
        conn.close()


def _claude_skill_session(projects: Path, repo: Path) -> None:
    """A Claude Code transcript (2.1 shape) in `repo`: the Skill release-check succeeds in turn
    1 and fails in turn 2; turn 3 runs a plain Bash command."""
    session_id = "5f0c6a1e-7d2b-4e9a-8c3f-1a2b3c4d5e6f"
    common = {"isSidechain": False, "userType": "external", "cwd": str(repo), "version": "2.1.112"}
    steps = [
        ("Skill", {"skill": "release-check", "args": "v1.2"}, "checked: all green", False),
        ("Skill", {"skill": "release-check", "args": "v1.3"}, "tag v1.3 is missing", True),
        ("Bash", {"command": "git status"}, "clean", False),
    ]
    records: list[dict[str, object]] = []
    for n, (tool, tool_input, output, failed) in enumerate(steps):
        at = f"2026-03-02T10:{n:02d}:0"
        records += [
            {
                **common,
                "sessionId": session_id,
                "type": "user",
                "uuid": f"u-{n}",
                "timestamp": f"{at}0.000Z",
                "message": {"role": "user", "content": f"step {n}"},
            },
            {
                **common,
                "sessionId": session_id,
                "type": "assistant",
                "uuid": f"a-{n}",
                "timestamp": f"{at}1.000Z",
                "message": {
                    "model": "claude-opus-4-7",
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": f"toolu_{n}", "name": tool, "input": tool_input}
                    ],
                },
            },
            {
                **common,
                "sessionId": session_id,
                "type": "user",
                "uuid": f"r-{n}",
                "timestamp": f"{at}2.000Z",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_{n}",
                            "content": output,
                            "is_error": failed,
                        }
                    ],
                },
            },
            {
                **common,
                "sessionId": session_id,
                "type": "assistant",
                "uuid": f"b-{n}",
                "timestamp": f"{at}3.000Z",
                "message": {
                    "model": "claude-opus-4-7",
                    "id": f"msg_b{n}",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"done {n}"}],
                    "stop_reason": "end_turn",
                },
            },
        ]
    records.append(  # the next prompt seals turn 3
        {
            **common,
            "sessionId": session_id,
            "type": "user",
            "uuid": "u-last",
            "timestamp": "2026-03-02T11:00:00.000Z",
            "message": {"role": "user", "content": "thanks"},
        }
    )
    folder = projects / "-shop"
    folder.mkdir(parents=True)
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (folder / f"{session_id}.jsonl").write_text(lines)


def test_skill_keys_and_terminal_states_narrow_to_the_invocations_that_ended_so(
    tmp_path: Path, home: Path
) -> None:
    """The seed's filters skillCapabilityKeys and capabilityTerminalStates (docs/extraction.md
    "Filters"): a Skill is matched by name; a state applies to the matching invocation."""
    repo = make_repo(tmp_path / "shop")
    projects = tmp_path / "claude" / "projects"
    _claude_skill_session(projects, repo)
    run_operation(
        "sync",
        OpContext(cwd=tmp_path, home=home),
        {"sources": [f"claude={projects}"], "repository": str(repo)},
    )
    conn = open_index(home)
    try:
        owner = resolve_repository(repo, home=home)

        def matched(**filters: list[str]) -> int:
            request = normalize_request(after=AFTER, before=BEFORE, **filters)
            return select_turns(conn, owner, request).matched_turns

        assert matched() == 3
        assert matched(skill_capability_keys=["release-check"]) == 2
        assert matched(skill_capability_keys=["other-skill"]) == 0
        done = ["completed"]
        assert (
            matched(skill_capability_keys=["release-check"], capability_terminal_states=done) == 1
        )
        failed = ["failed"]
        assert (
            matched(skill_capability_keys=["release-check"], capability_terminal_states=failed) == 1
        )
        assert matched(tool_capability_keys=["shell"], capability_terminal_states=done) == 1
        assert (
            matched(tool_capability_keys=["shell"], capability_terminal_states=["cancelled"]) == 0
        )
        both = {"tool_capability_keys": ["shell"], "skill_capability_keys": ["release-check"]}
        assert matched(**both) == 0  # every filter narrows
    finally:
        conn.close()
    with pytest.raises(errors.TeamloreError, match="needs toolCapabilityKeys"):
        normalize_request(after=AFTER, before=BEFORE, capability_terminal_states=["failed"])
    with pytest.raises(errors.TeamloreError, match="unknown capability terminal state"):
        normalize_request(
            after=AFTER, before=BEFORE, tool_capability_keys=["shell"],
            capability_terminal_states=["done"],
        )  # fmt: skip
