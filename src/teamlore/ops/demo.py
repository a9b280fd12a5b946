"""`teamlore demo`: the whole spine on bundled sample data, in a throwaway folder.

It builds a small git repository (acme-billing) with real commits, writes one Codex rollout and
one Claude Code transcript about work on it (shaped like the real files, one of them partly in
Chinese), indexes them into a private state dir inside the demo folder, registers the
repository, links sessions to commits, initializes the team memory tree and runs a few searches.
Nothing outside the demo folder is read or written.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from teamlore.core import errors
from teamlore.ops.registry import OpContext, operation, run_operation

CODEX_SESSION_ID = "019a8d2e-5b1c-7e40-9a6f-3c2d1e0f9a01"
CLAUDE_SESSION_ID = "7c4f2a9e-1d3b-4e8a-b5c6-0f1e2d3c4b5a"
CODEX_ANSWER = (
    "Fixed: export_invoices now sorts rows by id, so the export is deterministic and "
    "test_export no longer flakes. Committed as fix: stable ordering in invoice export."
)
CLAUDE_PROMPT = "发布流程失败：数据库迁移在 staging 上超时了。请查一下 alembic 的锁等待问题并修复。"


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


def write_codex_session(root: Path, repo: Path, commit: str) -> Path:
    path = (
        root
        / "codex"
        / "sessions"
        / "2026"
        / "11"
        / "20"
        / (f"rollout-2026-11-20T10-00-00-{CODEX_SESSION_ID}.jsonl")
    )
    path.parent.mkdir(parents=True)
    cwd = str(repo)

    def item(ts: str, payload: dict[str, Any]) -> bytes:
        return _line({"timestamp": ts, "type": "response_item", "payload": payload})

    def event(ts: str, payload: dict[str, Any]) -> bytes:
        return _line({"timestamp": ts, "type": "event_msg", "payload": payload})

    def shell(ts: str, call: str, command: str, output: str, code: int) -> bytes:
        args = orjson.dumps({"command": command, "workdir": cwd}).decode()
        return item(
            ts,
            {"type": "function_call", "name": "shell_command", "arguments": args, "call_id": call},
        ) + item(
            ts,
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"Exit code: {code}\nWall time: 1.2 seconds\nOutput:\n{output}",
            },
        )

    prompt = (
        "The release job failed again: test_export is flaky because invoice export "
        "order is not stable. Find the cause and fix it."
    )
    patch = (
        "*** Begin Patch\n*** Update File: billing/export.py\n@@\n"
        "-    return [r for r in rows]\n+    return sorted(rows, key=lambda r: r['id'])\n"
        "*** End Patch\n"
    )
    data = b"".join(
        [
            _line(
                {
                    "timestamp": "2026-11-20T10:00:00.000Z",
                    "type": "session_meta",
                    "payload": {
                        "id": CODEX_SESSION_ID,
                        "timestamp": "2026-11-20T10:00:00.000Z",
                        "cwd": cwd,
                        "originator": "codex_cli_rs",
                        "cli_version": "0.60.1",
                        "source": "cli",
                        "model_provider": "openai",
                        "git": {"branch": "main"},
                    },
                }
            ),
            _line(
                {
                    "timestamp": "2026-11-20T10:00:01.000Z",
                    "type": "turn_context",
                    "payload": {"cwd": cwd, "model": "gpt-5.1-codex"},
                }
            ),
            event(
                "2026-11-20T10:00:01.000Z",
                {"type": "user_message", "message": prompt, "images": []},
            ),
            item(
                "2026-11-20T10:00:01.000Z",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                },
            ),
            shell(
                "2026-11-20T10:01:00.000Z",
                "call_1",
                "pytest tests/test_export.py -q",
                "F\nAssertionError: invoice order differs between runs\n1 failed in 0.4s",
                1,
            ),
            item(
                "2026-11-20T10:05:00.000Z",
                {
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": "call_2",
                    "name": "apply_patch",
                    "input": patch,
                },
            ),
            item(
                "2026-11-20T10:05:01.000Z",
                {
                    "type": "custom_tool_call_output",
                    "call_id": "call_2",
                    "output": orjson.dumps(
                        {
                            "output": "Success. Updated the following files:\n"
                            "M billing/export.py\n",
                            "metadata": {"exit_code": 0},
                        }
                    ).decode(),
                },
            ),
            shell("2026-11-20T10:08:00.000Z", "call_3", "pytest -q", "12 passed in 1.1s", 0),
            shell(
                "2026-11-20T10:12:00.000Z",
                "call_4",
                "git commit -am 'fix: stable ordering in invoice export'",
                f"[main {commit[:7]}] fix: stable ordering in invoice export\n"
                " 2 files changed, 3 insertions(+), 2 deletions(-)",
                0,
            ),
            event(
                "2026-11-20T10:12:30.000Z",
                {
                    "type": "agent_message",
                    "message": CODEX_ANSWER,
                },
            ),
            item(
                "2026-11-20T10:12:30.000Z",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": CODEX_ANSWER,
                        }
                    ],
                },
            ),
            event(
                "2026-11-20T10:12:31.000Z",
                {"type": "task_complete", "last_agent_message": "Fixed."},
            ),
        ]
    )
    path.write_bytes(data)
    return path


def write_claude_session(root: Path, repo: Path, commit: str) -> Path:
    encoded = "".join(c if c.isalnum() else "-" for c in str(repo))
    path = root / "claude" / "projects" / encoded / f"{CLAUDE_SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True)
    cwd = str(repo / "migrations")  # started in a subdirectory of the worktree
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": CLAUDE_SESSION_ID,
        "version": "2.1.112",
        "gitBranch": "main",
    }
    counter = iter(range(1, 1000))

    def rec(kind: str, ts: str, message: dict[str, Any], **extra: Any) -> bytes:
        return _line(
            {
                **base,
                "type": kind,
                "uuid": f"u-{next(counter):04d}",
                "timestamp": ts,
                "message": message,
                **extra,
            }
        )

    def assistant(ts: str, msg_id: str, content: list[dict[str, Any]]) -> bytes:
        return rec(
            "assistant",
            ts,
            {
                "model": "claude-sonnet-4-5",
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": content,
                "stop_reason": None,
            },
        )

    def result(ts: str, tool_id: str, text: str, error: bool, structured: Any) -> bytes:
        return rec(
            "user",
            ts,
            {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": tool_id,
                        "type": "tool_result",
                        "content": text,
                        "is_error": error,
                    }
                ],
            },
            toolUseResult=structured,
        )

    data = b"".join(
        [
            rec(
                "user",
                "2026-11-24T15:00:00.000Z",
                {
                    "role": "user",
                    "content": CLAUDE_PROMPT,
                },
            ),
            assistant(
                "2026-11-24T15:00:05.000Z",
                "msg_1",
                [
                    {"type": "text", "text": "先复现一下迁移超时。"},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {
                            "command": "alembic upgrade head",
                            "description": "run migrations",
                        },
                    },
                ],
            ),
            result(
                "2026-11-24T15:01:00.000Z",
                "toolu_1",
                "Exit code 1\nsqlalchemy.exc.OperationalError: canceling statement due to lock "
                "timeout",
                True,
                "Error: Exit code 1",
            ),
            assistant(
                "2026-11-24T15:10:00.000Z",
                "msg_2",
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "Edit",
                        "input": {
                            "file_path": str(repo / "migrations" / "env.py"),
                            "old_string": "TIMEOUT = 5",
                            "new_string": "TIMEOUT = 60\nLOCK_TIMEOUT = '30s'",
                        },
                    }
                ],
            ),
            result(
                "2026-11-24T15:10:01.000Z",
                "toolu_2",
                f"The file {repo / 'migrations' / 'env.py'} has been updated.",
                False,
                {
                    "filePath": str(repo / "migrations" / "env.py"),
                    "oldString": "TIMEOUT = 5",
                    "newString": "TIMEOUT = 60",
                    "structuredPatch": [],
                },
            ),
            assistant(
                "2026-11-24T15:20:00.000Z",
                "msg_3",
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_3",
                        "name": "Bash",
                        "input": {"command": "alembic upgrade head && pytest -q"},
                    }
                ],
            ),
            result(
                "2026-11-24T15:21:00.000Z",
                "toolu_3",
                "INFO  [alembic] done\n12 passed",
                False,
                {"stdout": "INFO  [alembic] done\n12 passed", "stderr": "", "interrupted": False},
            ),
            assistant(
                "2026-11-24T15:40:00.000Z",
                "msg_4",
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_4",
                        "name": "Bash",
                        "input": {"command": "git commit -am 'fix: raise migration lock timeout'"},
                    }
                ],
            ),
            result(
                "2026-11-24T15:40:01.000Z",
                "toolu_4",
                f"[main {commit[:7]}] fix: raise migration lock timeout\n 1 file changed",
                False,
                {
                    "stdout": f"[main {commit[:7]}] fix: raise migration lock timeout",
                    "stderr": "",
                    "interrupted": False,
                },
            ),
            assistant(
                "2026-11-24T15:40:10.000Z",
                "msg_5",
                [
                    {
                        "type": "text",
                        "text": "已修复：迁移的锁等待超时从 5 秒提高到 60 秒，并设置 "
                        "LOCK_TIMEOUT='30s'，staging 上 alembic upgrade head 通过。",
                    }
                ],
            ),
            _line(
                {
                    **base,
                    "type": "system",
                    "subtype": "turn_duration",
                    "durationMs": 2410000,
                    "timestamp": "2026-11-24T15:40:11.000Z",
                    "uuid": "u-0999",
                }
            ),
        ]
    )
    path.write_bytes(data)
    return path


class DemoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    directory: str = Field(description="Empty or missing folder to build the demo in.")


@operation("demo", input_model=DemoRequest, side_effect="state-write")
def demo(ctx: OpContext, request: DemoRequest) -> dict[str, Any]:
    """Build sample sessions and a repository, index them and search them."""
    root = Path(request.directory).expanduser().absolute()
    if root.exists() and any(root.iterdir()):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"{root} is not empty; give the demo an empty folder"
        )
    root.mkdir(parents=True, exist_ok=True)
    repo, commits = build_repository(root)
    write_codex_session(root, repo, commits["export"])
    write_claude_session(root, repo, commits["migration"])
    inner = OpContext(cwd=repo, home=root / "state", progress=ctx.progress)
    synced = run_operation(
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
    run_operation("memory.init", inner, {})
    searches = {
        q: run_operation("sessions.search", inner, {"query": q, "limit": 3})["hits"]
        for q in ("flaky invoice export", "数据库迁移", "lock_timeout")
    }
    sessions = run_operation("sessions.list", inner, {})["sessions"]
    return {
        "directory": str(root),
        "stateDir": str(root / "state"),
        "repository": str(repo),
        "sync": synced,
        "sessions": sessions,
        "searches": searches,
        "memory": run_operation("memory.status", inner, {}),
    }
