"""The local origin secret and keyed ids.

Every `*Key` teamlore shows (sessionKey, repositoryKey, worktreeKey, ...) is
HMAC-SHA256(secret, domain || 0x00 || value): stable on this machine, meaningless elsewhere, and
never reversible to the provider's session id or an absolute path.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from teamlore.core import errors
from teamlore.core.failpoints import failpoint
from teamlore.core.paths import (
    FILE_MODE,
    SWITCH_DIR,
    SWITCH_FILE,
    ensure_private_dir,
    finish_state_switch,
    read_private_file,
    resolve_home,
    work_path,
    write_private_file,
)

SECRET_BYTES = 32
KEY_HEX_CHARS = 64  # the whole HMAC-SHA256, as the contracts (hex64 keys) require
# The file holds the secret and a check of it, so damage is detected, never silently "fixed":
# a replaced secret changes every key (repositories registered twice, confirmations and plans
# void). A file of exactly SECRET_BYTES is the first format; it gains its check when read.
_CHECK_DOMAIN = b"teamlore-origin-secret\x00"
SECRET_FILE_BYTES = 2 * SECRET_BYTES
# state that keys were made for: if any of it exists, the secret existed and was used
_KEYED_STATE = ("index.sqlite3", "memory-state.sqlite3", "personal", "config.toml")


def _secret_path(home: Path) -> Path:
    return home / "secret"


def _check(secret: bytes) -> bytes:
    return hashlib.sha256(_CHECK_DOMAIN + secret).digest()


def _damaged(path: Path, why: str) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.SECRET_DAMAGED,
        f"{path.name} in the state directory is damaged ({why}). Every key teamlore made is"
        " derived from it, so it is not replaced. Restore it from a backup of the state"
        " directory; if there is none, move the whole state directory aside and start again"
        " (`teamlore sync --repository PATH`; pending reviews and plans must be redone).",
    )


def _decode(path: Path, data: bytes) -> bytes:
    if len(data) == SECRET_FILE_BYTES:
        secret, check = data[:SECRET_BYTES], data[SECRET_BYTES:]
        if hmac.compare_digest(_check(secret), check):
            return secret
        raise _damaged(path, "its check does not match")
    if len(data) == SECRET_BYTES:  # first format: add the check (best effort: maybe read-only)
        with contextlib.suppress(OSError):
            write_private_file(path, data + _check(data))
        return data
    raise _damaged(path, f"{len(data)} bytes instead of {SECRET_FILE_BYTES}")


def _never_used(home: Path) -> bool:
    return not any((home / name).exists() for name in _KEYED_STATE)


def _create(path: Path) -> bytes | None:
    """Write a new secret without ever exposing a partial file: a private temp file, fsynced,
    then linked into place (which fails if another process got there first: None)."""
    import secrets  # (and `random`, `base64`) only to make a new secret

    value = secrets.token_bytes(SECRET_BYTES)
    tmp = work_path(path, "new")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.write(fd, value + _check(value))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return None
    finally:
        os.unlink(tmp)
    return value


@lru_cache(maxsize=8)
def _load_secret(home: Path, identity: tuple[int, int] | None = None) -> bytes:
    """The secret of `home`; `identity` (the file's inode and mtime) keys the cache, so a
    process that outlives a regeneration reads the new secret."""
    path = _secret_path(home)
    for _ in range(3):
        try:
            return _decode(path, read_private_file(path))
        except FileNotFoundError:
            pass
        except errors.TeamloreError:
            if not _never_used(home):
                raise
            path.unlink()  # damaged before any key was made from it: nothing depends on it
        created = _create(path)
        if created is not None:
            return created
    raise _damaged(path, "it keeps changing while being read")


def origin_secret(home: Path | None = None) -> bytes:
    resolved = resolve_home(home).resolve()
    try:
        stat = os.stat(f"{resolved}/secret")
    except FileNotFoundError:
        return _load_secret(resolved)
    return _load_secret(resolved, (stat.st_ino, stat.st_mtime_ns))


def keyed_id(domain: str, value: str, home: Path | None = None) -> str:
    return _keyed(origin_secret(home), domain, value)


def _keyed(secret: bytes, domain: str, value: str) -> str:
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    mac.update(domain.encode("utf-8") + b"\x00" + _real_bytes(value))
    return mac.hexdigest()[:KEY_HEX_CHARS]


def _real_bytes(value: str) -> bytes:
    """`value` as the bytes it stands for: its UTF-8 (the same key for the same text in every
    locale), a surrogate escape as the byte it holds (a path whose name is not UTF-8, as
    `os.fsencode` gives it back), another lone surrogate as itself (`surrogatepass`)."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def session_key(provider: str, provider_session_id: str, home: Path | None = None) -> str:
    return keyed_id("session", f"{provider}:{provider_session_id}", home)


def session_keys(home: Path | None = None) -> Callable[[str, str], str]:
    """`session_key` for the many sessions of one sync: the secret is read at the first key and
    kept (reading it resolves the state dir and stats the file, each time; a new secret is
    refused while a sync runs)."""
    secret: list[bytes] = []

    def key(provider: str, provider_session_id: str) -> str:
        if not secret:
            secret.append(origin_secret(home))
        return _keyed(secret[0], "session", f"{provider}:{provider_session_id}")

    return key


def repository_key(git_common_dir: str, home: Path | None = None) -> str:
    return keyed_id("repository", git_common_dir, home)


def worktree_key(worktree_root: str, home: Path | None = None) -> str:
    return keyed_id("worktree", worktree_root, home)


# Regenerating the secret (docs/sessions.md, "A new origin secret"): staged in SWITCH_DIR, committed
# by SWITCH_FILE and rolled forward by core/paths.finish_state_switch.


def stage_new_secret(home: Path) -> Path:
    """A fresh staging folder holding a new secret; a previous, never switched staging is
    discarded (it never replaced anything)."""
    staging = home / SWITCH_DIR
    if staging.exists() and not (staging / SWITCH_FILE).exists():
        import shutil  # rare: a sync imports this module (docs/architecture.md)

        shutil.rmtree(staging)
    ensure_private_dir(staging)
    if _create(_secret_path(staging)) is None:  # pragma: no cover - the folder is new
        raise _damaged(_secret_path(staging), "another regeneration is writing it")
    return staging


def switch_to_staged(home: Path, names: list[str]) -> None:
    """Commit: record which staged state files (the secret included) replace the old ones, then
    move them into place."""
    staging = home / SWITCH_DIR
    write_private_file(staging / SWITCH_FILE, json.dumps({"replace": names}).encode("utf-8"))
    failpoint("secret.after-switch-file")
    finish_state_switch(home)
