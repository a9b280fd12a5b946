"""The write checks' view of the `[personal]` settings (personal/policy.py): without a
`[personal]` table in config.toml it answers as the schema's defaults do, without loading the
schema; with one, the schema reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from teamlore.personal.api import load_policy
from teamlore.personal.config import PersonalSettings
from teamlore.personal.policy import DefaultPolicy

SCOPES = ["global", "project:abc", "project:*", "nowhere", ""]
PROVENANCES = ["user_explicit", "agent_observation", "document_import", "mcp_user_submission"]


def test_the_default_policy_answers_as_the_schemas_defaults() -> None:
    defaults, policy = PersonalSettings(), DefaultPolicy()
    assert [policy.scope_allowed(s) for s in SCOPES] == [defaults.scope_allowed(s) for s in SCOPES]
    assert [policy.provenance_allowed(p) for p in PROVENANCES] == [
        defaults.provenance_allowed(p) for p in PROVENANCES
    ]
    assert list(policy.allowed_pii) == defaults.allowed_pii
    assert policy.max_request_bytes == defaults.max_request_bytes


@pytest.mark.parametrize("config", [None, "", "[personal]\n"])
def test_without_a_personal_table_the_policy_is_the_default(
    tmp_path: Path, config: str | None
) -> None:
    if config is not None:
        (tmp_path / "config.toml").write_text(config)
    assert load_policy(tmp_path, readonly=True) == DefaultPolicy()


def test_a_personal_table_is_read_by_its_schema(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[personal]\nallowed_scopes = ["project:*"]\n')
    policy = load_policy(tmp_path, readonly=True)
    assert isinstance(policy, PersonalSettings)
    assert policy.scope_allowed("project:abc") and not policy.scope_allowed("global")
