"""`context.sceneIndexSummary` of an ExtractionTask@v1 (docs/extraction.md "recall"): the scenes
the team memory already has, one line each (`- name: summary`), so the reader can put a
candidate into an existing scene instead of inventing one. It is classification help only —
no entry text, no candidate pool. Read from the approved projection; None when there are no
scenes. Bounded: at most `MAX_SCENES` lines and `MAX_SUMMARY_BYTES` bytes, and what was left
out is said in a last line.
"""

from __future__ import annotations

import sqlite3

from teamlore.repo.binding import RepositoryIdentity

MAX_SCENES = 40
MAX_SUMMARY_BYTES = 4096


def scene_index_summary(conn: sqlite3.Connection, identity: RepositoryIdentity) -> str | None:
    rows = conn.execute(
        "SELECT entry_id, title FROM approved_entries WHERE repository_key = ? AND "
        "worktree_key = ? AND kind = 'scene' ORDER BY entry_id",
        (identity.repository_key, identity.worktree_key),
    ).fetchall()
    if not rows:
        return None
    lines: list[str] = []
    size = 0
    for name, title in rows[:MAX_SCENES]:
        line = f"- {name}: {' '.join(str(title).split())}"
        if size + len(line.encode("utf-8")) + 1 > MAX_SUMMARY_BYTES:
            break
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    if len(lines) < len(rows):
        lines.append(f"- ({len(rows) - len(lines)} more scene(s) not listed)")
    return "\n".join(lines)
