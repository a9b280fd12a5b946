"""The public identity of a repository: its `origin` URL with everything private removed.

`public_repository_identity(url)` gives `host[:port]/org/repo` — the only repository identity that
may reach git-tracked memory. Credentials, query and fragment are stripped, a trailing `.git` and
trailing slashes removed, the scp form `git@host:org/repo.git` becomes `host/org/repo`, the host is
lowercased. Only http, https, ssh and git URLs (and the scp form) have a public identity; local
paths, `file:` URLs, other schemes and anything that cannot be made safe give None.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

PUBLIC_SCHEMES = frozenset({"http", "https", "ssh", "git"})

_HOST = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$")
_PORT = re.compile(r"^[0-9]{1,5}$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# scp-like syntax: [user@]host:path, where the host part has no slash (git's own rule).
_SCP = re.compile(r"^(?:[^@/:]+@)?(?P<host>[^@/:]+):(?P<path>.+)$")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:(?:[\\/]|$)")
_SEGMENT_FORBIDDEN = re.compile(r"[@?#\\%\s\x00-\x1f\x7f]")


def _clean_path(path: str) -> str | None:
    path = path.rstrip("/")
    path = path.removesuffix(".git")
    segments = [s for s in path.split("/") if s]
    if not segments:
        return None
    for segment in segments:
        if segment in {".", ".."} or _SEGMENT_FORBIDDEN.search(segment):
            return None
    return "/".join(segments)


def _clean_host(host: str | None) -> str | None:
    if not host:
        return None
    host = host.lower()
    return host if _HOST.match(host) else None


def _identity(host: str | None, port: str | None, path: str) -> str | None:
    clean_host = _clean_host(host)
    clean_path = _clean_path(path)
    if clean_host is None or clean_path is None:
        return None
    if port is not None:
        if not _PORT.match(port) or not 0 < int(port) < 65536:
            return None
        clean_host = f"{clean_host}:{int(port)}"
    return f"{clean_host}/{clean_path}"


def _from_url(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in PUBLIC_SCHEMES:
        return None
    return _identity(parts.hostname, None if port is None else str(port), parts.path)


def public_repository_identity(origin_url: str | None) -> str | None:
    """`host[:port]/org/repo` for a network remote URL; None for local or unsafe ones."""
    if origin_url is None:
        return None
    url = origin_url.strip()
    if not url or any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return None
    if url.startswith(("/", "./", "../", "~", "\\")) or _WINDOWS_DRIVE.match(url):
        return None
    if _SCHEME.match(url):
        return _from_url(url)
    if url.lower().startswith("file:"):
        return None
    scp = _SCP.match(url)
    if scp is None or len(scp.group("host")) == 1:  # `c:dir` is a Windows drive path
        return None
    return _identity(scp.group("host"), None, scp.group("path"))
