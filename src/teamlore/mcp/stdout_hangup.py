"""Noticing that the MCP client closed the reading end of the server's stdout.

The SDK reads stdin in an AnyIO worker thread that cancellation must wait for: when the client
stops reading (stdout's pipe breaks) but keeps stdin open, the server could not stop until the
client wrote another line or closed stdin, holding its locks all that time. The SDK's reader
stays (it answers every frame sent before stdin closes); instead a daemon thread waits in
`poll()` on a duplicate of stdout's pipe, which reports POLLERR/POLLHUP once no process reads
it any more, and then ends the process through the caller's `on_hangup`.

Only a pipe or a socket is watched: a file or a terminal on stdout has no reader that can go
away. A socket whose peer only shut down its writing half is not a hangup (POLLHUP needs both).
Once the client's input ends the watch is disarmed: the usual exit then runs, and a tool call
still in flight finishes (its write lands) however long it takes.
"""

from __future__ import annotations

import fcntl
import os
import select
import stat
import sys
import threading
from collections.abc import Callable
from contextlib import suppress

# a client that closes stdout and then stdin (or exits, closing both) leaves through the normal
# path, quietly, unless something keeps the server past this
NORMAL_EXIT_GRACE_SECONDS = 1.0


class StdoutHangupWatch:
    """A daemon thread that calls `on_hangup` once stdout's reader is gone, unless `disarm`
    came first; `on_hangup` runs under the lock `disarm` takes, so the two never overlap."""

    def __init__(self, stdout_fd: int, on_hangup: Callable[[], None]) -> None:
        self._stdout_fd = stdout_fd
        self._on_hangup = on_hangup
        self._wake_read, self._wake_write = os.pipe()
        self._lock = threading.Lock()
        self._disarmed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="teamlore-mcp-stdout", daemon=True)

    @classmethod
    def arm(cls, on_hangup: Callable[[], None]) -> StdoutHangupWatch | None:
        """Watch fd 1 when it is sys.stdout and a pipe; take the duplicate before the SDK's
        stdio transport claims fd 1 (it points fd 1 at stderr while it serves)."""
        try:
            mode = os.fstat(1).st_mode
            if sys.stdout.fileno() != 1 or not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
                return None
            duplicate = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        except (AttributeError, OSError, ValueError):
            return None
        watch = cls(duplicate, on_hangup)
        watch._thread.start()
        return watch

    def disarm(self) -> None:
        """The server is stopping on its own: never call `on_hangup` after this returns."""
        with self._lock:
            if self._disarmed.is_set():
                return
            self._disarmed.set()
        with suppress(OSError):  # the watch may have ended already and closed its side
            os.write(self._wake_write, b"\0")
        os.close(self._wake_write)

    def _watch(self) -> None:
        try:
            if self._reader_gone() and not self._disarmed.wait(NORMAL_EXIT_GRACE_SECONDS):
                with self._lock:
                    if not self._disarmed.is_set():
                        self._on_hangup()
        finally:
            for fd in (self._stdout_fd, self._wake_read):
                with suppress(OSError):
                    os.close(fd)

    def _reader_gone(self) -> bool:
        poller = select.poll()
        poller.register(self._stdout_fd, 0)  # POLLERR and POLLHUP are always reported
        poller.register(self._wake_read, select.POLLIN)
        hangup = select.POLLERR | select.POLLHUP
        while True:
            for fd, events in poller.poll():
                if fd == self._wake_read:
                    return False
                if events & hangup:
                    return True
                if events & select.POLLNVAL:  # our duplicate is gone: nothing left to watch
                    return False
