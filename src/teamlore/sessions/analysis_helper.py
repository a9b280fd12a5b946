"""Turn search rows, analyzed beside the sync (docs/sessions.md, "The analysis helper").

Analyzing turn texts for the FTS index is about a sixth of a cold sync's CPU. During a bulk
sync, an *analysis helper* (this module run as a child process by the same interpreter) analyzes
the texts of each file while the sync parses the next one, so that work runs on the second core.
The helper runs the same `analyze` on the same texts: the rows are the ones the in-process path
writes. When turns get vectors from the bundled model, it embeds each turn's text too, in
batches of `EMBED_BATCH` while no request waits, sent back with later answers (`Vectors`), on
one thread (the tokenizer's own threads would compete with the sync); the sync's embedding step
(turn_vectors.py) then stores those instead of computing them, and computes whatever they do not
cover — vectors are written where and when they always were.

Where a file's FTS rows go: analyzed in-process as the file ends, or by the helper (its texts are
sent once the file's savepoint is released, through non-blocking pipes, so the sync never
waits on a pipe), they are all written together just
before the batch commits (`settle`; also before a file that may rewrite turns of earlier files),
outside any file's savepoint. FTS5 flushes its pending terms at every savepoint, so rows
written per file made a segment per file, and merges; written per batch (with FTS5's
`hashsize` raised meanwhile) they make one. A commit never holds a turn without its FTS row, a
file that fails leaves none, and a crash loses only the uncommitted batch, as before.

A helper that dies, answers something else than the bodies asked for, or takes longer than its
timeout is killed; the texts it held are analyzed in-process and the rest of the sync runs
in-process. It never stalls or fails a sync. Until the helper says it is ready (once it can
analyze; the model loads afterwards, between requests), the sync analyzes in-process.
`TEAMLORE_ANALYSIS_HELPER=off` turns it off, `on` starts it for any sync and waits until it is
ready (tests); by default a sync starts it when it will read at least `HELPER_MIN_BYTES` and a
core looks free (`_core_to_spare`), so small syncs and busy machines never pay for a process
start.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import sys
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, cast

from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.core.failpoints import armed, failpoint
from teamlore.sessions.passages import analyze_passages

if TYPE_CHECKING:
    import sqlite3

    from teamlore.models.embeddings import BundledEmbedder
    from teamlore.sessions.turn_vectors import MadeVector

MODE_ENV = "TEAMLORE_ANALYSIS_HELPER"
Mode = Literal["auto", "on", "off"]
# a sync that will read this much starts the helper; a smaller one would spend more starting
# it (~0.1-0.3 CPU s: Python, the analyzer, numpy and the model) than it moves off the sync
HELPER_MIN_BYTES = 32 << 20
# the sync process's CPU with the helper over its CPU without (116 MiB of Claude Code files)
SYNC_SHARE_WITH_HELPER = 0.82
TIMEOUT_SECONDS = 10.0  # the helper's answer is late after this, plus a second per MiB sent
IN_FLIGHT_MAX_CHARS = 16 << 20  # texts with the helper before the sync waits for it
VECTORS_MAX = 32768  # turns whose vector the sync holds (~300 bytes each) before it stops asking
# FTS5's `hashsize`: the index never sets it, so it is FTS5's default. `settle` raises it to
# `PENDING_TERMS_MAX` while it writes a batch's rows, so that they reach the disk as one segment
FTS_HASH_BYTES = 1 << 20
PENDING_TERMS_MAX = 16 << 20
EMBED_BATCH = 64  # texts the helper embeds at once, between two requests of the sync
# failpoints of the helper process itself (tests): it SIGKILLs itself, or stops answering
DIE_POINT = "analysis-helper.die"
HANG_POINT = "analysis-helper.hang"

_HEADER = struct.Struct("<Q")
PIPE_BYTES = 1 << 20  # what each pipe to the helper holds (Linux lets a process ask for 1 MiB)
# turn id, search text (analyzed into the body), scope tokens, the text a vector is made of
Row = tuple[int, str, str, str]
# an analyzed text: its body and where its passages start (sessions/passages.py)
Analyzed = tuple[str, bytes]
# an FTS row to write: turn id, analyzed body, scope tokens, and its passages' starts
Body = tuple[int, str, str, bytes]
# turn id → (hash of the text embedded, dimensions, the row as stored: turn_vectors.stored_rows)
Vectors = dict[int, "MadeVector"]


class HelperFailed(Exception):
    """The helper died, hung or answered wrongly: the sync goes on in-process."""


def configured_mode() -> Mode:
    value = os.environ.get(MODE_ENV, "auto").strip().lower()
    return value if value in ("on", "off") else "auto"  # type: ignore[return-value]


class SearchRows:
    """The FTS rows of the turns a sync writes, analyzed in-process or by the helper."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        mode: Mode = "off",
        embed_space: str | None = None,
        bytes_to_read: int = 0,
    ) -> None:
        self.conn = conn
        self.mode: Mode = mode
        self.embed_space = embed_space  # the bundled model's space, when turns get vectors
        self.vectors: Vectors = {}  # what the helper embedded, for turn_vectors.py
        self._embedding: deque[tuple[int, int]] = deque()  # (turn id, text hash) sent to embed
        self.timeout_seconds = TIMEOUT_SECONDS
        self.helper_rows = 0  # rows the helper analyzed (what a test checks)
        self.fallback: str | None = None  # why the helper was given up, if it was
        self._helper: _Helper | None = None
        self._file: list[Row] = []  # the open file's rows, while the helper runs
        self._file_bodies: list[Body] = []  # the open file's rows analyzed here
        self._bodies: list[Body] = []  # rows of released files analyzed, written by `settle`
        self._unsent: list[Row] = []
        # the frames sent, oldest first (the helper answers them in order), and their texts' size
        self._in_flight: deque[tuple[list[Row], int]] = deque()
        self._in_flight_chars = 0
        self._discard = 0  # the oldest frames in flight hold rows that were rolled back
        # (turn id, text to embed) of rows analyzed here while the helper started: it embeds
        # them all the same (the open file's, then the batch's, sent with the next frame)
        self._file_embeds: list[tuple[int, str]] = []
        self._to_embed: list[tuple[int, str]] = []
        big = bytes_to_read >= HELPER_MIN_BYTES
        if mode == "on" or (mode == "auto" and big and _core_to_spare()):
            # `on` waits for the helper so that even a small sync uses it; a big one analyzes
            # its first files here meanwhile, as `auto` does, instead of idling
            self._start(wait=mode == "on" and not big)

    # -- what the indexer and the assembler call ----------------------------------------------

    def write_file_rows(self, rows: list[Row]) -> None:
        """The FTS rows of the file being synced (called inside its savepoint). Until the
        helper said it is ready, the sync analyzes them."""
        if self._helper is None or not self._helper.greeted:
            for row in rows:
                body, starts = analyze_passages(row[1])
                self._file_bodies.append((row[0], body, row[2], starts))
            if self._helper is not None:
                self._file_embeds.extend((row[0], row[3]) for row in rows)
        else:
            self._file.extend(rows)

    def file_released(self) -> None:
        """The file's savepoint was released: its rows belong to the batch now."""
        self._unsent.extend(self._file)
        self._bodies.extend(self._file_bodies)
        self._to_embed.extend(self._file_embeds)
        self._file, self._file_bodies, self._file_embeds = [], [], []
        if self._helper is not None and (self._helper.greeted or self._helper.ready()):
            self._pump()

    def file_rolled_back(self) -> None:
        self._file, self._file_bodies, self._file_embeds = [], [], []

    def batch_rolled_back(self) -> None:
        """SQLite rolled the whole batch back: its rows are for turns that no longer exist."""
        self.file_rolled_back()
        self._bodies, self._unsent = [], []
        self._discard = len(self._in_flight)

    def settle(self) -> None:
        """Write the FTS rows of every released file, waiting for those still with the helper
        (before a commit; before a file that may rewrite turns of earlier files). They are
        written together, outside any file's savepoint: FTS5 flushes its pending terms at each
        savepoint, so rows written between files would make a segment per file (and merges).
        The rows already analyzed are written while the helper analyzes the last ones."""
        if self._helper is not None and self._helper.greeted and self._unsent:
            self._pump()  # the last files' texts: the helper works while the sync writes
        chars = sum(len(body[1]) for body in self._bodies) + self._in_flight_chars
        chars += sum(len(row[1]) for row in self._unsent)
        # FTS5 also flushes whenever its pending terms outgrow `hashsize` (1 MiB by default):
        # raised for these inserts and restored before the commit, one segment per batch. Outside
        # a batch (SQLite rolled the last one back) there is nothing to write: each change of the
        # setting would be a commit of its own, and a crash between the two would keep it raised
        raised = chars >= FTS_HASH_BYTES and self.conn.in_transaction
        if raised:
            self._set_hashsize(PENDING_TERMS_MAX)
        try:
            self._write_bodies()
            while self._unsent or self._in_flight:
                self._pump(settle=True)
            self._write_bodies()
        finally:
            if raised:
                self._set_hashsize(FTS_HASH_BYTES)

    def _write_bodies(self) -> None:
        bodies, self._bodies = self._bodies, []
        self._write(bodies)

    def _write(self, bodies: list[Body]) -> None:
        if bodies:
            self.conn.executemany(
                "INSERT INTO turns_fts(rowid, body, scope) VALUES (?, ?, ?)",
                [body[:3] for body in bodies],
            )
            self.conn.executemany(
                "INSERT INTO turn_passages(turn_id, starts) VALUES (?, ?)",
                [(body[0], body[3]) for body in bodies],
            )

    def _set_hashsize(self, size: int) -> None:
        self.conn.execute("INSERT INTO turns_fts(turns_fts, rank) VALUES ('hashsize', ?)", (size,))

    def close(self) -> None:
        """Stop the helper (rows not settled are dropped: the batch holding them rolls back)."""
        helper, self._helper = self._helper, None
        self._unsent, self._file = [], []
        self._in_flight.clear()
        self._in_flight_chars = self._discard = 0
        self._file_bodies, self._bodies = [], []
        self._file_embeds, self._to_embed = [], []
        self._embedding.clear()
        if helper is not None:
            helper.stop()

    # -- the helper ---------------------------------------------------------------------------

    def _start(self, *, wait: bool) -> None:
        """Start the helper; `wait`: until it is ready (`on`, so that even a tiny sync uses it)."""
        try:
            self._helper = _Helper(self.embed_space)
            if wait:
                self._helper.greet(time.monotonic() + self.timeout_seconds)
        except (OSError, HelperFailed) as exc:
            self.fallback = f"cannot start: {exc}"
            self.close()

    def _pump(self, *, settle: bool = False) -> None:
        """Send the released files' texts as one frame, and keep the answers that arrived;
        `settle`: wait for every answer. The helper works through the frames in order while
        the sync parses the next files; the sync waits only when they hold more than
        `IN_FLIGHT_MAX_CHARS` of text, or to settle."""
        helper = self._helper
        if helper is None:
            self._analyze_in_process()
            return
        try:
            helper.greet(time.monotonic() + self.timeout_seconds)  # it is ready: it said so
            if self._unsent:
                self._send(helper)
            while self._in_flight and (
                settle or helper.ready() or self._in_flight_chars > IN_FLIGHT_MAX_CHARS
            ):
                self._receive(helper)
        except HelperFailed as exc:
            self._give_up(helper, exc)

    def _give_up(self, helper: _Helper, exc: HelperFailed) -> None:
        """Stop a helper found failed: the texts it held are analyzed here, and the embedding
        step makes the vectors it did not send."""
        self.fallback = str(exc)
        self._helper = None
        self._embedding.clear()
        helper.stop()
        self._analyze_in_process()

    def _send(self, helper: _Helper) -> None:
        rows = self._unsent
        chars = sum(len(row[1]) for row in rows)
        self._to_embed.extend((row[0], row[3]) for row in rows)
        helper.send([row[1] for row in rows], self._embed_texts(), self.embed_space)
        self._unsent = []  # only now: a helper found failed leaves them to the fallback
        self._in_flight.append((rows, chars))
        self._in_flight_chars += chars

    def _receive(self, helper: _Helper) -> None:
        """The answer to the oldest frame in flight."""
        rows, chars = self._in_flight[0]
        bodies, vectors = helper.receive(len(rows), self._deadline(chars))
        self._in_flight.popleft()
        self._in_flight_chars -= chars
        if self._discard:
            self._discard -= 1
        else:
            self._keep_bodies(rows, bodies)
            self.helper_rows += len(rows)
        self._keep_vectors(vectors)

    def _embed_texts(self) -> list[str] | None:
        """The texts to embed sent with the next frame (and remembered, in order)."""
        pending, self._to_embed = self._to_embed, []
        if self.embed_space is None or len(self.vectors) + len(self._embedding) >= VECTORS_MAX:
            return None
        self._embedding.extend((turn_id, hash(text)) for turn_id, text in pending)
        return [text for _, text in pending]

    def _keep_vectors(self, vectors: tuple[int, bytes] | None) -> None:
        """Vectors of the oldest texts sent to embed, in the order sent, as stored (int8 and
        sign bits: the sync needs no numpy to store them); None: the helper embeds no more (the
        embedding step makes the rest)."""
        from teamlore.sessions.turn_vectors import stored_size

        dimensions = vectors[0] if vectors is not None else 0
        size = stored_size(dimensions) if dimensions > 0 else 0
        count, rest = divmod(len(vectors[1]), size) if vectors is not None and size > 0 else (0, 0)
        if vectors is None or rest or count > len(self._embedding):
            self.embed_space = None
            self._embedding.clear()
            return
        for n in range(count):
            turn_id, text_hash = self._embedding.popleft()
            self.vectors[turn_id] = (text_hash, dimensions, vectors[1][n * size : (n + 1) * size])

    def finish(self) -> None:
        """The sync indexed every file: collect the vectors of the texts the helper still holds
        (a last, short batch), so the embedding step has nothing left to compute."""
        self.settle()
        helper = self._helper
        if helper is None or self.embed_space is None or not (self._embedding or self._to_embed):
            return  # nothing to collect (turns get no vectors, or the helper stopped embedding)
        if not (helper.greeted or helper.ready()):
            return  # never got ready: the embedding step makes them
        try:
            deadline = time.monotonic() + self.timeout_seconds
            helper.greet(deadline)
            helper.send([], self._embed_texts(), self.embed_space)
            self._keep_vectors(helper.receive(0, deadline)[1])
        except HelperFailed as exc:
            self._give_up(helper, exc)

    def _deadline(self, chars: int) -> float:
        return time.monotonic() + self.timeout_seconds + chars / (1 << 20)

    def _analyze_in_process(self) -> None:
        frames = list(self._in_flight)[self._discard :]
        rows = [row for frame, _ in frames for row in frame] + self._unsent
        self._in_flight.clear()
        self._in_flight_chars = self._discard = 0
        self._unsent = []
        self._keep_bodies(rows, [analyze_passages(row[1]) for row in rows])

    def _keep_bodies(self, rows: list[Row], bodies: list[Analyzed]) -> None:
        self._bodies.extend(
            (row[0], body, row[2], starts) for row, (body, starts) in zip(rows, bodies, strict=True)
        )


class _Helper:
    """The helper process and its two pipes: frames of an 8-byte length and a pickle. Both
    pipes are non-blocking and each hold 1 MiB: a frame sent is written as far as the pipe takes
    it and the rest whenever the sync comes back (each file it finishes), and answers are read
    as they arrive, so that the sync never waits on a pipe while the helper is busy (a file's
    texts are often MiBs); it waits only for an answer it needs (`receive`), and keeps writing
    what the helper still has to read meanwhile."""

    def __init__(self, embed_space: str | None) -> None:
        import subprocess  # here: a sync that starts no helper (most of them) never needs it

        # the helper imports this very package, wherever the sync found it
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, embed_space or ""],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [package_root, path])),
                "TOKENIZERS_PARALLELISM": "false",  # one core: the sync has the other
                "RAYON_NUM_THREADS": "1",
            },
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        for fd in (self._in, self._out):
            os.set_blocking(fd, False)
            with contextlib.suppress(OSError, AttributeError):  # Linux only; 64 KiB elsewhere
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        self.greeted = False
        self._outgoing: deque[memoryview] = deque()  # what is left to write of each frame
        self._incoming = bytearray()
        self._answers: deque[bytes] = deque()
        self._failed: HelperFailed | None = None

    def ready(self) -> bool:
        """Whether an answer (or the news that the helper failed) waits to be received."""
        self._move()
        return bool(self._answers) or self._failed is not None

    def greet(self, deadline: float) -> None:
        """The helper's first frame, sent once it is ready, names its analyzer: it must be
        ours."""
        if not self.greeted:
            version = self._next_frame(deadline)
            if version != ANALYZER_VERSION:
                raise HelperFailed(f"helper analyzer {version!r} is not {ANALYZER_VERSION!r}")
            self.greeted = True

    def send(self, texts: list[str], embed_texts: list[str] | None, space: str | None) -> None:
        """Queue a frame and write what the pipe takes. No deadline here: the sync may be away
        parsing a long file while the helper has read all the pipe held; a helper that stops
        reading is found by the deadline of the answer the sync waits for (`receive`)."""
        import pickle  # with the helper only, as `subprocess`

        data = pickle.dumps((texts, embed_texts, space), protocol=5)
        self._outgoing.append(memoryview(_HEADER.pack(len(data)) + data))
        self._move()
        if self._failed is not None:
            raise self._failed

    def receive(
        self, count: int, deadline: float
    ) -> tuple[list[Analyzed], tuple[int, bytes] | None]:
        """The bodies of the texts sent, and their vectors (dimensions, rows as stored) if it
        made them."""
        self.greet(deadline)
        answer = self._next_frame(deadline)
        bodies, vectors = answer if isinstance(answer, tuple) and len(answer) == 2 else (None, None)
        if (
            not isinstance(bodies, list)
            or len(bodies) != count
            or not all(
                type(b) is tuple and len(b) == 2 and type(b[0]) is str and type(b[1]) is bytes
                for b in bodies
            )
        ):
            raise HelperFailed("helper answered something else than the bodies asked for")
        if not (
            isinstance(vectors, tuple)
            and len(vectors) == 2
            and type(vectors[0]) is int
            and type(vectors[1]) is bytes
        ):
            vectors = None
        return bodies, vectors

    def _next_frame(self, deadline: float) -> object:
        """The oldest answer, waiting for it until `deadline` (writing what is still to send:
        the helper may be reading it first)."""
        while not self._answers:
            self._move()
            if self._answers:
                break
            if self._failed is not None:
                raise self._failed
            writing = [self._in] if self._outgoing else []
            if not any(select.select([self._out], writing, [], _left(deadline))[:2]):
                raise HelperFailed("helper timed out")
        frame = self._answers.popleft()
        import pickle

        try:
            return pickle.loads(frame)
        except Exception as exc:  # a torn or foreign frame
            raise HelperFailed(f"helper answer unreadable ({type(exc).__name__})") from exc

    def _move(self) -> None:
        """Write what the pipe to the helper takes, read what it answered; never waits."""
        if self._failed is None:
            try:
                self._write()
                self._read()
            except HelperFailed as exc:
                self._failed = exc

    def _write(self) -> None:
        while self._outgoing:
            view = self._outgoing[0]
            try:
                written = os.write(self._in, view)
            except BlockingIOError:
                written = 0
            except OSError as exc:  # BrokenPipeError: it died
                raise HelperFailed(f"helper gone ({type(exc).__name__})") from exc
            if written < len(view):
                self._outgoing[0] = view[written:]
                return
            self._outgoing.popleft()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._out, PIPE_BYTES)
            except BlockingIOError:
                break
            except OSError as exc:
                raise HelperFailed(f"helper gone ({type(exc).__name__})") from exc
            if not chunk:
                raise HelperFailed(f"helper exited ({self.proc.poll()})")
            self._incoming += chunk
        while len(self._incoming) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._incoming)
            end = _HEADER.size + size
            if len(self._incoming) < end:
                break
            self._answers.append(bytes(self._incoming[_HEADER.size : end]))
            del self._incoming[:end]

    def stop(self) -> None:
        """End its input; it exits (its output ends) at once, or is killed after 0.5 s."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        if not _ends(self._out, time.monotonic() + 0.5):
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            with contextlib.suppress(OSError):
                self.proc.stdout.close()


def _ends(fd: int, deadline: float) -> bool:
    """Whether the non-blocking pipe `fd` ends before `deadline` (what is left unread is
    dropped)."""
    while select.select([fd], [], [], _left(deadline))[0]:
        try:
            if not os.read(fd, PIPE_BYTES):
                return True
        except BlockingIOError:
            continue
        except OSError:
            return True
    return False


def _core_to_spare() -> bool:
    """Whether the helper would shorten the sync: with `L` other runnable tasks on `C` cores it
    does while `SYNC_SHARE_WITH_HELPER * (L + 2) / C < 1` (docs/sessions.md, "The analysis
    helper"); above that it only moves work and adds its own start (~25 % more CPU in all)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return load < (os.cpu_count() or 1) / SYNC_SHARE_WITH_HELPER - 2


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.0)


# -- the helper process ---------------------------------------------------------------------


def serve(stdin: BinaryIO, stdout: BinaryIO, embed_space: str = "") -> None:
    """Say ready (the analyzer is loaded); then answer each frame of texts with a frame of their
    analyzed bodies and the vectors made since the last answer. While no request waits, load
    the model of `embed_space` (if any) and embed queued texts. Until end of input."""
    import pickle

    embeds = _Embeds(embed_space or None)

    def write(value: object) -> None:
        data = pickle.dumps(value, protocol=5)
        stdout.write(_HEADER.pack(len(data)))
        stdout.write(data)
        stdout.flush()

    def read(size: int) -> bytes | None:
        parts: list[bytes] = []
        while size:
            chunk = stdin.read(size)
            if not chunk:
                return None
            parts.append(chunk)
            size -= len(chunk)
        return b"".join(parts)

    # ready as soon as it can analyze: the sync sends work from here on, and the model (~0.2 s
    # of imports and files) loads in the gaps between requests, not before the first one
    write(ANALYZER_VERSION)
    while True:
        while embeds.has_work() and not select.select([stdin], [], [], 0)[0]:
            embeds.work()  # the sync is busy parsing: use the time
        header = read(_HEADER.size)
        frame = read(_HEADER.unpack(header)[0]) if header else None
        if frame is None:
            return
        texts, embed_texts, space = pickle.loads(frame)
        failpoint(DIE_POINT)
        if armed(HANG_POINT):
            time.sleep(3600)
        bodies = [analyze_passages(text) for text in texts]
        embeds.add(embed_texts or [], space)
        if not texts:  # a frame without texts asks for the vectors of every text queued
            embeds.embed(len(embeds.queue))
        write((bodies, embeds.take()))


class _Embeds:
    """The helper's bundled model, loaded while no request waits, its queue of texts and
    the vectors made and not yet sent. The vectors are made exactly as in the sync (same model,
    same texts, each text alone). A model that is another space or cannot load makes none (the
    answers say None from then on), and the sync's embedding step does the work."""

    def __init__(self, space: str | None = None) -> None:
        self.usable = True
        self.space = space
        self.loaded = space is None  # nothing to load until there is a space to embed in
        self._embedder: BundledEmbedder | None = None
        self.queue: list[str] = []
        self.made: list[bytes] = []
        self.dimensions = 0

    def has_work(self) -> bool:
        """The model to load, or a whole `EMBED_BATCH` queued: a sync sends a file's few turns
        at a time, and batches that small were tokenized and averaged at about twice the cost
        per text (the rest waits for the sync's last request, which asks for every text)."""
        return self.usable and (len(self.queue) >= EMBED_BATCH or not self.loaded)

    def work(self) -> None:
        """One step of what is left (each ~0.05-0.1 s, so a request waits at most that long):
        import the model's code, load its files, then embed a batch of the queue."""
        if self._embedder is None:
            self._model()
        else:
            self.embed(EMBED_BATCH if self.loaded else 0)

    def add(self, texts: list[str], space: str | None) -> None:
        if self.usable and texts:
            self.queue.extend(texts)
            self.space = space

    def embed(self, count: int) -> None:
        """Embed the first `count` texts queued (the model loads first if it has not)."""
        batch, self.queue = self.queue[:count], self.queue[count:]
        embedder = self._model() if self.usable and (batch or not self.loaded) else None
        if embedder is None:
            return
        try:
            if not self.loaded:
                embedder.embed(["ready"])  # loads the tokenizer and the table
                self.loaded = True
            if not batch:
                return
            vectors = embedder.embed(batch)
        except Exception:  # unavailable here: the sync's embedding step reports it
            self._unusable()
            return
        from teamlore.sessions.turn_vectors import stored_rows

        self.dimensions = int(vectors.shape[1])
        self.made.append(stored_rows(vectors))

    def _model(self) -> BundledEmbedder | None:
        """The bundled model of our space (its code imported, its files not yet read)."""
        if self._embedder is None and self.usable:
            try:
                import numpy  # noqa: F401  (here: the files load in the next step)

                from teamlore.models.embeddings import bundled_embedder

                embedder = bundled_embedder()
                if embedder.space.key != self.space:
                    raise ValueError("another embedding space")
                self._embedder = embedder
            except Exception:  # unavailable here: the sync's embedding step reports it
                self._unusable()
        return self._embedder

    def _unusable(self) -> None:
        self.usable = False
        self.queue, self.made = [], []

    def take(self) -> tuple[int, bytes] | None:
        if not self.usable:
            return None
        made, self.made = b"".join(self.made), []
        return self.dimensions, made


if __name__ == "__main__":
    # unbuffered input: `select` then sees every request waiting
    serve(
        cast(BinaryIO, os.fdopen(sys.stdin.fileno(), "rb", buffering=0)),
        sys.stdout.buffer,
        sys.argv[1] if len(sys.argv) > 1 else "",
    )
    os._exit(0)  # its answers are written: skip the interpreter's teardown, the sync waits for it
