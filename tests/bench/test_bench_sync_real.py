"""bench_sync_real's rounds against claude-mem: each round's syncs are compared with the
claude-mem sync that ran beside them, and the rounds that met both of issue 29's targets are
counted (medians of each side hide how often a round meets them). Codex over Claude Code is
printed per MiB read and per MiB of the text each sync stored, counted in bytes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from teamlore.sessions.index_db import open_index

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_sync_real


def _sync(mib_s: float, cpu_mib_s: float) -> dict[str, Any]:
    return {"mib_s": mib_s, "cpu_mib_s": cpu_mib_s}


def test_each_round_is_held_against_its_own_claude_mem_sync_and_the_rounds_meeting_both_are_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = {
        "kind": "claude",
        # round 1 meets both targets; round 2 only the wall one; round 3 neither
        "ours": [_sync(21.0, 36.0), _sync(20.0, 30.0), _sync(10.0, 40.0)],
        "alone": [],
        "versus": [_sync(18.0, 30.0), _sync(24.0, 36.0), _sync(30.0, 50.0)],
        "peers": [_sync(30.0, 80.0), _sync(30.0, 80.0), _sync(30.0, 100.0)],
    }
    bench_sync_real._round_ratios_line(run, 2)
    bench_sync_real._rounds_meeting_line(run)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "  [claude]    vs claude-mem this round: here 0.67x wall / 0.38x per CPU s (not met);"
        " --versus 0.80x wall / 0.45x per CPU s (met)"
    )
    assert "here 1 of 3 (wall 0.70, 0.67, 0.33; per CPU s 0.45, 0.38, 0.40)" in out[1]
    assert "--versus 2 of 3 (wall 0.60, 0.80, 1.00; per CPU s 0.38, 0.45, 0.50)" in out[1]


def test_codex_parity_is_printed_per_mib_read_and_per_mib_of_stored_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    claude = {
        "corpus": "claude",
        "teamlore_mib_s": 60.0,
        "teamlore_cpu_mib_s": 62.0,
        "turns_per_mib": 7.4,
        "stored_per_mib": 0.20,
        "rounds": [_sync(60.0, 62.0)],
        "rounds_alone": [],
    }
    # twice the stored text per MiB read at 0.8x the MiB/s: 1.6x per MiB stored
    codex = {
        **claude,
        "corpus": "codex",
        "teamlore_mib_s": 48.0,
        "teamlore_cpu_mib_s": 49.6,
        "turns_per_mib": 17.0,
        "stored_per_mib": 0.40,
        "rounds": [_sync(48.0, 49.6)],
    }
    bench_sync_real._codex_parity([claude, codex])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("  codex/claude: 0.80x wall, 0.80x per CPU second (target >= 0.9)")
    assert out[1] == (
        "  stored text per MiB read: codex 0.40 MiB, claude 0.20 MiB; per MiB stored,"
        " codex/claude: 1.60x wall, 1.60x per CPU second"
    )


def test_stored_text_counts_the_bytes_of_turns_and_tool_uses(tmp_path: Path) -> None:
    conn = open_index(tmp_path)
    conn.execute(
        "INSERT INTO sessions(id, provider, session_key, provider_session_id)"
        " VALUES (1, 'codex', 'k', 'p')"
    )
    conn.execute(
        "INSERT INTO turns(id, session_id, ordinal, user_text, assistant_text)"
        " VALUES (1, 1, 1, 'héllo', 'ok')"
    )
    conn.execute(
        "INSERT INTO tool_uses(turn_id, seq, call_id, name, family, input, command, result_head)"
        " VALUES (1, 0, 'c', 'shell', 'shell', '{}', 'ls', 'a.txt')"
    )
    conn.commit()
    conn.close()
    # héllo is 6 bytes in UTF-8; ok 2; {} 2, ls 2, a.txt 5 (no tail)
    assert bench_sync_real.stored_text_bytes(tmp_path / "index.sqlite3") == 17
