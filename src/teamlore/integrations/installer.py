"""Install and uninstall: apply `FileEdits` to client config files, recorded in the manifest.

Both run in two phases: every file is read, parsed and edited in memory first (a file that does
not parse, a symlink, a conflicting entry or an unwritable folder refuses the whole request with
nothing written); only then are files written, each atomically, and a failure part-way puts the
files already written back. `dry_run` stops after the first phase and returns the diffs.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.integrations import config_files as cf
from teamlore.integrations.entries import FileEdits, hook_group
from teamlore.integrations.manifest import (
    FileRecord,
    HookRecord,
    Installation,
    KeyRecord,
    drop_backup,
    load_manifest,
    read_backup,
    save_manifest,
    sha256,
    store_backup,
)


@dataclass
class _Pending:
    """One file's outcome, computed before anything is written."""

    document: cf.ConfigDocument
    new: bytes | None  # None: remove the file
    record: FileRecord | None
    action: str
    private: bool = False

    @property
    def changed(self) -> bool:
        return self.new != self.document.original

    def describe(self, with_diff: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"path": str(self.document.path), "action": self.action}
        if with_diff:
            out["diff"] = self.document.diff(self.new) if self.changed else ""
        return out


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- install ----------------------------------------------------------------------------------


def _apply_keys(
    edits: FileEdits, document: cf.ConfigDocument, previous: FileRecord | None, force: bool
) -> list[KeyRecord]:
    ours = {tuple(e.key): e for e in (previous.entries if previous else []) if e.type == "key"}
    wanted = {edit.key for edit in edits.keys}
    for key, record in ours.items():  # entries of an earlier install this one no longer wants
        if key not in wanted:
            _restore_key(document, record)
    records: list[KeyRecord] = []
    for edit in edits.keys:
        present, current = cf.get_key(document.doc, edit.key)
        if edit.key in ours:
            record = ours[edit.key]
        elif present and edit.guarded and current != edit.value and not force:
            raise errors.TeamloreError(
                errors.INTEGRATION_CONFLICT,
                f"{document.path} already has {'.'.join(edit.key)}, which teamlore did not write;"
                " rename or remove it, or pass --force to replace it (uninstall puts it back)",
            )
        else:
            record = KeyRecord(key=list(edit.key), hadPrevious=present, previous=current)
        if not present or current != edit.value:
            cf.set_key(document.doc, edit.key, edit.value, document.kind)
        records.append(record)
    return records


def _apply_hooks(
    edits: FileEdits, document: cf.ConfigDocument, previous: FileRecord | None
) -> list[HookRecord]:
    for entry in previous.entries if previous else []:
        if isinstance(entry, HookRecord):
            cf.remove_hook(document.doc, entry.event, entry.command)
    records: list[HookRecord] = []
    for hook in edits.hooks:
        groups = cf.hook_groups(document.doc, hook.event)
        if any(cf.group_has_command(g, hook.command) for g in groups):
            continue  # the user already runs this exact command: leave theirs alone
        cf.add_hook(document.doc, hook.event, hook_group(hook))
        records.append(HookRecord(event=hook.event, command=hook.command))
    return records


def install(
    home: Path,
    *,
    client: str,
    scope: str,
    root: Path | None,
    files: list[FileEdits],
    options: dict[str, Any],
    force: bool = False,
    dry_run: bool = False,
    check_writable: bool = True,
) -> dict[str, Any]:
    """Apply `files`; with `dry_run` only report (and, with `check_writable`, also refuse what
    could not be written, so a caller can vet several clients before writing any)."""
    manifest = load_manifest(home)
    root_key = str(root) if root is not None else None
    existing = manifest.find(client, scope, root_key)
    pending: list[tuple[FileEdits, _Pending, list[KeyRecord | HookRecord]]] = []
    for edits in files:
        document = cf.load(edits.path, edits.kind)
        previous = existing.file(edits.path) if existing else None
        entries: list[KeyRecord | HookRecord] = [
            *_apply_keys(edits, document, previous, force),
            *_apply_hooks(edits, document, previous),
        ]
        new = document.render()
        action = (
            "unchanged"
            if new == document.original
            else ("updated" if document.original is not None else "created")
        )
        pending.append((edits, _Pending(document, new, previous, action, edits.private), entries))
    result: dict[str, Any] = {
        "client": client,
        "scope": scope,
        "root": root_key,
        "dryRun": dry_run,
        "files": [p.describe(dry_run) for _, p, _ in pending],
    }
    if check_writable:
        for _, item, _ in pending:
            if item.changed:
                cf.check_writable(item.document.path)
    if dry_run:
        return result
    created = _write_all([p for _, p, _ in pending])
    records: list[FileRecord] = []
    for edits, item, entries in pending:
        before = item.record
        original = item.document.original
        backup = before.backup if before else None
        existed = before.existed if before else original is not None
        if before is None and original is not None:
            backup = store_backup(home, edits.path, original)
        elif before is not None and sha256(original) != before.installedSha256:
            # changed since our last write: the old backup no longer describes "before
            # teamlore", so uninstall will remove our entries instead of restoring bytes
            drop_backup(home, backup)
            backup, existed = None, original is not None or existed
        records.append(
            FileRecord(
                path=str(edits.path),
                kind=edits.kind,
                existed=existed,
                backup=backup,
                installedSha256=sha256(item.new),
                createdDirs=[*(before.createdDirs if before else []), *created.get(edits.path, [])],
                entries=entries,
            )
        )
    kept = [
        f for f in (existing.files if existing else []) if f.path not in {r.path for r in records}
    ]
    installation = Installation(
        client=client,
        scope=scope,
        root=root_key,
        installedAt=_now(),
        options=options,
        files=[*kept, *records],
    )
    manifest.installations = [
        i for i in manifest.installations if not i.matches(client, scope, root_key)
    ] + [installation]
    save_manifest(home, manifest)
    return result


def _write_all(items: list[_Pending]) -> dict[Path, list[str]]:
    """Write every changed file; on a failure, put back the ones already written."""
    done: list[_Pending] = []
    created: dict[Path, list[str]] = {}
    try:
        for item in items:
            if not item.changed:
                continue
            path = item.document.path
            if item.new is None:
                cf.remove_file(path)
            else:
                dirs = cf.write_atomically(path, item.new, private=item.private)
                created[path] = [str(d) for d in dirs]
            done.append(item)
    except errors.TeamloreError:
        for item in reversed(done):
            path = item.document.path
            with contextlib.suppress(errors.TeamloreError, OSError):
                if item.document.original is None:
                    cf.remove_file(path)
                    _remove_empty_dirs(created.get(path, []))
                else:
                    cf.write_atomically(path, item.document.original, private=item.private)
        raise
    return created


def _remove_empty_dirs(dirs: list[str]) -> None:
    for directory in reversed(dirs):
        with contextlib.suppress(OSError):
            os.rmdir(directory)


# -- uninstall --------------------------------------------------------------------------------


def _restore_key(document: cf.ConfigDocument, record: KeyRecord) -> None:
    key = tuple(record.key)
    if record.hadPrevious:
        cf.set_key(document.doc, key, record.previous, document.kind)
    else:
        cf.delete_key(document.doc, key)


def _undo(home: Path, record: FileRecord) -> _Pending:
    path = Path(record.path)
    data = cf.read_bytes(path)
    document = cf.ConfigDocument(path, record.kind, data, None)
    if data is None:
        return _Pending(document, None, record, "already-gone")
    if sha256(data) == record.installedSha256:
        if not record.existed:
            return _Pending(document, None, record, "removed")
        if record.backup:
            return _Pending(document, read_backup(home, record.backup), record, "restored")
    document.doc = cf.parse(path, record.kind, data)
    for entry in record.entries:
        if isinstance(entry, KeyRecord):
            _restore_key(document, entry)
        else:
            cf.remove_hook(document.doc, entry.event, entry.command)
    return _Pending(document, document.render(), record, "edited")


def uninstall(
    home: Path, *, client: str, scope: str, root: Path | None, dry_run: bool = False
) -> dict[str, Any]:
    manifest = load_manifest(home)
    root_key = str(root) if root is not None else None
    installation = manifest.find(client, scope, root_key)
    if installation is None:
        where = f" for {root_key}" if root_key else ""
        raise errors.TeamloreError(
            errors.NOTHING_INSTALLED, f"teamlore is not installed for {client} ({scope}{where})"
        )
    pending = [_undo(home, record) for record in installation.files]
    result: dict[str, Any] = {
        "client": client,
        "scope": scope,
        "root": root_key,
        "dryRun": dry_run,
        "files": [p.describe(dry_run) for p in pending],
    }
    if dry_run:
        return result
    for item in pending:
        if item.changed:
            cf.check_writable(item.document.path)
    _write_all(pending)
    for item in pending:
        assert item.record is not None
        if item.action == "removed":
            _remove_empty_dirs(item.record.createdDirs)
        drop_backup(home, item.record.backup)
    manifest.installations = [i for i in manifest.installations if i is not installation]
    save_manifest(home, manifest)
    return result
