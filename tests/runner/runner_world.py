"""A registered repository with indexed sessions, a fake runner, and helpers to drive
`teamlore memory extract` through the real CLI (and the conformance probe in process)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_runner import FakeRunner

from support import in_process, memory_init, teamlore_cli
from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW, CodexSession, make_repo, sync


@dataclass
class World:
    tmp: Path
    home: Path
    repo: Path
    sessions: list[CodexSession]
    fake: FakeRunner
    env: dict[str, str] = field(default_factory=dict)
    # `cli` and `text` run the command in this process (`support.in_process`: the same exit
    # code and output) where a test sets it: for tests of what a command does or prints, not of
    # its process; the fake runner is a real process either way
    commands_in_process: bool = False

    def op(self, name: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Run one operation in this process (what the CLI runs, minus its start-up cost):
        (exit code, result or {"error": …}) as the CLI would print them."""
        saved = dict(os.environ)
        os.environ.update({**self.fake.env(), **self.env})
        try:
            return 0, run_operation(name, OpContext(cwd=self.repo, home=self.home), payload)
        except errors.TeamloreError as err:
            return err.exit_code, {"error": err.to_json()}
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def cli(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        proc = (in_process if self.commands_in_process else teamlore_cli)(
            *args,
            "--format",
            "json",
            cwd=self.repo,
            env={**self.fake.env(), **self.env, **(env or {})},
        )
        payload: dict[str, Any] = json.loads(proc.stdout) if proc.stdout.strip() else {}
        return proc.returncode, payload

    def text(self, *args: str) -> tuple[int, str, str]:
        command = in_process if self.commands_in_process else teamlore_cli
        proc = command(*args, cwd=self.repo, env={**self.fake.env(), **self.env})
        return proc.returncode, proc.stdout, proc.stderr

    def reverify(self, runner: str = "claude") -> dict[str, Any]:
        """A passing conformance probe, run in this process: most tests need the record, not
        the command (the e2e and profile tests run `reverify-runner` itself)."""
        code, out = self.op("memory.reverify_runner", {"runner": runner})
        assert code == 0, out
        return out

    def plan(self, runner: str = "claude", *, limit: int = 8) -> dict[str, Any]:
        """The preview `memory extract --runner RUNNER` prints for the fixture's window, made in
        this process (the same operation; `plan_by_cli` runs the command)."""
        payload = {"runner": runner, "limit": limit, **WINDOW}
        code, out = self.op("memory.extract_preview", payload)
        assert code == 0, out
        return out

    def plan_by_cli(self, runner: str = "claude", *flags: str) -> dict[str, Any]:
        code, out = self.cli(
            "memory",
            "extract",
            "--runner",
            runner,
            "--since",
            WINDOW["since"],
            "--until",
            WINDOW["until"],
            *flags,
        )
        assert code == 0, out
        return out

    def approve(self, digest: str, flag: str = "--approve-plan") -> tuple[int, dict[str, Any]]:
        return self.cli("memory", "extract", flag, digest)

    def run_approved(self, digest: str, *, manifest: bool = False) -> dict[str, Any]:
        """An approval that is a step on the way to what a test checks, run in this process:
        the operation `memory extract --approve-plan|--approve-manifest` runs (`approve` runs
        the command), with the fake runner a real process all the same. It ran every plan
        without a failure, as the command's exit 0 says."""
        code, out = self.op(
            "memory.run_plan", {"approveManifest" if manifest else "approvePlan": digest}
        )
        assert code == 0 and "error" not in out, out
        return out

    def exclude(self, session_key: str) -> None:
        """`teamlore sessions exclude KEY`'s operation, in this process (a step, not the check)."""
        code, out = self.op("sessions.exclude", {"session_key": session_key})
        assert code == 0, out

    def plan_path(self, digest: str) -> Path:
        """Where a runner plan is stored (docs/runner.md)."""
        return self.home / "runner-plans" / f"{digest}.json"

    def resync(self) -> None:
        for session in self.sessions:
            session.write(self.tmp / "codex")
        sync(self.home, self.tmp / "codex", self.repo)

    def state(self) -> sqlite3.Connection:
        return sqlite3.connect(self.home / "memory-state.sqlite3")

    def candidates(self) -> list[tuple[str, str]]:
        with self.state() as conn:
            return conn.execute(
                "SELECT candidate_id, status FROM candidates ORDER BY candidate_id"
            ).fetchall()

    def authorizations(self) -> list[tuple[str, str, int, str]]:
        with self.state() as conn:
            return conn.execute(
                "SELECT plan_digest, runner_input_digest, bytes, via FROM authorization_log "
                "ORDER BY rowid"
            ).fetchall()


def rewrite_first_message(session: CodexSession) -> None:
    """Edit the session's first user message in place (both of its records)."""
    for record in session.records:
        payload = record["payload"]
        if str(payload.get("message", "")).startswith("The release script fails"):
            payload["message"] = "The release script fails on tag pushes!!"
        if payload.get("role") == "user" and "release script" in str(payload["content"]):
            payload["content"][0]["text"] = "The release script fails on tag pushes!!"


def make_world(tmp: Path, home: Path, *, sessions: int = 1, mode: str = "good") -> World:
    root = make_repo(tmp / "shop")
    made: list[CodexSession] = []
    for number in range(sessions):
        session = CodexSession(f"b{number}", root)
        session.user(f"The release script fails on tag push in service {number}; fix it")
        session.shell(f"pytest -q {root}/tests/test_release.py", "1 failed", exit_code=1)
        session.answer("The tag check compared against the wrong prefix.")
        session.turn("use the v prefix", "Changed the tag check to expect a v prefix.")
        session.turn("anything else?", "Run pytest tests/test_release.py before pushing tags.")
        session.write(tmp / "codex")
        made.append(session)
    (tmp / "codex").mkdir(exist_ok=True)  # a world of no session still registers its repository
    sync(home, tmp / "codex", root)
    memory_init(root, home)
    fake = FakeRunner(tmp / "bin")
    fake.install("claude", mode)
    return World(tmp, home, root, made, fake)
