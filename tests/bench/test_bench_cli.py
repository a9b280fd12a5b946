"""bench_cli's state copy for the `--versus` tree (in a home of its own): what a running
`teamlore watch` leaves in the state dir (its socket, which cannot be copied, and its lock)
stays behind."""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_versus_copy_of_a_served_state_leaves_the_socket_and_lock_behind() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_cli
    finally:
        sys.path.remove(str(BENCH))
    short = Path(tempfile.mkdtemp(prefix="tl", dir="/tmp"))  # a Unix socket's path is limited
    home = short / "h"
    state = bench_cli.user_state(home)
    state.mkdir(parents=True)
    (state / "index.sqlite3").write_bytes(b"index")
    (state / "memory-state.sqlite3").write_bytes(b"derived")
    (state / "watch.lock").write_bytes(b"")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(state / "watch.sock"))
        copy = bench_cli.user_state(bench_cli.versus_home(home))
    finally:
        server.close()
    try:
        assert sorted(p.name for p in copy.iterdir()) == ["index.sqlite3"]
    finally:
        shutil.rmtree(short)
