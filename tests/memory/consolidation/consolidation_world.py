"""A git worktree holding the reference memory tree (17 entries, one scene), driven through the
operation registry (in process) or the real `teamlore` CLI (subprocess)."""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from support import git, shared_fixtures, teamlore_cli
from teamlore.core import errors
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.state_db import open_state_db
from teamlore.ops.registry import OpContext, run_operation

MEMORY = ".threadshare/memory"
SCENE = f"{MEMORY}/scenes/team-memory-design.md"
DOCTRINE = f"{MEMORY}/doctrine.md"
RECORD = f"{MEMORY}/consolidated.json"


def scene_text(summary: str, body: str, *extra_meta: str) -> str:
    meta = [f"summary: {orjson.dumps(summary).decode()}", *extra_meta]
    return "\n".join(["-----META-START-----", *meta, "-----META-END-----", body])


UPDATED_BODY = (
    "## Team memory design\n"
    "- Mine past sessions after the fact; never intercept live traffic.\n"
    "- Quarantine candidates in SQLite and promote reviewed Markdown through git.\n"
    "- Bind every promotion to blob hashes, content digests and the lint policy.\n"
    "- Review each claim with its evidence before it reaches the repository."
)
DOCTRINE_TEXT = (
    "### Core principles\n"
    "- Evidence is not truth: a person confirms every generated claim.\n"
    "- Private stays local: raw transcripts and session ids never reach git.\n"
    "\n"
    "### Agent rules\n"
    "- Promote only a plan the user reviewed; any drift voids it.\n"
)


class World:
    def __init__(self, tmp_path: Path, home: Path, *, reference: bool = True) -> None:
        self.home = home
        root = tmp_path / "project"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        (root / "README.md").write_text("project\n")
        init_tree(root)
        if reference:
            fixture = shared_fixtures("threadshare-memory")
            for folder in ("entries", "scenes"):
                for source in sorted((fixture / folder).iterdir()):
                    shutil.copyfile(source, root / MEMORY / folder / source.name)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "memory")
        self.root = Path(os.path.realpath(root))

    # -- driving ---------------------------------------------------------------------------

    def op(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        return run_operation(name, OpContext(cwd=self.root, home=self.home), payload)

    def cli(self, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> Any:
        return teamlore_cli(*args, cwd=self.root, env=env, input=input)

    def cli_json(self, *args: str, input: str | None = None) -> tuple[int, dict[str, Any]]:
        done = self.cli(*args, "--format", "json", input=input)
        return done.returncode, orjson.loads(done.stdout)

    def cli_in_at_most(
        self, seconds: float, *args: str, memory_bytes: int
    ) -> subprocess.CompletedProcess[str]:
        """The real CLI with this world's state dir, killed after `seconds` (TimeoutExpired)
        and refused more than `memory_bytes` of address space."""

        def limit_memory() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        return subprocess.run(
            [sys.executable, "-m", "teamlore.cli.main", *args],
            cwd=self.root,
            env={**os.environ, "TEAMLORE_HOME": str(self.home)},
            capture_output=True,
            text=True,
            timeout=seconds,
            preexec_fn=limit_memory,
        )

    def synthesize(self, **payload: Any) -> dict[str, Any]:
        return self.op("memory.synthesize", payload)

    def stage(self, patch: dict[str, Any]) -> dict[str, Any]:
        return self.op("memory.stage", patch)

    # -- looking -----------------------------------------------------------------------------

    def read(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def write(self, path: str, data: bytes | str) -> None:
        target = self.root / path
        target.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))

    def db(self) -> sqlite3.Connection:
        return open_state_db(self.home)

    def state(self) -> dict[str, Any]:
        """Everything a refused consolidation must leave as it was."""
        conn = self.db()
        try:
            return {
                table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                for table in (
                    "candidates",
                    "assessments",
                    "consolidation_runs",
                    "consolidation_run_entries",
                    "submissions",
                    "promotion_journal",
                    "promotion_files",
                )
            } | {
                "tasks": conn.execute(
                    "SELECT task_id, status FROM tasks ORDER BY task_id"
                ).fetchall(),
                "tree": sorted(
                    (str(p.relative_to(self.root)), p.read_bytes())
                    for p in (self.root / MEMORY).rglob("*")
                    if p.is_file()
                ),
            }
        finally:
            conn.close()


def refused(world: World, document: dict[str, Any]) -> errors.TeamloreError:
    """What staging `document` refused with, state left exactly as it was."""
    before = world.state()
    with pytest.raises(errors.TeamloreError) as caught:
        world.stage(document)
    assert world.state() == before
    return caught.value


def confirm_all(item: dict[str, Any]) -> dict[str, Any]:
    """The PrepareRequest@v1 a person's confirmation of every operation becomes."""
    return {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": "consolidation",
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


def patch_for(task: dict[str, Any], operations: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "operations": operations,
    }


def operation(
    operation_id: str,
    op: str,
    target: str,
    name: str,
    content: str | None,
    based_on: list[str],
    *,
    merge_sources: list[str] | None = None,
    rationale: str = "The entries refine this part of the team's practice.",
) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "op": op,
        "target": target,
        "name": name,
        "newContent": content,
        "basedOnEntryIds": based_on,
        "mergeSources": merge_sources or [],
        "rationale": rationale,
    }


def update_scene_and_create_doctrine(task: dict[str, Any]) -> dict[str, Any]:
    """The acceptance patch: update the reference scene, create the doctrine."""
    ids = [e["entryId"] for e in task["entries"]]
    return patch_for(
        task,
        [
            operation(
                "op-scene",
                "update",
                "scene",
                "team-memory-design",
                scene_text("Threadshare memory pipeline", UPDATED_BODY),
                ids[:3],
            ),
            operation("op-doctrine", "create", "doctrine", "doctrine", DOCTRINE_TEXT, ids[3:5]),
        ],
    )
