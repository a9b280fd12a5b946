"""`teamlore hook user-turn`: a prompt the user typed in a host, queued for the personal Writer.

The Pi extension (integrations/pi.py) pipes `{cwd, text, source, sessionId, turnId}` for every
prompt the user typed (`source` interactive) or sent over Pi's RPC (`rpc`); this queues it as one
observation with that source, so its provenance class is `user_explicit` (glossary: provenance
class) and it waits for the Writer's batch triggers like a relayed turn (docs/personal.md). The
same checks as `memory_submit_user_turn` apply, through the same function (`api.relay_user_turn`):
`[personal] allowed_provenance` must include `user_explicit`, the context must be allowed, and
the PII check refuses a secret or personal data (SENSITIVE_CONTENT_REJECTED), never storing it.

The context is the registered repository containing `cwd` (when `allowed_scopes` allows it),
else `global`. The host's session id is kept only as a digest (the conversation key): a provider
session id never lands in the state dir as such.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.ops.plain_request import PlainRequest, param

NOTICES = {
    errors.SENSITIVE_CONTENT_REJECTED.code: "prompt not remembered: it holds {rules} "
    "(never stored; `[personal] allowed_pii` in config.toml lets a category through)",
    errors.SUBMISSION_DISABLED.code: "prompt not remembered: user turns are off "
    "([personal] allowed_provenance in config.toml has no user_explicit)",
}


SOURCES = ("interactive", "rpc")
TURN_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def _source(value: str) -> str:
    if value not in SOURCES:
        # in teamlore's words, as `errors.first_problem` says a wrong choice
        raise ValueError(f"{value!r} is not one of {', '.join(map(repr, SOURCES))}")
    return value


def _turn_id(value: str) -> str:
    if not TURN_ID.match(value):
        raise ValueError(f"String should match pattern '{TURN_ID.pattern}'")
    return value


# checked by hand, in a pydantic request's words: the hook runs on every prompt the user types, and
# pydantic's import would be most of its process (docs/architecture.md, "A short CLI process")
class HostTurn(PlainRequest):
    """What the host extension sends on stdin."""

    cwd: str = param(min_length=1, max_length=4096)
    text: str = param()
    source: str = param(convert=_source)
    sessionId: str = param(min_length=1, max_length=256)
    turnId: str = param(convert=_turn_id)


def _context(home: Path, cwd: str) -> str:
    from teamlore.personal.api import load_policy
    from teamlore.personal.reader import workspace_context

    try:
        project = workspace_context(home, cwd)
    except errors.TeamloreError:
        return "global"
    allowed = load_policy(home, readonly=True).scope_allowed(project)
    return project if allowed else "global"


def capture(home: Path, client: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Queue one host-captured user turn; the outcome as JSON (a refusal is data, not raised)."""
    from teamlore.personal import api

    try:
        turn = HostTurn.model_validate(payload)
    except errors.TeamloreError as err:
        return _refused(err.code, err.message)
    conversation = hashlib.sha256(f"{client}\0{turn.sessionId}".encode()).hexdigest()[:32]
    try:
        context = _context(home, turn.cwd)
        result = api.relay_user_turn(
            home,
            client_id=client,
            submission_id=turn.turnId,
            text=turn.text,
            context_id=context,
            launch_contexts=[context],
            conversation_id=conversation,
            source=turn.source,
        )
    except errors.TeamloreError as err:
        rules = err.details.get("rules") or []
        return _refused(err.code, err.message, ", ".join(str(r) for r in rules))
    return result.to_json()


def _refused(code: str, message: str, rules: str = "") -> dict[str, Any]:
    notice = NOTICES.get(code, "prompt not remembered ({code}: {message})")
    return {
        "accepted": False,
        "code": code,
        "message": message,
        "notice": notice.format(code=code, message=message, rules=rules),
    }
