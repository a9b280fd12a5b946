"""What every route of the page shares: the running page's state (`UiState`), rendering a
template, refusals and error pages, form fields and the CSRF check, redirects."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.advice import advice_for
from teamlore.ui.decisions import Decisions
from teamlore.ui.render import environment
from teamlore.ui.security import CSRF_FIELD, Guard


@dataclass
class UiState:
    """One running page: where it points, its guard, and the person's work in progress."""

    repository: Path  # the owner's worktree root (ops.owner.resolve_owner), never the raw cwd
    home: Path | None
    guard: Guard
    decisions: Decisions = field(default_factory=Decisions)
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)  # planId → prepare result
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # planId → promote result
    flashes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # the review items in the queue's order as the queue (or plan) page last loaded them: a
    # candidate's page takes its place, previous and next from it, and loads only itself
    shown_queue: list[dict[str, Any]] | None = None

    def run(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one registered operation for this repository (raises TeamloreError)."""
        ctx = OpContext(cwd=self.repository, home=self.home)
        return run_operation(name, ctx, {k: v for k, v in payload.items() if v is not None})

    async def arun(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        return await run_in_threadpool(self.run, name, payload)

    def flash(self, request: Request, kind: str, text: str) -> None:
        with self.lock:
            self.flashes.setdefault(session(request), []).append((kind, text))

    def take_flashes(self, request: Request) -> list[tuple[str, str]]:
        with self.lock:
            return self.flashes.pop(session(request), [])


def session(request: Request) -> str:
    return str(request.scope["state"]["session"])


def ui_state(request: Request) -> UiState:
    state: UiState = request.app.state.ui
    return state


_ENV = environment()


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    state = ui_state(request)
    context.setdefault("error", None)
    html = _ENV.get_template(template).render(
        request=request,
        path=request.url.path,
        csrf=state.guard.csrf_token(session(request)),
        csrf_field=CSRF_FIELD,
        repository=state.repository.name,
        flashes=state.take_flashes(request),
        **context,
    )
    return HTMLResponse(html, status_code=status)


def refusal(err: errors.TeamloreError) -> dict[str, Any]:
    """A refusal as the page shows it: the operation's code and message, and what to do."""
    return {
        "code": err.code,
        "message": err.message,
        "summary": err.error.summary,
        "advice": advice_for(err.code),
        "details": err.details,
    }


def error_page(request: Request, err: errors.TeamloreError, title: str) -> HTMLResponse:
    status = 404 if err.code.endswith("NOT_FOUND") else 409
    return page(request, "error.html", status=status, title=title, error=refusal(err))


async def checked_form(request: Request) -> FormData:
    """The posted form, after its CSRF token was checked (refused before anything runs)."""
    form = await request.form()
    if not ui_state(request).guard.csrf_ok(session(request), _text(form.get(CSRF_FIELD))):
        raise CsrfRefused()
    return form


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def form_text(form: FormData, name: str) -> str:
    return _text(form.get(name)) or ""


class CsrfRefused(Exception):
    pass


async def _csrf_refused(request: Request, exc: Exception) -> Response:
    body = (
        f"<!doctype html><meta charset=utf-8><title>teamlore: refused</title>"
        f"<h1>Refused: {errors.UI_CSRF_INVALID.code}</h1><p>{errors.UI_CSRF_INVALID.summary}</p>"
    )
    return HTMLResponse(
        body, status_code=403, headers={"x-teamlore-error": errors.UI_CSRF_INVALID.code}
    )


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)
