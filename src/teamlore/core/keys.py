"""The local origin secret and keyed ids.

Every `*Key` teamlore shows (sessionKey, repositoryKey, worktreeKey, ...) is
HMAC-SHA256(secret, domain || 0x00 || value): stable on this machine, meaningless elsewhere, and
never reversible to the provider's session id or an absolute path.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from functools import lru_cache
from pathlib import Path

from teamlore.core.paths import FILE_MODE, read_private_file, resolve_home

SECRET_BYTES = 32
KEY_HEX_CHARS = 64  # the whole HMAC-SHA256, as the contracts (hex64 keys) require


def _secret_path(home: Path) -> Path:
    return home / "secret"


@lru_cache(maxsize=8)
def _load_secret(home: Path) -> bytes:
    path = _secret_path(home)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        data = read_private_file(path)
        if len(data) >= SECRET_BYTES:
            return data[:SECRET_BYTES]
        # a half-written secret from a crash: it never produced keys, so replace it
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    try:
        value = secrets.token_bytes(SECRET_BYTES)
        os.write(fd, value)
        os.fsync(fd)
        return value
    finally:
        os.close(fd)


def origin_secret(home: Path | None = None) -> bytes:
    return _load_secret(resolve_home(home).resolve())


def keyed_id(domain: str, value: str, home: Path | None = None) -> str:
    mac = hmac.new(origin_secret(home), digestmod=hashlib.sha256)
    mac.update(domain.encode("utf-8") + b"\x00" + value.encode("utf-8"))
    return mac.hexdigest()[:KEY_HEX_CHARS]


def session_key(provider: str, provider_session_id: str, home: Path | None = None) -> str:
    return keyed_id("session", f"{provider}:{provider_session_id}", home)


def repository_key(git_common_dir: str, home: Path | None = None) -> str:
    return keyed_id("repository", git_common_dir, home)


def worktree_key(worktree_root: str, home: Path | None = None) -> str:
    return keyed_id("worktree", worktree_root, home)
