"""Git remote URLs, compared by what they name rather than how they are spelled.

`https://github.com/Me/Proj.git`, `git@github.com:me/proj`, `ssh://git@github.com:22/me/proj.git`
and `git+ssh://github.com/me/proj/` all name one repository: `remote_key` turns each into
`github.com/me/proj` (host and path, lowercased, without user, password, port, a trailing `.git`
or slashes). A local path remote (`/srv/git/proj.git`, `file:///srv/git/proj`) keys as
`file:/srv/git/proj`. Lowercasing makes two spellings that differ only in case one repository;
hosts that tell such paths apart are rare enough that matching sessions by them is worth it.
"""

from __future__ import annotations

import re
from pathlib import Path

from teamlore.core import errors
from teamlore.repo.git import run_git_text

_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://(.*)$", re.IGNORECASE)
_SCP_LIKE = re.compile(r"^(?:[^@/:\s]+@)?([^/:\s]+):(?!//)(.+)$")


def _clean_path(path: str) -> str:
    path = path.strip().strip("/")
    path = re.sub(r"/+", "/", path)
    path = path.removesuffix(".git").rstrip("/")
    return path.lower()


def remote_key(url: str | None) -> str | None:
    """The comparable form of a remote URL, or None when it names nothing we can compare."""
    if not url:
        return None
    url = url.strip()
    if not url or any(c.isspace() or c == "\x00" for c in url):
        return None
    found = _SCHEME.match(url)
    if found:
        scheme, rest = found.group(1).lower(), found.group(2)
        if scheme == "file":
            path = _clean_path(rest)
            return f"file:/{path}" if path else None
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
        host = re.sub(r":\d*$", "", host).lower()
        path = _clean_path(path)
        return f"{host}/{path}" if host and path else None
    if url.startswith("/"):
        path = _clean_path(url)
        return f"file:/{path}" if path else None
    scp = _SCP_LIKE.match(url)
    if scp and len(scp.group(1)) > 1:  # `C:\repo` is a Windows path, not host `C`
        path = _clean_path(scp.group(2))
        return f"{scp.group(1).lower()}/{path}" if path else None
    return None


def worktree_remote_keys(worktree_root: Path) -> frozenset[str]:
    """The keys of every remote URL configured for the worktree (`remote.*.url`, `pushurl`).

    Read-only (`git config --get-regexp`); a worktree without remotes, or one git cannot read,
    has none."""
    try:
        out = run_git_text(
            ["config", "--get-regexp", r"^remote\..*\.(url|pushurl)$"], cwd=worktree_root
        )
    except errors.TeamloreError:  # no remote (exit 1), or git cannot read the worktree
        return frozenset()
    keys = set()
    for line in out.splitlines():
        _, _, url = line.partition(" ")
        key = remote_key(url)
        if key is not None:
            keys.add(key)
    return frozenset(keys)
