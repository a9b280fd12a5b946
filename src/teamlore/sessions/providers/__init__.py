"""Provider adapters. Adding a provider: write one module with an `Adapter` and list it here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from teamlore.core import errors

if TYPE_CHECKING:  # the session model loads with an adapter, not with the provider list
    from teamlore.sessions.model import Adapter

PROVIDERS: dict[str, str] = {
    "codex": "teamlore.sessions.providers.codex:CodexAdapter",
    "claude": "teamlore.sessions.providers.claude:ClaudeAdapter",
    "pi": "teamlore.sessions.providers.pi:PiAdapter",
}


def get_adapter(provider: str) -> Adapter:
    target = PROVIDERS.get(provider)
    if target is None:
        raise errors.TeamloreError(
            errors.UNKNOWN_PROVIDER,
            f"unknown provider {provider!r}; known: {', '.join(sorted(PROVIDERS))}",
        )
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    adapter: Adapter = cls()
    return adapter
