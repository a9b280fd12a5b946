"""What a promotion plan binds about the worktree: the repository binding (public identity) and
the current bytes of each target file, read without following a symbolic link."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from teamlore.contracts.repository import REPOSITORY_BINDING_FORMAT
from teamlore.core import errors, safe_write
from teamlore.core.canonical import sha256_hex
from teamlore.memory.store import documents as docs
from teamlore.memory.store import layout
from teamlore.repo.binding import RepositoryIdentity

# -- owner ---------------------------------------------------------------------------------------


def public_identity_of(identity: RepositoryIdentity) -> str | None:
    """The sanitized origin identity (`host/org/repo`) of the worktree, or None."""
    from teamlore.memory.extraction.recall import owner_binding

    return owner_binding(identity).public_identity


def repository_binding(identity: RepositoryIdentity, public_identity: str | None) -> dict[str, Any]:
    """RepositoryBinding@v1 of the owner: keys, digests and the public identity, no path."""
    common = os.stat(identity.git_common_dir)
    return {
        "format": REPOSITORY_BINDING_FORMAT,
        "repositoryKey": identity.repository_key,
        "worktreeKey": identity.worktree_key,
        "publicRepositoryIdentity": public_identity,
        "rootRealpathDigest": sha256_hex(str(identity.worktree_root).encode("utf-8")),
        "commonDirectoryIdentity": {"device": str(common.st_dev), "inode": str(common.st_ino)},
        "memoryRoot": layout.MEMORY_ROOT,
    }


# -- reading the working tree (never through a symlink) ------------------------------------------


def read_memory_file(worktree_root: Path, target_path: str) -> bytes | None:
    """Current bytes of a memory file (None: absent), read as every committed file a plan binds
    is read: a symlink anywhere, a file that is not a regular one (a FIFO is never waited on)
    and one over its kind's size limit are UNSAFE_PATH."""
    limit = (
        docs.CONSOLIDATED_MAX_BYTES
        if layout.document_kind(target_path) == "consolidated"
        else docs.MAX_FILE_BYTES
    )
    try:
        data = safe_write.read_file(worktree_root, target_path, max_bytes=limit)
        if data is None:
            with layout.open_memory_root(worktree_root):
                pass  # absent inside the tree, or no tree at all
        return data
    except FileNotFoundError:
        raise errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED) from None


def existing_entry_ids(worktree_root: Path) -> set[str]:
    try:
        with layout.open_memory_root(worktree_root) as memory_fd:
            try:
                entries_fd = layout.open_dir_nofollow(memory_fd, "entries", layout.ENTRIES_DIR)
            except FileNotFoundError:
                return set()
            try:
                return {n[: -len(".md")] for n in os.listdir(entries_fd) if n.endswith(".md")}
            finally:
                os.close(entries_fd)
    except FileNotFoundError:
        raise errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED) from None
