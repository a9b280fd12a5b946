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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from teamlore.cli import output, warm
from teamlore.cli.commands.sessions import lean_invocation
from teamlore.cli.literal import json_text
from teamlore.cli.output import FormatOption, OutputFormat, counted, fail, fail_unexpected
from teamlore.cli.params import Option
from teamlore.core import errors
from teamlore.core.locations import state_dir_path
from teamlore.core.lock import file_lock
from teamlore.core.paths import FILE_MODE, display_path, state_dir, working_directory

LOCK_NAME = "watch.lock"
# sun_path holds 108 bytes on Linux, 104 on macOS, with the terminating NUL
SOCKET_PATH_LIMIT = 104 if sys.platform == "darwin" else 108
SESSION_SUFFIXES = (".jsonl",)  # what every provider writes (sessions/providers)
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
# a watch of the readable folders failing this many times in a row (a folder gone or made
# unreadable between the walk and the watch, each time) is a failure: the server stops
WALK_ATTEMPTS = 5


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
            server.event("stopped")


# set by Ctrl-C or SIGTERM: a command interrupted by it is not answered (its client runs it)
_stopping = threading.Event()


class _Stopped(BaseException):
    """Ctrl-C or SIGTERM, raised where the server is. Not a KeyboardInterrupt: one that leaves
    code compiled from a string (`eval` and `exec`, which typer's annotations and dataclasses run)
    makes the interpreter exit by SIGINT at the end even once it is caught, and a stopped server
    exits 0. Not an Exception either, so no handler of a command's own takes it for a failure."""


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM end the block, also in the middle of a request: the command's own
    handling of Ctrl-C (exit 130) must not become its client's answer."""

    def stop(signum: int, frame: object) -> None:
        _stopping.set()
        raise _Stopped

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
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
        self.index_synced = _file_identity(self.index)
        self.sync_stopped = False  # Ctrl-C or SIGTERM came in the middle of a sync
        # while a sync waits for the index to change (INDEX_CODES): the index file's state then
        self.held: tuple[int, ...] | None = None
        self.failure: tuple[str, str] | None = None  # the refusal logged last, until a sync works
        self.unreadable: set[str] = set()  # the unreadable folders logged, while they stay so
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
        if _file_identity(self.index) != self.index_synced and not self.changed.is_set():
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
            self.index_synced = _file_identity(self.index)
        self.failure = None
        self._watch_links()
        self.event(
            "synced",
            changedFiles=result["files"]["changed"],
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
        """One line of the server's log: JSON lines with --format json."""
        if self.fmt is OutputFormat.json:
            sys.stdout.write(json_text({"event": name, **fields}) + "\n")
        else:
            for line in event_lines(name, fields, terminal=sys.stdout.isatty()):
                sys.stdout.write(line + "\n")
        sys.stdout.flush()


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
    "synced": "synced: {changedFiles}, {turnsWritten} written; the index holds {turns}.",
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
_COUNTED_NOUNS = {
    "folders": "session folder",
    "changedFiles": "changed file",
    "turnsWritten": "turn",
    "turns": "turn",
}


def event_lines(name: str, fields: dict[str, Any], *, terminal: bool) -> list[str]:
    """An event of the text log: wrapped at words on a terminal, where a person reads it, as
    teamlore's own words are; one line in a log file or a pipe, to grep."""
    text = _event_text(name, fields)
    return output.wrapped_lines("", text) if terminal else [text]


def _event_text(name: str, fields: dict[str, Any]) -> str:
    phrased = {
        key: counted(value, _COUNTED_NOUNS[key]) if key in _COUNTED_NOUNS else value
        for key, value in fields.items()
    }
    return _EVENT_TEXT[name].format(**phrased)


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


def _session_file(change: object, path: str) -> bool:
    """A session file, or a folder that came (made, or moved in with its sessions: a backup
    restored, a Codex day folder); its files made no event of their own. A symlink to a folder
    is not one: sync does not enter those (docs/sessions.md)."""
    if path.endswith(SESSION_SUFFIXES):
        return True
    import watchfiles

    return change == watchfiles.Change.added and os.path.isdir(path) and not os.path.islink(path)


def _through_a_linked_folder(path: str, roots: Sequence[Path]) -> bool:
    """Whether a folder between its watched root and `path` is a symlink. The watch follows
    such links, but sync does not enter them: a write there would start a sync that changes
    nothing."""
    for root in roots:
        if not path.startswith(f"{root}{os.sep}"):
            continue
        folder = str(root)
        for part in path[len(folder) + 1 :].split(os.sep)[:-1]:
            folder = os.path.join(folder, part)
            if os.path.islink(folder):
                return True
        return False
    return False


class _WatchThread(threading.Thread):
    """A watcher's thread. Whatever ends it other than `stop` is kept in `failure`, never
    printed: the server checks it at every turn of its loop and stops (`WATCH_NOTIFY_FAILED`),
    since a server that no longer watches would keep the index stale unseen."""

    def __init__(self, name: str, changed: threading.Event) -> None:
        super().__init__(name=name, daemon=True)
        self.changed = changed
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            self.watch()
        except BaseException as exc:  # the server's loop reports it and stops
            self.failure = exc

    def watch(self) -> None:
        raise NotImplementedError


class Watcher(_WatchThread):
    """Sets `changed` when a session file under the roots changes, or a folder comes
    (watchfiles: inotify on Linux, FSEvents on macOS); the server syncs on its own thread."""

    def __init__(self, roots: list[Path], changed: threading.Event) -> None:
        super().__init__("teamlore-watch", changed)
        self.roots = roots
        self.changed.set()  # the first sync runs at start
        # the folders under the roots that cannot be read (their mode or owner), as last walked:
        # the server logs each once; the rest is watched folder by folder
        self.unreadable: tuple[str, ...] = ()

    def watch(self) -> None:
        if not self.roots:
            return
        try:
            _set_on_change(self.roots, self.wanted, self.changed, self.stop, recursive=True)
            return
        except OSError:
            # one folder that cannot be read fails the whole recursive watch (a folder gone
            # meanwhile too): watch each folder that can be, below
            pass
        failed = 0
        while not self.stop.is_set():
            try:
                self._watch_each_folder()
                failed = 0
            except (FileNotFoundError, PermissionError):
                # a folder went away, or became unreadable, between the walk and the watch
                failed += 1
                if failed == WALK_ATTEMPTS:
                    raise
                self.stop.wait(SELECT_SECONDS)

    def _watch_each_folder(self) -> None:
        """Watch every folder under the roots that can be read, each on its own, until one
        comes or an unreadable one changes (its mode, say): then walk the roots again."""
        folders, self.unreadable = _readable_folders(self.roots)
        if not folders:
            self.stop.wait()  # the roots went away: the server watches them anew when they come
            return
        again = threading.Event()
        unreadable = set(self.unreadable)

        def wanted(change: object, path: str) -> bool:
            import watchfiles

            if path in unreadable or (change == watchfiles.Change.added and os.path.isdir(path)):
                again.set()
            return path in unreadable or self.wanted(change, path)

        self.changed.set()  # what came in the folders just found before they were watched
        _set_on_change(
            folders, wanted, self.changed, _EitherEvent(self.stop, again), recursive=False
        )

    def wanted(self, change: object, path: str) -> bool:
        return _session_file(change, path) and not _through_a_linked_folder(path, self.roots)


class _EitherEvent:
    """Set when either event is (what watchfiles' `stop_event` needs: `is_set`)."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


def _readable_folders(roots: Sequence[Path]) -> tuple[list[str], tuple[str, ...]]:
    """Every folder under `roots` that can be read, and those that cannot (their mode or
    owner). A symlinked folder is not entered, as sync does not enter it."""
    folders: list[str] = []
    unreadable: list[str] = []

    def refused(exc: OSError) -> None:
        if isinstance(exc, PermissionError) and exc.filename:
            unreadable.append(os.fsdecode(exc.filename))

    for root in roots:
        for folder, _subfolders, _files in os.walk(root, onerror=refused):
            folders.append(folder)
    return folders, tuple(unreadable)


class LinkWatcher(_WatchThread):
    """Sets `changed` when a file that a symlinked session file names is written: it watches
    each such file's folder, not its subfolders (the folder may be any folder, a home say)."""

    def __init__(self, files: frozenset[str], changed: threading.Event) -> None:
        super().__init__("teamlore-watch-links", changed)
        self.files = files

    def watch(self) -> None:
        folders = sorted({os.path.dirname(f) for f in self.files} - {""})
        folders = [folder for folder in folders if os.path.isdir(folder)]
        if not folders:
            return
        with contextlib.suppress(OSError):  # a folder gone meanwhile: the next sync looks again
            _set_on_change(
                folders,
                lambda _change, path: path in self.files,
                self.changed,
                self.stop,
                recursive=False,
            )


def _set_on_change(
    paths: Sequence[Path | str],
    watch_filter: Callable[[Any, str], bool],
    changed: threading.Event,
    stop: threading.Event | _EitherEvent,
    *,
    recursive: bool,
) -> None:
    """Set `changed` at each batch of changes under `paths` that `watch_filter` keeps, until
    `stop` (watchfiles: inotify on Linux, FSEvents on macOS; changes within 1.6 s are one).
    A path that cannot be watched fails them all: watchfiles' `ignore_permission_denied`
    would also pass over the system's limit of watches, leaving folders unwatched unseen."""
    import watchfiles

    for _ in watchfiles.watch(
        *paths,
        watch_filter=watch_filter,
        recursive=recursive,
        debounce=1600,
        step=200,
        stop_event=stop,
        raise_interrupt=False,
        ignore_permission_denied=False,  # not WATCHFILES_IGNORE_PERMISSION_DENIED's choice
    ):
        changed.set()
