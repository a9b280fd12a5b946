"""What a killed command leaves in a worktree, found for the commands that would otherwise take
it for finished work.

- A promotion killed mid-apply (SIGKILL, Ctrl-C, a power cut) leaves its plan `applying` in
  the promotion journal and the memory tree holding only some of its files (and maybe the temp
  file of the one being written). `memory status`, or promote again, finishes it
  (memory/promotion/apply.py, `unfinished_plan_ids`: the same detection is used here). Until
  then `memory lint` blocks (`promotion.interrupted`: lint is the check before a commit) and
  `memory assemble` refuses (PLAN_STATE_INVALID), each naming the plan and the command that
  finishes it. Assemble refuses rather than finishing the plan itself: finishing can void the
  plan and roll its files back (a target changed since), which the person should see before
  anything is assembled from the tree; and assemble otherwise never opens the state DB or writes
  memory files. Without a state DB (CI, a fresh clone) there is no journal and nothing to say.
- A write killed before it installed its temp file leaves `.teamlore-write-<hex>.tmp` beside
  its target (core/safe_write.py). Assemble, under its lock (so no other assemble writes), removes
  those in the folders it writes — the worktree root and the provider's Skill folder — that are
  older than itself and held by no live writer (`safe_write.remove_dead_temps`): a concurrent
  command of another kind writing there (an integration install) keeps its own.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from teamlore.core import db, errors, safe_write
from teamlore.memory.store.lint import Finding, LintReport

RULE = "promotion.interrupted"


@dataclass(frozen=True, slots=True)
class InterruptedPromotion:
    plan_id: str
    written: int  # files of the plan already in the tree
    files: int
    first_target: str  # the first file it has yet to write, for lint's `file`

    @property
    def command(self) -> str:
        return f"teamlore memory promote --plan {self.plan_id}"

    def what(self) -> str:
        if self.written == 0:
            return (
                f"promotion {self.plan_id} was interrupted before it wrote any of its "
                f"{self.files} file{'' if self.files == 1 else 's'}: the memory tree holds none "
                "of it yet"
            )
        return (
            f"promotion {self.plan_id} was interrupted after {self.written} of its "
            f"{self.files} files: the memory tree holds only part of it"
        )


def interrupted_promotions(
    home: Path | None, repository_key: str, worktree_key: str
) -> list[InterruptedPromotion]:
    """The plans of this worktree a kill left half applied (journal `applying`), read from the
    state DB without writing a byte; none when there is no state DB or it cannot be read."""
    from teamlore.core.locations import state_dir_path
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.memory.promotion.apply import unfinished_plan_ids
    from teamlore.memory.store.state_db import STATE_DB_NAME

    path = (home if home is not None else state_dir_path()) / STATE_DB_NAME
    if not path.is_file():
        return []
    conn = db.open_read_only(path)
    if conn is None:
        return []
    try:
        found = []
        for plan_id in unfinished_plan_ids(conn, Owner(repository_key, worktree_key))["applying"]:
            files, written, first = conn.execute(
                "SELECT count(*), coalesce(sum(applied), 0), "
                "coalesce(min(CASE WHEN applied = 0 THEN target_path END), min(target_path)) "
                "FROM promotion_files WHERE plan_id = ?",
                (plan_id,),
            ).fetchone()
            found.append(InterruptedPromotion(plan_id, int(written), int(files), first or ""))
        return found
    except sqlite3.Error:  # a state DB of another version or damaged: `memory status` says so
        return []
    finally:
        conn.close()


def with_interrupted_promotions(
    report: LintReport, home: Path | None, repository_key: str, worktree_key: str
) -> LintReport:
    """`report` of `lint_tree` with a blocking finding for each promotion a kill left half
    applied in this worktree."""
    found = interrupted_promotions(home, repository_key, worktree_key)
    return report.with_findings(
        [
            Finding(
                rule=RULE,
                severity="block",
                file=p.first_target or ".threadshare/memory",
                line=0,
                message=f"{p.what()}; finish it with `{p.command}` (or `teamlore memory "
                "status`) before you commit or assemble",
            )
            for p in found
        ]
    )


def refuse_if_interrupted(home: Path | None, repository_key: str, worktree_key: str) -> None:
    """PLAN_STATE_INVALID when a promotion in this worktree was interrupted: assemble would
    copy half of it into the instructions file and the Skill folder."""
    found = interrupted_promotions(home, repository_key, worktree_key)
    if found:
        first = found[0]
        raise errors.TeamloreError(
            errors.PLAN_STATE_INVALID,
            f"{first.what()}, and assemble would copy the tree without the rest; finish it with "
            f"`{first.command}` (or `teamlore memory status`), then run assemble again",
            planId=first.plan_id,
            planIds=[p.plan_id for p in found],
        )


def interrupted_note(home: Path | None, plan_id: str) -> str | None:
    """What a promote stopped by Ctrl-C left, for the person at the terminal: None when it
    wrote nothing yet (or the journal cannot be read)."""
    from teamlore.core.locations import state_dir_path
    from teamlore.memory.store.state_db import STATE_DB_NAME

    path = (home if home is not None else state_dir_path()) / STATE_DB_NAME
    conn = db.open_read_only(path) if path.is_file() else None
    if conn is None:
        return None
    try:
        row = conn.execute(
            "SELECT repository_key, worktree_key FROM promotion_journal "
            "WHERE plan_id = ? AND status = 'applying'",
            (plan_id,),
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if row is None:
        return None
    for p in interrupted_promotions(home, str(row[0]), str(row[1])):
        if p.plan_id == plan_id:
            return (
                f"{p.what()}; run `{p.command}` again (or `teamlore memory status`) to "
                "finish it — until then `memory lint` blocks and `memory assemble` refuses"
            )
    return None


def remove_dead_write_temps(worktree_root: Path, skills_dir: str, *, older_than: float) -> None:
    """Remove the temp files killed writes left where assemble writes: the worktree root (the
    instructions files) and every folder below the provider's Skill folder `skills_dir`. Call
    it under the assemble lock. A folder that is a symlink is not entered."""
    folders = [""]
    top = worktree_root / skills_dir
    if top.is_dir() and not top.is_symlink():
        for folder, _subfolders, _files in os.walk(top):  # never into a symlinked folder
            folders.append(Path(folder).relative_to(worktree_root).as_posix())
    for folder in folders:
        with contextlib.suppress(errors.TeamloreError, OSError):  # a symlink swapped in, gone
            safe_write.remove_dead_temps(worktree_root, folder, older_than=older_than)
