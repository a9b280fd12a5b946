"""Bearer tokens of `org serve` (docs/org.md "Serving: `teamlore org serve`"): create (printed
once, stored as a hash), revoke, list; and `authenticate`, the server's check of a request's
token. CLI-only: whoever runs the index hands tokens out."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.shapes.strict import STRICT
from teamlore.core.timeutil import now_instant
from teamlore.ops.org.stores import org_store
from teamlore.ops.registry import OpContext, operation
from teamlore.org.tokens import TOKEN_NAME, bearer, new_token, token_digest


class TokenRequest(BaseModel):
    model_config = STRICT

    name: str = Field(pattern=TOKEN_NAME.pattern, description="Who or what the token is for.")


@operation("org.token_create", input_model=TokenRequest, side_effect="state-write")
def org_token_create(ctx: OpContext, request: TokenRequest) -> dict[str, Any]:
    """Create a bearer token for org serve; it is shown once, only its hash is kept."""
    token = new_token()
    org_store(ctx).add_token(request.name, token_digest(token), now_instant())
    return {"name": request.name, "token": token}


@operation("org.token_revoke", input_model=TokenRequest, side_effect="state-write")
def org_token_revoke(ctx: OpContext, request: TokenRequest) -> dict[str, Any]:
    """Revoke a token of org serve: its next request is refused."""
    if not org_store(ctx).revoke_token(request.name, now_instant()):
        raise errors.TeamloreError(
            errors.ORG_TOKEN_UNKNOWN, f"no live token is named {request.name}"
        )
    return {"name": request.name, "revoked": True}


class EmptyRequest(BaseModel):
    model_config = STRICT


@operation("org.token_list", input_model=EmptyRequest, side_effect="read")
def org_token_list(ctx: OpContext, request: EmptyRequest) -> dict[str, Any]:
    """List the tokens of org serve (names and dates; never a token)."""
    return {
        "tokens": [
            {"name": t.name, "createdAt": t.created_at, "revokedAt": t.revoked_at}
            for t in org_store(ctx).tokens()
        ]
    }


def authenticate(ctx: OpContext, authorization: str | None) -> str | None:
    """The name of the live token an `Authorization` header carries, or None."""
    token = bearer(authorization)
    if token is None:
        return None
    return org_store(ctx).token_named(token_digest(token))
