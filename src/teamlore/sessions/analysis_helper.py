"""Turn search rows, analyzed beside the sync (docs/sessions.md, "The analysis helper").

Analyzing turn texts for the FTS index is about a sixth of a cold sync's CPU. During a bulk
sync, an *analysis helper* (this module run as a child process by the same interpreter) analyzes
the texts of each file while the sync parses the next one, so that work runs on the second core.
The helper runs the same `analyze` on the same texts: the rows are the ones the in-process path
writes.

Where a file's FTS rows go:

- in-process (small syncs, no helper, or after a fallback): analyzed as the file ends and
  written inside the file's savepoint, as they always were;
- with the helper: the texts are sent once the file's savepoint is released, and the bodies
  written when they come back (after a later file, outside any file's savepoint) and always
  before the batch commits (`settle`). A commit never holds a turn without its FTS row, a file
  that fails sends nothing, and a crash loses only the uncommitted batch, as before.

A helper that dies, answers something else than the bodies asked for, or takes longer than its
timeout is killed; the texts it held are analyzed in-process and the rest of the sync runs
in-process. It never stalls or fails a sync. `TEAMLORE_ANALYSIS_HELPER=off` turns it off, `on`
starts it with the first file (tests); by default a sync starts it once it has read
`HELPER_AFTER_BYTES`, so small syncs never pay for a process start.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from teamlore.core.analyzer import ANALYZER_VERSION, analyze
from teamlore.core.failpoints import armed, failpoint

if TYPE_CHECKING:
    import sqlite3

MODE_ENV = "TEAMLORE_ANALYSIS_HELPER"
Mode = Literal["auto", "on", "off"]
HELPER_AFTER_BYTES = 8 << 20  # a sync this large so far starts the helper
TIMEOUT_SECONDS = 10.0  # the helper's answer is late after this, plus a second per MiB sent
UNSENT_MAX_CHARS = 16 << 20  # texts waiting for the helper before the sync waits for it
# failpoints of the helper process itself (tests): it SIGKILLs itself, or stops answering
DIE_POINT = "analysis-helper.die"
HANG_POINT = "analysis-helper.hang"

_HEADER = struct.Struct("<Q")
Row = tuple[int, str, str]  # turn id, search text (analyzed into the body), scope tokens


class HelperFailed(Exception):
    """The helper died, hung or answered wrongly: the sync goes on in-process."""


def configured_mode() -> Mode:
    value = os.environ.get(MODE_ENV, "auto").strip().lower()
    return value if value in ("on", "off") else "auto"  # type: ignore[return-value]


class SearchRows:
    """The FTS rows of the turns a sync writes, analyzed in-process or by the helper."""

    def __init__(self, conn: sqlite3.Connection, mode: Mode = "off") -> None:
        self.conn = conn
        self.mode: Mode = mode
        self.timeout_seconds = TIMEOUT_SECONDS
        self.helper_rows = 0  # rows the helper analyzed (what a test checks)
        self.fallback: str | None = None  # why the helper was given up, if it was
        self.settle_seconds = 0.0  # time the sync waited for the helper (bench/bench_sync_real)
        self._bytes_read = 0
        self._helper: _Helper | None = None
        self._file: list[Row] = []  # the open file's rows, while the helper runs
        self._unsent: list[Row] = []
        self._in_flight: list[Row] = []
        if mode == "on":
            self._start()

    # -- what the indexer and the assembler call ----------------------------------------------

    def write_file_rows(self, rows: list[Row]) -> None:
        """The FTS rows of the file being synced (called inside its savepoint)."""
        if self._helper is None:
            self._insert(rows, [analyze(text) for _, text, _ in rows])
        else:
            self._file.extend(rows)

    def file_released(self, bytes_read: int) -> None:
        """The file's savepoint was released: its rows belong to the batch now."""
        self._unsent.extend(self._file)
        self._file = []
        self._bytes_read += bytes_read
        if self._helper is None and self.mode == "auto" and self._bytes_read >= HELPER_AFTER_BYTES:
            self._start()
        if self._helper is not None:
            self._pump(block=sum(len(r[1]) for r in self._unsent) > UNSENT_MAX_CHARS)

    def file_rolled_back(self) -> None:
        self._file = []

    def settle(self) -> None:
        """Write every FTS row still with the helper (before a commit; before a file that may
        rewrite turns of earlier files)."""
        started = time.monotonic()
        while self._unsent or self._in_flight:
            self._pump(block=True)
        self.settle_seconds += time.monotonic() - started

    def close(self) -> None:
        """Stop the helper (rows not settled are dropped: the batch holding them rolls back)."""
        helper, self._helper = self._helper, None
        self._unsent, self._in_flight, self._file = [], [], []
        if helper is not None:
            helper.stop()

    # -- the helper ---------------------------------------------------------------------------

    def _start(self) -> None:
        self.mode = "off"  # one helper per sync at most
        try:
            self._helper = _Helper()
        except OSError as exc:
            self.fallback = f"cannot start: {exc}"

    def _pump(self, *, block: bool) -> None:
        helper = self._helper
        if helper is None:
            self._insert_in_process()
            return
        try:
            if self._in_flight and (block or helper.ready()):
                bodies = helper.receive(len(self._in_flight), self._deadline(self._in_flight))
                rows, self._in_flight = self._in_flight, []
                self._insert(rows, bodies)
                self.helper_rows += len(rows)
            if not self._in_flight and self._unsent and (block or helper.greeted or helper.ready()):
                deadline = self._deadline(self._unsent)
                helper.greet(deadline)
                helper.send([text for _, text, _ in self._unsent], deadline)
                self._in_flight, self._unsent = self._unsent, []
        except HelperFailed as exc:
            self.fallback = str(exc)
            self._helper = None
            helper.stop()
            self._insert_in_process()

    def _deadline(self, rows: list[Row]) -> float:
        chars = sum(len(r[1]) for r in rows)
        return time.monotonic() + self.timeout_seconds + chars / (1 << 20)

    def _insert_in_process(self) -> None:
        rows = self._in_flight + self._unsent
        self._in_flight, self._unsent = [], []
        self._insert(rows, [analyze(text) for _, text, _ in rows])

    def _insert(self, rows: list[Row], bodies: list[str]) -> None:
        if rows:
            self.conn.executemany(
                "INSERT INTO turns_fts(rowid, body, scope) VALUES (?, ?, ?)",
                [(row[0], body, row[2]) for row, body in zip(rows, bodies, strict=True)],
            )


class _Helper:
    """The helper process and its two pipes: frames of an 8-byte length and a pickle."""

    def __init__(self) -> None:
        # the helper imports this very package, wherever the sync found it
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, path]))},
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self.greeted = False

    def ready(self) -> bool:
        return bool(select.select([self._out], [], [], 0)[0])

    def greet(self, deadline: float) -> None:
        """The helper's first frame names its analyzer: it must be ours."""
        if not self.greeted:
            version = self._read_frame(deadline)
            if version != ANALYZER_VERSION:
                raise HelperFailed(f"helper analyzer {version!r} is not {ANALYZER_VERSION!r}")
            self.greeted = True

    def send(self, texts: list[str], deadline: float) -> None:
        data = pickle.dumps(texts, protocol=5)
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            if not select.select([], [self._in], [], _left(deadline))[1]:
                raise HelperFailed("helper stopped reading")
            try:
                view = view[os.write(self._in, view) :]
            except OSError as exc:  # BrokenPipeError: it died
                raise HelperFailed(f"helper gone ({type(exc).__name__})") from exc

    def receive(self, count: int, deadline: float) -> list[str]:
        self.greet(deadline)
        bodies = self._read_frame(deadline)
        if (
            not isinstance(bodies, list)
            or len(bodies) != count
            or not all(type(b) is str for b in bodies)
        ):
            raise HelperFailed("helper answered something else than the bodies asked for")
        return bodies

    def _read_frame(self, deadline: float) -> object:
        (size,) = _HEADER.unpack(self._read(_HEADER.size, deadline))
        try:
            return pickle.loads(self._read(size, deadline))
        except Exception as exc:  # a torn or foreign frame
            raise HelperFailed(f"helper answer unreadable ({type(exc).__name__})") from exc

    def _read(self, size: int, deadline: float) -> bytes:
        parts: list[bytes] = []
        while size:
            if not select.select([self._out], [], [], _left(deadline))[0]:
                raise HelperFailed("helper timed out")
            chunk = os.read(self._out, min(size, 1 << 20))
            if not chunk:
                raise HelperFailed(f"helper exited ({self.proc.poll()})")
            parts.append(chunk)
            size -= len(chunk)
        return b"".join(parts)

    def stop(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            self.proc.wait(timeout=0.5)  # it exits on end of input
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.0)


# -- the helper process ---------------------------------------------------------------------


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer each frame of texts with a frame of their analyzed bodies, until end of input."""

    def write(value: object) -> None:
        data = pickle.dumps(value, protocol=5)
        stdout.write(_HEADER.pack(len(data)))
        stdout.write(data)
        stdout.flush()

    write(ANALYZER_VERSION)
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        texts = pickle.loads(stdin.read(_HEADER.unpack(header)[0]))
        failpoint(DIE_POINT)
        if armed(HANG_POINT):
            time.sleep(3600)
        write([analyze(text) for text in texts])


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
