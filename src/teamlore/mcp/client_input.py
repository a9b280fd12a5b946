"""The client's frames as the MCP stdio server reads them from fd 0.

The SDK reads stdin in an AnyIO worker thread, and a cancelled task waits for that thread: when
the client stops reading (the server's stdout pipe breaks) but keeps stdin open, the server
could not stop until the client wrote another line or closed stdin, holding its locks all that
time. Here each read runs in a daemon thread the server waits for cancellably, so a write that
fails ends the server at once, and a read still pending holds neither the server nor the exit.

fd 0 is claimed as the SDK claims it: the server reads a private duplicate and fd 0 becomes
/dev/null, so a child process or a stray read never takes a client's frame.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

READ_BYTES = 64 * 1024


class ClientLines:
    """The newline-delimited frames of one file descriptor, decoded as the SDK decodes them
    (UTF-8, undecodable bytes replaced, so a bad frame gets its JSON-RPC error)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        pending = bytearray()
        searched = 0
        while True:
            newline = pending.find(b"\n", searched)
            if newline >= 0:
                line = bytes(pending[: newline + 1])
                del pending[: newline + 1]
                searched = 0
                yield line.decode("utf-8", "replace")
                continue
            searched = len(pending)
            chunk = await read_in_daemon_thread(self.fd)
            if not chunk:  # the client closed stdin
                if pending:
                    yield bytes(pending).decode("utf-8", "replace")
                return
            pending += chunk


async def read_in_daemon_thread(fd: int) -> bytes:
    """`os.read(fd)` in a daemon thread; cancelling the wait abandons the read."""
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: list[bytes | OSError] = []

    def read() -> None:
        try:
            outcome.append(os.read(fd, READ_BYTES))
        except OSError as exc:
            outcome.append(exc)
        # the server may have stopped while this read waited: nobody is left to tell
        with suppress(Exception):
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=read, name="teamlore-mcp-stdin", daemon=True).start()
    await done.wait()
    if isinstance(outcome[0], OSError):
        raise outcome[0]
    return outcome[0]


def claim_client_input() -> Any:
    """The client's frames for `stdio_server(stdin=…)`, with fd 0 claimed for the server; None
    (the SDK reads stdin itself) when stdin is not fd 0, as in a test that replaced it."""
    try:
        if sys.stdin.fileno() != 0:
            return None
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (AttributeError, OSError, ValueError):
        return None
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
    finally:
        os.close(devnull)
    return ClientLines(private)
