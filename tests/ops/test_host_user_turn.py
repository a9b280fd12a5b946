"""`teamlore hook user-turn` (ops/integrations/user_turn.py): a prompt the user typed in Pi is
queued for the personal Writer as one `interactive` (or `rpc`) observation of provenance
`user_explicit`, in the registered repository's context or `global`; the same checks as
`memory_submit_user_turn` refuse a secret or personal data (SENSITIVE_CONTENT_REJECTED, nothing
stored, the notice names the category, never the text) and a disabled provenance; the hook
itself always exits 0 and prints one JSON line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import queued_observations, teamlore_cli
from teamlore.core.config import RepositoryConfig, load_config, save_config
from teamlore.ops.integrations.user_turn import capture
from teamlore.personal.config import PersonalSettings, save_personal_settings

SESSION = "01a234d0-aa89-76de-905c-4811eb41b468"
PROJECT_KEY = "0123456789abcdef01234567"


def configure(home: Path, repo: Path | None = None, **personal: Any) -> None:
    home.mkdir(parents=True, exist_ok=True)
    config = load_config(home)
    if repo is not None:
        config.repositories = [
            RepositoryConfig(path=str(repo), repository_key=PROJECT_KEY, worktree_key="w1")
        ]
        save_config(config, home)
    save_personal_settings(PersonalSettings.model_validate(personal), home)


def turn(text: str, cwd: Path, turn_id: str = "t1", source: str = "interactive") -> dict[str, Any]:
    return {"cwd": str(cwd), "text": text, "source": source, "sessionId": SESSION} | {
        "turnId": turn_id
    }


def queued(home: Path) -> list[dict[str, Any]]:
    return [
        {k: row[k] for k in ("namespace", "key", "text", "scope", "source", "provenance")}
        for row in queued_observations(home)
    ]


def test_a_typed_prompt_is_queued_as_the_users_own_words(home: Path, tmp_path: Path) -> None:
    result = capture(home, "pi", turn("I prefer tabs over spaces", tmp_path))
    assert result == {
        "accepted": True,
        "duplicate": False,
        "state": "pending",
        "contextId": "global",
    }
    [row] = queued(home)
    assert row["text"] == "I prefer tabs over spaces"
    assert (row["source"], row["provenance"], row["scope"]) == (
        "interactive",
        "user_explicit",
        "global",
    )
    assert SESSION not in json.dumps(row)  # the host's session id is kept as a digest only


def test_the_same_turn_twice_is_a_duplicate_and_rpc_is_a_source_too(
    home: Path, tmp_path: Path
) -> None:
    capture(home, "pi", turn("hello there", tmp_path))
    assert capture(home, "pi", turn("hello there", tmp_path))["duplicate"] is True
    capture(home, "pi", turn("over rpc", tmp_path, "t2", source="rpc"))
    assert [r["source"] for r in queued(home)] == ["interactive", "rpc"]


def test_a_prompt_in_a_registered_repository_goes_to_its_project_context(
    home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    configure(home, repo, allowed_scopes=["global", "project:*"])
    result = capture(home, "pi", turn("this repo uses pnpm", repo / "src"))
    assert result["contextId"] == f"project:{PROJECT_KEY}"
    configure(home, repo, allowed_scopes=["global"])  # projects not allowed: global instead
    assert capture(home, "pi", turn("again", repo, "t2"))["contextId"] == "global"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("call me at +1 415 555 0100 tomorrow", "pii.phone"),
        ("my card is 4111 1111 1111 1111", "pii.card"),
        ("mail me: jane.doe@example.com", "pii.email"),
    ],
)
def test_personal_data_is_refused_never_stored_and_named_by_category(
    home: Path, tmp_path: Path, text: str, rule: str
) -> None:
    result = capture(home, "pi", turn(text, tmp_path))
    assert result["accepted"] is False
    assert result["code"] == "SENSITIVE_CONTENT_REJECTED"
    assert rule in result["notice"] and "allowed_pii" in result["notice"]
    assert text not in json.dumps(result)
    assert queued(home) == []


def test_a_category_allowed_on_purpose_goes_through(home: Path, tmp_path: Path) -> None:
    configure(home, allowed_pii=["email"])
    assert capture(home, "pi", turn("mail me: jane.doe@example.com", tmp_path))["accepted"]


def test_user_turns_turned_off_in_config_are_refused(home: Path, tmp_path: Path) -> None:
    configure(home, allowed_provenance=["document_import"])
    result = capture(home, "pi", turn("remember this", tmp_path))
    assert result["code"] == "SUBMISSION_DISABLED" and "allowed_provenance" in result["notice"]
    assert queued(home) == []


@pytest.mark.parametrize(
    "payload",
    [
        {"cwd": "/x", "text": "hi", "source": "extension", "sessionId": "s", "turnId": "t"},
        {"cwd": "/x", "text": "hi", "source": "interactive", "sessionId": "s", "turnId": "a b"},
        {"cwd": "/x", "text": "hi", "source": "rpc", "sessionId": "s", "turnId": "t", "x": 1},
        {"cwd": "/x", "text": "  ", "source": "interactive", "sessionId": "s", "turnId": "t"},
    ],
)
def test_a_malformed_turn_is_refused_with_a_code_and_nothing_queued(
    home: Path, payload: dict[str, Any]
) -> None:
    result = capture(home, "pi", payload)
    assert result["accepted"] is False
    assert result["code"] in ("INVALID_ARGUMENT", "INVALID_TEXT_SIZE")
    assert queued(home) == []


def test_the_hook_prints_one_json_line_and_exits_0_whatever_it_gets(
    home: Path, tmp_path: Path
) -> None:
    ok = teamlore_cli("hook", "user-turn", "--client", "pi", input=json.dumps(turn("hi", tmp_path)))
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["accepted"] is True
    garbage = teamlore_cli("hook", "user-turn", "--client", "pi", input="not json")
    assert garbage.returncode == 0
    assert json.loads(garbage.stdout)["code"] == "INVALID_ARGUMENT"
    assert len(queued(home)) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"source": "extension"}, "source: 'extension' is not one of 'interactive', 'rpc'"),
        ({"turnId": "a b"}, "turnId: String should match pattern '^[A-Za-z0-9_-]{1,128}$'"),
        ({"sessionId": ""}, "sessionId: String should have at least 1 character"),
        ({"text": 3}, "text: Input should be a valid string"),
        ({"x": 1}, "x: Extra inputs are not permitted"),
    ],
)
def test_a_malformed_turn_is_refused_in_the_words_of_a_pydantic_request(
    home: Path, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    result = capture(home, "pi", turn("hi", tmp_path) | change)
    assert (result["code"], result["message"]) == ("INVALID_ARGUMENT", message)
    assert queued(home) == []


def test_a_personal_table_is_read_by_its_schema_and_refuses_in_its_words(
    home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[personal]\nallowed_scopes = ["nowhere"]\n')
    result = capture(home, "pi", turn("I prefer tabs", tmp_path))
    assert result["code"] == "CONFIG_INVALID"
    assert "nowhere" in result["message"]
    assert queued(home) == []
