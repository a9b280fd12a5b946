"""The files `memory assemble` writes for install, recorded so uninstall takes them back out.

Install runs assemble for project scope, or for user scope with `--assemble` (docs/agents.md).
Before it runs, `transaction.begin_assemble` stores a backup of the instructions file
(`CLAUDE.md` / `AGENTS.md`) and writes an intent record holding the digest of every file it may
touch (that file and the Skill folder); `record` then compares the files with those digests and
adds each one that changed to the installation as a `text` record: its backup when it existed,
the folders its write created otherwise. A kill between assemble and `record` is completed by
the next install or uninstall from the intent record alone.
"""

from __future__ import annotations

from pathlib import Path

from teamlore.integrations import config_files as cf
from teamlore.integrations.manifest import (
    FileRecord,
    drop_backup,
    installation_key,
    load_manifest,
    save_manifest,
    sha256,
)


def scan(top: Path, files: list[str], folder: str) -> dict[str, bytes | None]:
    """The bytes of `files` and of every file below `folder` (names relative to `top`), and
    None for each folder that exists, its name ending in `/` (to tell what a write created)."""
    seen: dict[str, bytes | None] = {}
    for name in files:
        if (top / name).is_symlink():
            continue  # assemble never writes through a link (docs/assemble.md)
        data = cf.read_bytes(top / name)
        if data is not None:
            seen[name] = data
    base = top / folder
    for path in sorted(base.rglob("*")) if base.is_dir() else []:
        name = path.relative_to(top).as_posix()
        if path.is_symlink():
            continue
        if path.is_file():
            seen[name] = path.read_bytes()
        elif path.is_dir():
            seen[name + "/"] = None
    for parent in [Path(folder), *Path(folder).parents]:
        if str(parent) != "." and (top / parent).is_dir():
            seen[parent.as_posix() + "/"] = None
    return seen


def digests(seen: dict[str, bytes | None]) -> dict[str, str | None]:
    return {name: None if data is None else sha256(data) for name, data in seen.items()}


def record(
    home: Path,
    *,
    client: str,
    scope: str,
    root: str | None,
    top: Path,
    watch: list[str],
    before: dict[str, str | None],
    backups: dict[str, str],
) -> None:
    """Add each watched file that differs from its digest in `before` to the installation."""
    manifest = load_manifest(home)
    installation = manifest.find(client, scope, root)
    owner = installation_key(client, scope, root)
    after = digests(scan(top, watch[:-1], watch[-1]))
    for name, digest in after.items():
        if name.endswith("/") or digest is None:
            continue
        path = top / name
        old = installation.file(path) if installation else None
        # another installation assembled this file and it holds what that one left (user
        # scope with --assemble and project scope in one repository): this one holds it too,
        # with that one's copy from before, and the last of them to go puts it back
        shared = manifest.in_step(owner, path, before.get(name)) if old is None else None
        if before.get(name) == digest and shared is None:
            continue
        manifest.keep_in_step(owner, path, before.get(name), digest)
        created = [
            str(top / p)
            for p in reversed(Path(name).parents)
            if str(p) != "." and f"{p.as_posix()}/" not in before
        ]
        first = old or shared
        entry = FileRecord(
            path=str(path),
            kind="text",
            existed=first.existed if first else name in before,
            backup=first.backup if first else backups.pop(name, None),
            installedSha256=digest,
            createdDirs=first.createdDirs if first else created,
        )
        if installation is not None:
            kept = [f for f in installation.files if f is not old]
            installation.files = [*kept, entry]
    if installation is not None:
        save_manifest(home, manifest)
    for name in backups.values():  # files assemble left as they were: no backup needed
        drop_backup(home, name)
