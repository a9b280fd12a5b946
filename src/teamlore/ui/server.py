"""Serving the review page: a uvicorn server on 127.0.0.1 only, on a port the caller names or
a free one, reachable through a one-time login URL (`ui.security`)."""

from __future__ import annotations

import socket
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn

from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.app import create_app
from teamlore.ui.review_pages import review_kinds
from teamlore.ui.security import Guard

HOST = "127.0.0.1"


def listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise errors.TeamloreError(
            errors.UI_PORT_UNAVAILABLE, f"cannot listen on {HOST}:{port}: {exc.strerror}", port=port
        ) from None
    sock.listen(128)
    return sock


class UiServer:
    """One review page for one repository. `run()` blocks; `start()` runs it in a thread (tests)."""

    def __init__(self, repository: Path, *, home: Path | None = None, port: int = 0) -> None:
        self.repository = repository
        self.home = home
        self.sock = listen(port)
        self.guard = Guard(port=int(self.sock.getsockname()[1]))
        self.app = create_app(repository, home=home, guard=self.guard)
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.guard.port}"

    def login_url(self, path: str = "/queue") -> str:
        return self.guard.login_url(path)

    def run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        finally:
            self.sock.close()

    def start(self) -> UiServer:
        self._thread = threading.Thread(target=self.run, name="teamlore-ui", daemon=True)
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            threading.Event().wait(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)


def check_repository(repository: Path, home: Path | None) -> dict[str, Any]:
    """Refuse early (with the operation's code) when the folder is not a registered worktree;
    else what the queue will show: `count` candidates waiting for review, of every kind
    `memory.review` accepts (`counts` per kind; a kind whose review is refused counts none and
    is said so on the queue)."""
    ctx = OpContext(cwd=repository, home=home)
    counts = {"entry": run_operation("memory.review", ctx, {"kind": "entry"})["count"]}
    for kind in review_kinds():
        if kind not in counts:
            try:
                counts[kind] = run_operation("memory.review", ctx, {"kind": kind})["count"]
            except errors.TeamloreError:
                counts[kind] = 0
    return {"count": sum(counts.values()), "counts": counts}


def serve(
    repository: Path,
    *,
    home: Path | None = None,
    port: int = 0,
    open_browser: bool = True,
    announce: Callable[[str, dict[str, Any]], None] = lambda url, review: None,
) -> None:
    """Check the repository, listen, print the one-time URL, open it, serve until Ctrl-C."""
    review = check_repository(repository, home)
    server = UiServer(repository, home=home, port=port)
    url = server.login_url("/queue")
    announce(url, review)
    if open_browser:
        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    server.run()
