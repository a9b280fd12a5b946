"""The secret preflight for personal memory: the shared secret rules of `core.secrets`.

Everything that could reach the model or a personal document passes through `secret_rules`:
observation text, import labels and heading paths, and the new document text after a change.
Only `secret.*` block rules apply here (personal memory is about the person, so paths and
e-mail warnings that matter for a shared repository do not).

Personal data of other kinds is refused before it is queued for the model too (docs/personal.md
"What never reaches the model"): a phone number (`pii.phone`), a payment card number that passes
the Luhn check (`pii.card`) and an e-mail address (`pii.email`) — each a category the person may
allow on purpose with `[personal] allowed_pii = ["phone", "card", "email"]`.

What an agent reads goes through `mask_secrets` (core/secrets/mask.py, used from
personal/reader.py): a secret a person typed into a document by hand is shown as its redacted
preview, never as itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from teamlore.core import errors
from teamlore.core.secrets.mask import PRIVATE_KEY_MASK as PRIVATE_KEY_MASK
from teamlore.core.secrets.mask import mask_secrets as mask_secrets
from teamlore.core.secrets.mask import secret_hits as _secret_hits
from teamlore.core.secrets.rules import EMAIL_ADDRESS, is_email_address


def secret_rules(text: str) -> list[str]:
    """Sorted ids of the secret rules `text` matches (empty when clean). Never the secret."""
    return sorted({h.rule for h in _secret_hits(text)})


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def first_secret(text: str) -> tuple[int, str] | None:
    """The line (1-based) and rule of the first secret `text` holds, None when clean: where a
    person finds what they typed into a document by hand. Never the secret."""
    hits = _secret_hits(text)
    if not hits:
        return None
    first = min(hits, key=lambda h: h.start)
    return _line_of(text, first.start), first.rule


def secret_rules_in(values: Iterable[str]) -> list[str]:
    hits: set[str] = set()
    for value in values:
        hits.update(secret_rules(value))
    return sorted(hits)


PII_CATEGORIES = ("phone", "card", "email")
# 13-19 digits, optionally grouped by single spaces or dashes
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
# an international number (+ and 8-15 digits), a grouped national one (10-15 digits with at
# least one separator) or a Chinese mobile number (1[3-9] and 9 more digits); the digit counts
# are checked after the match
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d[\d ().-]{6,18}\d|\(?\d{2,5}\)?[ .-]\d{2,5}[ .-]?\d{2,5}(?:[ .-]\d{2,5})?"
    r"|1[3-9]\d{9})(?![\w])"
)


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def pii_rules(text: str, allowed: Collection[str] = ()) -> list[str]:
    """Sorted ids (`pii.<category>`) of the personal-data categories `text` holds that are not
    `allowed`. Never the matched text."""
    found: set[str] = set()
    emails = (m for m in EMAIL_ADDRESS.finditer(text) if is_email_address(m))
    if "email" not in allowed and any(emails):
        found.add("pii.email")
    cards = [m for m in _CARD.finditer(text) if _luhn(re.sub(r"\D", "", m.group()))]
    if "card" not in allowed and cards:
        found.add("pii.card")
    if "phone" not in allowed:
        for match in _PHONE.finditer(text):
            digits = re.sub(r"\D", "", match.group())
            inside_card = any(c.start() <= match.start() < c.end() for c in cards)
            shortest = 8 if match.group().startswith("+") else 10  # dates have 8 digits
            if shortest <= len(digits) <= 15 and not inside_card:
                found.add("pii.phone")
                break
    return sorted(found)


# what to do about personal data, which the person may let through: a secret is only ever
# removed (core/remedies.py)
PII_NEXT = "Remove it and send again; [personal] allowed_pii in config.toml lets pii.* pass."
BOTH_NEXT = (
    "Remove the secret, and the personal data or allow it ([personal] allowed_pii in "
    "config.toml lets pii.* pass); then send again."
)


def refuse_secrets(
    values: Iterable[str], where: str, *, allowed_pii: Collection[str] | None = None
) -> None:
    """SENSITIVE_CONTENT_REJECTED when a value holds a secret, or (`allowed_pii` given: the
    categories the settings allow) personal data of a category not allowed."""
    values = list(values)
    rules = secret_rules_in(values)
    if allowed_pii is not None:
        rules = sorted({*rules, *(r for v in values for r in pii_rules(v, allowed_pii))})
    if rules:
        kinds = [
            kind
            for kind, prefix in (("a secret", "secret."), ("personal data", "pii."))
            if any(rule.startswith(prefix) for rule in rules)
        ]
        refused = errors.TeamloreError(
            errors.SENSITIVE_CONTENT_REJECTED,
            f"{where} holds {' and '.join(kinds) or 'a secret'} ({', '.join(rules)}); "
            "nothing was queued",
            rules=rules,
        )
        if "personal data" in kinds:  # a category the person may let through; a secret never
            refused = refused.advising(PII_NEXT if len(kinds) == 1 else BOTH_NEXT)
        raise refused
