"""The Skill workflow over the operation registry on a real indexed repository:
recall (skillContext, memoryContext) → SkillCandidate@v1 → review --kind skill → prepare →
promote → assemble, and every refusal on the way leaves files and state unchanged."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from recall_world import WINDOW

from support import release_repository
from teamlore.core.canonical import sha256_hex
from teamlore.core.errors import TeamloreError
from teamlore.ops.memory.review import short_candidate_id
from teamlore.ops.registry import OpContext, run_operation

SKILL_BODY = (
    "## Procedure\n\n"
    "1. Run `pytest tests/test_release.py` before pushing a tag.\n"
    "2. Tag with the v prefix (`v1.2.3`); the release script checks it.\n\n"
    "## Recovery\n\n- A failed tag check: delete the tag, fix the prefix, push again.\n"
)
SKILL_PATH = ".threadshare/memory/skills/shop-release/SKILL.md"


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def op(repo: Path, home: Path, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return run_operation(name, OpContext(cwd=repo, home=home), payload)


def refusal(repo: Path, home: Path, name: str, payload: dict[str, Any]) -> TeamloreError:
    with pytest.raises(TeamloreError) as caught:
        op(repo, home, name, payload)
    return caught.value


def recall(repo: Path, home: Path) -> dict[str, Any]:
    return op(repo, home, "memory.recall", {**WINDOW, "limit": 1})


def skill_candidate(
    recalled: dict[str, Any],
    *,
    name: str = "shop-release",
    action: str = "create",
    expected: str | None = None,
    body: str = SKILL_BODY,
) -> dict[str, Any]:
    task = recalled["sources"][0]
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    return {
        "format": "threadshare-memory-skill-candidate@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "memoryContextDigest": recalled["memoryContext"]["bindingDigest"],
        "skill": {
            "name": name,
            "description": "Release the shop: run the release tests, then push a v-prefixed tag.",
            "body": body,
            "action": action,
            "expectedContentDigest": expected,
        },
        "statements": [
            {
                "statementId": "s1",
                "text": "The release tests must pass before a tag is pushed.",
                "evidenceIds": [evidence],
            }
        ],
    }


def state_counts(home: Path) -> tuple[int, ...]:
    conn = sqlite3.connect(home / "memory-state.sqlite3")
    try:
        return tuple(
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("candidates", "assessments", "submissions", "promotion_journal")
        )
    finally:
        conn.close()


def promote_skill(repo: Path, home: Path) -> dict[str, Any]:
    review = op(repo, home, "memory.review", {"kind": "skill"})
    plan = op(repo, home, "memory.prepare", prepare_request(review["items"][0]))
    return op(repo, home, "memory.promote", {"planId": plan["planId"]})


def prepare_request(item: dict[str, Any], kind: str = "skill") -> dict[str, Any]:
    """The PrepareRequest@v1 confirming every statement of the reviewed `item` as `kind`."""
    return {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": kind,
        "candidates": [
            {
                "candidateId": item["candidateId"],
                "expectedRevision": item["revision"],
                "statements": [
                    {
                        "statementId": s["statementId"],
                        "statementTextDigest": s["statementTextDigest"],
                        "citationsDigest": s["citationsDigest"],
                    }
                    for s in item["statements"]
                ],
            }
        ],
    }


def test_recall_returns_skill_and_memory_context_with_a_binding_digest(
    repo: Path, home: Path
) -> None:
    recalled = recall(repo, home)
    assert recalled["skillContext"]["capturePrompt"]["promptVersion"] == "skill-capture@2"
    assert recalled["skillContext"] == {
        "capturePrompt": recalled["skillContext"]["capturePrompt"],
        "selection": "all",
        "total": 0,
        "returned": 0,
        "truncated": False,
        "skills": [],
    }
    memory = recalled["memoryContext"]
    assert memory["binding"]["policyVersion"] == "skill-memory-first@1"
    assert memory["binding"]["doctrineDigest"] is None
    assert len(memory["bindingDigest"]) == 64


def test_the_skill_flow_writes_skill_md_and_assemble_projects_it(repo: Path, home: Path) -> None:
    recalled = recall(repo, home)
    staged = op(repo, home, "memory.stage", skill_candidate(recalled))
    assert staged["status"] == "quarantined" and staged["adjudicationTask"] is None
    assert staged["candidates"][0]["kind"] == "skill"
    assert op(repo, home, "memory.review", {"kind": "entry"})["items"] == []

    review = op(repo, home, "memory.review", {"kind": "skill"})
    item = review["items"][0]
    assert item["kind"] == "skill" and item["skill"]["name"] == "shop-release"
    assert item["statements"][0]["evidence"], "each statement shows its evidence"
    (file,) = item["files"]
    assert file["targetPath"] == SKILL_PATH and file["role"] == "new"
    assert '+name: "shop-release"' in file["diff"]
    assert "+1. Run `pytest tests/test_release.py` before pushing a tag." in file["diff"]

    promoted = promote_skill(repo, home)
    assert promoted["status"] == "applied"
    written = (repo / SKILL_PATH).read_bytes()
    assert written.startswith(b'---\nname: "shop-release"\ndescription: "Release the shop')
    assert written.endswith(SKILL_BODY.encode())

    assembled = op(repo, home, "memory.assemble", {"provider": "claude"})
    assert (repo / ".claude/skills/shop-release/SKILL.md").read_bytes() == written
    assert "- .claude/skills/shop-release/SKILL.md \u2014 Release the shop" in assembled["block"]

    again = recall(repo, home)  # the new Skill is in the next recall's context
    assert [s["name"] for s in again["skillContext"]["skills"]] == ["shop-release"]
    assert again["skillContext"]["skills"][0]["contentDigest"] == sha256_hex(written)


def test_a_stale_memory_context_digest_is_refused_and_nothing_is_staged(
    repo: Path, home: Path
) -> None:
    recalled = recall(repo, home)
    candidate = skill_candidate(recalled)
    scene = repo / ".threadshare/memory/scenes/release.md"
    scene.write_text(
        "-----META-START-----\ncreated: 2026-03-01\nupdated: 2026-03-01\n"
        'summary: "Releases"\nheat: 1\n-----META-END-----\n## Releases\n- tag with v'
    )
    before = state_counts(home)
    err = refusal(repo, home, "memory.stage", candidate)
    assert err.code == "MEMORY_CONTEXT_DRIFT"
    assert state_counts(home) == before
    assert not (repo / SKILL_PATH).exists()


def test_evidence_of_another_task_is_refused(repo: Path, home: Path) -> None:
    recalled = recall(repo, home)
    candidate = skill_candidate(recalled)
    candidate["statements"][0]["evidenceIds"] = ["ev-9-000000000000"]
    before = state_counts(home)
    assert refusal(repo, home, "memory.stage", candidate).code == "EVIDENCE_NOT_IN_TASK"
    assert state_counts(home) == before


def test_an_update_of_a_skill_that_does_not_match_its_expected_digest_is_refused(
    repo: Path, home: Path
) -> None:
    folder = repo / ".threadshare/memory/skills/shop-release"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: "shop-release"\ndescription: "Old release notes."\n---\n1. Tag it.\n'
    )
    recalled = recall(repo, home)
    digest = recalled["skillContext"]["skills"][0]["contentDigest"]
    candidate = skill_candidate(recalled, action="update", expected=digest)
    (folder / "SKILL.md").write_text(
        '---\nname: "shop-release"\ndescription: "Edited meanwhile."\n---\n1. Tag it.\n'
    )
    candidate["memoryContextDigest"] = recall_digest(repo, home)
    before = state_counts(home)
    assert refusal(repo, home, "memory.stage", candidate).code == "SKILL_TARGET_DRIFT"
    assert state_counts(home) == before
    create = skill_candidate(recalled)  # creating a Skill that exists is refused too
    create["memoryContextDigest"] = candidate["memoryContextDigest"]
    assert refusal(repo, home, "memory.stage", create).code == "SKILL_TARGET_DRIFT"


def recall_digest(repo: Path, home: Path) -> str:
    from teamlore.memory.skills.context import read_team_memory

    return read_team_memory(repo).binding_digest()


OLD_SKILL = '---\nname: "shop-release"\ndescription: "Old release notes."\n---\n1. Tag it.\n'


def existing_skill(repo: Path) -> tuple[Path, str]:
    """The Skill shop-release as it is before an update: its folder and SKILL.md text."""
    folder = repo / ".threadshare/memory/skills/shop-release"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(OLD_SKILL)
    return folder, OLD_SKILL


def test_a_skill_update_changes_the_file_and_a_target_edit_voids_the_plan(
    repo: Path, home: Path
) -> None:
    folder, old = existing_skill(repo)
    recalled = recall(repo, home)
    digest = recalled["skillContext"]["skills"][0]["contentDigest"]
    op(repo, home, "memory.stage", skill_candidate(recalled, action="update", expected=digest))
    review = op(repo, home, "memory.review", {"kind": "skill"})
    (file,) = review["items"][0]["files"]
    assert file["role"] == "update" and "-1. Tag it." in file["diff"]
    item = review["items"][0]
    request = {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": "skill",
        "candidates": [
            {
                "candidateId": item["candidateId"],
                "expectedRevision": item["revision"],
                "statements": [
                    {k: s[k] for k in ("statementId", "statementTextDigest", "citationsDigest")}
                    for s in item["statements"]
                ],
            }
        ],
    }
    plan = op(repo, home, "memory.prepare", request)
    (folder / "SKILL.md").write_text(old + "2. Someone edited this after review.\n")
    err = refusal(repo, home, "memory.promote", {"planId": plan["planId"]})
    assert err.code in ("PROMOTION_TARGET_DRIFT", "PLAN_VOIDED")
    assert (folder / "SKILL.md").read_text().endswith("after review.\n")


def seed_shaped(candidate: dict[str, Any]) -> dict[str, Any]:
    """The candidate without the fields the seed's Skill candidate does not name."""
    shaped = copy.deepcopy(candidate)
    del shaped["memoryContextDigest"], shaped["skill"]["action"]
    del shaped["skill"]["expectedContentDigest"]
    return shaped


def test_a_seed_shaped_skill_candidate_creates_a_skill_bound_to_the_memory_at_stage(
    repo: Path, home: Path
) -> None:
    recalled = recall(repo, home)
    staged = op(repo, home, "memory.stage", seed_shaped(skill_candidate(recalled)))

    assert staged["candidates"][0]["action"] == "create"
    conn = sqlite3.connect(home / "memory-state.sqlite3")
    (payload,) = conn.execute("SELECT payload_json FROM candidates").fetchone()
    conn.close()
    assert json.loads(payload)["memoryContextDigest"] == recalled["memoryContext"]["bindingDigest"]
    assert promote_skill(repo, home)["status"] == "applied"
    assert (repo / SKILL_PATH).read_bytes().endswith(SKILL_BODY.encode())


def test_a_seed_shaped_skill_candidate_updates_the_skill_of_that_name(
    repo: Path, home: Path
) -> None:
    _, old = existing_skill(repo)
    staged = op(repo, home, "memory.stage", seed_shaped(skill_candidate(recall(repo, home))))

    assert staged["candidates"][0]["action"] == "update"
    (item,) = op(repo, home, "memory.review", {"kind": "skill"})["items"]
    assert item["skill"]["expectedContentDigest"] == sha256_hex(old.encode())
    (file,) = item["files"]
    assert file["role"] == "update" and "-1. Tag it." in file["diff"]


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda c: c["skill"].update(description="Use <b>bold</b>"), "STAGE_REQUEST_INVALID"),
        (lambda c: c["skill"].update(name="Shop_Release"), "STAGE_REQUEST_INVALID"),
        (
            lambda c: c["skill"].update(body=SKILL_BODY + "token ghp_" + "Zq8" * 12 + "\n"),
            "LINT_BLOCKED",
        ),
        (
            lambda c: c["skill"].update(
                body=SKILL_BODY + "As in 019aad50-0000-7000-8000-0000000000a1\n"
            ),
            "LINT_BLOCKED",
        ),
        (lambda c: c["binding"].update(promptVersion="other@1"), "BINDING_MISMATCH"),
        (lambda c: c.update(statements=[]), "STAGE_REQUEST_INVALID"),
    ],
    ids=["description-angle", "bad-name", "secret", "known-session-id", "binding", "no-statements"],
)
def test_bad_skill_candidates_are_refused_with_state_unchanged(
    repo: Path, home: Path, change: Any, code: str
) -> None:
    candidate = copy.deepcopy(skill_candidate(recall(repo, home)))
    change(candidate)
    before = state_counts(home)
    assert refusal(repo, home, "memory.stage", candidate).code == code
    assert state_counts(home) == before


def test_a_skill_name_out_of_its_pattern_is_refused_saying_what_a_name_looks_like(
    repo: Path, home: Path
) -> None:
    """A Chinese name was refused with the regex itself (`String should match pattern
    '^[a-z0-9]+(?:-[a-z0-9]+)*$'`), which a person or an agent has to decode."""
    candidate = copy.deepcopy(skill_candidate(recall(repo, home)))
    candidate["skill"]["name"] = "发布检查"
    message = refusal(repo, home, "memory.stage", candidate).message
    assert message.endswith(
        "skill.name: '发布检查' is not lowercase ASCII letters and digits, words joined by '-'"
        " (release-checks)"
    ), message
    assert "[a-z0-9]" not in message


def test_restaging_the_same_candidate_replays_and_a_different_one_conflicts(
    repo: Path, home: Path
) -> None:
    recalled = recall(repo, home)
    candidate = skill_candidate(recalled)
    first = op(repo, home, "memory.stage", candidate)
    again = op(repo, home, "memory.stage", candidate)
    assert again["idempotent"] is True
    assert again["candidates"] == first["candidates"]
    other = skill_candidate(recalled, body=SKILL_BODY + "3. Announce it.\n")
    assert refusal(repo, home, "memory.stage", other).code == "SUBMISSION_CONFLICT"


@pytest.mark.parametrize("named_as", ["entry", "consolidation"])
def test_a_skill_candidate_named_as_another_kind_is_refused_with_the_commands_for_skills(
    repo: Path, home: Path, named_as: str
) -> None:
    op(repo, home, "memory.stage", skill_candidate(recall(repo, home)))
    item = op(repo, home, "memory.review", {"kind": "skill"})["items"][0]
    skill_next = (
        "Review it with `teamlore memory review --kind skill`, then confirm it with "
        "`teamlore memory confirm --kind skill`."
    )

    prepared = refusal(repo, home, "memory.prepare", prepare_request(item, kind=named_as))
    typed = short_candidate_id(item["candidateId"])  # as the text views show it
    confirmed = refusal(repo, home, "memory.confirm", {"kind": named_as, "candidateIds": [typed]})

    for refused in (prepared, confirmed):
        assert refused.code == "CANDIDATE_NOT_FOUND"
        assert refused.message == (
            f"{item['candidateId']} is a skill candidate, not "
            f"{'an entry' if named_as == 'entry' else 'a consolidation'} candidate"
        )
        assert refused.to_json()["next"] == skill_next
    assert op(repo, home, "memory.review", {"kind": "skill"})["items"] == [item]


def staged_and_prepared(repo: Path, home: Path) -> dict[str, Any]:
    """A Skill candidate staged from a recall and its promotion plan prepared."""
    op(repo, home, "memory.stage", skill_candidate(recall(repo, home)))
    item = op(repo, home, "memory.review", {"kind": "skill"})["items"][0]
    request = {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": "skill",
        "candidates": [
            {
                "candidateId": item["candidateId"],
                "expectedRevision": item["revision"],
                "statements": [
                    {k: s[k] for k in ("statementId", "statementTextDigest", "citationsDigest")}
                    for s in item["statements"]
                ],
            }
        ],
    }
    plan = op(repo, home, "memory.prepare", request)
    return plan


def test_promote_voids_a_skill_plan_when_the_team_memory_changed_after_prepare(
    repo: Path, home: Path
) -> None:
    plan = staged_and_prepared(repo, home)
    (repo / ".threadshare/memory/doctrine.md").write_text("- Tag releases with a v prefix.\n")
    err = refusal(repo, home, "memory.promote", {"planId": plan["planId"]})
    assert err.code == "MEMORY_CONTEXT_DRIFT"
    assert err.details["status"] == "voided"
    assert not (repo / SKILL_PATH).exists()
    blocked = op(repo, home, "memory.review", {"kind": "skill"})["items"][0]
    assert blocked["blocked"] and blocked["lintFindings"][0]["rule"] == "MEMORY_CONTEXT_DRIFT"


def test_a_skill_folder_badly_named_after_prepare_voids_the_plan_and_names_the_file(
    repo: Path, home: Path
) -> None:
    plan = staged_and_prepared(repo, home)
    bad = repo / ".threadshare/memory/skills/Bad_Name/SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "---\nname: Bad_Name\ndescription: A Skill in a badly named folder.\n---\nBody\n"
    )
    err = refusal(repo, home, "memory.promote", {"planId": plan["planId"]})
    assert err.code == "MEMORY_FILE_INVALID"
    assert err.details["status"] == "voided"
    assert err.details["driftedPath"] == ".threadshare/memory/skills/Bad_Name/SKILL.md"
    assert not (repo / SKILL_PATH).exists()
