"""Helpers for the personal-memory entry-point tests: a state dir with config, a scripted model
server that answers the Writer's real requests, and real MCP server processes over stdio.

The model server is the real HTTP server of `tests/models/scripted_server.py`; the only addition
is that an answer may be computed from the request (the Writer's request id and evidence refs are
minted per job, so a fixed body could never be a valid decision). Which answer comes next is
chosen by the batch's `source_kind`, so it does not matter which process's Writer asks.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from models.scripted_server import RecordedRequest, Scripted, ScriptedServer

PROJECT_KEY = "a1b2c3d4e5f6a1b2c3d4e5f6"
PROJECT = f"project:{PROJECT_KEY}"
KEY_ENV = "TEAMLORE_TEST_MODEL_KEY"
ALL_PROVENANCE = ["user_explicit", "agent_observation", "document_import"]

Decisions = Callable[[dict[str, Any]], list[dict[str, Any]]]


def write_config(
    home: Path,
    *,
    project_root: Path | None = None,
    provenance: list[str] | None = None,
    scopes: list[str] | None = None,
    model_url: str | None = None,
    backoff_seconds: float = 0.2,
    lease_seconds: float | None = None,
) -> None:
    """config.toml: one registered repository (optional), [personal] and a model profile."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines: list[str] = []
    if project_root is not None:
        lines += [
            "[[repositories]]",
            f"path = {json.dumps(str(project_root))}",
            f'repository_key = "{PROJECT_KEY}"',
            'worktree_key = "w1"',
            "",
        ]
    lines += [
        "[personal]",
        f"allowed_provenance = {json.dumps(provenance or ALL_PROVENANCE)}",
        f"allowed_scopes = {json.dumps(scopes or ['global', 'project:*'])}",
    ]
    if model_url is not None:
        lines.append('model_profile = "scripted"')
    lines += [
        "",
        "[personal.batch]",
        "idle_seconds = 0.5",
        "",
        "[personal.queue]",
        f"backoff_base_seconds = {backoff_seconds}",
        *([f"lease_seconds = {lease_seconds}"] if lease_seconds is not None else []),
        "",
    ]
    if model_url is not None:
        lines += [
            "[models.scripted]",
            f"base_url = {json.dumps(model_url)}",
            'model = "scripted-model"',
            f'api_key_env = "{KEY_ENV}"',
            "max_retries = 0",
            "timeout_s = 30",
            "",
        ]
    (home / "config.toml").write_text("\n".join(lines), encoding="utf-8")


# -- the scripted model ----------------------------------------------------------------------


def decision(
    kind: str, operations: list[dict[str, Any]], evidence: list[str], applicability: str = "global"
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": kind,
        "applicability": applicability,
        "confidence": 0.8,
        "evidence": evidence,
        "reason": "scripted",
        "operations": operations,
    }
    if kind == "retain":
        out["admission"] = "remember"
        out["lifetime"] = "stable"
    return out


def put(target: str, title: str, body: str, section: str | None = None) -> dict[str, Any]:
    return {"op": "put_section", "target": target, "section": section, "title": title, "body": body}


def remove(target: str, section: str) -> dict[str, Any]:
    return {"op": "remove_section", "target": target, "section": section}


def refs(projection: dict[str, Any]) -> list[str]:
    return [o["ref"] for o in projection["observations"]]


def section_ref(projection: dict[str, Any], target: str, title: str) -> str:
    for doc in projection["documents"]:
        if doc["target"] == target:
            for section in doc["sections"]:
                if section["title"] == title:
                    return str(section["ref"])
    raise AssertionError(f"{target} has no section {title!r}")


def retain(target: str, title: str, body: str) -> Decisions:
    return lambda p: [decision("retain", [put(target, title, body)], refs(p))]


class ModelServer(ScriptedServer):
    """The scripted server, answering each Writer request with the next `Decisions` queued for
    the batch's source kind (user_turn, agent_import, document_import)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_kind: dict[str, list[Decisions]] = {}
        self.answered: list[str] = []
        self.fence = False  # wrap each answer in ```json … ```, as an endpoint ignoring the format
        self.delay = 0.0  # seconds each answer waits (a slow local model)
        self._script_lock = threading.Lock()

    def script(self, kind: str, *answers: Decisions) -> None:
        with self._script_lock:
            self.by_kind.setdefault(kind, []).extend(answers)

    def _next(self, recorded: RecordedRequest) -> Scripted:
        self.requests.append(recorded)
        projection = json.loads(recorded.json()["messages"][-1]["content"])
        kind = projection["observations"][0]["source_kind"]
        with self._script_lock:
            queue = self.by_kind.get(kind, [])
            if not queue:
                self.unexpected += 1
                return Scripted.error(500, "script_exhausted")
            answer = queue.pop(0)
            self.answered.append(kind)
        body = {
            "version": "memory_maintenance_v2",
            "request_id": projection["request_id"],
            "decisions": answer(projection),
        }
        text = json.dumps(body)
        return Scripted.chat(f"```json\n{text}\n```" if self.fence else text, delay=self.delay)


# -- real MCP server processes -----------------------------------------------------------------


def server_params(
    cwd: Path, *flags: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", *flags],
        cwd=str(cwd),
        env={**os.environ, KEY_ENV: "sk-scripted", **(env or {})},
    )


async def _with_sessions(
    params: list[StdioServerParameters],
    body: Callable[[list[ClientSession], list[Any]], Awaitable[Any]],
) -> Any:
    async with AsyncExitStack() as stack:
        sessions: list[ClientSession] = []
        inits: list[Any] = []
        for p in params:
            read, write = await stack.enter_async_context(stdio_client(p))
            session = await stack.enter_async_context(ClientSession(read, write))
            inits.append(await session.initialize())
            sessions.append(session)
        return await body(sessions, inits)


def with_sessions(
    params: list[StdioServerParameters],
    body: Callable[[list[ClientSession], list[Any]], Awaitable[Any]],
) -> Any:
    """Start one real server process per `params`, run `body(sessions, init_results)`."""
    return anyio.run(_with_sessions, params, body)


def payload(result: Any) -> dict[str, Any]:
    """A tool result's structured content (errors: `{"error": {...}}`)."""
    data: dict[str, Any] = result.structured_content
    assert result.is_error == ("error" in data)
    return data


def code(result: Any) -> str:
    return str(payload(result)["error"]["code"])


async def poll_status(
    session: ClientSession, arguments: dict[str, Any], *, until: set[str], tries: int = 300
) -> dict[str, Any]:
    """Poll memory_status (bounded: `tries` × 0.1 s) until the outcome's state is in
    `until`."""
    outcome: dict[str, Any] | None = None
    for _ in range(tries):
        data = payload(await session.call_tool("memory_status", arguments))
        outcome = data.get("import", data.get("submission"))
        if outcome is not None and outcome["state"] in until:
            return outcome
        await anyio.sleep(0.1)
    raise AssertionError(f"memory_status {arguments} never reached {until}: {outcome}")


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and mtime (ns): a fingerprint of the state dir."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }
