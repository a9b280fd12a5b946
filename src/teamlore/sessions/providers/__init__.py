"""Provider adapters. Adding a provider: write one module with an `Adapter`, list it here and
name where its client writes sessions (`default_roots`)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from teamlore.core import errors
from teamlore.core.paths import display_path

if TYPE_CHECKING:  # the session model loads with an adapter, not with the provider list
    from teamlore.sessions.model import Adapter


class Source(NamedTuple):
    """A folder (or file) of one provider's sessions to index."""

    provider: str
    root: Path

    def looked_at(self) -> os.stat_result | OSError | None:
        """The root's `stat`; None when nothing is there, the error when it cannot be looked
        at: a folder on the way the user may not enter (`sudo codex` can leave `~/.codex`
        root's). pathlib's `exists()` raises there, and a sync or `status` refused whole."""
        try:
            return os.stat(self.root)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            return exc

    def to_json(self) -> dict[str, object]:
        """How `sync` and `status` show the source: its path, whether it is there, and why it
        cannot be read when it cannot (`unreadable`, else None)."""
        seen = self.looked_at()
        problem = seen if isinstance(seen, OSError) else None
        return {
            "provider": self.provider,
            "path": display_path(self.root),
            "exists": isinstance(seen, os.stat_result),
            "unreadable": (problem.strerror or str(problem)) if problem else None,
        }


PROVIDERS: dict[str, str] = {
    "codex": "teamlore.sessions.providers.codex:CodexAdapter",
    "claude": "teamlore.sessions.providers.claude:ClaudeAdapter",
    "pi": "teamlore.sessions.providers.pi:PiAdapter",
}


def get_adapter(provider: str) -> Adapter:
    module_name, _, class_name = _known(provider).partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    adapter: Adapter = cls()
    return adapter


def default_roots(provider: str) -> list[Path]:
    """Where `provider`'s client writes its sessions (its adapter's `default_roots`), known
    without importing the adapter: `status` and a sync without `--source` name them, and a
    status process needs no parser (docs/architecture.md, "A short CLI process")."""
    _known(provider)
    return _DEFAULT_ROOTS[provider]()


def _claude_roots() -> list[Path]:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured).expanduser() if configured else Path.home() / ".claude"
    return [base / "projects"]


def _codex_roots() -> list[Path]:
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()
    archived = home / "archived_sessions"
    # os.path.isdir is False where the folder cannot be looked at (the sync names `sessions`)
    return [home / "sessions", *([archived] if os.path.isdir(archived) else [])]


def _pi_roots() -> list[Path]:
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    base = Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"
    return [base / "sessions"]


# one entry per provider of PROVIDERS (tests/sessions/test_providers.py)
_DEFAULT_ROOTS: dict[str, Callable[[], list[Path]]] = {
    "claude": _claude_roots,
    "codex": _codex_roots,
    "pi": _pi_roots,
}


def _known(provider: str) -> str:
    """`provider`'s adapter (module:class), or UNKNOWN_PROVIDER."""
    target = PROVIDERS.get(provider)
    if target is None:
        raise errors.TeamloreError(
            errors.UNKNOWN_PROVIDER,
            f"unknown provider {provider!r}; known: {', '.join(sorted(PROVIDERS))}",
        )
    return target
