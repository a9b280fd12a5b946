"""The Skill part of `teamlore demo`: a release the team repeats becomes a Skill, is promoted,
and `memory assemble` puts it (with the team memory block) where Claude Code and Codex read it.

The demo's agent is scripted (fixed answers, no model): it drafts the SkillCandidate@v1 a real
agent would write from the release session, citing that session's evidence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from teamlore.memory.promotion.queue import prepare_request_from_review
from teamlore.ops.registry import OpContext, run_operation

RELEASE_SESSION_ID = "019a8d2e-5b1c-7e40-9a6f-3c2d1e0f9a02"
SKILL_NAME = "acme-billing-release"
SKILL_DESCRIPTION = "Cut an acme-billing release: full test suite, v-prefixed tag, then push it."
SKILL_BODY = (
    "## Procedure\n\n"
    "1. Run the whole suite with `pytest -q`; stop on any failure.\n"
    "2. Tag the release with a v prefix: `git tag v<version>`.\n"
    "3. Push the tag: `git push origin v<version>`; the release job starts from it.\n\n"
    "## Recovery\n\n"
    "- A tag without the v prefix does not start the release job: delete it "
    "(`git tag -d <tag>`, `git push origin :<tag>`) and tag again.\n"
)
Step = Callable[..., None]


def write_release_session(root: Path, repo: Path) -> Path:
    """A Codex session in which the team cut a release (the procedure the Skill captures)."""
    from teamlore.ops.demo.world import _CodexWriter

    path = root / "codex" / "sessions" / "2026" / "11" / "25"
    path = path / f"rollout-2026-11-25T09-00-00-{RELEASE_SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True)
    w = _CodexWriter(str(repo), RELEASE_SESSION_ID)
    w.meta("2026-11-25T09:00:00.000Z")
    w.user("2026-11-25T09:00:01.000Z", "Cut release 1.4.0 the way we always do.")
    w.shell("2026-11-25T09:01:00.000Z", "call_1", "pytest -q", "12 passed in 1.1s", 0)
    w.shell(
        "2026-11-25T09:02:00.000Z",
        "call_2",
        "git tag 1.4.0 && git push origin 1.4.0",
        "To github.com:acme/acme-billing.git\n * [new tag]  1.4.0 -> 1.4.0",
        0,
    )
    w.say(
        "2026-11-25T09:03:00.000Z",
        "The release job did not start: it only runs for tags with a v prefix. "
        "I deleted 1.4.0 and pushed v1.4.0; the release job is running.",
    )
    w.done("2026-11-25T09:03:01.000Z")
    w.user("2026-11-25T09:05:00.000Z", "Is the release job green?")
    w.shell("2026-11-25T09:06:00.000Z", "call_3", "gh run list --limit 1", "completed success", 0)
    w.say("2026-11-25T09:06:30.000Z", "Yes: the v1.4.0 release job finished successfully.")
    w.done("2026-11-25T09:06:31.000Z")
    w.user("2026-11-25T09:08:00.000Z", "Remember how we release, so nobody forgets the v.")
    w.say(
        "2026-11-25T09:08:30.000Z",
        "Release procedure: run pytest -q, tag v<version>, push the tag; a tag without the "
        "v prefix must be deleted and pushed again with it.",
    )
    w.done("2026-11-25T09:08:31.000Z")
    path.write_bytes(b"".join(w.lines))
    return path


def scripted_skill_candidate(recalled: dict[str, Any]) -> dict[str, Any]:
    """The SkillCandidate@v1 the demo's scripted agent stages for the release task."""
    source = recalled["sources"][0]
    turns = [t["evidenceId"] for t in source["chunk"]["turnEvidence"]]
    return {
        "format": "threadshare-memory-skill-candidate@v1",
        "taskId": source["taskId"],
        "binding": source["binding"],
        "memoryContextDigest": recalled["memoryContext"]["bindingDigest"],
        "skill": {
            "name": SKILL_NAME,
            "description": SKILL_DESCRIPTION,
            "body": SKILL_BODY,
            "action": "create",
            "expectedContentDigest": None,
        },
        "statements": [
            {
                "statementId": "tests-first",
                "text": "A release starts with the whole suite passing (pytest -q).",
                "evidenceIds": turns[:1],
            },
            {
                "statementId": "v-prefix",
                "text": "The release job only starts for tags with a v prefix.",
                "evidenceIds": turns[:1],
            },
        ],
    }


def demo_skill(inner: OpContext, root: Path, repo: Path, step: Step) -> None:
    """Steps `skill-*` and `assemble` of the demo (after the entries were promoted)."""
    write_release_session(root, repo)
    run_operation(
        "sync",
        inner,
        {
            "sources": [
                f"codex={root / 'codex' / 'sessions'}",
                f"claude={root / 'claude' / 'projects'}",
            ],
            "repository": str(repo),
        },
    )
    recalled = run_operation(
        "memory.recall",
        inner,
        {"since": "2026-11-01T00:00:00.000Z", "until": "2026-12-01T00:00:00.000Z", "limit": 1},
    )
    staged = run_operation("memory.stage", inner, scripted_skill_candidate(recalled))
    step(
        "skill-stage",
        "a new release session: the scripted agent drafts it as a Skill (SkillCandidate@v1, "
        f"fixed answer) over {recalled['skillContext']['total']} existing Skills; quarantined",
        result=staged,
    )
    review = run_operation("memory.review", inner, {"kind": "skill"})
    prepared = run_operation("memory.prepare", inner, prepare_request_from_review(review["items"]))
    promoted = run_operation(
        "memory.promote",
        inner,
        {"planId": prepared["planId"], "planDigest": prepared["planDigest"]},
    )
    written = [f["targetPath"] for f in promoted["files"]]
    step(
        "skill-promote",
        "reviewed (the exact SKILL.md diff), confirmed in your place, promoted",
        review=review,
        files={p: (repo / p).read_text(encoding="utf-8") for p in written},
    )
    assembled = {
        provider: run_operation("memory.assemble", inner, {"provider": provider})
        for provider in ("claude", "codex")
    }
    step(
        "assemble",
        "wrote the team memory block into CLAUDE.md and AGENTS.md and projected the Skill "
        "for Claude Code and Codex (no tool call needed in the next session)",
        block=assembled["claude"]["block"],
        skills=[s["path"] for result in assembled.values() for s in result["skills"]],
        results=assembled,
    )
