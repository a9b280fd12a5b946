"""A small real world for recall tests: a git repository, Codex session files about it, an index.

Session files copy the record shapes of tests/sessions/data/codex (0.60+ envelope); their cwd is
the temporary repository, so the real indexer maps them to the registered worktree and the real
delivery trace links them to the real commits.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sessions.records import codex_record
from teamlore.ops.registry import OpContext, run_operation

PROVIDER_SESSION_PREFIX = "019aad50-0000-7000-8000-"
BASE = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def git(repo: Path, *args: str, when: datetime | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.isoformat()
    out = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Dev")
    git(path, "config", "user.email", "dev@example.com")
    (path / "README.md").write_text("demo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial", when=BASE - timedelta(days=1))
    return path


def commit(repo: Path, rel: str, content: str, when: datetime, message: str = "change") -> str:
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD")


@dataclass
class CodexSession:
    """Builds one Codex rollout file; every turn ends with `task_complete` (sealed)."""

    suffix: str
    cwd: Path
    start: datetime = BASE
    records: list[dict[str, Any]] = field(default_factory=list)
    clock: datetime = BASE
    calls: int = 0

    def __post_init__(self) -> None:
        self.clock = self.start
        self._add(
            "session_meta",
            {
                "id": self.session_id,
                "timestamp": iso(self.start),
                "cwd": str(self.cwd),
                "originator": "codex_cli_rs",
                "cli_version": "0.60.1",
                "source": "cli",
                "model_provider": "openai",
                "git": {},
            },
        )

    @property
    def session_id(self) -> str:
        return PROVIDER_SESSION_PREFIX + self.suffix.rjust(12, "0")

    def _add(self, kind: str, payload: dict[str, Any]) -> None:
        self.clock += timedelta(seconds=1)
        self.records.append(codex_record(kind, payload, iso(self.clock)))

    def user(self, text: str) -> CodexSession:
        self._add("event_msg", {"type": "user_message", "message": text, "images": []})
        self._add(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )
        return self

    def shell(self, command: str, output: str, exit_code: int = 0) -> CodexSession:
        self.calls += 1
        call_id = f"call_{self.calls}"
        self._add(
            "response_item",
            {
                "type": "function_call",
                "name": "shell_command",
                "arguments": json.dumps({"command": command}),
                "call_id": call_id,
            },
        )
        text = f"Exit code: {exit_code}\nWall time: 0.1 seconds\nOutput:\n{output}"
        self._add(
            "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}
        )
        return self

    def patch(self, rel: str, line: str) -> CodexSession:
        self.calls += 1
        call_id = f"call_{self.calls}"
        body = f"*** Begin Patch\n*** Add File: {rel}\n+{line}\n*** End Patch\n"
        self._add(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": body,
            },
        )
        result = json.dumps(
            {
                "output": f"Success. Updated the following files:\nA {rel}\n",
                "metadata": {"exit_code": 0},
            }
        )
        self._add(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": call_id, "output": result},
        )
        return self

    def answer(self, text: str) -> CodexSession:
        self._add("event_msg", {"type": "agent_message", "message": text})
        self._add(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
        )
        self._add("event_msg", {"type": "task_complete"})
        return self

    def turn(self, text: str, answer: str = "Done.") -> CodexSession:
        return self.user(text).answer(answer)

    def interrupted(self, text: str) -> CodexSession:
        """A turn the user interrupted: Codex ends it with `turn_aborted`."""
        self.user(text)._add("event_msg", {"type": "agent_message", "message": "Working on it"})
        self._add("event_msg", {"type": "turn_aborted", "reason": "interrupted"})
        return self

    def roll_back(self, turns: int) -> CodexSession:
        """The user undoes the last `turns` turns (`thread_rolled_back`)."""
        self._add("event_msg", {"type": "thread_rolled_back", "num_turns": turns})
        return self

    def write(self, root: Path) -> Path:
        day = self.start.strftime("%Y/%m/%d")
        path = (
            root
            / "sessions"
            / day
            / f"rollout-{self.start:%Y-%m-%dT%H-%M-%S}-{self.session_id}.jsonl"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path


def sync(home: Path, codex_root: Path, repository: Path | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"sources": [f"codex={codex_root}"]}
    if repository is not None:
        payload["repository"] = str(repository)
    return run_operation("sync", OpContext(cwd=codex_root, home=home), payload)


WINDOW = {"since": "2026-03-01T00:00:00.000Z", "until": "2026-03-08T00:00:00.000Z"}
