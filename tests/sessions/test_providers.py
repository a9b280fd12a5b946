"""The provider list (sessions/providers/__init__.py): each provider's adapter loads by name, and
where its client writes sessions is known without importing the adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from teamlore.core import errors
from teamlore.sessions.providers import PROVIDERS, default_roots, get_adapter


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_every_provider_names_its_own_session_folders(
    provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(variable, raising=False)
    roots = default_roots(provider)
    assert roots == get_adapter(provider).default_roots()
    # a provider's folders are its own: no two providers share one
    others = [root for name in PROVIDERS if name != provider for root in default_roots(name)]
    assert roots and not set(roots) & set(others)


def test_an_unknown_provider_is_refused() -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        default_roots("cursor")
    assert refused.value.code == errors.UNKNOWN_PROVIDER.code


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_suite_never_reads_the_running_users_session_folders(provider: str) -> None:
    """tests/conftest.py points every client's session folder at one that does not exist, so
    a developer's own sessions never reach a test's sync (a Pi session in ~/.pi once made the
    import budget's sync embed it and load the tokenizer it says a sync never loads)."""
    for root in default_roots(provider):
        assert not root.exists()
        assert Path.home() not in root.parents
