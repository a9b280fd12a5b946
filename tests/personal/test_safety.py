"""The personal preflight: secrets and personal data (a phone number, a card number that passes
the Luhn check, an e-mail address) are refused with SENSITIVE_CONTENT_REJECTED before anything
is queued for the model; `[personal] allowed_pii` lets a category through on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from personal_world import configure, settings

from teamlore.core import errors
from teamlore.personal import api, documents
from teamlore.personal.runtime_db import open_runtime_db
from teamlore.personal.safety import pii_rules


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("Call me on +44 20 7946 0958 after six.", ["pii.phone"]),
        ("My mobile is 13812345678.", ["pii.phone"]),
        ("office (030) 901-820-11", ["pii.phone"]),
        ("card 4111 1111 1111 1111 for the office", ["pii.card"]),
        ("write to jane.doe@example.org", ["pii.email"]),
        # not personal data: a number that fails Luhn, dates, versions, ports, a timestamp
        ("order 4111 1111 1111 1112 shipped", []),
        ("released 2026-11-30, v1.2.3 on port 8080 at 1700000000", []),
        ("I prefer answers in Chinese with English terms", []),
    ],
)
def test_personal_data_is_found_by_category(text: str, rules: list[str]) -> None:
    assert pii_rules(text) == rules


def _queued(home: Path) -> int:
    conn = open_runtime_db(documents.personal_root(home))
    try:
        return int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])
    finally:
        conn.close()


def _relay(home: Path, text: str, number: int) -> api.SubmitResult:
    return api.relay_user_turn(
        home,
        client_id="codex",
        submission_id=f"turn-{number}",
        text=text,
        context_id="global",
        launch_contexts=["global"],
    )


def test_a_user_turn_with_personal_data_is_refused_unless_allowed(home: Path) -> None:
    configure(home, settings(), project=False)
    for number, (text, rule) in enumerate(
        [
            ("My phone is +1 415 555 0132, text me there.", "pii.phone"),
            ("Use card 5555 5555 5555 4444 for work purchases.", "pii.card"),
            ("Send the invoices to jane.doe@example.org please.", "pii.email"),
        ]
    ):
        with pytest.raises(errors.TeamloreError) as refused:
            _relay(home, text, number)
        assert refused.value.code == "SENSITIVE_CONTENT_REJECTED"
        assert refused.value.details["rules"] == [rule]
        assert "example.org" not in refused.value.message and "5555" not in refused.value.message
    assert _queued(home) == 0
    configure(home, settings(allowed_pii=["email"]), project=False)
    assert _relay(home, "Send the invoices to jane.doe@example.org please.", 9).accepted
    with pytest.raises(errors.TeamloreError):
        _relay(home, "My phone is +1 415 555 0132.", 10)
    assert _queued(home) == 1
