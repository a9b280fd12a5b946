"""Memory and sessions: read-only views over `memory.list` / `memory.show` / `memory.search`
(the same search as `teamlore memory search`) and `sessions.list` / `sessions.search` /
`sessions.show` (local only: sessions never reach git)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from teamlore.core import errors
from teamlore.ops.sessions import SHOW_PAGE_TURNS
from teamlore.ui.pages import error_page, page, refusal, ui_state

MEMORY_KINDS = ("doctrine", "scene", "skill", "entry")
SEARCH_LIMIT = 50
SESSION_LIST_LIMIT = 100


async def memory(request: Request) -> Response:
    state = ui_state(request)
    query = request.query_params.get("q", "").strip()
    kind = request.query_params.get("kind", "")
    listing: dict[str, Any] | None = None
    found: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    try:
        if query:
            found = await state.arun("memory.search", {"query": query, "limit": SEARCH_LIMIT})
        listing = await state.arun("memory.list", {"kind": kind if kind in MEMORY_KINDS else None})
    except errors.TeamloreError as err:
        error = refusal(err)
    return page(
        request,
        "memory.html",
        status=409 if error else 200,
        title="Team memory",
        query=query,
        kind=kind,
        kinds=MEMORY_KINDS,
        listing=listing,
        found=found,
        error=error,
    )


async def memory_document(request: Request) -> Response:
    state = ui_state(request)
    payload = {"kind": request.path_params["kind"], "id": request.path_params["document_id"]}
    try:
        document = await state.arun("memory.show", payload)
    except errors.TeamloreError as err:
        return error_page(request, err, "Memory document")
    return page(request, "memory_document.html", title=document["id"], document=document)


async def sessions(request: Request) -> Response:
    state = ui_state(request)
    query = request.query_params.get("q", "").strip()
    everywhere = request.query_params.get("all") == "1"
    scope = None if everywhere else str(state.repository)
    listing: dict[str, Any] | None = None
    found: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    try:
        if query:
            found = await state.arun(
                "sessions.search", {"query": query, "repository": scope, "limit": SEARCH_LIMIT}
            )
        else:
            listing = await state.arun(
                "sessions.list", {"repository": scope, "limit": SESSION_LIST_LIMIT}
            )
    except errors.TeamloreError as err:
        error = refusal(err)
    return page(
        request,
        "sessions.html",
        status=409 if error else 200,
        title="Sessions",
        query=query,
        everywhere=everywhere,
        listing=listing,
        found=found,
        error=error,
    )


async def session_detail(request: Request) -> Response:
    state = ui_state(request)
    turn = request.query_params.get("turn", "")
    start = request.query_params.get("from", "")
    # a page of turns (docs/sessions.md, "Showing a session"): the one `?from=` asks for, else
    # the page holding the focused turn
    size = SHOW_PAGE_TURNS
    if start.isdigit():
        first = int(start)
    else:
        first = (int(turn) - 1) // size * size + 1 if turn.isdigit() else 1
    try:
        shown = await state.arun(
            "sessions.show",
            {
                "session_key": request.path_params["session_key"],
                "start": max(first, 1),
                "limit": size,
            },
        )
    except errors.TeamloreError as err:
        return error_page(request, err, "Session")
    tool = request.query_params.get("tool", "")
    return page(
        request,
        "session.html",
        title=f"Session {shown['session']['sessionKey'][:12]}",
        shown=shown,
        focus_turn=int(turn) if turn.isdigit() else None,
        focus_tool=int(tool) if tool.isdigit() else None,
    )


def routes() -> list[Route]:
    return [
        Route("/memory", memory),
        Route("/memory/{kind:str}/{document_id:str}", memory_document),
        Route("/sessions", sessions),
        Route("/sessions/{session_key:str}", session_detail),
    ]
