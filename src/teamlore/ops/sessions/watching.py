"""The session folders `teamlore watch` watches (docs/watch.md, "Keeping the index fresh"):
threads that set an event when a session file changes, a folder comes, or a file a symlinked
session file names is written (watchfiles: inotify on Linux, FSEvents on macOS). The server
(`cli/watch.py`) syncs on its own thread when the event is set."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

SESSION_SUFFIXES = (".jsonl",)  # what every provider writes (sessions/providers)
# a watch of the readable folders failing this many times in a row (a folder gone or made
# unreadable between the walk and the watch, each time) is a failure: the server stops
WALK_ATTEMPTS = 5
WALK_PAUSE_SECONDS = 0.25  # between two such attempts


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
                self.stop.wait(WALK_PAUSE_SECONDS)

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
        if _through_a_linked_folder(path, self.roots):
            return False
        return self._readable_again(change, path) or _session_file(change, path)

    def _readable_again(self, change: object, path: str) -> bool:
        """Whether `path` is a folder that can be read again (its mode or owner changed): sync
        what it holds. One that can no longer be read is added to `unreadable`, for the server
        to log (the watch on it stays); one deleted leaves it, so a folder made under its name
        and made unreadable in turn is logged too."""
        import watchfiles

        if change == watchfiles.Change.deleted and self.unreadable:
            # its deletion brings no mode change; a folder above it deleted takes it too
            self.unreadable = tuple(f for f in self.unreadable if os.path.lexists(f))
        if change != watchfiles.Change.modified or os.path.islink(path) or not os.path.isdir(path):
            return False
        readable = _can_read(path)
        if readable == (path not in self.unreadable):
            return False
        if readable:
            self.unreadable = tuple(f for f in self.unreadable if f != path)
        else:
            self.unreadable = (*self.unreadable, path)
        return readable


class _EitherEvent:
    """Set when either event is (what watchfiles' `stop_event` needs: `is_set`)."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


def _can_read(folder: str) -> bool:
    """Whether `folder`'s entries can be listed, as `os.walk` (and sync) lists them."""
    try:
        with os.scandir(folder):
            return True
    except PermissionError:
        return False
    except OSError:
        return True  # gone meanwhile: the server watches the folders anew


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
