"""The personal preflight: secrets and personal data (a phone number, a card number that passes
the Luhn check, an e-mail address) are refused with SENSITIVE_CONTENT_REJECTED before anything
is queued for the model; `[personal] allowed_pii` lets a category through on purpose. And what
a reader gets of a private key block typed into a document: one mask, BEGIN line to END line."""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import pytest
from personal_world import configure, settings

from teamlore.core import errors
from teamlore.personal import api, documents
from teamlore.personal.runtime_db import open_runtime_db
from teamlore.personal.safety import PRIVATE_KEY_MASK, mask_secrets, pii_rules


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


def _pem_body(seed: int, size: int = 300) -> list[str]:
    """The base64 lines of a private key as a PEM file holds them: 64 characters, a short last."""
    body = base64.b64encode(random.Random(seed).randbytes(size)).decode()
    return [body[i : i + 64] for i in range(0, len(body), 64)]


def _leaked(masked: str, body: list[str]) -> list[str]:
    return [line for line in body if line in masked]


def test_a_private_key_block_is_masked_whole_from_begin_to_end_line() -> None:
    body = _pem_body(1)
    assert len(body[-1]) < 20  # shorter than any token the entropy rule judges
    block = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"])
    text = f"# Profile\n\n## Keys\nMy deploy key:\n{block}\nKept after it.\n"
    masked, found = mask_secrets(text)
    mask = "…[private key]"  # not its length: that tells a key's type and size
    assert masked == f"# Profile\n\n## Keys\nMy deploy key:\n{mask}\nKept after it.\n"
    assert mask == PRIVATE_KEY_MASK and str(len(block)) not in masked
    assert found == [(5, "secret.private-key")]
    assert _leaked(masked, body) == [] and "PRIVATE KEY" not in masked


def test_a_legacy_encrypted_key_with_a_blank_line_inside_and_a_secret_after_it() -> None:
    body = _pem_body(2)
    block = "\n".join(
        [
            "-----BEGIN EC PRIVATE KEY-----",
            "Proc-Type: 4,ENCRYPTED",
            "DEK-Info: AES-128-CBC,3F2C1E4A9B8D7C6E5F4A3B2C1D0E9F8A",
            "",
            *body,
            "-----END EC PRIVATE KEY-----",
        ]
    )
    token = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"  # the shape of one, not a real token
    text = f"# Profile\n\n## Keys\n{block}\nMy token is {token}\n"
    masked, found = mask_secrets(text)
    # the token's mask keeps its length; the key's does not
    assert masked == "# Profile\n\n## Keys\n…[private key]\nMy token is …[40 chars]\n"
    token_line = text.splitlines().index(f"My token is {token}") + 1
    assert found == [(4, "secret.private-key"), (token_line, "secret.github-token")]


def test_a_private_key_block_without_an_end_line_is_masked_to_the_end_of_the_text() -> None:
    """Not to the next blank line: a legacy encrypted key has one between its headers and its
    body, and a person who pasted a key without its END line may well have a blank line in it."""
    body = _pem_body(3)
    rest = "\n".join(["Proc-Type: 4,ENCRYPTED", "", *body, "", "## Later", "More notes."])
    text = f"# Profile\n\n## Keys\n-----BEGIN OPENSSH PRIVATE KEY-----\n{rest}\n"
    masked, found = mask_secrets(text)
    block = text[len("# Profile\n\n## Keys\n") :].rstrip("\n")  # the lines that end the text
    assert masked == "# Profile\n\n## Keys\n…[private key]\n"
    assert str(len(block)) not in masked
    assert found == [(4, "secret.private-key")]
    assert _leaked(masked, body) == []


LOGINS = [
    "clone git@github.com:pat/app.git",
    "ssh deploy@prod.example.org",
    "ssh -i ~/.ssh/deploy -p 2222 deploy@prod.example.org",
    "scp notes.txt deploy@prod.example.org:",
    "rsync -avz dist/ deploy@prod.example.org:/srv/app",
    "https://pat@git.example.com/app.git",
]
ADDRESSES = [
    "pat.doe@example.com",
    "mail pat.doe@example.com: thanks",
    "ssh is broken, mail pat.doe@example.com",
    "write to pat.doe@example.com.",
    # a copy command earlier in the sentence logs in to nothing (review: these passed)
    "We use rsync for deploys, ask ops-lead@corp.example.com for access.",
    "Copy it with scp and then tell alice@corp.example.com it is done",
    "After the rsync run, write to ops-lead@corp.example.com: they own the backups",
    "scp is blocked; ask ops-lead@corp.example.com:\nthey own it",
]


@pytest.mark.parametrize("text", LOGINS)
def test_a_login_to_a_host_is_not_an_email_address(text: str) -> None:
    assert pii_rules(text) == []


@pytest.mark.parametrize("text", ADDRESSES)
def test_an_email_address_next_to_a_login_word_is_still_one(text: str) -> None:
    assert pii_rules(text) == ["pii.email"]


def test_a_url_with_a_password_is_a_secret_and_not_also_an_email_address(home: Path) -> None:
    configure(home, settings(), project=False)
    with pytest.raises(errors.TeamloreError) as refused:
        _relay(home, "the app uses postgres://admin:pw@db.internal.example.org/app", 1)
    assert refused.value.details["rules"] == ["secret.url-credentials"]
    for number, text in enumerate(LOGINS, start=2):
        assert _relay(home, text, number).accepted


def test_a_long_line_of_addresses_is_read_once_not_again_for_each(monkeypatch: Any) -> None:
    """Each address looked at its whole line again for a login before it: 32 KiB of addresses on
    one line took 12 s, 256 KiB did not end. The look is bounded: count what it reads."""
    import teamlore.core.secrets.rules as rules

    read = []
    search = rules._LOGIN_COMMAND.search

    class Counting:
        def search(self, text: str) -> Any:
            read.append(len(text))
            return search(text)

    monkeypatch.setattr(rules, "_LOGIN_COMMAND", Counting())
    line = "ssh deploy@prod.example.org; " * 10_000  # 290 KB of logins on one line
    assert pii_rules(line) == []
    assert len(read) == 10_000 and max(read) <= rules._LOGIN_REACH
