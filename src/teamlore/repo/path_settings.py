"""The `[paths]` table of config.toml (docs/sessions.md, sessions from other machines): its own
module, so a sync of a state dir whose config has no `[paths]` table never imports pydantic
(docs/architecture.md, "A short CLI process")."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field, field_validator

from teamlore.core.shapes.strict import STRICT


class PathSettings(BaseModel):
    """The `[paths]` table of config.toml (read with `core.config.load_table("paths", …)`).

    `aliases` maps a path prefix as sessions recorded it on another machine or OS to the same
    folder here: `{"C:\\\\Users\\\\me\\\\src" = "/home/me/src", "/Users/me/src" = "~/src"}`."""

    model_config = STRICT

    aliases: dict[str, str] = Field(default_factory=dict)

    @field_validator("aliases")
    @classmethod
    def _absolute(cls, value: dict[str, str]) -> dict[str, str]:
        for foreign, local in value.items():
            if not foreign.strip():
                raise ValueError("an alias needs a non-empty path prefix")
            if not os.path.expanduser(local).startswith("/"):
                raise ValueError(f"alias {foreign!r}: {local!r} is not an absolute path here")
        return value
