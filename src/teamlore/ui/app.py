"""The review page as a Starlette application: a thin adapter over the operation registry.

Every page calls registered operations (`memory.review`, `memory.prepare`, `memory.promote`,
`memory.discard`, `memory.search`, `memory.list`, `sessions.search`, …) with the same payloads
the CLI and MCP send, so results and refusals (codes, messages) are the same; the page only
lays them out and keeps the person's per-statement decisions until they prepare a plan
(`ui.decisions`). Access control is `ui.security`. Routes live in `review_pages` and
`browse_pages`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from teamlore.ops.owner import resolve_owner
from teamlore.ops.registry import OpContext
from teamlore.ui import browse_pages, review_pages
from teamlore.ui.pages import CsrfRefused, UiState, _csrf_refused, redirect
from teamlore.ui.security import Guard, GuardMiddleware


def create_app(repository: Path, *, home: Path | None = None, guard: Guard | None = None) -> Any:
    """The ASGI application (guarded) for one repository: `repository` is the folder the page
    was started in (the worktree, or a folder holding one registered worktree)."""
    static = StaticFiles(packages=[("teamlore.ui", "static")])
    routes = [
        Route("/", lambda request: redirect("/queue")),
        *review_pages.routes(),
        *browse_pages.routes(),
        Mount("/static", app=static, name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={CsrfRefused: _csrf_refused})
    state_guard = guard or Guard()
    # the owner, resolved once as every operation resolves it (owner rule 3: from a folder that
    # holds one registered worktree, that worktree): the header names it, sessions filter by it
    owner = resolve_owner(OpContext(cwd=repository, home=home)).worktree_root
    app.state.ui = UiState(repository=owner, home=home, guard=state_guard)
    return GuardMiddleware(app, state_guard)
