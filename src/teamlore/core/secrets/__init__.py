"""Secret and sensitive-text scanning, shared by team memory lint and personal memory.

`scan_content` finds credential shapes, high-entropy tokens, provider session ids and local paths
in any text and reports each span once, by its most specific rule (`Hit`, with a redacted preview
that never contains the secret). `sanitize_text` strips local references (absolute and home paths,
provider-local paths, transcript file names, provider session ids) before text is shared;
`masked_text` replaces each secret by its redacted preview (mask.py). Rules and severities are
described in docs/memory.md ("Lint").

Rule families (block unless noted):
- `secret.*`: known credential shapes (AWS, GitHub incl. fine-grained, GitLab, npm, PyPI, Google,
  Slack, OpenAI/Anthropic `sk-`, Stripe, SendGrid, Hugging Face, Telegram, private key blocks,
  JWTs, credentials in URLs, Authorization headers, `password=`/`api_key=`-style assignments with a
  literal value) and high-entropy tokens (>= 4.0 bits/char over >= 20 chars of the base64/hex
  alphabet that are not words, identifiers, paths, UUIDs, hex digests or base64 of plain text).
- `session.*`: provider session ids (a UUID of any version next to session/agent/... words) and
  transcript file names (`rollout-<time>-<uuid>.jsonl`, `<uuid>.jsonl`).
- `path.provider-local` (`~/.codex`, `~/.claude`, `.codex/sessions`, `.claude/projects`, ...) and
  `path.home-absolute` (`/Users/x`, `/home/x`, `/root`, `C:\\Users\\x`).
Warn: long hex runs other than 40-hex commit hashes, e-mail addresses, ip:port, home-relative
paths, other UUIDs. Full 40-hex commit hashes and repo-relative paths are public evidence.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from teamlore.core.secrets.heuristics import (
        SESSION_CONTEXT_WINDOW,
        SLUG_HASH_SUFFIX_LENGTH,
        Severity,
        decoded_text,
        looks_like_words,
        redact,
    )
    from teamlore.core.secrets.mask import masked_text
    from teamlore.core.secrets.rules import CI_HOMES, SESSION_ID_PATTERN, Hit
    from teamlore.core.secrets.sanitize import (
        LOCAL_PATH_PLACEHOLDER,
        PROVIDER_PATH_PLACEHOLDER,
        SESSION_FILE_PLACEHOLDER,
        SESSION_ID_PLACEHOLDER,
        current_homes,
        sanitize_for_name,
        sanitize_text,
    )
    from teamlore.core.secrets.scan import (
        MAX_HITS_PER_RULE,
        is_high_entropy_secret,
        scan_content,
        scrub,
    )
    from teamlore.core.secrets.shapes import (
        ENTROPY_MIN_BITS,
        ENTROPY_MIN_LENGTH,
        may_hold_secret,
        shannon_entropy,
    )

# each name loads its module on first use: `may_hold_secret` (shapes.py), which reading personal
# memory asks of every document, must not load the scanner; nor must a check that only scans
# (personal/safety.py, on every prompt `hook user-turn` queues) compile the sanitizing patterns,
# a third of what compiling the package's regular expressions costs (docs/architecture.md, "A
# short CLI process")
_MODULE_OF = {
    **dict.fromkeys(
        ["ENTROPY_MIN_BITS", "ENTROPY_MIN_LENGTH", "may_hold_secret", "shannon_entropy"], "shapes"
    ),
    **dict.fromkeys(
        [
            "SESSION_CONTEXT_WINDOW",
            "SLUG_HASH_SUFFIX_LENGTH",
            "Severity",
            "decoded_text",
            "looks_like_words",
            "redact",
        ],
        "heuristics",
    ),
    **dict.fromkeys(["CI_HOMES", "SESSION_ID_PATTERN", "Hit"], "rules"),
    "masked_text": "mask",
    **dict.fromkeys(
        ["MAX_HITS_PER_RULE", "is_high_entropy_secret", "scan_content", "scrub"], "scan"
    ),
    **dict.fromkeys(
        [
            "LOCAL_PATH_PLACEHOLDER",
            "PROVIDER_PATH_PLACEHOLDER",
            "SESSION_FILE_PLACEHOLDER",
            "SESSION_ID_PLACEHOLDER",
            "current_homes",
            "sanitize_for_name",
            "sanitize_text",
        ],
        "sanitize",
    ),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")
    value = getattr(sys.modules[f"{__name__}.{module}"], name)
    globals()[name] = value
    return value


__all__ = [
    "CI_HOMES",
    "ENTROPY_MIN_BITS",
    "ENTROPY_MIN_LENGTH",
    "LOCAL_PATH_PLACEHOLDER",
    "MAX_HITS_PER_RULE",
    "PROVIDER_PATH_PLACEHOLDER",
    "SESSION_CONTEXT_WINDOW",
    "SESSION_FILE_PLACEHOLDER",
    "SESSION_ID_PATTERN",
    "SESSION_ID_PLACEHOLDER",
    "SLUG_HASH_SUFFIX_LENGTH",
    "Hit",
    "Severity",
    "current_homes",
    "decoded_text",
    "is_high_entropy_secret",
    "looks_like_words",
    "masked_text",
    "may_hold_secret",
    "redact",
    "sanitize_for_name",
    "sanitize_text",
    "scan_content",
    "scrub",
    "shannon_entropy",
]
