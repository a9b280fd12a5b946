"""`memory_init` and relayed user turns: every bad payload gets a stable code and queues nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from personal_world import PROJECT, configure, settings

from teamlore.core import errors
from teamlore.personal import api

LAUNCH = ["global"]


def _payload(**changes: Any) -> dict[str, object]:
    payload: dict[str, object] = {
        "importId": "init-1",
        "contextId": "global",
        "sourceLabel": "chatgpt-desktop",
        "basis": "saved_memories",
        "understanding": "An ecology student who keeps a tortoise.",
        "gaps": "No access to chat history.",
    }
    payload.update(changes)
    return {k: v for k, v in payload.items() if v is not None}


def _init(home: Path, payload: dict[str, object], launch: list[str] = LAUNCH) -> api.SubmitResult:
    return api.enqueue_init(home, payload, client_id="desk", launch_contexts=launch)


@pytest.fixture(autouse=True)
def _configured(home: Path) -> None:
    configure(home, settings())


def test_an_init_is_queued_once_and_a_retry_with_the_same_payload_is_a_duplicate(
    home: Path,
) -> None:
    first = _init(home, _payload())
    again = _init(home, _payload())
    assert (first.duplicate, first.state, again.duplicate) == (False, "pending", True)
    assert first.to_json() == {
        "accepted": True,
        "duplicate": False,
        "state": "pending",
        "contextId": "global",
    }
    assert api.status(home)["observations"] == {"pending": 1}


def test_an_import_id_reused_with_another_payload_is_a_conflict(home: Path) -> None:
    _init(home, _payload())
    with pytest.raises(errors.TeamloreError) as conflict:
        _init(home, _payload(understanding="Something else entirely."))
    assert conflict.value.code == "SUBMISSION_CONFLICT"
    # another client has its own namespace
    other = api.enqueue_init(
        home, _payload(understanding="x y"), client_id="pi", launch_contexts=LAUNCH
    )
    assert other.duplicate is False
    assert api.init_status(home, client_id="pi", import_id="nope") is None


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"understanding": "x" * 32_769}, "INVALID_TEXT_SIZE"),
        ({"understanding": "汉" * 10_923}, "INVALID_TEXT_SIZE"),  # 32 769 UTF-8 bytes
        ({"understanding": "   "}, "INVALID_TEXT_SIZE"),
        ({"gaps": "g" * 4097}, "INVALID_TEXT_SIZE"),
        ({"sourceLabel": "bad\nlabel"}, "INVALID_IMPORT_LABEL"),
        ({"sourceLabel": "tab\tlabel"}, "INVALID_IMPORT_LABEL"),
        ({"sourceLabel": "x" * 65}, "INVALID_IMPORT_LABEL"),
        ({"basis": "vibes"}, "INVALID_IMPORT_BASIS"),
        ({"importId": ""}, "INVALID_IMPORT_ID"),
        ({"importId": "a" * 129}, "INVALID_IMPORT_ID"),
        ({"importId": "naïve"}, "INVALID_IMPORT_ID"),
        ({"contextId": PROJECT}, "CONTEXT_UNAVAILABLE"),
        ({"contextId": "project:other"}, "CONTEXT_UNAVAILABLE"),
        (
            {"understanding": "my key is sk-proj-Ab3dEfGh1jKlMn0pQrStUvWx9z"},
            "SENSITIVE_CONTENT_REJECTED",
        ),
        ({"source": "user"}, "INVALID_ARGUMENT"),
    ],
)
def test_bad_init_payloads_are_refused_and_nothing_is_queued(
    home: Path, changes: dict[str, Any], code: str
) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        _init(home, _payload(**changes))
    assert refused.value.code == code
    assert api.status(home)["observations"] == {}


def test_exactly_32_kib_of_understanding_is_accepted(home: Path) -> None:
    assert _init(home, _payload(understanding="x" * 32_768)).state == "pending"


def test_a_project_context_needs_the_launch_grant(home: Path) -> None:
    assert _init(home, _payload(contextId=PROJECT), launch=["global", PROJECT]).state == "pending"


def test_init_is_disabled_without_agent_observation(home: Path) -> None:
    configure(home, settings(allowed_provenance=["user_explicit"]))
    with pytest.raises(errors.TeamloreError) as disabled:
        _init(home, _payload())
    assert disabled.value.code == "INIT_DISABLED"


def test_relayed_turns_check_ids_text_and_context(home: Path) -> None:
    def relay(**changes: Any) -> api.SubmitResult:
        args: dict[str, Any] = {
            "client_id": "relay",
            "submission_id": "s1",
            "text": "I prefer tabs.",
            "context_id": "global",
            "launch_contexts": LAUNCH,
        }
        args.update(changes)
        return api.relay_user_turn(home, **args)

    assert relay().duplicate is False
    assert relay().duplicate is True
    for changes, code in [
        ({"text": "I prefer spaces."}, "SUBMISSION_CONFLICT"),
        ({"submission_id": "s2", "text": " "}, "INVALID_TEXT_SIZE"),
        ({"submission_id": "s2", "context_id": PROJECT}, "CONTEXT_UNAVAILABLE"),
        ({"submission_id": "bad id"}, "INVALID_ARGUMENT"),
    ]:
        with pytest.raises(errors.TeamloreError) as refused:
            relay(**changes)
        assert refused.value.code == code
