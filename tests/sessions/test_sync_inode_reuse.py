"""A session file whose inode another file takes is not taken for the old file's continuation:
sync knows a file by its device and inode and by digests of its first bytes and of the last it
read (docs/sessions.md, "Incremental by design"), so new bytes are never read from the old file's
offset as if they were appended to it. Real Claude Code transcripts (the shared fixtures), the
real `teamlore sync`; the second file is written over the first in place, so it has the first's
inode on every file system."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from support import Cli, shared_fixtures
from teamlore.sessions.index_db import index_db_path

OLD = "moredip-images-in-user-messages.jsonl"  # 87 KB, session 47bf5f5c
OLD_ID = "47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c"
NEW = "entire-cli-2.0.64.jsonl"  # 360 KB: it ends past where the index read the old one
NEW_ID = "cde341db-b80a-44f5-b0f2-94db2ef7a164"


def fixture(name: str) -> Path:
    return shared_fixtures("sessions", "claude", name)


def write_over(path: Path, source: Path) -> None:
    """`source`'s bytes in `path`'s inode (what a deleted file's inode taken by a new one is)."""
    inode = path.stat().st_ino
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(source.read_bytes())
    assert path.stat().st_ino == inode


def turns(cli: Cli, session_id: str) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = cli.json("sessions", "show", session_id)["turns"]
    return [{k: v for k, v in t.items() if k != "deliveryEdges"} for t in shown]


def indexed_alone(tmp_path: Path, name: str, session_id: str) -> list[dict[str, Any]]:
    cli = Cli(tmp_path / "alone")
    folder = tmp_path / "alone-sessions" / "p"
    folder.mkdir(parents=True)
    shutil.copyfile(fixture(name), folder / name)
    cli.json("sync", "--source", f"claude={folder.parent}")
    return turns(cli, session_id)


def test_a_file_in_the_inode_of_a_moved_away_one_is_a_new_session(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "sessions"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    old = root / "a" / OLD
    shutil.copyfile(fixture(OLD), old)
    cli.json("sync", "--source", f"claude={root}")
    read = turns(cli, OLD_ID)
    # same device and inode at a new path, the old path gone: what a move looks like
    new = old.rename(root / "b" / NEW)
    write_over(new, fixture(NEW))

    synced = cli.json("sync", "--source", f"claude={root}")

    assert (synced["files"]["changed"], synced["files"]["unavailable"]) == (1, 1)
    assert turns(cli, NEW_ID) == indexed_alone(tmp_path, NEW, NEW_ID)
    assert turns(cli, OLD_ID) == read  # the gone file's history stays


def test_a_file_in_the_inode_and_path_of_another_is_read_from_its_start(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "sessions"
    (root / "p").mkdir(parents=True)
    path = root / "p" / "session.jsonl"
    shutil.copyfile(fixture(OLD), path)
    cli.json("sync", "--source", f"claude={root}")
    write_over(path, fixture(NEW))

    synced = cli.json("sync", "--source", f"claude={root}")

    assert synced["files"]["changed"] == 1
    assert turns(cli, NEW_ID) == indexed_alone(tmp_path, NEW, NEW_ID)


# the gist the last answer of moredip-0ccf1a04.jsonl links to, in the last 4 KiB of the file
GIST = b"ddfbe6ef17883b0bd33680fdf5d714af"


def test_a_file_rewritten_in_place_where_the_index_stopped_reading_is_read_again(
    tmp_path: Path,
) -> None:
    """A link redacted from the last answer (same size, same inode, the first 4 KiB untouched)
    is no longer found: the file is read again, not taken as grown by nothing. (An edit between
    the first and the last 4 KiB the index read goes unseen until `sync --rebuild`.)"""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "sessions"
    (root / "p").mkdir(parents=True)
    path = root / "p" / "session.jsonl"
    shutil.copyfile(fixture("moredip-0ccf1a04.jsonl"), path)
    cli.json("sync", "--source", f"claude={root}")
    assert cli.json("sessions", "search", GIST.decode(), "--no-sync")["hits"]
    original = path.read_bytes()
    assert original.find(GIST) > len(original) - 4096
    with path.open("r+b") as handle:
        handle.write(original.replace(GIST, b"x" * len(GIST)))

    synced = cli.json("sync", "--source", f"claude={root}")

    assert synced["files"]["changed"] == 1 and synced["bytesRead"] == len(original)
    assert cli.json("sessions", "search", GIST.decode(), "--no-sync")["hits"] == []


def test_a_file_an_older_index_knows_by_its_first_bytes_alone_is_still_continued(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "sessions"
    (root / "p").mkdir(parents=True)
    path = root / "p" / OLD
    shutil.copyfile(fixture(OLD), path)
    cli.json("sync", "--source", f"claude={root}")
    conn = sqlite3.connect(index_db_path(tmp_path / "state"), isolation_level=None)
    # what the version before kept: the digest of the first 4 KiB, nothing after it
    conn.execute("UPDATE source_files SET head_sha256 = substr(head_sha256, 1, 64)")
    conn.close()
    appended = fixture(NEW).read_bytes().splitlines(keepends=True)[0]
    with path.open("ab") as handle:
        handle.write(appended)

    synced = cli.json("sync", "--source", f"claude={root}")

    assert (synced["files"]["changed"], synced["bytesRead"]) == (1, len(appended))
