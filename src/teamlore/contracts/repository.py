"""RepositoryBinding@v1: who owns a piece of team memory, without any absolute path."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from teamlore.contracts._base import ContractModel, DecimalString, Hex64

# `host[:port]/org/repo`: what a repository's public identity looks like (no credentials,
# query, fragment or local path); teamlore.repo.public_identity produces it.
PUBLIC_IDENTITY_PATTERN = r"^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?(?:/[^/@?#\\%\s]+)+$"

REPOSITORY_BINDING_FORMAT = "threadshare-memory-repository-binding@v1"
MEMORY_ROOT = ".threadshare/memory"

PublicIdentity = Annotated[
    str, StringConstraints(pattern=PUBLIC_IDENTITY_PATTERN, min_length=3, max_length=1024)
]


class CommonDirectoryIdentity(ContractModel):
    """device and inode of the real git common directory, as canonical decimal strings."""

    device: DecimalString
    inode: DecimalString


class RepositoryBinding(ContractModel):
    """The owner of a memory tree: keyed ids, digests and the public origin identity.

    No absolute path appears here: the worktree realpath only enters as `rootRealpathDigest`
    (sha256 of its UTF-8 bytes); `publicRepositoryIdentity` is the sanitized origin URL
    (`teamlore.repo.public_identity.public_repository_identity`) or null.
    """

    format: Literal["threadshare-memory-repository-binding@v1"]
    repository_key: Hex64
    worktree_key: Hex64
    public_repository_identity: PublicIdentity | None
    root_realpath_digest: Hex64
    common_directory_identity: CommonDirectoryIdentity
    memory_root: Literal[".threadshare/memory"]
