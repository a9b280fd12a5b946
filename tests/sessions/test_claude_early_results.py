"""Claude Code 2.1.112+ with parallel tool calls may write a tool result before the assistant
record that holds its call (linked by `parentUuid`; posthog-dashboard-2.1.112.jsonl lines 29-31).
The result is held in its turn and joins the call when it comes, in one sync or across two;
a result whose call never comes in its turn stays an `unknown` tool with its output. Through
`sync` and `sessions show`, on real files and a real index."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from records import claude_assistant, claude_record, write_jsonl

import support
from teamlore.sessions.index_db import CLAUDE_EARLY_RESULTS_READ_AGAIN, MIGRATIONS, index_db_path

SESSION = "5e55a0c1-0000-4000-8000-0000000000e1"
POSTHOG = "posthog-dashboard-2.1.112.jsonl"
POSTHOG_SESSION = "0c182e15-59de-4856-8a94-00f26880354c"
FOLDER = "-home-dev-project"


class Cli(support.Cli):
    def sync(self, root: Path) -> dict[str, Any]:
        return self.json("sync", "--source", f"claude={root}")

    def turns(self, session: str) -> list[dict[str, Any]]:
        turns: list[dict[str, Any]] = self.json("sessions", "show", session)["turns"]
        return turns


def at(second: int) -> str:
    return f"2026-04-26T22:05:{second:02d}.000Z"


def tool_use(call_id: str, name: str, tool_input: dict[str, Any], uuid: str, s: int) -> dict:
    """One block of the parallel calls of message `msg_par` (the client writes a record each)."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    record = claude_record("assistant", [block], session_id=SESSION, uuid=uuid, at=at(s))
    record["message"].update({"model": "claude-opus-4-7", "id": "msg_par", "type": "message"})
    record["message"]["stop_reason"] = "tool_use"
    return record


def tool_result(call_id: str, output: str, uuid: str, s: int, **block: Any) -> dict:
    content = [{"type": "tool_result", "tool_use_id": call_id, "content": output, **block}]
    return claude_record("user", content, session_id=SESSION, uuid=uuid, at=at(s))


READ_A = tool_use("toolu_A", "Read", {"file_path": "/w/indicator.md"}, "a1", 1)
RESULT_B = tool_result("toolu_B", "Exit code 2\nno such file", "u2", 3, is_error=True)
RESULT_A = tool_result("toolu_A", "1\tindicator", "u3", 4)
BASH_B = tool_use("toolu_B", "Bash", {"command": "cat /w/feedback.md"}, "a2", 2)


def transcript(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    prompt = claude_record("user", "read both files", session_id=SESSION, uuid="u1", at=at(0))
    answer = claude_assistant("done", session_id=SESSION, uuid="a9", at=at(9))
    end = {"type": "system", "subtype": "turn_duration", "sessionId": SESSION, "timestamp": at(9)}
    return [prompt, *middle, answer, end]


def session_file(root: Path, records: list[dict[str, Any]]) -> Path:
    return write_jsonl(root / FOLDER / f"{SESSION}.jsonl", records)


def tools(turn: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            t["name"],
            t["status"],
            t["exitCode"],
            (t["result"] or {}).get("head"),
            t["assistantOffset"],
        )
        for t in turn["tools"]
    ]


def tool_rows(home: Path) -> list[tuple[Any, ...]]:
    """Every stored tool use, without row ids (two indexes number their rows alike)."""
    conn = sqlite3.connect(index_db_path(home))
    try:
        rows = conn.execute("SELECT * FROM tool_uses ORDER BY id").fetchall()
        names = [d[0] for d in conn.execute("SELECT * FROM tool_uses").description]
        touches = conn.execute("SELECT tool_use_id, path, kind FROM file_touches ORDER BY id")
        turns = conn.execute("SELECT ordinal, sealed, revision, last_line FROM turns ORDER BY id")
        kept = [i for i, n in enumerate(names) if n not in ("id", "turn_id")]
        return [
            *[tuple(r[i] for i in kept) for r in rows],
            *touches.fetchall(),
            *turns.fetchall(),
        ]
    finally:
        conn.close()


EXPECTED = [
    ("Read", "ok", None, "1\tindicator", 0),
    ("Bash", "error", 2, "Exit code 2\nno such file", 0),
]


def test_a_result_written_before_its_call_joins_the_call(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "claude"
    # the result of toolu_B comes before the record of its call, as 2.1.112 writes it
    session_file(root, transcript(READ_A, RESULT_B, RESULT_A, BASH_B))
    assert cli.sync(root)["diagnostics"] == []
    [turn] = cli.turns(SESSION)
    assert tools(turn) == EXPECTED
    bash = turn["tools"][1]
    assert bash["command"] == "cat /w/feedback.md" and bash["input"] == {
        "command": "cat /w/feedback.md"
    }
    text = " ".join(cli.text("sessions", "show", SESSION, "--turn", "1").split())
    assert "unknown" not in text and "pending" not in text
    assert "#2 Bash (shell, error exit 2) cat /w/feedback.md" in text


def test_an_early_result_of_a_tool_other_than_a_shell_stores_what_a_late_one_does(
    tmp_path: Path,
) -> None:
    """An early result is read as a shell's would be (its call's name is not known yet): a
    failure's `Exit code N` is no exit code of a call that is not a shell's."""
    grep = tool_use("toolu_B", "Grep", {"pattern": "("}, "a2", 2)
    failed = tool_result("toolu_B", "Exit code 2\nrg: bad regex", "u2", 3, is_error=True)
    shown = []
    for order in ((READ_A, grep, failed, RESULT_A), (READ_A, failed, RESULT_A, grep)):
        cli, root = Cli(tmp_path / f"state{len(shown)}"), tmp_path / f"claude{len(shown)}"
        session_file(root, transcript(*order))
        cli.sync(root)
        [turn] = cli.turns(SESSION)
        shown.append((tools(turn), tool_rows(tmp_path / f"state{len(shown)}")))
    assert shown[0] == shown[1]
    assert shown[0][0][1] == ("Grep", "error", None, "Exit code 2\nrg: bad regex", 0)


def test_a_result_and_its_call_in_two_syncs_store_what_one_sync_does(tmp_path: Path) -> None:
    records = transcript(READ_A, RESULT_B, RESULT_A, BASH_B)
    whole = Cli(tmp_path / "whole")
    session_file(tmp_path / "one", records)
    whole.sync(tmp_path / "one")

    cli = Cli(tmp_path / "split")
    root = tmp_path / "two"
    session_file(root, records[:4])  # up to toolu_A's result: toolu_B's call not written yet
    cli.sync(root)
    [open_turn] = cli.turns(SESSION)
    assert not open_turn["sealed"]
    assert [(t["name"], t["status"]) for t in open_turn["tools"]] == [
        ("Read", "ok"),
        ("unknown", "error"),  # held: its call may still come
    ]
    session_file(root, records)  # the client appends the rest
    assert cli.sync(root)["files"]["changed"] == 1
    [turn] = cli.turns(SESSION)
    assert tools(turn) == EXPECTED
    assert turn == whole.turns(SESSION)[0]
    assert tool_rows(tmp_path / "split") == tool_rows(tmp_path / "whole")


def test_a_result_whose_call_never_comes_in_its_turn_stays_an_unknown_tool(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "claude"
    lost = tool_result("toolu_lost", "the output of a call never written", "u5", 5)
    late = tool_use("toolu_late", "Read", {"file_path": "/w/late.md"}, "a5", 6)
    late_result = tool_result("toolu_late", "1\tlate", "u6", 5)
    next_prompt = claude_record("user", "and now?", session_id=SESSION, uuid="u7", at=at(20))
    # the call of `late_result` is written only after its turn ended: not this turn's call
    records = [
        *transcript(READ_A, RESULT_B, lost, RESULT_A, BASH_B, late_result),
        next_prompt,
        {**late, "timestamp": at(21)},
    ]
    session_file(root, records)
    cli.sync(root)
    first, second = cli.turns(SESSION)
    assert tools(first) == [
        EXPECTED[0],
        ("unknown", "ok", None, "the output of a call never written", None),
        EXPECTED[1],
        ("unknown", "ok", None, "1\tlate", None),
    ]
    assert [(t["name"], t["status"]) for t in second["tools"]] == [("Read", "pending")]


def posthog(root: Path) -> Path:
    folder = root / "-Users-linhungfan-personal-project-weave"
    folder.mkdir(parents=True)
    return Path(
        shutil.copyfile(support.shared_fixtures("sessions", "claude", POSTHOG), folder / POSTHOG)
    )


def test_the_real_2_1_112_transcript_shows_each_parallel_call_once(tmp_path: Path) -> None:
    """Lines 28-31: the result of toolu_01Fy… (line 29) before its Read (line 31); the fixture
    holds five more such pairs."""
    cli = Cli(tmp_path / "state")
    posthog(tmp_path / "claude")
    cli.sync(tmp_path / "claude")
    turns = cli.turns(POSTHOG_SESSION)
    assert [t["name"] for turn in turns for t in turn["tools"] if t["name"] == "unknown"] == []
    reads = [t for t in turns[1]["tools"] if t["name"] == "Read"]
    assert [(t["input"]["file_path"].rsplit("/", 1)[1], t["status"]) for t in reads] == [
        ("indicator.md", "ok"),
        ("feedback.md", "ok"),
    ]
    assert reads[1]["result"]["head"].startswith("1\t這個框架我覺得挺好")
    text = " ".join(cli.text("sessions", "show", POSTHOG_SESSION, "--turn", "2").split())
    assert "unknown" not in text and "pending" not in text


def test_the_real_transcript_cut_between_a_result_and_its_call_pairs_them(
    tmp_path: Path,
) -> None:
    """The file synced while the client had written line 29 (toolu_01Fy…'s result) and not
    yet line 31 (its call): the next sync stores what one sync of the whole file does."""
    whole = Cli(tmp_path / "whole")
    posthog(tmp_path / "one")
    whole.sync(tmp_path / "one")

    cli = Cli(tmp_path / "split")
    path = posthog(tmp_path / "two")
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    assert b'"tool_use_id":"toolu_01FyBsWRwrDppTFLH1tn3fm3"' in lines[28]
    path.write_bytes(b"".join(lines[:29]))
    cli.sync(tmp_path / "two")
    path.write_bytes(data)
    cli.sync(tmp_path / "two")
    assert cli.turns(POSTHOG_SESSION) == whole.turns(POSTHOG_SESSION)
    assert tool_rows(tmp_path / "split") == tool_rows(tmp_path / "whole")


def test_an_index_made_before_reads_its_claude_files_again_once(tmp_path: Path) -> None:
    home = tmp_path / "state"
    cli = Cli(home)
    posthog(tmp_path / "claude")
    codex = tmp_path / "codex" / "2026" / "01" / "01"
    codex.mkdir(parents=True)
    codex_id = "019a0000-0000-7000-8000-0000000000e2"
    (codex / f"rollout-{codex_id}.jsonl").write_text(
        json.dumps({"timestamp": at(0), "type": "session_meta", "payload": {"id": codex_id}}) + "\n"
    )
    cli.sync(tmp_path / "claude")
    cli.json("sync", "--source", f"codex={tmp_path / 'codex'}")
    # the index as the version before left it: the call pending, its result an `unknown` tool
    conn = sqlite3.connect(index_db_path(home), isolation_level=None)
    conn.execute(
        "UPDATE tool_uses SET status = 'pending', result_head = NULL, result_sha256 = NULL,"
        " result_bytes = NULL, ended_at = NULL WHERE call_id = 'toolu_01FyBsWRwrDppTFLH1tn3fm3'"
    )
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(CLAUDE_EARLY_RESULTS_READ_AGAIN)}")
    conn.close()
    assert cli.json("sync", "--source", f"codex={tmp_path / 'codex'}")["files"]["changed"] == 0
    assert cli.sync(tmp_path / "claude")["files"]["changed"] == 1
    feedback = [t for t in cli.turns(POSTHOG_SESSION)[1]["tools"] if t["seq"] == 3]
    assert [(t["name"], t["status"]) for t in feedback] == [("Read", "ok")]
    assert cli.sync(tmp_path / "claude")["files"]["changed"] == 0  # once
    conn = sqlite3.connect(index_db_path(home))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()
