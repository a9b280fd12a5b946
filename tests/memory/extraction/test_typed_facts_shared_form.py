"""Typed facts leave this machine in the form the transcript shows: real sessions (a Codex run of
`python3 export_development_history.py <its own session id>`, a Pi run of
`cd /Users/badlogic/workspaces/pi-mono && npm run check`, a folder `[paths] aliases` maps to the
repository) give facts without the provider session id or the home path, and a draft that copies
them verbatim verifies and passes lint."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from recall_world import make_repo

from support import shared_fixtures
from teamlore.core.secrets import SESSION_ID_PATTERN, sanitize_text, scan_content
from teamlore.memory.extraction.typed_facts import COMMAND_EXIT
from teamlore.memory.store.lint import known_session_id_findings
from teamlore.ops.registry import OpContext, load_operations
from teamlore.sessions.index_db import open_index, provider_session_uuids

# the recorded working folders of the real sessions, mapped to a repository here (docs/sessions.md)
RTCHESS_CWD = "/Users/pinouchon/code/rtchess"
PI_MONO_CWD = "/Users/badlogic/workspaces/pi-mono"
RTCHESS_SESSION_ID = "019aad50-a7e6-7422-b7a8-0b384290624f"
FAILED_SHELL = {
    "since": "2025-11-01T00:00:00.000Z",
    "until": "2025-12-31T00:00:00.000Z",
    "toolCapabilityKeys": ["shell"],
    "capabilityTerminalStates": ["failed"],
}
HOME_PATH = re.compile(r"/Users/|/home/|[A-Za-z]:\\\\?Users")


class World:
    def __init__(self, tmp_path: Path, home: Path) -> None:
        self.home = home
        self.repo = make_repo(tmp_path / "rtchess")
        fixtures = shared_fixtures("sessions")
        sources = [f"codex={fixtures / 'codex'}", f"pi={fixtures / 'pi'}"]
        self.op("sync", {"sources": sources, "repository": str(self.repo)})
        aliases = ", ".join(f'"{p}" = "{self.repo}"' for p in (RTCHESS_CWD, PI_MONO_CWD))
        config = home / "config.toml"
        config.write_text(config.read_text() + f"\n[paths]\naliases = {{ {aliases} }}\n")
        synced = self.op("sync", {"sources": sources, "repository": str(self.repo)})
        assert synced["delivery"]["mappedBy"]["pathAlias"] == 3
        self.op("memory.init", {})
        self.recalled = self.op("memory.recall", FAILED_SHELL)

    def op(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        return load_operations().get(name).run(OpContext(cwd=self.repo, home=self.home), payload)

    def facts(self) -> dict[str, list[dict[str, Any]]]:
        return {o["taskId"]: o["facts"] for o in self.recalled["typedFacts"]}

    def task(self, task_id: str) -> dict[str, Any]:
        return next(s for s in self.recalled["sources"] if s["taskId"] == task_id)


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


def test_typed_facts_of_real_sessions_hold_no_session_id_or_home_path(world: World) -> None:
    facts = [f for offered in world.facts().values() for f in offered]
    texts = sorted({f["text"] for f in facts})
    assert texts == [
        # the Pi session's folder is aliased to the repository: it is the repository's root
        "Command `cd . && npm run check` exited with code 0.",
        "Command `cd . && npm run check` exited with code 1.",
        "Command `python3 export_development_history.py {session-id}` exited with code 0.",
        "Command `python3 export_development_history.py {session-id}` exited with code 1.",
    ]
    shared = json.dumps(world.recalled["typedFacts"])
    assert SESSION_ID_PATTERN.search(shared) is None
    assert HOME_PATH.search(shared) is None
    assert str(world.repo) not in shared and str(world.home) not in shared
    # the fact says what the transcript next to it says
    for task_id, offered in world.facts().items():
        transcript = world.task(task_id)["chunk"]["transcript"]
        for fact in offered:
            assert fact["params"]["command"] in transcript


def test_a_draft_copying_typed_facts_verbatim_verifies_and_passes_lint(world: World) -> None:
    staged_ids = []
    for task_id, offered in world.facts().items():
        task = world.task(task_id)
        batch = {
            "format": "threadshare-memory-candidate-draft-batch@v1",
            "taskId": task_id,
            "binding": task["binding"],
            "candidates": [
                {
                    # an agent's content retells its statements
                    "content": " ".join(
                        ["After the fix it passed.", *(f["text"] for f in offered)]
                    ),
                    "type": "work_method",
                    "priority": 60,
                    "confidence": "high",
                    "scene": None,
                    "statements": [
                        {"statementId": f"s{n}", "text": f["text"], "evidenceIds": f["evidenceIds"]}
                        for n, f in enumerate(offered, start=1)
                    ],
                }
            ],
        }
        staged = world.op("memory.stage", batch)
        adjudication = staged["adjudicationTask"]
        ids = [d["candidateId"] for d in adjudication["drafts"]]
        world.op(
            "memory.stage",
            {
                "format": "threadshare-memory-adjudication-result@v1",
                "taskId": adjudication["taskId"],
                "binding": adjudication["binding"],
                "adjudications": [
                    {"draftRef": i, "action": "store", "targetIds": [], "mergedFields": None}
                    for i in ids
                ],
            },
        )
        staged_ids += ids
    assert len(staged_ids) == 2
    items = {i["candidateId"]: i for i in world.op("memory.review", {})["items"]}
    for cid in staged_ids:
        item = items[cid]
        assert [s["typedFact"] for s in item["statements"]] == [COMMAND_EXIT, COMMAND_EXIT]
        assert {s["claimSupport"] for s in item["statements"]} == {"typed-fact"}
        assert [f for f in item["lintFindings"] if f["severity"] == "block"] == []
        assert item["approveAll"]["offered"] is True
    prepared = world.op("memory.prepare", items[staged_ids[0]]["prepareRequest"])
    assert {c["claimSupport"] for c in prepared["confirmed"]} == {"typed-fact"}
    assert all(SESSION_ID_PATTERN.search(f["preview"]) is None for f in prepared["files"])


@pytest.mark.parametrize(
    "text",
    [
        f"python3 export_development_history.py {RTCHESS_SESSION_ID}",
        f"id={RTCHESS_SESSION_ID.upper()}; echo done",
        f"see ~/.codex/sessions/2025/11/22/rollout-2025-11-22T20-45-35-{RTCHESS_SESSION_ID}.jsonl",
        f"logs/{RTCHESS_SESSION_ID}.jsonl and ({RTCHESS_SESSION_ID}), `{RTCHESS_SESSION_ID}`",
        f"x_{RTCHESS_SESSION_ID}_y {RTCHESS_SESSION_ID}-{RTCHESS_SESSION_ID}",
    ],
)
def test_sanitized_text_has_no_session_finding_even_for_a_known_session_id(
    world: World, text: str
) -> None:
    """`sanitize_text` promises output without `session.*` findings; that includes the
    known-session-id rule, which blocks any UUID this machine indexed as a session."""
    conn = open_index(world.home)
    try:
        known = provider_session_uuids(conn)
    finally:
        conn.close()
    assert RTCHESS_SESSION_ID in known
    raw_hits = [h.rule for h in scan_content(text) if h.rule.startswith("session.")]
    assert known_session_id_findings(text, path="t.md", known=known) or raw_hits  # raw: blocked
    clean = sanitize_text(text, worktree_root=world.repo)
    assert known_session_id_findings(clean, path="t.md", known=known) == []
    assert [h.rule for h in scan_content(clean) if h.rule.startswith("session.")] == []
