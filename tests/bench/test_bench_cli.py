"""bench_cli's state copy for the `--versus` tree: what a running `teamlore watch` leaves in the
state dir (its socket, which cannot be copied, and its lock) stays behind."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_versus_copy_of_a_served_state_leaves_the_socket_and_lock_behind(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_cli
    finally:
        sys.path.remove(str(BENCH))
    state = tmp_path / "s"  # short: a Unix socket's path has a length limit
    state.mkdir()
    (state / "index.sqlite3").write_bytes(b"index")
    (state / "memory-state.sqlite3").write_bytes(b"derived")
    (state / "watch.lock").write_bytes(b"")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(state / "watch.sock"))
        copy = bench_cli.versus_state(state)
    finally:
        server.close()
    assert sorted(p.name for p in copy.iterdir()) == ["index.sqlite3"]
