"""Promotion: an approved PromotionPlan@v1 applied to a real git worktree — journaled, CAS-bound,
crash-safe, race-safe and path-safe.

Plans are journaled the way `memory prepare` does it (the row contract at the top of
`teamlore.memory.promotion.prepare`): a generated journal row with the canonical plan, one
`promotion_files` row per target with the exact bytes, candidates quarantined with assessments.
Kills are real SIGKILLs of the real `teamlore` CLI at failpoints.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from support import git, in_process, teamlore_cli
from teamlore.contracts import digests
from teamlore.contracts.promotion import POLICY_VERSION, PromotionPlan
from teamlore.core import errors, safe_write
from teamlore.core.analyzer import analyze
from teamlore.core.canonical import canonical_json, sha256_hex
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.promotion import apply as promotion
from teamlore.memory.promotion import bindings, stored_plan
from teamlore.memory.store import documents, lint
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.state_db import open_state_db
from teamlore.repo.binding import RepositoryIdentity, resolve_repository

ENTRIES = ".threadshare/memory/entries"


def entry_bytes(
    entry_id: str,
    body: str = "Run the smoke suite before tagging a release.",
    *,
    status: str = "approved",
    superseded_by: str | None = None,
) -> bytes:
    entry = documents.Entry(
        id=entry_id,
        type="work_method",
        status=status,  # type: ignore[arg-type]
        priority=50,
        confidence="high",
        provenance_strength="direct",
        claim_support="human-confirmed",
        limitations=["source-local-only"],
        scope="repo",
        scene=None,
        occurred=["2026-08-12"],
        evidence=documents.Evidence(commits=[], paths=[]),
        superseded_by=superseded_by,
        body=body + "\n",
    )
    return documents.dump_entry(entry)


class World:
    """A real git worktree with an initialized memory tree, and a state DB next to it."""

    def __init__(self, tmp_path: Path, home: Path) -> None:
        self.home = home
        self.root = tmp_path / "project"
        self.root.mkdir()
        git(self.root, "init", "-q", "-b", "main")
        (self.root / "README.md").write_text("project\n")
        init_tree(self.root)
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "initial")
        self.root = Path(os.path.realpath(self.root))
        self.conn = open_state_db(home)

    @property
    def identity(self) -> RepositoryIdentity:
        return resolve_repository(self.root, home=self.home)

    def owner_binding(self) -> dict[str, Any]:
        identity = self.identity
        info = identity.git_common_dir.stat()
        root = str(identity.worktree_root)
        return {
            "format": "threadshare-memory-repository-binding@v1",
            "repositoryKey": identity.repository_key,
            "worktreeKey": identity.worktree_key,
            "publicRepositoryIdentity": None,
            "rootRealpathDigest": sha256_hex(root.encode("utf-8")),
            "commonDirectoryIdentity": {"device": str(info.st_dev), "inode": str(info.st_ino)},
            "memoryRoot": ".threadshare/memory",
        }

    def candidate(self, candidate_id: str, text: str = "smoke suite before tagging") -> None:
        identity = self.identity
        payload = {"content": text}
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO candidates (candidate_id, repository_key, worktree_key, chunk_ref, "
                "revision, content_digest, payload_json, status, adjudication, updated_at) "
                "VALUES (?, ?, ?, 'chunk-1', 1, ?, ?, 'quarantined', 'done', 0)",
                (
                    candidate_id,
                    identity.repository_key,
                    identity.worktree_key,
                    digests.content_digest(payload),
                    canonical_json(payload).decode(),
                ),
            )
            self.conn.execute(
                "INSERT INTO candidate_fts (rowid, searchable_text) VALUES "
                "((SELECT rowid FROM candidates WHERE candidate_id = ?), ?)",
                (candidate_id, analyze(text)),
            )
            self.conn.execute(
                "INSERT INTO assessments (candidate_id, statement_id, citations_digest, "
                "provenance_strength, limitations_json, claim_support, assessed_by, "
                "statement_text_digest, revision) VALUES (?, 's1', ?, 'direct', "
                "'[\"source-local-only\"]', 'human-confirmed', 'human', ?, 2)",
                (candidate_id, "c" * 64, digests.statement_text_digest(text)),
            )

    def plan(
        self,
        files: dict[str, bytes | None],
        *,
        candidates: tuple[str, ...] = ("cand-1",),
        policy_version: str | None = None,
    ) -> str:
        """Journal a generated plan writing (bytes) or deleting (None) each file."""
        for candidate_id in candidates:
            if not self.conn.execute(
                "SELECT 1 FROM candidates WHERE candidate_id = ?", (candidate_id,)
            ).fetchone():
                self.candidate(candidate_id)
        per_file = []
        for path, data in files.items():
            current = self.root / path
            blob = digests.git_blob_oid(current.read_bytes()) if current.exists() else None
            per_file.append(
                {
                    "targetPath": path,
                    "targetBlobHash": blob,
                    "sanitizedContentDigest": None if data is None else sha256_hex(data),
                    "operation": "write" if data is not None else "delete",
                }
            )
        wire: dict[str, Any] = {
            "format": "threadshare-memory-promotion-plan@v1",
            "planId": str(uuid.uuid4()),
            "planDigest": None,
            "owner": self.owner_binding(),
            "candidateIds": list(candidates),
            "candidateRevisions": [{"candidateId": c, "revision": 1} for c in candidates],
            "assessmentDigest": bindings.current_assessment_digest(self.conn, candidates),
            "perFile": per_file,
            "policyVersion": policy_version or lint.LINT_POLICY_VERSION,
            "diff": "".join(f"+++ {path}\n" for path in files),
        }
        wire["planDigest"] = digests.plan_digest(PromotionPlan.from_wire(wire))
        plan = PromotionPlan.from_wire(wire)
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO promotion_journal (plan_id, repository_key, worktree_key, "
                "plan_canonical_json, plan_digest, candidate_ids_json, assessment_digest, "
                "policy_version, status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                "'generated', 0)",
                (
                    plan.plan_id,
                    plan.owner.repository_key,
                    plan.owner.worktree_key,
                    canonical_json(plan.to_wire()).decode(),
                    plan.plan_digest,
                    canonical_json(list(candidates)).decode(),
                    plan.assessment_digest,
                    plan.policy_version,
                ),
            )
            for path, data in files.items():
                entry = next(f for f in per_file if f["targetPath"] == path)
                self.conn.execute(
                    "INSERT INTO promotion_files (plan_id, target_path, target_blob_hash, "
                    "sanitized_content, sanitized_digest) VALUES (?, ?, ?, ?, ?)",
                    (
                        plan.plan_id,
                        path,
                        entry["targetBlobHash"],
                        data or b"",
                        sha256_hex(data or b""),
                    ),
                )
        return plan.plan_id

    def promote(self, plan_id: str, **kwargs: Any) -> promotion.PromotionOutcome:
        return promotion.promote(
            self.conn, plan_id, identity=self.identity, home=self.home, **kwargs
        )

    def status(self, plan_id: str) -> str:
        row = self.conn.execute(
            "SELECT status FROM promotion_journal WHERE plan_id = ?", (plan_id,)
        ).fetchone()
        return str(row[0])

    def candidate_row(self, candidate_id: str) -> sqlite3.Row:
        row: sqlite3.Row = self.conn.execute(
            "SELECT status, revision, rowid FROM candidates WHERE candidate_id = ?",
            (candidate_id,),
        ).fetchone()
        return row

    def fts_rows(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM candidate_fts").fetchone()[0])

    def git_state(self) -> tuple[str, str]:
        return git(self.root, "rev-list", "--all"), git(self.root, "diff", "--cached", "--stat")


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


A = f"{ENTRIES}/release-smoke-suite.md"
B = f"{ENTRIES}/tag-after-ci.md"


def two_new_entries(world: World) -> tuple[str, dict[str, bytes]]:
    files = {
        A: entry_bytes("release-smoke-suite"),
        B: entry_bytes("tag-after-ci", "Tag only after CI is green on main."),
    }
    return world.plan(dict(files), candidates=("cand-1", "cand-2")), files


def voided(excinfo: pytest.ExceptionInfo[errors.TeamloreError]) -> dict[str, Any]:
    return excinfo.value.details


# --- the flow --------------------------------------------------------------------------------


def test_promote_writes_exactly_the_approved_bytes_and_retires_the_candidates(
    world: World,
) -> None:
    plan_id, files = two_new_entries(world)
    before = world.git_state()
    generation_before = world.conn.execute(
        "SELECT coalesce(max(generation), 0) FROM candidate_projection"
    ).fetchone()[0]

    outcome = world.promote(plan_id)

    assert outcome.status == "applied" and not outcome.idempotent and not outcome.resumed
    assert [(f.target_path, f.outcome) for f in outcome.files] == [(A, "written"), (B, "written")]
    for path, data in files.items():
        assert (world.root / path).read_bytes() == data
        parsed = documents.load_entry((world.root / path).read_bytes(), path)
        assert parsed.status == "approved"
    assert not lint.lint_tree(world.root).blocked
    assert world.status(plan_id) == "applied"
    for candidate_id in ("cand-1", "cand-2"):
        row = world.candidate_row(candidate_id)
        assert (row["status"], row["revision"]) == ("promoted", 2)
    assert world.fts_rows() == 0
    assert outcome.candidate_generation == generation_before + 1
    assert outcome.projection is not None and outcome.projection.coverage == "complete"
    projected = world.conn.execute(
        "SELECT entry_id FROM approved_entries WHERE worktree_key = ? ORDER BY entry_id",
        (world.identity.worktree_key,),
    ).fetchall()
    assert [r[0] for r in projected] == ["release-smoke-suite", "tag-after-ci"]
    assert world.git_state() == before  # no new commit, nothing staged
    assert world.conn.execute("SELECT count(*) FROM promotion_originals").fetchone()[0] == 0


def test_promoting_an_applied_plan_again_is_an_idempotent_replay(world: World) -> None:
    plan_id, files = two_new_entries(world)
    world.promote(plan_id)

    again = world.promote(plan_id)

    assert again.idempotent and again.status == "applied"
    assert {f.outcome for f in again.files} == {"already-applied"}
    assert [c.revision for c in again.candidates] == [2, 2]
    assert (world.root / A).read_bytes() == files[A]


def test_a_rewrite_can_deprecate_the_replaced_entry_with_superseded_by(world: World) -> None:
    old = f"{ENTRIES}/smoke-before-release.md"
    (world.root / old).write_bytes(entry_bytes("smoke-before-release", "Run smoke tests."))
    git(world.root, "add", "-A")
    git(world.root, "commit", "-q", "-m", "an approved entry")
    deprecated = entry_bytes(
        "smoke-before-release",
        "Run smoke tests.",
        status="deprecated",
        superseded_by="release-smoke-suite",
    )
    plan_id = world.plan({A: entry_bytes("release-smoke-suite"), old: deprecated})

    world.promote(plan_id)

    replaced = documents.load_entry((world.root / old).read_bytes(), old)
    assert (replaced.status, replaced.superseded_by) == ("deprecated", "release-smoke-suite")
    statuses = dict(world.conn.execute("SELECT entry_id, status FROM approved_entries").fetchall())
    assert statuses == {"smoke-before-release": "deprecated", "release-smoke-suite": "approved"}


def test_a_planned_delete_removes_the_file_only_if_it_is_unchanged(world: World) -> None:
    old = f"{ENTRIES}/obsolete.md"
    (world.root / old).write_bytes(entry_bytes("obsolete"))
    plan_id = world.plan({A: entry_bytes("release-smoke-suite"), old: None})

    outcome = world.promote(plan_id)

    assert [(f.target_path, f.outcome) for f in outcome.files] == [(A, "written"), (old, "deleted")]
    assert not (world.root / old).exists()


def test_the_cli_flow_changes_only_the_working_tree(world: World) -> None:
    plan_id, files = two_new_entries(world)
    commits_before = git(world.root, "rev-list", "--all")
    head_before = git(world.root, "rev-parse", "HEAD")

    done = in_process("memory", "promote", "--plan", plan_id, "--format", "json", cwd=world.root)

    assert done.returncode == 0, done.stderr + done.stdout
    result = orjson.loads(done.stdout)
    assert result["status"] == "applied" and "nothing was staged" in result["git"]
    assert git(world.root, "rev-list", "--all") == commits_before
    assert git(world.root, "rev-parse", "HEAD") == head_before
    assert git(world.root, "diff", "--cached", "--name-only") == ""
    porcelain = git(world.root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(porcelain) == sorted(f"?? {path}" for path in files)


# --- approval --------------------------------------------------------------------------------


def test_approval_binds_the_reviewed_digest(world: World) -> None:
    plan_id, _ = two_new_entries(world)

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id, plan_digest="0" * 64)

    assert refused.value.code == "PLAN_DIGEST_MISMATCH"
    assert world.status(plan_id) == "generated"
    assert not (world.root / A).exists()
    digest = world.conn.execute(
        "SELECT plan_digest FROM promotion_journal WHERE plan_id = ?", (plan_id,)
    ).fetchone()[0]
    assert world.promote(plan_id, plan_digest=digest).status == "applied"
    approved = world.conn.execute(
        "SELECT approved_digest FROM promotion_outcomes WHERE plan_id = ?", (plan_id,)
    ).fetchone()[0]
    assert approved == digest


def test_an_unknown_plan_id_is_not_found(world: World) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(str(uuid.uuid4()))
    assert refused.value.code == "PLAN_NOT_FOUND"


def test_tampered_approved_bytes_are_refused_before_anything_is_written(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    world.conn.execute(
        "UPDATE promotion_files SET sanitized_content = ? WHERE target_path = ?",
        (b"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", A),
    )

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PLAN_CORRUPT"
    assert not (world.root / A).exists()


@pytest.mark.parametrize("escape", ["../outside.md", "/tmp/outside.md", f"{ENTRIES}/../../x.md"])
def test_a_stored_plan_whose_target_escapes_the_memory_root_is_refused(
    world: World, escape: str
) -> None:
    plan_id, _ = two_new_entries(world)
    stored = orjson.loads(
        world.conn.execute(
            "SELECT plan_canonical_json FROM promotion_journal WHERE plan_id = ?", (plan_id,)
        ).fetchone()[0]
    )
    stored["perFile"][0]["targetPath"] = escape
    world.conn.execute(
        "UPDATE promotion_journal SET plan_canonical_json = ? WHERE plan_id = ?",
        (canonical_json(stored).decode(), plan_id),
    )
    with pytest.raises(sqlite3.IntegrityError):  # the journal itself refuses such a path
        world.conn.execute(
            "UPDATE promotion_files SET target_path = ? WHERE plan_id = ? AND target_path = ?",
            (escape, plan_id, A),
        )

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PLAN_CORRUPT"
    assert not (world.root / A).exists() and not (world.root / B).exists()
    assert not (world.root.parent / "outside.md").exists()


# --- symlinks --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "component", [".threadshare", ".threadshare/memory", ".threadshare/memory/entries"]
)
def test_a_symlinked_directory_after_approval_voids_and_writes_nothing_behind_it(
    world: World, tmp_path: Path, component: str
) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    real = world.root / component
    elsewhere = tmp_path / "elsewhere"
    real.rename(elsewhere)  # the same tree, now reached through a symlink
    real.symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "UNSAFE_PATH"
    assert voided(refused)["status"] == "voided"
    assert world.status(plan_id) == "voided"
    assert not any(p.name.endswith(".md") for p in elsewhere.rglob("*"))
    assert world.candidate_row("cand-1")["status"] == "quarantined"


def test_a_symlinked_target_file_voids_and_the_file_it_points_to_is_untouched(
    world: World, tmp_path: Path
) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    victim = tmp_path / "victim.md"
    victim.write_bytes(b"not yours\n")
    (world.root / A).symlink_to(victim)

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "UNSAFE_PATH"
    assert voided(refused)["driftedPath"] == A
    assert victim.read_bytes() == b"not yours\n"
    assert (world.root / A).is_symlink()
    assert not (world.root / B).exists()


def test_a_target_grown_too_large_voids_with_the_advice_its_reader_gave(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    (world.root / A).write_bytes(b"x" * (safe_write.MAX_READ_BYTES + 1))

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "UNSAFE_PATH"
    assert voided(refused)["driftedPath"] == A
    assert refused.value.to_json()["next"] == (
        "Shorten the file the message names to under its limit, then retry."
    )


# --- owner -----------------------------------------------------------------------------------


def test_a_plan_run_from_another_worktree_of_the_repository_is_refused(
    world: World, tmp_path: Path
) -> None:
    plan_id, _ = two_new_entries(world)
    other = tmp_path / "other-worktree"
    git(world.root, "worktree", "add", "-q", "-b", "other", str(other))

    done = in_process("memory", "promote", "--plan", plan_id, "--format", "json", cwd=other)

    assert done.returncode == 1
    assert orjson.loads(done.stdout)["error"]["code"] == "PROMOTION_OWNER_MISMATCH"
    assert not (other / A).exists() and not (world.root / A).exists()
    assert world.status(plan_id) == "generated"  # still valid in its own worktree
    assert world.promote(plan_id).status == "applied"


# --- drift after approval --------------------------------------------------------------------


def test_a_hand_edit_after_approval_voids_and_keeps_the_hand_edit(world: World) -> None:
    (world.root / A).write_bytes(entry_bytes("release-smoke-suite", "An older wording."))
    plan_id = world.plan({A: entry_bytes("release-smoke-suite"), B: entry_bytes("tag-after-ci")})
    stored_plan.approve_plan(world.conn, plan_id)
    hand = entry_bytes("release-smoke-suite", "Edited by hand after the review.")
    (world.root / A).write_bytes(hand)

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_TARGET_DRIFT"
    assert voided(refused) | {"planId": None} == {
        "planId": None,
        "status": "voided",
        "next": "re-review",
        "driftedPath": A,
    }
    assert (world.root / A).read_bytes() == hand
    assert not (world.root / B).exists()
    with pytest.raises(errors.TeamloreError) as again:
        world.promote(plan_id)
    assert again.value.code == "PLAN_VOIDED"
    assert again.value.details["reason"] == "PROMOTION_TARGET_DRIFT"


def test_a_git_pull_that_changes_a_target_voids_the_plan(world: World, tmp_path: Path) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(world.root), str(colleague))
    theirs = entry_bytes("tag-after-ci", "A colleague promoted this first.")
    (colleague / B).parent.mkdir(parents=True, exist_ok=True)
    (colleague / B).write_bytes(theirs)
    git(colleague, "add", "-A")
    git(colleague, "commit", "-q", "-m", "colleague's memory")
    git(world.root, "pull", "-q", "--ff-only", str(colleague), "main")

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_TARGET_DRIFT"
    assert voided(refused)["driftedPath"] == B
    assert (world.root / B).read_bytes() == theirs
    assert not (world.root / A).exists()


def test_a_lint_policy_bump_after_approval_voids_the_plan(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    bumped = (
        "import sys\n"
        "import teamlore.memory.store.lint as rules\n"
        "rules.LINT_POLICY_VERSION = 'teamlore-sanitize@next'\n"
        "from teamlore.cli.main import main\n"
        f"sys.argv = ['teamlore', 'memory', 'promote', '--plan', {plan_id!r}, '--format', 'json']\n"
        "main()\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", bumped], cwd=world.root, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 1, done.stderr
    error = orjson.loads(done.stdout)["error"]
    assert error["code"] == "PROMOTION_POLICY_DRIFT"
    assert "teamlore-sanitize@next" in error["message"]
    assert world.status(plan_id) == "voided"
    assert not (world.root / A).exists()


def test_the_contract_policy_constant_is_not_the_lint_policy(world: World) -> None:
    plan_id = world.plan({A: entry_bytes("release-smoke-suite")}, policy_version=POLICY_VERSION)

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_POLICY_DRIFT"


def test_a_candidate_revision_change_after_approval_voids_the_plan(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    world.conn.execute("UPDATE candidates SET revision = 2 WHERE candidate_id = 'cand-2'")

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_CANDIDATE_DRIFT"
    assert not (world.root / A).exists()
    assert world.candidate_row("cand-1")["status"] == "quarantined"


def test_an_assessment_change_after_approval_voids_the_plan(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    stored_plan.approve_plan(world.conn, plan_id)
    world.conn.execute(
        "UPDATE assessments SET claim_support = 'unverified', assessed_by = 'deterministic' "
        "WHERE candidate_id = 'cand-1'"
    )

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_ASSESSMENT_DRIFT"


def test_content_that_no_longer_lints_clean_voids_the_plan(world: World) -> None:
    leaking = entry_bytes("release-smoke-suite", "Use token ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2)
    plan_id = world.plan({A: leaking})

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_POLICY_DRIFT"
    assert not (world.root / A).exists()


# --- crashes and races -----------------------------------------------------------------------


def cli_promote(world: World, plan_id: str, failpoint: str | None = None) -> Any:
    """`memory promote --plan ID --format json`: a real process killed at `failpoint`, or,
    with none, run in process (nothing is killed)."""
    args = ("memory", "promote", "--plan", plan_id, "--format", "json")
    if failpoint is None:
        return in_process(*args, cwd=world.root, env={"TEAMLORE_FAILPOINT": ""})
    return teamlore_cli(*args, cwd=world.root, env={"TEAMLORE_FAILPOINT": failpoint})


@pytest.mark.parametrize("failpoint", promotion.FAILPOINTS)
def test_a_kill_at_any_failpoint_is_recovered_by_the_next_promote(
    world: World, failpoint: str
) -> None:
    plan_id, files = two_new_entries(world)

    killed = cli_promote(world, plan_id, failpoint)

    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert world.status(plan_id) in ("approved", "applying", "applied")
    recovered = cli_promote(world, plan_id)
    assert recovered.returncode == 0, recovered.stdout
    result = orjson.loads(recovered.stdout)
    assert result["status"] == "applied"
    assert result["idempotent"] == (failpoint == "promotion.after-finish")
    for path, data in files.items():
        assert (world.root / path).read_bytes() == data
    assert [
        p.name
        for p in (world.root / ENTRIES).iterdir()
        if p.name.startswith(".") and p.name != ".gitkeep"
    ] == []
    assert world.status(plan_id) == "applied"
    assert world.candidate_row("cand-1")["revision"] == 2  # promoted exactly once
    assert world.fts_rows() == 0
    assert world.conn.execute("SELECT count(*) FROM approved_entries").fetchone()[0] == 2


def test_status_recovery_resumes_an_interrupted_apply(world: World) -> None:
    plan_id, files = two_new_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-mark").returncode == -9
    assert world.status(plan_id) == "applying"
    owner = Owner(world.identity.repository_key, world.identity.worktree_key)
    assert promotion.unfinished_plan_ids(world.conn, owner)["applying"] == [plan_id]
    assert promotion.plans_holding_candidates(world.conn, ["cand-2"]) == [plan_id]

    ((recovered, outcome),) = promotion.recover_promotions(
        world.conn, identity=world.identity, home=world.home
    )
    assert recovered == plan_id

    assert isinstance(outcome, promotion.PromotionOutcome) and outcome.resumed
    assert [f.outcome for f in outcome.files] == ["already-applied", "written"]
    assert (world.root / B).read_bytes() == files[B]
    assert promotion.plans_holding_candidates(world.conn, ["cand-2"]) == []


def test_doctor_checking_a_team_server_leaves_an_interrupted_promotion_alone(
    world: World,
) -> None:
    """Doctor is read-only (docs/agents.md). It asked each server's status tool whether it
    refuses every call (an older teamlore); the `team` tier's status finishes an interrupted
    promotion, writing memory files into the worktree."""
    from teamlore.integrations.doctor import server_check

    plan_id, _files = two_new_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-mark").returncode == -9
    server = {
        "name": "teamlore",
        "command": sys.executable,
        "args": ["-m", "teamlore.cli.main", "mcp", "--capability", "team"],
        # as install writes it: Codex passes a server only an allow-list of its environment
        "env": {"TEAMLORE_HOME": os.environ["TEAMLORE_HOME"]},
    }

    check = server_check("codex", server, world.root)

    assert check.status == "ok", check.message
    assert world.status(plan_id) == "applying" and not (world.root / B).exists()


def test_memory_status_finishes_a_promotion_a_crash_interrupted(world: World) -> None:
    """docs/memory.md: after a crash mid-apply, `memory status` resumes the journal. Over MCP
    the read-only tier (`team-read`) changes nothing and says which command finishes it."""
    from teamlore.ops.registry import OpContext, run_operation

    plan_id, files = two_new_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-mark").returncode == -9
    read_only = OpContext(cwd=world.root, home=world.home, capabilities=frozenset({"team-read"}))
    told = run_operation("memory.status", read_only, {})["promotionRecovery"]
    assert told["interrupted"] == [plan_id] and told["resumed"] == []
    assert f"teamlore memory promote --plan {plan_id}" in told["next"]
    assert world.status(plan_id) == "applying" and not (world.root / B).exists()

    shown = in_process("memory", "status", "--format", "json", cwd=world.root)

    assert shown.returncode == 0, shown.stderr
    recovery = orjson.loads(shown.stdout)["promotionRecovery"]
    (resumed,) = recovery["resumed"]  # as `memory promote` answers
    assert (resumed["planId"], resumed["status"]) == (plan_id, "applied")
    assert [f["targetPath"] for f in resumed["files"]] == [A, B]
    assert world.status(plan_id) == "applied"
    for path, data in files.items():
        assert (world.root / path).read_bytes() == data
    again = orjson.loads(in_process("memory", "status", "--format", "json", cwd=world.root).stdout)
    assert again["promotionRecovery"] == {"interrupted": [], "resumed": [], "next": None}
    text = in_process("memory", "status", cwd=world.root)
    assert text.returncode == 0 and "interrupted" not in text.stdout


def test_a_crash_between_write_and_progress_skips_the_identical_file(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-write").returncode == -9

    outcome = world.promote(plan_id)

    assert [f.outcome for f in outcome.files] == ["already-present", "written"]


def test_a_drift_in_the_middle_of_an_apply_rolls_back_what_it_wrote(world: World) -> None:
    plan_id, _ = two_new_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-mark").returncode == -9
    assert (world.root / A).exists()  # the first file landed before the kill
    hand = b"someone else's bytes\n"
    (world.root / B).write_bytes(hand)

    with pytest.raises(errors.TeamloreError) as refused:
        world.promote(plan_id)

    assert refused.value.code == "PROMOTION_TARGET_DRIFT"
    assert voided(refused)["driftedPath"] == B
    assert not (world.root / A).exists()  # rolled back to its original absence
    assert (world.root / B).read_bytes() == hand
    assert world.status(plan_id) == "voided"
    assert world.candidate_row("cand-1")["status"] == "quarantined"


def test_two_racing_promotes_of_one_plan_apply_it_exactly_once(world: World) -> None:
    plan_id, files = two_new_entries(world)
    command = [sys.executable, "-m", "teamlore.cli.main", "memory", "promote", "--plan", plan_id]
    racers = [
        subprocess.Popen(
            [*command, "--format", "json"],
            cwd=world.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [orjson.loads(racer.communicate(timeout=60)[0]) for racer in racers]

    fresh = [r for r in results if r.get("status") == "applied" and not r["idempotent"]]
    others = [r for r in results if r not in fresh]
    assert len(fresh) == 1
    (other,) = others
    assert other.get("idempotent") is True or other["error"]["code"] == "LOCK_BUSY"
    assert world.candidate_row("cand-1")["revision"] == 2
    for path, data in files.items():
        assert (world.root / path).read_bytes() == data


# --- the real chain --------------------------------------------------------------------------


def test_a_plan_from_the_real_prepare_is_promoted_into_a_clean_reviewed_entry(
    tmp_path: Path, home: Path
) -> None:
    from test_review import TEXT, Flow, candidate, request_for

    flow = Flow(tmp_path, home)
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1), flow.turn_ev(3)])])])
    prepared = flow.op("memory.prepare", request_for(flow.item(cid)))
    commits_before = git(flow.repo, "rev-list", "--all")

    result = flow.op("memory.promote", {"planId": prepared["planId"]})

    assert result["status"] == "applied" and result["planDigest"] == prepared["planDigest"]
    (written,) = result["files"]
    path = written["targetPath"]
    data = (flow.repo / path).read_bytes()
    assert data == prepared["files"][0]["preview"].encode()
    entry = documents.load_entry(data, path)
    assert (entry.status, entry.claim_support) == ("approved", "human-confirmed")
    assert not lint.lint_tree(flow.repo).blocked
    state = open_state_db(home)
    try:
        private = [
            str(value)
            for row in state.execute(
                "SELECT session_key, turn_key, payload_sha256 FROM evidence_refs"
            )
            for value in row
            if value
        ]
        assert (
            state.execute(
                "SELECT status FROM candidates WHERE candidate_id = ?", (cid,)
            ).fetchone()[0]
            == "promoted"
        )
    finally:
        state.close()
    text = data.decode()
    assert private and not any(value in text for value in private)
    assert str(flow.repo) not in text and str(home) not in text
    assert git(flow.repo, "rev-list", "--all") == commits_before
    assert git(flow.repo, "diff", "--cached", "--name-only") == ""
    assert f"?? {path}" in git(flow.repo, "status", "--porcelain", "--untracked-files=all")
    assert flow.op("memory.search", {"query": "release tags prefix"})["results"]


def test_promote_removes_dead_temps_beside_its_targets_and_spares_a_live_writers(
    world: World,
) -> None:
    """A temp a killed writer left is removed however new it is; one a live writer of another
    command holds (its flock, as `safe_write.write_file` takes it) is left to that writer."""
    import fcntl

    plan_id, files = two_new_entries(world)
    entries = world.root / ENTRIES
    dead = entries / f"{safe_write.TEMP_PREFIX}0123456789abcdef.tmp"
    dead.write_bytes(b"half a file")
    live = entries / f"{safe_write.TEMP_PREFIX}fedcba9876543210.tmp"
    live.write_bytes(b"being written")
    (entries / "keep.md").write_bytes(b"mine")
    time.sleep(0.05)  # both made before the promote starts (a file system's clock is coarse)
    held = os.open(live, os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert world.promote(plan_id).status == "applied"
        assert live.read_bytes() == b"being written"
    finally:
        os.close(held)
    assert not dead.exists() and (entries / "keep.md").read_bytes() == b"mine"
    assert (world.root / A).read_bytes() == files[A]
