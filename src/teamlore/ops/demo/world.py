"""The demo's world: a throwaway git repository with two commits and two sample sessions written
in the real on-disk formats (one Codex rollout, one Claude Code transcript, partly in Chinese)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson

from teamlore.core import errors

CODEX_SESSION_ID = "019a8d2e-5b1c-7e40-9a6f-3c2d1e0f9a01"
CLAUDE_SESSION_ID = "7c4f2a9e-1d3b-4e8a-b5c6-0f1e2d3c4b5a"
CODEX_PROMPT = (
    "The release job failed again: test_export is flaky because invoice export order is not "
    "stable. Find the cause."
)
CLAUDE_ANSWER = (
    "已修复：迁移的锁等待超时从 5 秒提高到 60 秒，并设置 LOCK_TIMEOUT='30s'，"
    "staging 上 alembic upgrade head 通过。"
)
CODEX_ANSWER = (
    "Fixed: export_invoices now sorts rows by id, so the export is deterministic and "
    "test_export no longer flakes. Committed as fix: stable ordering in invoice export."
)
CLAUDE_PROMPT = "发布流程失败：数据库迁移在 staging 上超时了。请查一下 alembic 的锁等待问题。"


def _git(repo: Path, *args: str, when: str | None = None) -> str:
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
    env = {
        **dates,
        **os.environ,
        "GIT_AUTHOR_NAME": "Dana Demo",
        "GIT_AUTHOR_EMAIL": "dana@example.com",
        "GIT_COMMITTER_NAME": "Dana Demo",
        "GIT_COMMITTER_EMAIL": "dana@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], env=env, check=True, text=True, capture_output=True
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        raise errors.TeamloreError(errors.GIT_FAILED, f"demo: git {args[0]} failed: {exc}") from exc
    return done.stdout.strip()


def _commit(repo: Path, when: str, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, when=when)
    return _git(repo, "rev-parse", "HEAD")


def build_repository(root: Path) -> tuple[Path, dict[str, str]]:
    repo = root / "acme-billing"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", "https://github.com/acme/acme-billing.git")
    commits = {
        "init": _commit(
            repo,
            "2026-11-18T09:00:00Z",
            "Initial billing service",
            {
                "README.md": "# acme-billing\n",
                "billing/export.py": "def export_invoices(rows):\n    return [r for r in rows]\n",
                "tests/test_export.py": "def test_export():\n    assert True\n",
                "migrations/env.py": "TIMEOUT = 5\n",
            },
        ),
        "export": _commit(
            repo,
            "2026-11-20T10:12:00Z",
            "fix: stable ordering in invoice export",
            {
                "billing/export.py": "def export_invoices(rows):\n"
                "    return sorted(rows, key=lambda r: r['id'])\n",
                "tests/test_export.py": "def test_export_is_ordered():\n    assert True\n",
            },
        ),
        "migration": _commit(
            repo,
            "2026-11-24T15:40:00Z",
            "fix: raise migration lock timeout",
            {
                "migrations/env.py": "TIMEOUT = 60\nLOCK_TIMEOUT = '30s'\n",
            },
        ),
    }
    return repo, commits


def _line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


class _CodexWriter:
    """Records shaped like a Codex 0.60 rollout (envelope format)."""

    def __init__(self, cwd: str, session_id: str = CODEX_SESSION_ID) -> None:
        self.cwd = cwd
        self.session_id = session_id
        self.lines: list[bytes] = []

    def _add(self, ts: str, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append(_line({"timestamp": ts, "type": kind, "payload": payload}))

    def meta(self, ts: str) -> None:
        self._add(
            ts,
            "session_meta",
            {
                "id": self.session_id,
                "timestamp": ts,
                "cwd": self.cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.60.1",
                "source": "cli",
                "model_provider": "openai",
                "git": {"branch": "main"},
            },
        )
        self._add(ts, "turn_context", {"cwd": self.cwd, "model": "gpt-5.1-codex"})

    def user(self, ts: str, text: str) -> None:
        self._add(ts, "event_msg", {"type": "user_message", "message": text, "images": []})
        self._add(
            ts,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )

    def say(self, ts: str, text: str) -> None:
        self._add(ts, "event_msg", {"type": "agent_message", "message": text})
        self._add(
            ts,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
        )

    def shell(self, ts: str, call: str, command: str, output: str, code: int) -> None:
        args = orjson.dumps({"command": command, "workdir": self.cwd}).decode()
        self._add(
            ts,
            "response_item",
            {"type": "function_call", "name": "shell_command", "arguments": args, "call_id": call},
        )
        self._add(
            ts,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"Exit code: {code}\nWall time: 1.2 seconds\nOutput:\n{output}",
            },
        )

    def patch(self, ts: str, call: str, path: str, old: str, new: str) -> None:
        body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
        self._add(
            ts,
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call,
                "name": "apply_patch",
                "input": body,
            },
        )
        result = {
            "output": f"Success. Updated the following files:\nM {path}\n",
            "metadata": {"exit_code": 0},
        }
        self._add(
            ts,
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": call,
                "output": orjson.dumps(result).decode(),
            },
        )

    def done(self, ts: str) -> None:
        self._add(ts, "event_msg", {"type": "task_complete", "last_agent_message": None})


def write_codex_session(root: Path, repo: Path, commit: str) -> Path:
    path = root / "codex" / "sessions" / "2026" / "11" / "20"
    path = path / f"rollout-2026-11-20T10-00-00-{CODEX_SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True)
    w = _CodexWriter(str(repo))
    w.meta("2026-11-20T10:00:00.000Z")
    w.user("2026-11-20T10:00:01.000Z", CODEX_PROMPT)
    w.shell(
        "2026-11-20T10:01:00.000Z",
        "call_1",
        "pytest tests/test_export.py -q",
        "F\nAssertionError: invoice order differs between runs\n1 failed in 0.4s",
        1,
    )
    w.say(
        "2026-11-20T10:02:00.000Z",
        "test_export fails because export_invoices returns rows "
        "in database order, which differs between runs. Sorting by id makes it stable.",
    )
    w.done("2026-11-20T10:02:01.000Z")
    w.user("2026-11-20T10:04:00.000Z", "Good, sort them by id and run the whole suite.")
    w.patch(
        "2026-11-20T10:05:00.000Z",
        "call_2",
        "billing/export.py",
        "    return [r for r in rows]",
        "    return sorted(rows, key=lambda r: r['id'])",
    )
    w.shell("2026-11-20T10:08:00.000Z", "call_3", "pytest -q", "12 passed in 1.1s", 0)
    w.say("2026-11-20T10:08:30.000Z", "export_invoices now sorts by id; all 12 tests pass.")
    w.done("2026-11-20T10:08:31.000Z")
    w.user("2026-11-20T10:11:00.000Z", "Commit it.")
    w.shell(
        "2026-11-20T10:12:00.000Z",
        "call_4",
        "git commit -am 'fix: stable ordering in invoice export'",
        f"[main {commit[:7]}] fix: stable ordering in invoice export\n"
        " 2 files changed, 3 insertions(+), 2 deletions(-)",
        0,
    )
    w.say("2026-11-20T10:12:30.000Z", CODEX_ANSWER)
    w.done("2026-11-20T10:12:31.000Z")
    path.write_bytes(b"".join(w.lines))
    return path


class _ClaudeWriter:
    """Records shaped like a Claude Code 2.1 transcript."""

    def __init__(self, cwd: str) -> None:
        self.base = {
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": CLAUDE_SESSION_ID,
            "version": "2.1.112",
            "gitBranch": "main",
        }
        self.lines: list[bytes] = []
        self.messages = 0

    def _add(self, kind: str, ts: str, **fields: Any) -> None:
        uuid = f"00000000-0000-4000-8000-{len(self.lines) + 1:012d}"
        self.lines.append(
            _line({**self.base, "type": kind, "uuid": uuid, "timestamp": ts, **fields})
        )

    def user(self, ts: str, text: str) -> None:
        self._add("user", ts, message={"role": "user", "content": text})

    def assistant(self, ts: str, *blocks: dict[str, Any]) -> None:
        self.messages += 1
        self._add(
            "assistant",
            ts,
            message={
                "model": "claude-sonnet-4-5",
                "id": f"msg_{self.messages:03d}",
                "type": "message",
                "role": "assistant",
                "content": list(blocks),
                "stop_reason": None,
            },
        )

    def say(self, ts: str, text: str) -> None:
        self.assistant(ts, {"type": "text", "text": text})

    def tool(self, ts: str, tool_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self.assistant(ts, {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})

    def result(self, ts: str, tool_id: str, text: str, error: bool, structured: Any) -> None:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": error}
        self._add(
            "user", ts, message={"role": "user", "content": [block]}, toolUseResult=structured
        )

    def bash(self, ts: str, tool_id: str, command: str, output: str, code: int) -> None:
        self.tool(ts, tool_id, "Bash", {"command": command})
        if code:
            failure = f"Exit code {code}\n{output}"
            self.result(ts, tool_id, failure, True, f"Error: Exit code {code}")
        else:
            self.result(
                ts, tool_id, output, False, {"stdout": output, "stderr": "", "interrupted": False}
            )

    def done(self, ts: str) -> None:
        self._add("system", ts, subtype="turn_duration", durationMs=60000)


def write_claude_session(root: Path, repo: Path, commit: str) -> Path:
    encoded = "".join(c if c.isalnum() else "-" for c in str(repo))
    path = root / "claude" / "projects" / encoded / f"{CLAUDE_SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True)
    env_py = str(repo / "migrations" / "env.py")
    w = _ClaudeWriter(str(repo / "migrations"))  # started in a subdirectory of the worktree
    w.user("2026-11-24T15:00:00.000Z", CLAUDE_PROMPT)
    w.say("2026-11-24T15:00:05.000Z", "先复现一下迁移超时。")
    w.bash(
        "2026-11-24T15:01:00.000Z",
        "toolu_1",
        "alembic upgrade head",
        "sqlalchemy.exc.OperationalError: canceling statement due to lock timeout",
        1,
    )
    w.say("2026-11-24T15:02:00.000Z", "复现了：迁移在等待表锁时超过了 5 秒的超时。")
    w.done("2026-11-24T15:02:01.000Z")
    w.user("2026-11-24T15:05:00.000Z", "把超时调到 60 秒，并给锁等待单独设置 30 秒。")
    w.tool(
        "2026-11-24T15:10:00.000Z",
        "toolu_2",
        "Edit",
        {
            "file_path": env_py,
            "old_string": "TIMEOUT = 5",
            "new_string": "TIMEOUT = 60\nLOCK_TIMEOUT = '30s'",
        },
    )
    w.result(
        "2026-11-24T15:10:01.000Z",
        "toolu_2",
        f"The file {env_py} has been updated.",
        False,
        {"filePath": env_py, "oldString": "TIMEOUT = 5", "newString": "TIMEOUT = 60"},
    )
    w.bash(
        "2026-11-24T15:20:00.000Z",
        "toolu_3",
        "alembic upgrade head && pytest -q",
        "INFO  [alembic] done\n12 passed",
        0,
    )
    w.say("2026-11-24T15:21:00.000Z", "迁移通过，12 个测试全部通过。")
    w.done("2026-11-24T15:21:01.000Z")
    w.user("2026-11-24T15:39:00.000Z", "提交吧。")
    w.bash(
        "2026-11-24T15:40:00.000Z",
        "toolu_4",
        "git commit -am 'fix: raise migration lock timeout'",
        f"[main {commit[:7]}] fix: raise migration lock timeout\n 1 file changed",
        0,
    )
    w.say("2026-11-24T15:40:10.000Z", CLAUDE_ANSWER)
    w.done("2026-11-24T15:40:11.000Z")
    path.write_bytes(b"".join(w.lines))
    return path
