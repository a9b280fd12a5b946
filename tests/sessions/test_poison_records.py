"""Nothing inside one session file can fail the sync of another file.

A value a transcript carries that the index cannot hold (an "exit code" far beyond any process
exit status, a record the assembler chokes on) becomes a diagnostic for its line, or at worst a
`failed` file; every other file is indexed, later syncs succeed, and `status` tells the truth.
These run the real `teamlore sync` over real Codex and Claude Code files.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from records import (
    claude_assistant,
    claude_record,
    codex_event,
    codex_function_call,
    codex_function_output,
    codex_meta,
    codex_user_message,
    write_jsonl,
)

from support import UNPRIVILEGED, teamlore_cli, unprivileged_prefix
from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source
from teamlore.sessions.model import (
    EXIT_CODE_MAX,
    EXIT_CODE_MIN,
    ToolResult,
    UserTurn,
    checked_event,
)

HUGE = st.one_of(
    st.integers(min_value=EXIT_CODE_MAX + 1, max_value=10**40),
    st.integers(min_value=-(10**40), max_value=EXIT_CODE_MIN - 1),
)


def _codex_file(path: Path, number: int, records: list[dict[str, Any]]) -> None:
    meta = codex_meta(f"019a0000-0000-7000-8000-{number:012d}", cli_version="0.60.1")
    user = codex_user_message(f"question {number}", "2026-01-01T00:00:01Z")
    write_jsonl(path, [meta, user, *records])


def _codex_poison(code: int) -> list[dict[str, Any]]:
    records = [
        codex_function_call("c1", "shell", {"command": ["ls"]}, "2026-01-01T00:00:02Z"),
        codex_function_output("c1", f"Exit code: {code}\nOutput:\nhi", "2026-01-01T00:00:03Z"),
    ]
    if 0 <= code < 2**64:  # what orjson can read as a JSON number: the u64 field of 0.6x
        end = {"call_id": "c2", "exit_code": code, "stdout": "x"}
        records.append(codex_event("exec_command_end", "2026-01-01T00:00:04Z", **end))
    return records


def _claude_poison(path: Path, code: int) -> None:
    base = {"sessionId": "11111111-2222-4333-8444-000000000009", "cwd": "/w", "version": "2.1.112"}
    records = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "run it"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": "t1",
                        "type": "tool_result",
                        "content": f"Exit code {code}\nboom",
                        "is_error": True,
                    }
                ],
            },
        },
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _sync(home: Path, *sources: str) -> dict[str, Any]:
    args = [a for s in sources for a in ("--source", s)]
    done = teamlore_cli("sync", *args, "--format", "json", env={"TEAMLORE_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(code=HUGE)
def test_an_exit_code_beyond_any_process_status_is_a_line_diagnostic(
    tmp_path_factory: Any, code: int
) -> None:
    root = tmp_path_factory.mktemp("poison")
    home, codex, claude = root / "home", root / "codex", root / "claude"
    _codex_file(codex / "rollout-a.jsonl", 1, [])
    _codex_file(codex / "rollout-b.jsonl", 2, _codex_poison(code))
    _codex_file(codex / "rollout-c.jsonl", 3, [])
    _claude_poison(claude / "proj" / "11111111-2222-4333-8444-000000000009.jsonl", code)

    first = _sync(home, f"codex={codex}", f"claude={claude}")
    assert first["files"] == {"seen": 4, "changed": 4, "failed": 0, "unavailable": 0}
    assert first["totals"]["sessions"] == 4
    codes = {d["code"] for d in first["diagnostics"]}
    assert codes == {"value-out-of-range"}
    assert all(str(code)[:20] in d["message"] for d in first["diagnostics"])
    again = _sync(home, f"codex={codex}", f"claude={claude}")
    assert again["files"]["failed"] == 0 and again["totals"]["sessions"] == 4
    status = teamlore_cli("status", "--format", "json", env={"TEAMLORE_HOME": str(home)})
    assert json.loads(status.stdout)["files"] == {"ok": 4, "unavailable": 0, "failed": 0}


@given(code=st.integers(min_value=EXIT_CODE_MIN, max_value=EXIT_CODE_MAX))
def test_real_exit_statuses_pass_unchanged(code: int) -> None:
    event, problem = checked_event(ToolResult("c", "out", code), 3)
    assert problem is None and isinstance(event, ToolResult) and event.exit_code == code


class ChokingAdapter:
    """Emits, for a `{"t": "poison"}` record, a turn whose text is not text: the assembler fails
    on it, which stands for any bug a hostile record could trigger past the adapter."""

    provider = "mini"
    unread_lines = None

    def default_roots(self) -> list[Path]:
        return []

    def discover(self, root: Path, *, newest_first: bool = False) -> Any:
        return iter(sorted(str(p) for p in root.glob("*.jsonl")))

    def new_state(self, path: Path) -> dict[str, Any]:
        return {}

    def parse(self, record: Any, line: int, state: dict[str, Any]) -> list[Any]:
        if record.get("t") == "poison":
            return [UserTurn(text={"not": "text"})]  # type: ignore[arg-type]
        return [UserTurn(record["text"])]


def test_a_record_that_breaks_the_assembler_fails_only_its_own_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name, poison in (("a", False), ("b", True), ("c", False)):
        records = [{"t": "user", "text": f"hello from {name}"}]
        if poison:
            records.append({"t": "poison"})
        (src / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    home = tmp_path / "home"
    home.mkdir()
    indexer = Indexer(open_index(home), {"mini": ChokingAdapter()}, home=home)

    stats = indexer.sync([Source("mini", src)])

    assert stats.files_failed == 1
    assert [d.code for d in stats.diagnostics] == ["file-failed"]
    texts = [r[0] for r in indexer.conn.execute("SELECT user_text FROM turns ORDER BY id")]
    assert texts == ["hello from a", "hello from c"]
    status = dict(indexer.conn.execute("SELECT path, status FROM source_files").fetchall())
    assert status[str(src / "b.jsonl")] == "failed"
    # the next sync retries the failed file (and only it), and still indexes nothing wrong
    assert indexer.sync([Source("mini", src)]).files_changed == 1


def test_a_bom_on_the_first_line_keeps_the_session_metadata(tmp_path: Path) -> None:
    home, codex = tmp_path / "home", tmp_path / "codex"
    _codex_file(codex / "rollout-bom.jsonl", 7, [])
    path = codex / "rollout-bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    out = _sync(home, f"codex={codex}")
    assert out["diagnosticCount"] == 0 and out["totals"]["sessions"] == 1
    listed = teamlore_cli("sessions", "list", "--format", "json", env={"TEAMLORE_HOME": str(home)})
    (session,) = json.loads(listed.stdout)["sessions"]
    assert session["cwd"] == "/w"


def test_a_file_of_junk_lines_costs_a_bounded_number_of_index_rows(tmp_path: Path) -> None:
    from teamlore.sessions.indexer import MAX_DIAGNOSTICS_STORED_PER_FILE

    home, codex = tmp_path / "home", tmp_path / "codex"
    codex.mkdir()
    lines = 20_000
    (codex / "rollout-junk.jsonl").write_bytes(b"{}\n" * lines)
    out = _sync(home, f"codex={codex}")
    assert out["diagnosticCount"] == lines  # every line is counted and reported as a number
    (codex / "rollout-junk.jsonl").write_bytes(b"{}\n" * (2 * lines))  # grows in place
    assert _sync(home, f"codex={codex}")["diagnosticCount"] == lines
    conn = open_index(home)
    stored = conn.execute("SELECT count(*) FROM diagnostics").fetchone()[0]
    counted = conn.execute("SELECT diagnostics FROM source_files").fetchone()[0]
    assert stored == MAX_DIAGNOSTICS_STORED_PER_FILE + 1  # the kept rows + one "not stored" row
    assert counted == 2 * lines


class Unprivileged:
    """`teamlore` run as a user who cannot read what it may not (root reads every folder):
    via `setpriv` as nobody when the tests run as root, directly otherwise, in a folder of
    its own (`root`) with its state dir, at 80 columns."""

    def __init__(self) -> None:
        self.prefix = unprivileged_prefix()
        self.root = Path(tempfile.mkdtemp(prefix="teamlore-unreadable-"))
        os.chmod(self.root, 0o777)
        self.env = {**os.environ, "TEAMLORE_HOME": str(self.root / "home"), "COLUMNS": "80"}
        self.locked: list[Path] = []

    def hand_over(self) -> None:
        """Give everything made under `root` so far to the user the commands run as."""
        if self.prefix:
            for path in [self.root, *self.root.rglob("*")]:
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)

    def lock(self, folder: Path) -> None:
        os.chmod(folder, 0)
        self.locked.append(folder)

    def unlock(self, folder: Path) -> None:
        os.chmod(folder, stat.S_IRWXU)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
        return subprocess.run(
            [*self.prefix, str(exe), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def clean_up(self) -> None:
        for folder in self.locked:
            self.unlock(folder)
        shutil.rmtree(self.root)


@pytest.fixture()
def unprivileged() -> Iterator[Unprivileged]:
    user = Unprivileged()
    yield user
    user.clean_up()


def test_an_unreadable_sessions_folder_is_reported_not_skipped_silently(
    unprivileged: Unprivileged,
) -> None:
    codex = unprivileged.root / "codex"
    _codex_file(codex / "2026" / "01" / "rollout-a.jsonl", 1, [])
    _codex_file(codex / "2026" / "02" / "rollout-b.jsonl", 2, [])
    unprivileged.hand_over()
    unprivileged.lock(codex / "2026" / "02")
    out = json.loads(unprivileged.ok("sync", "--source", f"codex={codex}", "--format", "json"))
    assert out["totals"]["sessions"] == 1 and out["files"]["failed"] == 1
    (problem,) = out["diagnostics"]
    assert problem["code"] == "source-unreadable" and problem["file"].endswith("2026/02")
    # `status` later (a sync from a hook or `watch`, whose output no one read) says so too
    shown = unprivileged.ok("status")
    assert "Unreadable  1 at the last sync:" in shown
    assert f"  source-unreadable  {codex / '2026' / '02'}  Permission denied" in shown
    unprivileged.unlock(codex / "2026" / "02")
    unprivileged.ok("sync", "--source", f"codex={codex}")
    assert "Unreadable" not in unprivileged.ok("status")


def test_a_client_folder_the_user_may_not_enter_is_named_and_the_others_are_synced(
    unprivileged: Unprivileged,
) -> None:
    """`sudo codex` can leave `~/.codex` root's: the Claude Code sessions are indexed all the
    same, and `sync`, `status` and `doctor` name the folder (they refused whole, with
    PERMISSION_DENIED, before)."""
    codex_home, claude = unprivileged.root / "codex-home", unprivileged.root / "claude"
    _codex_file(codex_home / "sessions" / "2026" / "01" / "rollout-a.jsonl", 1, [])
    write_jsonl(
        claude / "projects" / "-w" / "s.jsonl",
        [
            claude_record("user", "hello", session_id="c1", uuid="u1"),
            claude_assistant("hi", session_id="c1", uuid="a1"),
        ],
    )
    unprivileged.hand_over()
    unprivileged.lock(codex_home)
    unprivileged.env.update(
        CODEX_HOME=str(codex_home),
        CLAUDE_CONFIG_DIR=str(claude),
        PI_CODING_AGENT_DIR=str(unprivileged.root / "pi"),
    )
    synced = unprivileged.ok("sync")
    assert "Index holds 1 session, 1 turn." in " ".join(synced.split())  # wrapped at words
    assert f"source-unreadable  {codex_home / 'sessions'}  Permission denied" in synced
    assert "1 diagnostic:\n" in synced and "1 file or folder could not be read (above)." in synced
    shown = unprivileged.ok("status")
    assert f"Source      ✗ codex   {codex_home / 'sessions'}\n" in shown
    assert "              cannot be read: Permission denied\n" in shown
    status = json.loads(unprivileged.ok("status", "--format", "json"))
    assert status["sources"][0] == {
        "provider": "codex",
        "path": str(codex_home / "sessions"),
        "exists": False,
        "unreadable": "Permission denied",
    }
    doctor = unprivileged.run("doctor", "--format", "json")
    (index,) = [c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "index"]
    assert index["status"] == "warn" and "cannot be read (Permission denied)" in index["message"]
