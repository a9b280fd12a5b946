"""`sanitize_text`: strip local references (home and provider-local paths, transcript file names,
provider session ids, the worktree root) from text before it is shared."""

from __future__ import annotations

import os
import re

from teamlore.core.secrets.rules import _HOME_ABSOLUTE, _PATH_TAIL, _PROVIDER_LOCAL, _UUID
from teamlore.core.secrets.scan import _session_id_hits

# --- sanitizer ------------------------------------------------------------------------------

LOCAL_PATH_PLACEHOLDER = "<local-path>"
PROVIDER_PATH_PLACEHOLDER = "<provider-local-path>"
SESSION_ID_PLACEHOLDER = "<session-id>"
SESSION_FILE_PLACEHOLDER = "<session-file>"

_PROVIDER_PATH = re.compile(
    r"(?:" + _HOME_ABSOLUTE + r"(?:\\\\?|/))?" + _PROVIDER_LOCAL + _PATH_TAIL
)
_HOME_PATH = re.compile(_HOME_ABSOLUTE + _PATH_TAIL)
_TRANSCRIPT_FILE = re.compile(
    r"rollout-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}[-:][0-9]{2}[-:][0-9]{2}-"
    + _UUID
    + r"(?:\.jsonl)?|(?<![0-9A-Za-z-])"
    + _UUID
    + r"\.jsonl"
)


def _strip_worktree(text: str, worktree_root: str) -> str:
    root = worktree_root.rstrip("/\\")
    if not root:
        return text
    forms = {root, root.replace("\\", "/")}
    for form in sorted(forms, key=len, reverse=True):
        escaped = re.escape(form)
        text = re.sub(escaped + r"[/\\]+(?=[^\s/\\])", "", text)
        text = re.sub(escaped + r"(?![\w.-])", ".", text)
    return text


_PROVIDER_TRIGGERS = (".codex", ".claude", "codex_home", "appdata")
_HOME_TRIGGERS = ("/Users/", "/home/", "/root/", "/mnt/", "/var/folders", "\\home\\")


def sanitize_text(text: str, *, worktree_root: str | os.PathLike[str] | None = None) -> str:
    """Strip local references for promotion: paths under `worktree_root` become repo-relative,
    provider-local paths, other home paths, transcript file names and provider session ids become
    placeholders. Idempotent; its output has no `path.*` or `session.*` lint findings."""
    if worktree_root is not None:
        text = _strip_worktree(text, os.fspath(worktree_root))
    # the path patterns are slow on long texts (they try every position); a substring check
    # that every one of their matches needs skips them on texts that cannot match
    folded = text.casefold()
    if any(t in folded for t in _PROVIDER_TRIGGERS):
        text = _PROVIDER_PATH.sub(PROVIDER_PATH_PLACEHOLDER, text)
    if any(t in text for t in _HOME_TRIGGERS) or (
        (":\\" in text or ":/" in text) and ("users" in folded or "documents and" in folded)
    ):
        text = _HOME_PATH.sub(LOCAL_PATH_PLACEHOLDER, text)
    text = _TRANSCRIPT_FILE.sub(SESSION_FILE_PLACEHOLDER, text)
    pieces: list[str] = []
    position = 0
    for hit in sorted(_session_id_hits(text), key=lambda h: h.start):
        pieces += [text[position : hit.start], SESSION_ID_PLACEHOLDER]
        position = hit.end
    text = "".join(pieces) + text[position:]
    return text
