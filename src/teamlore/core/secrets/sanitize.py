"""`sanitize_text`: strip local references (home and provider-local paths, transcript file names,
provider session ids, the worktree root) from text before it is shared."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

from teamlore.core.secrets.rules import _HOME_ABSOLUTE, _PATH_TAIL, _PROVIDER_LOCAL, _UUID, CI_HOMES
from teamlore.core.secrets.scan import _session_id_hits

# --- sanitizer ------------------------------------------------------------------------------

# what stands where a local reference was: braces, never `<…>`, which Markdown reads as an HTML
# tag (GitHub drops it and `memory lint` warns `format.raw-html`); text in prose and in code alike
LOCAL_PATH_PLACEHOLDER = "{local-path}"
PROVIDER_PATH_PLACEHOLDER = "{provider-local-path}"
SESSION_ID_PLACEHOLDER = "{session-id}"
SESSION_FILE_PLACEHOLDER = "{session-file}"

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


# a root as Windows spells it: a drive (`C:`), or backslashes and no slash (`\\server\\share`)
_WINDOWS_ROOT = re.compile(r"^[A-Za-z]:(?:[\\/]|$)")
_SEPARATORS = re.compile(r"[\\/]+")
# after a root and a separator: a name in it, not `..` (`root/../x` is outside the repository)
_INSIDE = r"(?=[^\s/\\])(?!\.\.(?:[\s/\\\"'`]|$))"
# the root itself, not the start of a sibling's name (`repo-old`, `repo (1)`, `repo - Copy`)
_ROOT_ITSELF = r"(?![\w.@+/\\-]| \(| - )"

# the roots of a worktree as `sanitize_text` takes them: its root, or it and the prefixes the
# user's `[paths] aliases` map to it (`repo.worktrees.worktree_roots`)
WorktreeRoots = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


def _root_texts(roots: WorktreeRoots) -> list[str]:
    """Each root as text, trailing separators dropped, longest first (an alias of a folder
    inside another root is stripped before the shorter one could take its prefix)."""
    listed = [roots] if isinstance(roots, str | os.PathLike) else list(roots)
    texts = {os.fspath(root).rstrip("/\\") for root in listed}
    return sorted((t for t in texts if _may_be_a_root(t)), key=len, reverse=True)


def _may_be_a_root(root: str) -> bool:
    """Not a drive, `/` or a home folder itself: every path under such a root would read as in
    the repository (an alias mapping a drive or a home folder to the worktree)."""
    if not root or re.fullmatch(r"[A-Za-z]:|/root", root):
        return False
    return re.fullmatch(_HOME_ABSOLUTE, root) is None


def _strip_windows_root(text: str, root: str) -> str:
    """A Windows root in either separator (doubled too, as JSON escapes it), any letter case;
    the path under it made relative with `/` (`src/app/route.ts`)."""
    parts = [p for p in _SEPARATORS.split(root) if p]
    lead = r"[\\/]+" if root[:1] in "\\/" else ""
    spelled = "(?i:" + lead + r"[\\/]+".join(re.escape(p) for p in parts) + ")"
    under = re.compile(spelled + r"[\\/]+" + _INSIDE + r"(" + _PATH_TAIL + ")")
    text = under.sub(lambda m: _SEPARATORS.sub("/", m.group(1)), text)
    return re.sub(spelled + _ROOT_ITSELF, ".", text)


def _strip_worktree(text: str, roots: WorktreeRoots) -> str:
    for root in _root_texts(roots):
        if _WINDOWS_ROOT.match(root) or ("\\" in root and "/" not in root):
            text = _strip_windows_root(text, root)
            continue
        for form in sorted({root, root.replace("\\", "/")}, key=len, reverse=True):
            escaped = re.escape(form)
            text = re.sub(escaped + r"[/\\]+" + _INSIDE, "", text)
            text = re.sub(escaped + _ROOT_ITSELF, ".", text)
    return text


def current_homes() -> list[str]:
    """This machine's home folder as spelled in text (`$HOME` and its real path), wherever it is
    (`/srv/alice`, a temp dir); none when it is `/` or a CI runner's shared home."""
    homes: list[str] = []
    for home in (str(Path.home()), os.path.realpath(Path.home())):
        trimmed = home.rstrip("/\\")
        if trimmed and trimmed not in homes and Path(trimmed).name not in ("", *CI_HOMES):
            homes.append(trimmed)
    return sorted(homes, key=len, reverse=True)


def _strip_current_home(text: str) -> str:
    for home in current_homes():
        if home in text:
            pattern = r"(?<![\w.~/-])" + re.escape(home) + r"(?![\w.-])" + _PATH_TAIL
            text = re.sub(pattern, LOCAL_PATH_PLACEHOLDER, text)
    return text


_PROVIDER_TRIGGERS = (".codex", ".claude", "codex_home", "appdata")
_HOME_TRIGGERS = ("/Users/", "/home/", "/root/", "/mnt/", "/var/folders", "\\home\\")


def sanitize_text(text: str, *, worktree_root: WorktreeRoots | None = None) -> str:
    """Strip local references for promotion: paths under `worktree_root` (the root, or it and
    the prefixes the user's `[paths] aliases` map to it) become repo-relative,
    provider-local paths, other home paths, transcript file names and provider session ids become
    placeholders; this machine's home folder is a local path wherever it is. Idempotent; its
    output has no `path.*` or `session.*` lint findings: every UUID a session rule could read
    becomes `{session-id}`, with or without a session word next to it, so neither can
    `session.known-session-id` (a provider session id this machine indexed) find one."""
    if worktree_root is not None:
        text = _strip_worktree(text, worktree_root)
    # the path patterns are slow on long texts (they try every position); a substring check
    # that every one of their matches needs skips them on texts that cannot match
    folded = text.casefold()
    if any(t in folded for t in _PROVIDER_TRIGGERS):
        text = _PROVIDER_PATH.sub(PROVIDER_PATH_PLACEHOLDER, text)
    if any(t in text for t in _HOME_TRIGGERS) or (
        (":\\" in text or ":/" in text) and ("users" in folded or "documents and" in folded)
    ):
        text = _HOME_PATH.sub(LOCAL_PATH_PLACEHOLDER, text)
    text = _strip_current_home(text)  # wherever it is: `/srv/alice`, a temp dir
    text = _TRANSCRIPT_FILE.sub(SESSION_FILE_PLACEHOLDER, text)
    pieces: list[str] = []
    position = 0
    for hit in sorted(_session_id_hits(text), key=lambda h: h.start):
        pieces += [text[position : hit.start], SESSION_ID_PLACEHOLDER]
        position = hit.end
    text = "".join(pieces) + text[position:]
    return text


# --- names ----------------------------------------------------------------------------------

_PERCENT_SEPARATOR = re.compile(r"%(?:2f|5c)", re.IGNORECASE)
# `\\server\share\…`: a Windows network path
_UNC_PATH = re.compile(r"(?<![\w\\])\\\\[^\\\s]+\\[^\s\"'`<>|]*")
_NAME_TOKEN = re.compile(r"[\w.-]+")
_DASHED_ROOTS = frozenset(
    [
        "home",
        "users",
        "root",
        "tmp",
        "var",
        "srv",
        "mnt",
        "opt",
        "private",
        "workspace",
        "workspaces",
        "data",
        "volumes",
    ]
)
_DASHED_HOMES = frozenset({"home", "users"})


def _is_dashed_path(token: str, home_slugs: tuple[str, ...]) -> bool:
    """A local path spelled with dashes: Claude Code's project folder names (`-home-alice-src`,
    `C--Users-bob`), a home on another machine (`corp-fs01-home-alice`), this home as a slug."""
    lowered = token.lower()
    if any(slug in lowered for slug in home_slugs):
        return True
    parts = lowered.split("-")
    if len(parts) < 3:
        return False
    if parts[0] == "" and parts[1] in _DASHED_ROOTS:
        return True
    if len(parts[0]) == 1 and parts[1] == "" and parts[2] in _DASHED_HOMES:
        return True
    return any(p in _DASHED_HOMES and 0 < i < len(parts) - 1 for i, p in enumerate(parts))


def _home_slugs() -> tuple[str, ...]:
    slugs = []
    for home in current_homes():
        parts = [p.lower() for p in re.split(r"[/\\]+", home) if p and not p.endswith(":")]
        if parts:
            slugs.append("-".join(parts))
    return tuple(slugs)


def sanitize_for_name(text: str, *, worktree_root: WorktreeRoots | None = None) -> str:
    """The text an id or file name may be built from: `sanitize_text` after percent-decoding
    (`%2Fhome%2Falice%2F.ssh`), without network paths (`\\\\server\\share`) or local paths
    spelled with dashes (`corp-fs01-home-alice`, `-home-alice-src`, this home as a slug)."""
    if _PERCENT_SEPARATOR.search(text):
        text = unquote(text)
    text = sanitize_text(text, worktree_root=worktree_root)
    text = _UNC_PATH.sub(LOCAL_PATH_PLACEHOLDER, text)
    home_slugs = _home_slugs()
    return _NAME_TOKEN.sub(
        lambda m: " " if _is_dashed_path(m.group(0), home_slugs) else m.group(0), text
    )
