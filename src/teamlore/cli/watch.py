"""`teamlore watch`: the warm server (docs/watch.md).

One foreground process that keeps the session index fresh (it watches the folders `sync` reads and
runs the incremental sync when their session files change) and answers the read commands of
`teamlore.cli.warm.SERVED` over a Unix socket in the state dir, so a short command skips the
interpreter's imports and the models' loads. A request runs the same lean invocation the command
runs in its own process (`commands.sessions.lean_invocation`), with the client's arguments,
working directory, environment and stream kinds, and the reply is its stdout and stderr bytes and
exit code. One request at a time; the sync runs between requests.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import selectors
import signal
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from teamlore.cli import output, reader_went_away, warm
from teamlore.cli.commands.sessions import lean_invocation
from teamlore.cli.literal import json_text, literal
from teamlore.cli.output import FormatOption, OutputFormat, counted, fail, fail_unexpected
from teamlore.cli.params import Option
from teamlore.core import errors
from teamlore.core.locations import state_dir_path
from teamlore.core.lock import file_lock
from teamlore.core.paths import FILE_MODE, display_path, state_dir, working_directory
from teamlore.core.timeutil import now_instant
from teamlore.ops.sessions.watching import LinkWatcher, Watcher

LOCK_NAME = "watch.lock"
# sun_path holds 108 bytes on Linux, 104 on macOS, with the terminating NUL
SOCKET_PATH_LIMIT = 104 if sys.platform == "darwin" else 108
SELECT_SECONDS = 0.25
# how often the index and the session folders are looked at (a stat of each);
# TEAMLORE_WATCH_FILES_CHECK_SECONDS sets another interval (docs/watch.md)
FILES_CHECK_SECONDS = 2.0
# a sync refused with these is tried again after --min-interval, as often as it takes: another
# process holds the sync lock
RETRIED_CODES = frozenset({"LOCK_BUSY"})
# a sync refused with these needs the user to mend the index (`teamlore sync --rebuild`, a backup,
# a newer teamlore): tried again only once the index file changes, whatever the session files do
INDEX_CODES = frozenset({"DB_CORRUPT", "DB_SCHEMA_TOO_NEW"})


# a path quoted in an error's words: watchfiles names the folders it failed on
# (`about ["/home/mei/.claude/projects/p2"]`), an OSError its file (`: '/home/mei/…'`)
_QUOTED_PATH = re.compile(r"""(["'])(/[^"']*)\1""")


def _failure_text(exc: BaseException) -> str:
    """What a watcher's failure says, each path it quotes shown as the folder-unreadable event
    shows one (`display_path`: `~` for the home)."""
    text = f"{type(exc).__name__}: {exc}"
    return _QUOTED_PATH.sub(lambda m: m[1] + display_path(m[2]) + m[1], text)


def watch(
    min_interval: float = Option(
        2.0,
        "--min-interval",
        help="Seconds between two syncs while session files keep changing (0..3600).",
        metavar="SECONDS",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Keep the session index fresh and answer `sessions search|list|show`, `memory search` and
    `status` from a warm process (Linux and macOS; Ctrl-C stops it). Other commands, and every
    command when this is not running, run as before (docs/watch.md)."""
    try:
        if not 0 <= min_interval <= 3600:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT, "--min-interval: must be between 0 and 3600 seconds"
            )
        _serve(fmt, min_interval)
    except errors.TeamloreError as err:
        fail(err, fmt)
    except KeyboardInterrupt:
        if not _stopping.is_set():  # stopped as asked: exit 0 whatever it interrupted
            raise
    except LogReaderGone:  # `teamlore watch | head -1`: it stopped, its socket removed
        raise SystemExit(reader_went_away()) from None
    except OSError as exc:  # e.g. a read-only state dir: no lock file can be created
        fail_unexpected(exc, fmt)


def _serve(fmt: OutputFormat, min_interval: float) -> None:
    if not hasattr(socket, "AF_UNIX"):
        raise errors.TeamloreError(errors.WATCH_UNSUPPORTED, "this system has no Unix sockets")
    path = state_dir_path() / warm.SOCKET_NAME  # checked before the state dir is made
    if len(os.fsencode(path)) >= SOCKET_PATH_LIMIT:
        raise errors.TeamloreError(
            errors.WATCH_SOCKET_PATH_TOO_LONG,
            f"the socket path in the state dir is {len(os.fsencode(path))} bytes; a Unix socket"
            f" allows {SOCKET_PATH_LIMIT - 1}",
        )
    home = state_dir()
    with file_lock(home / LOCK_NAME, what="`teamlore watch` on this state dir"):
        listener = _listen(path)
        server = Server(listener, path, fmt, min_interval)
        try:
            with _stopped_by_signals():
                server.run()
        finally:
            server.close()
            listener.close()
            if _file_identity(path) == server.socket:  # not another watch's, started since
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            if server.sync_stopped:  # the index holds part of that sync
                server.event("sync-stopped")
            server.event("stopped")  # not when its log lost its reader: no one reads it


# set by Ctrl-C, SIGTERM or SIGHUP: a command interrupted by it is not answered (its client
# runs it)
_stopping = threading.Event()
# what stops the server cleanly: Ctrl-C, SIGTERM, and SIGHUP (its terminal closed)
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)
)


class LogReaderGone(Exception):
    """The server's log has no reader any more (`teamlore watch | head -1`, its terminal
    closed): it stops quietly with exit 0, as every command does whose reader went away
    (docs/cli-output.md). Not an OSError, so the handling of a client that went away does not
    take it for one."""


class _Stopped(BaseException):
    """Ctrl-C, SIGTERM or SIGHUP, raised where the server is. Not a KeyboardInterrupt: one that
    leaves code compiled from a string (`eval` and `exec`, which typer's annotations and
    dataclasses run) makes the interpreter exit by SIGINT at the end even once it is caught, and
    a stopped server exits 0. Not an Exception either, so no handler of a command's own takes it
    for a failure."""


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP end the block, also in the middle of a request: the
    command's own handling of Ctrl-C (exit 130) must not become its client's answer."""

    def stop(signum: int, frame: object) -> None:
        _stopping.set()
        raise _Stopped

    # a signal ignored when the watch started stays ignored: `nohup teamlore watch &` outlives
    # the terminal it was started from
    handled = [sig for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, stop) for sig in handled}
    try:
        yield
    except _Stopped:
        pass
    except RuntimeError as err:
        # a stop while a class was made (dataclasses' fields): Python 3.11 wraps what
        # `__set_name__` raised
        if not isinstance(err.__cause__, _Stopped):
            raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _listen(path: Path) -> socket.socket:
    """The listening socket at `path`, 0600; a socket left there by a server that died is
    replaced (the lock says none runs)."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise errors.TeamloreError(
                errors.STATE_INVALID, f"{path.name} in the state dir is not a socket"
            )
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    umask = os.umask(0o177)  # never a moment with wider permissions
    try:
        listener.bind(os.fsencode(path))
    finally:
        os.umask(umask)
    os.chmod(path, FILE_MODE)
    listener.listen(16)
    listener.setblocking(False)
    return listener


class Server:
    """The loop: answer requests, and sync when the watcher saw session files change."""

    def __init__(
        self, listener: socket.socket, path: Path, fmt: OutputFormat, min_interval: float
    ) -> None:
        self.listener = listener
        self.path = path
        self.fmt = fmt
        self.min_interval = min_interval
        self.fingerprint = warm.code_fingerprint()
        self.sources = _source_roots()
        self.folders = _identities(self.sources)
        self.files_checked = time.monotonic()
        self.files_check_seconds = _files_check_seconds(os.environ)
        self.changed = threading.Event()  # a session file changed: sync
        self.watcher = Watcher(self.roots, self.changed)
        self.linked = _linked_session_files()
        self.link_watcher = LinkWatcher(self.linked, self.changed)
        self.last_sync = float("-inf")
        self.socket = _file_identity(path)
        from teamlore.ops.sessions.index import index_file

        self.index = index_file()
        self.index_seen = _file_state(self.index)  # the index file when last looked at
        self.index_synced = _index_identity(self.index)
        self.sync_stopped = False  # Ctrl-C or SIGTERM came in the middle of a sync
        # while a sync waits for the index to change (INDEX_CODES): the index file's state then
        self.held: tuple[int, ...] | None = None
        self.failure: tuple[str, str] | None = None  # the refusal logged last, until a sync works
        # the first sync, and the first after a refusal, is logged even when it changed nothing
        self.tell_next_sync = True
        self.unreadable: set[str] = set()  # the unreadable folders logged, while they stay so
        self.log_reader_gone = False  # the log cannot be written: the server stops, unlogged
        _load_served_code()

    @property
    def roots(self) -> list[Path]:
        """The session folders watched: those of `sources` that exist."""
        return [root for root in self.sources if self.folders[root] is not None]

    def run(self) -> None:
        self.watcher.start()
        self.link_watcher.start()
        self.event("started", folders=len(self.roots))
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ)
        while True:
            for _ in selector.select(SELECT_SECONDS):
                with contextlib.suppress(BlockingIOError):
                    connection, _ = self.listener.accept()
                    with connection:
                        self.answer(connection)
            if _stopping.is_set():
                return
            self._check_watchers()
            if time.monotonic() - self.files_checked >= self.files_check_seconds:
                self._check_files()
            if self.held is None and self.changed.is_set() and self._may_sync():
                self.changed.clear()
                self.sync()

    def close(self) -> None:
        self.watcher.stop.set()
        self.link_watcher.stop.set()

    def _check_watchers(self) -> None:
        """Log each folder the watcher cannot read, once. Stop when a watcher thread ended in a
        failure: the index would go stale unseen while this process answers and `doctor` says
        it runs; stopped, commands run in their own process."""
        for thread in (self.watcher, self.link_watcher):
            if thread.failure is not None:
                raise errors.TeamloreError(
                    errors.WATCH_NOTIFY_FAILED,
                    "it could no longer watch the session folders"
                    f" ({_failure_text(thread.failure)}), so the index would have gone stale",
                )
        unreadable = set(self.watcher.unreadable)
        for folder in sorted(unreadable - self.unreadable):
            self.event("folder-unreadable", folder=display_path(Path(folder)))
        self.unreadable = unreadable

    def _check_files(self) -> None:
        """Stop when the socket was removed (no command can find this server any more). Sync
        when the index was removed (to start afresh) or another file stands in its place.
        Watch again when a session folder appeared (a client used for the first time since the
        start), went away, or is another folder now (moved away and back): a watch holds the
        folder it was given, not its path."""
        self.files_checked = time.monotonic()
        if _file_identity(self.path) != self.socket:  # the state dir deleted, say
            raise errors.TeamloreError(
                errors.WATCH_SOCKET_GONE,
                f"its socket {display_path(self.path)} was removed while it ran, so no command"
                " could reach it",
            )
        if not self.changed.is_set() and self._index_replaced():
            self.event("index-replaced")
            self.changed.set()
        if self.held is not None and _file_state(self.index) != self.held:
            self.held = None  # mended, say: the sync waiting (`changed` is set) runs
        folders = _identities(self.sources)
        if folders == self.folders:
            return
        self.folders = folders
        self.watcher.stop.set()  # it ends at its next step
        self.watcher = Watcher(self.roots, self.changed)  # and syncs: files came meanwhile
        self.watcher.start()
        self.event("folders-changed", folders=len(self.roots))

    def _index_replaced(self) -> bool:
        """Whether another index stands where the one synced last was: removed, replaced, or
        made anew in the same file (a new file may get the removed one's inode). Its id is read
        only when the file changed since it was last looked at."""
        state = _file_state(self.index)
        if state == self.index_seen:
            return False
        self.index_seen = state
        file, index_id = _index_identity(self.index)
        # an id that cannot be read (the index damaged in place, or being made) is no other
        # index yet: the file's next change says
        return file != self.index_synced[0] or index_id not in (None, self.index_synced[1])

    def _remember_index(self) -> None:
        self.index_seen = _file_state(self.index)  # first: a change after it is seen next time
        self.index_synced = _index_identity(self.index)

    def _may_sync(self) -> bool:
        return time.monotonic() - self.last_sync >= self.min_interval

    def sync(self) -> None:
        from teamlore.ops.registry import OpContext, run_operation

        self.last_sync = time.monotonic()
        try:
            # another sync running (a `teamlore sync`): this change is in its work or the next
            result = run_operation("sync", OpContext(cwd=working_directory()), {"wait_seconds": 0})
        except errors.TeamloreError as err:
            self._refused(err)
            return
        except BaseException:
            self.sync_stopped = _stopping.is_set()  # not a crash: that is no stop
            raise
        finally:
            # the index this sync left, refused or not: a refused sync is not run again every
            # files check because the first sync made the index, or a `--rebuild` replaced it
            self._remember_index()
        told, self.tell_next_sync, self.failure = self.tell_next_sync, False, None
        self._watch_links()
        files = result["files"]
        if not (told or files["changed"] or files["unavailable"]):
            return  # a search synced the grown file itself, say: nothing to tell
        self.event(
            "synced",
            changedFiles=files["changed"],
            removedFiles=files["unavailable"],
            turnsWritten=result["turns"],
            turns=result["totals"]["turns"],
        )

    def _watch_links(self) -> None:
        """Watch the files the symlinked session files name, as the sync just found them."""
        linked = _linked_session_files()
        if linked == self.linked:
            return
        self.linked = linked
        self.link_watcher.stop.set()
        self.link_watcher = LinkWatcher(linked, self.changed)
        self.link_watcher.start()

    def _refused(self, err: errors.TeamloreError) -> None:
        """Another sync holds the lock: try again after --min-interval, as often as it takes.
        Any other refusal will not go away by itself (a damaged index, a full disk, a folder
        that cannot be read): log it once and try again only when something changed, the index
        (INDEX_CODES) or else a session file."""
        self.tell_next_sync = True
        if err.code in RETRIED_CODES:
            self.event("sync-refused", code=err.code, message=err.message)
            self.changed.set()
            return
        if err.code in INDEX_CODES:
            self.held = _file_state(self.index)
            self.changed.set()  # synced once the index changes
        if self.failure != (err.code, err.message):
            self.failure = (err.code, err.message)
            until = "the index" if err.code in INDEX_CODES else "a session file"
            self.event("sync-failed", code=err.code, message=err.message, retryWhen=until)

    def answer(self, connection: socket.socket) -> None:
        """Serve one connection: refuse (close without a word: the client runs the command
        itself) or accept and reply."""
        connection.setblocking(True)
        connection.settimeout(5.0)
        try:
            if _peer_uid(connection) not in (None, os.getuid()):
                return
            request = warm.read_message(connection)
            invocation = self._invocation(request)
            if invocation is None:
                return
            connection.sendall(warm.ACCEPTED)
            reply = run_as_client(request, invocation)
            connection.settimeout(None)
            if reply is None:
                warm.send_message(connection, {"ok": False})
                return
            code, out, err = reply
            warm.send_message(
                connection,
                {
                    "ok": True,
                    "code": self.fingerprint,
                    "exit": code,
                    "stdout": len(out),
                    "stderr": len(err),
                },
            )
            connection.sendall(out + err)
            command = " ".join(warm.served_command(request["argv"]) or ())
            self.event("answered", command=command, exit=code)  # never its arguments
        except (OSError, ValueError):
            return  # the client went away or spoke nonsense; it runs the command itself

    def _invocation(self, request: dict[str, Any]) -> Callable[[], None] | None:
        """The lean invocation `request` asks for, when this server may run it."""
        if request.get("protocol") != warm.PROTOCOL or not _well_formed(request):
            return None
        if request["code"] != self.fingerprint:
            if warm.code_fingerprint() != self.fingerprint:
                self._restart()  # our own files changed since we started: stale code
            return None
        if warm.served_command(request["argv"]) is None:
            return None
        with _environment(request["env"]):  # the same parse the client's process makes
            return lean_invocation(list(request["argv"]))

    def _restart(self) -> None:
        """Run the changed code: the same command line in this process (the lock and the
        socket close with the old image, descriptors being close-on-exec)."""
        self.event("restarting", reason="teamlore's code changed")
        self.watcher.stop.set()
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        sys.stdout.flush()
        os.execv(sys.executable, sys.orig_argv)

    def event(self, name: str, **fields: Any) -> None:
        """One line of the server's log: JSON lines with --format json. A log with no reader
        any more (a pipe closed: EPIPE; a terminal closed: EIO) stops the server
        (`LogReaderGone`), and nothing more is written."""
        if self.log_reader_gone:
            return
        try:
            if self.fmt is OutputFormat.json:
                sys.stdout.write(json_text({"event": name, "at": now_instant(), **fields}) + "\n")
            else:
                for line in event_lines(name, fields):
                    sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE and not (exc.errno == errno.EIO and _to_a_terminal()):
                raise  # EIO of a log file is a disk's error, not a closed terminal
            self.log_reader_gone = True
            raise LogReaderGone from exc


def _to_a_terminal() -> bool:
    """Whether the log goes to a terminal (a character device: a hung-up one fails `isatty`)."""
    try:
        return stat.S_ISCHR(os.fstat(sys.stdout.fileno()).st_mode)
    except (OSError, ValueError):
        return False


def _files_check_seconds(environ: dict[str, str] | os._Environ[str]) -> float:
    """`FILES_CHECK_SECONDS`, or TEAMLORE_WATCH_FILES_CHECK_SECONDS when it holds a positive
    number."""
    try:
        seconds = float(environ.get("TEAMLORE_WATCH_FILES_CHECK_SECONDS") or FILES_CHECK_SECONDS)
    except ValueError:
        return FILES_CHECK_SECONDS
    return seconds if 0 < seconds < float("inf") else FILES_CHECK_SECONDS


def _file_identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` names (device and inode), None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _index_identity(path: Path) -> tuple[tuple[int, int] | None, str | None]:
    """Which index `path` holds: its file, and the id the index keeps in its `meta` table."""
    from teamlore.ops.sessions.index import index_id

    return _file_identity(path), index_id(path)


def _file_state(path: Path) -> tuple[int, ...] | None:
    """`path`'s identity, size and times: another value when the file was written or
    replaced, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


_EVENT_TEXT = {
    "started": "teamlore watch: watching {folders}; answering sessions search,"
    " list and show, memory search and status (Ctrl-C stops).",
    "synced": "synced: {changes}; the index holds {turns}.",
    "sync-refused": "sync skipped ({code}: {message}); retrying.",
    "sync-failed": "sync failed ({code}: {message}); trying again when {retryWhen} changes.",
    "sync-stopped": "the sync in progress was stopped; `teamlore sync` finishes it.",
    "index-replaced": "the session index was removed or replaced: syncing it again.",
    "folders-changed": "session folders appeared or went away: now watching {folders}.",
    "folder-unreadable": "cannot read {folder} (its mode or owner): watching the other"
    " session folders without it.",
    "restarting": "{reason}: restarting.",
    "answered": "answered {command} (exit {exit}).",
    "stopped": "teamlore watch stopped.",
}
# the counts of the text lines, with their nouns in the right number
_COUNTED_NOUNS = {"folders": "session folder", "turns": "turn"}


def event_lines(name: str, fields: dict[str, Any]) -> list[str]:
    """An event of the text log: the local time (`14:03:27`), then a sentence of teamlore's
    own wrapped at words at the width (the terminal's, or COLUMNS) as every other is, in a pipe
    too, its later lines under its start; `--format json` logs one line an event, to grep, its
    time in `at`."""
    clock = time.strftime("%H:%M:%S ")
    return output.wrapped_lines(clock, _event_text(name, fields), indent=len(clock))


def _event_text(name: str, fields: dict[str, Any]) -> str:
    phrased = {
        key: counted(value, _COUNTED_NOUNS[key]) if key in _COUNTED_NOUNS else _shown(value)
        for key, value in fields.items()
    }
    if name == "synced":
        phrased["changes"] = _sync_changes(fields)
    return _EVENT_TEXT[name].format(**phrased)


def _shown(value: object) -> str:
    """A value in a log line (a folder's name, a refusal's message) as the text views print it
    (`literal`: `\\x1b` for ESC); a newline or tab too, which the wrapping would make a
    space: the folder named is the one on disk."""
    return literal(value).replace("\n", "\\x0a").replace("\t", "\\x09")


def _sync_changes(fields: dict[str, Any]) -> str:
    """What a sync changed: the files it read and the turns it wrote, and the session files it
    found removed (their turns stay in the index, docs/sessions.md)."""
    changes = []
    if fields["changedFiles"] or not fields["removedFiles"]:
        written = counted(fields["turnsWritten"], "turn")
        changes.append(f"{counted(fields['changedFiles'], 'changed file')}, {written} written")
    if fields["removedFiles"]:
        removed = fields["removedFiles"]
        their = "its" if removed == 1 else "their"
        changes.append(f"{counted(removed, 'session file')} removed ({their} turns stay indexed)")
    return "; ".join(changes)


def _well_formed(request: dict[str, Any]) -> bool:
    env, streams = request.get("env"), request.get("streams")
    return (
        isinstance(request.get("code"), str)
        and isinstance(request.get("argv"), list)
        and all(isinstance(a, str) for a in request["argv"])
        and isinstance(request.get("cwd"), str)
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and isinstance(streams, list)
        and len(streams) == 2
        and all(_stream_spec(s) for s in streams)
    )


def _stream_spec(spec: object) -> bool:
    return (
        isinstance(spec, dict)
        and isinstance(spec.get("tty"), bool)
        and isinstance(spec.get("encoding"), str)
        and isinstance(spec.get("errors"), str)
    )


def _peer_uid(connection: socket.socket) -> int | None:
    """The connecting process's user (Linux); None where the system does not say (macOS:
    the 0600 socket in the 0700 state dir admits only its owner)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


class ClientStream(io.TextIOWrapper):
    """The client's stdout or stderr as the command sees it: its encoding, its error handler
    and whether it is a terminal; what is written is kept as bytes."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(io.BytesIO(), encoding=spec["encoding"], errors=spec["errors"])
        self._tty = bool(spec["tty"])

    def isatty(self) -> bool:
        return self._tty

    def written(self) -> bytes:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue()


def run_as_client(
    request: dict[str, Any], invocation: Callable[[], None]
) -> tuple[int, bytes, bytes] | None:
    """Run `invocation` as the client's process would: its exit code, stdout and stderr; None
    when it raised what a process would print as a traceback (the client runs it itself)."""
    out, err = ClientStream(request["streams"][0]), ClientStream(request["streams"][1])
    saved_cwd = os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    try:
        with _environment(request["env"]):
            os.chdir(request["cwd"])
            sys.stdout, sys.stderr = out, err
            output.forget_consoles()
            code = _exit_code(invocation, err)
    except Exception:
        return None
    finally:
        sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        output.forget_consoles()
    if _stopping.is_set():
        return None
    return code, out.written(), err.written()


def _exit_code(invocation: Callable[[], None], err: ClientStream) -> int:
    """The code a process running `invocation` exits with (as `entry._run_lean` and the
    interpreter decide it)."""
    try:
        invocation()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        err.write(f"{done.code}\n")
        return 1
    return 0


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _source_roots() -> list[Path]:
    """The session folders a plain `teamlore sync` reads (configured or default), existing or
    not."""
    from teamlore.ops.sessions.index import SyncRequest, resolve_sources

    return sorted({s.root for s in resolve_sources(SyncRequest(), None)})


def _linked_session_files() -> frozenset[str]:
    from teamlore.ops.sessions.index import linked_session_files

    return linked_session_files()


def _identities(folders: list[Path]) -> dict[Path, tuple[int, int] | None]:
    """Each folder's identity, None for one that is not a folder (yet)."""
    # os.path.isdir: False for a folder that cannot be looked at (pathlib's raises)
    return {folder: _file_identity(folder) if os.path.isdir(folder) else None for folder in folders}


def _load_served_code() -> None:
    """Import what the served commands run, so the first request does not pay for it."""
    from teamlore.ops.memory import search  # noqa: F401
    from teamlore.ops.sessions import index  # noqa: F401
