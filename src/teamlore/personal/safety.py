"""The secret preflight for personal memory: the shared secret rules of `core.secrets`.

Everything that could reach the model or a personal document passes through `secret_rules`:
observation text, import labels and heading paths, and the new document text after a change.
Only `secret.*` block rules apply here (personal memory is about the person, so paths and
e-mail warnings that matter for a shared repository do not).
"""

from __future__ import annotations

from collections.abc import Iterable

from teamlore.core import errors
from teamlore.core.secrets import scan_content


def secret_rules(text: str) -> list[str]:
    """Sorted ids of the secret rules `text` matches (empty when clean). Never the secret."""
    hits = scan_content(text)
    return sorted({h.rule for h in hits if h.severity == "block" and h.rule.startswith("secret.")})


def secret_rules_in(values: Iterable[str]) -> list[str]:
    hits: set[str] = set()
    for value in values:
        hits.update(secret_rules(value))
    return sorted(hits)


def refuse_secrets(values: Iterable[str], where: str) -> None:
    rules = secret_rules_in(values)
    if rules:
        raise errors.TeamloreError(
            errors.SENSITIVE_CONTENT_REJECTED, f"{where}: {', '.join(rules)}", rules=rules
        )
