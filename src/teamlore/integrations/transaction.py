"""Client config edits as transactions: intent record first, compare-and-swap writes, then done.

One install or uninstall of one client is one transaction (docs/agents.md, "What install
records"):

1. the intent record (`integrations/intent.json` in the state dir, 0600, fsync'd file and
   folder) says, per client file, its SHA-256 before, the bytes intended (or that it is to be
   removed) and the folders to create, plus the manifest record the client will have once done.
   If it cannot be written (a full disk) nothing else has been touched;
2. each file is written by compare-and-swap: a temp file in the same folder, fsync, a re-read
   that the file still has the digest the plan was made from, rename, fsync of the folder. A file
   another program changed meanwhile is never overwritten: the files already written are put
   back and the caller re-plans once or refuses with CLIENT_CONFIG_CHANGED;
3. the manifest takes the new record (a key this installation no longer holds that another one
   wrote over is that one's alone now: `Manifest.hand_over`), replaced backups are dropped,
   then the intent record is deleted: that deletion is what marks the transaction done.

`complete` finishes an interrupted transaction from the intent record alone: a file that still
has its digest from before is written now, a file that already holds the intended bytes is left,
and a file that holds neither (changed by another program since) is left as it is; the manifest
record then lets `uninstall` remove teamlore's entries from it. It also drops the backups an
install killed before its intent record stored (`manifest.stray_backups`): that install changed
no client file, so nothing refers to them.

A client config that is a symlink is written in its target: the intent names the target, so a
kill between steps is completed there, and the link is never replaced.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from teamlore.core import errors, refusals, safe_write
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import display_path, ensure_private_dir, read_private_file
from teamlore.core.shapes.strict import STRICT
from teamlore.integrations import assembled
from teamlore.integrations import config_files as cf
from teamlore.integrations.manifest import (
    Installation,
    drop_backup,
    installation_key,
    integrations_dir,
    load_manifest,
    save_manifest,
    sha256,
    store_backup,
    stray_backups,
    write_state_file,
)

INTENT_FORMAT = "teamlore-integrations-intent@v1"
INTENT_NAME = "intent.json"
LOCK_NAME = "lock"
LOCK_WAIT_SECONDS = 30.0


class FileIntent(BaseModel):
    model_config = STRICT

    path: str
    private: bool
    beforeSha256: str | None  # None: the file was absent
    intended: str | None  # base64 of the bytes to write; None: remove the file
    createDirs: list[str] = Field(default_factory=list)
    removeDirs: list[str] = Field(default_factory=list)  # emptied by the removal: rmdir them

    @property
    def data(self) -> bytes | None:
        return None if self.intended is None else base64.b64decode(self.intended)

    @property
    def intendedSha256(self) -> str | None:
        data = self.data
        return None if data is None else sha256(data)


class Intent(BaseModel):
    model_config = STRICT

    format: Literal["teamlore-integrations-intent@v1"] = "teamlore-integrations-intent@v1"
    operation: Literal["install", "uninstall", "assemble"]
    client: str
    scope: str
    root: str | None = None
    startedAt: str
    files: list[FileIntent] = Field(default_factory=list)
    installation: Installation | None = None  # the manifest record once done (None: removed)
    dropBackups: list[str] = Field(default_factory=list)
    # assemble only (integrations/assembled.py): the worktree, the files and folder it may
    # write (the folder last), their digests before (None: a folder), the backups stored
    top: str | None = None
    watch: list[str] = Field(default_factory=list)
    seen: dict[str, str | None] = Field(default_factory=dict)
    backups: dict[str, str] = Field(default_factory=dict)

    def describe(self) -> str:
        where = f" for {display_path(self.root)}" if self.root else ""
        return f"{self.operation} of {self.client} ({self.scope} scope{where}) at {self.startedAt}"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def file_intent(
    path: Path,
    *,
    private: bool,
    before: bytes | None,
    intended: bytes | None,
    remove_dirs: list[str] | None = None,
) -> FileIntent:
    """The record for one file, with the folders a write must create (outermost first)."""
    create: list[str] = []
    if intended is not None:
        probe = path.parent
        while not probe.exists():
            create.append(str(probe))
            probe = probe.parent
        create.reverse()
    return FileIntent(
        path=str(path),
        private=private,
        beforeSha256=None if before is None else sha256(before),
        intended=None if intended is None else base64.b64encode(intended).decode("ascii"),
        createDirs=create,
        removeDirs=remove_dirs or [],
    )


# -- the state-dir side: lock, intent record ------------------------------------------------


def state_error(exc: OSError, what: str) -> errors.TeamloreError:
    code = refusals.storage_error(exc) or errors.STATE_DIR_UNSAFE
    if code is errors.DISK_FULL:
        message = (
            f"the state dir is full: teamlore could not record {what}, so no client file was "
            "changed; free some space (e.g. `teamlore sessions prune`, or delete large files on "
            "that disk) and run it again"
        )
    else:
        message = f"cannot record {what} in the state dir ({exc.strerror}); nothing was changed"
    return errors.TeamloreError(code, message)


@contextlib.contextmanager
def locked(home: Path) -> Iterator[None]:
    """Hold the integrations lock: one install/uninstall at a time per state dir."""
    try:
        folder = ensure_private_dir(integrations_dir(home))
    except errors.TeamloreError as err:
        if isinstance(err.__cause__, OSError):  # a full disk cannot even take the folder
            raise state_error(err.__cause__, "the install") from None
        raise
    try:
        lock = file_lock(folder / LOCK_NAME, wait_seconds=LOCK_WAIT_SECONDS, what="an install")
        lock.__enter__()
    except OSError as exc:
        raise state_error(exc, "the install") from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def load_intent(home: Path) -> Intent | None:
    path = integrations_dir(home) / INTENT_NAME
    try:
        data = read_private_file(path)
    except FileNotFoundError:
        return None
    try:
        return Intent.model_validate_json(data)
    except ValueError as exc:
        raise errors.TeamloreError(
            errors.CONFIG_INVALID,
            f"{display_path(path)} is damaged ({type(exc).__name__}); compare your client config "
            "files with `teamlore install --dry-run`, then remove it",
        ).advising(
            "Move integrations/intent.json aside (its interrupted change stays unfinished), "
            "then run the command again."
        ) from None


def record_intent(home: Path, intent: Intent) -> None:
    failpoint(f"{intent.operation}.planned")
    try:
        write_state_file(home, INTENT_NAME, intent.model_dump_json(indent=1).encode())
        failpoint(f"{intent.operation}.intent-written")
    except OSError as exc:
        raise state_error(exc, f"the {intent.operation}") from None


def clear_intent(home: Path) -> None:
    """Mark the transaction done: unlink the record, fsync its folder."""
    safe_write.delete_file(integrations_dir(home), INTENT_NAME)


# -- the client side: compare-and-swap ------------------------------------------------------


class FileChanged(Exception):
    """A client file no longer has the digest the plan was made from; it was not touched."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _unwritable(path: str, exc: OSError) -> errors.TeamloreError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return errors.TeamloreError(
            errors.DISK_FULL,
            f"no space left to write {display_path(path)}; free some space and run it again",
        )
    return errors.TeamloreError(
        errors.CLIENT_CONFIG_UNWRITABLE, f"cannot write {display_path(path)}: {exc.strerror}"
    )


def swap(path: str, expected_sha: str | None, data: bytes | None, *, private: bool) -> None:
    """Make `path` hold `data` (None: remove it) only if it still has `expected_sha` (None:
    absent); FileChanged otherwise, with the file untouched."""
    target = Path(path)
    cf.check_regular_or_absent(target)

    def unchanged(current: bytes | None) -> bool:
        return (None if current is None else sha256(current)) == expected_sha

    try:  # a client's file is as large as the client made it (~/.claude.json grows to MBs)
        if data is None:
            safe_write.delete_file(target.parent, target.name, expect=unchanged, max_bytes=None)
        else:
            safe_write.write_file(
                target.parent,
                target.name,
                data,
                expect=unchanged,
                create_dirs=False,
                new_file_mode=cf.PRIVATE_MODE if private else safe_write.DEFAULT_FILE_MODE,
                max_bytes=None,
            )
    except safe_write.ExpectationFailed:
        raise FileChanged(path) from None
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _make_dirs(item: FileIntent) -> None:
    for directory in item.createDirs:
        try:
            os.mkdir(directory, 0o700 if item.private else 0o755)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _unwritable(directory, exc) from None


def _remove_empty_dirs(dirs: list[str]) -> None:
    for directory in reversed(dirs):
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def _current_sha(path: str) -> str | None:
    data = cf.read_bytes(Path(path))
    return None if data is None else sha256(data)


@dataclass
class _Written:
    item: FileIntent
    before: bytes | None


def apply(home: Path, intent: Intent, befores: dict[str, bytes | None]) -> None:
    """Run `intent` (already recorded): write each file by compare-and-swap, then commit.

    A file changed by another program since the plan raises FileChanged after the files written
    so far were put back and the record was cleared (so the caller may re-plan). When one of
    them cannot be put back (changed again), the record stays for `complete`."""
    written: list[_Written] = []
    try:
        for index, item in enumerate(intent.files, start=1):
            if item.beforeSha256 == item.intendedSha256:
                continue
            _make_dirs(item)
            swap(item.path, item.beforeSha256, item.data, private=item.private)
            written.append(_Written(item, befores[item.path]))
            failpoint(f"{intent.operation}.file-written-{index}")
    except (FileChanged, errors.TeamloreError) as failure:
        if _put_back(written):
            clear_intent(home)
            raise
        where = display_path(failure.path) if isinstance(failure, FileChanged) else "a client file"
        raise errors.TeamloreError(  # the record stays: never planned over (no retry)
            errors.CLIENT_CONFIG_CHANGED,
            f"{where} changed while teamlore was writing it, and so did a file it had already "
            f"written; their changes were kept; run `teamlore {intent.operation}` again to "
            "finish (`teamlore doctor` shows it)",
        ) from None
    commit(home, intent)


def _put_back(written: list[_Written]) -> bool:
    """Undo this run's writes (each only if it still holds what we wrote); False when one could
    not be undone."""
    clean = True
    for done in reversed(written):
        try:
            swap(done.item.path, done.item.intendedSha256, done.before, private=done.item.private)
        except (FileChanged, errors.TeamloreError):
            clean = False
            continue
        if done.before is None:
            _remove_empty_dirs(done.item.createDirs)
    return clean


def commit(home: Path, intent: Intent) -> None:
    """Record the outcome in the manifest, drop what it no longer needs, mark the intent done.
    Every step may run again after a crash with the same result."""
    failpoint(f"{intent.operation}.files-written")
    manifest = load_manifest(home)
    was = manifest.find(intent.client, intent.scope, intent.root)
    manifest.installations = [
        i for i in manifest.installations if not i.matches(intent.client, intent.scope, intent.root)
    ]
    if was is not None:  # keys it no longer holds go to an installation that wrote over them
        manifest.hand_over(was, intent.installation)
    writer = installation_key(intent.client, intent.scope, intent.root)
    for item in intent.files:
        if item.intended is not None:
            manifest.keep_in_step(writer, Path(item.path), item.beforeSha256, item.intendedSha256)
    if intent.installation is not None:
        manifest.installations.append(intent.installation)
    try:
        save_manifest(home, manifest)
        failpoint(f"{intent.operation}.manifest-saved")
        for name in intent.dropBackups:
            drop_backup(home, name)
    except OSError as exc:
        raise state_error(exc, f"the {intent.operation}") from None
    emptied = {d for item in intent.files if item.intended is None for d in item.removeDirs}
    for directory in sorted(emptied, key=lambda d: d.count(os.sep), reverse=True):
        with contextlib.suppress(OSError):  # deepest first; one still in use stays
            os.rmdir(directory)
    clear_intent(home)


def complete(home: Path) -> str | None:
    """Finish the interrupted transaction, if any, from its intent record alone, and drop the
    backups an install killed before its intent record left; what was done, in a sentence
    (None: there was nothing to finish)."""
    done = _complete_intent(home)
    failpoint("complete.before-strays")  # the manifest saved (repaired: `older_copy_of`)
    for path in stray_backups(home, load_manifest(home)):  # copies of files left as they were
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    return done


def _complete_intent(home: Path) -> str | None:
    intent = load_intent(home)
    if intent is None:
        return None
    if intent.operation == "assemble":
        finish_assemble(home, intent)
        return f"recorded the files of the interrupted {intent.describe()}"
    left: list[str] = []
    for item in intent.files:
        current = _current_sha(item.path)
        if current == item.intendedSha256:
            continue
        if current != item.beforeSha256:
            left.append(item.path)  # another program wrote it since: never overwritten
            continue
        _make_dirs(item)
        try:
            swap(item.path, item.beforeSha256, item.data, private=item.private)
        except FileChanged:
            left.append(item.path)
    commit(home, intent)
    note = f"completed the interrupted {intent.describe()}"
    if left:
        note += f"; left as another program wrote them: {', '.join(left)}"
    return note


def pending(home: Path) -> Intent | None:
    """The interrupted transaction, if any (read-only: for doctor and --dry-run)."""
    if not (integrations_dir(home) / INTENT_NAME).is_file():
        return None
    return load_intent(home)


# -- `memory assemble` for install -----------------------------------------------------------


def begin_assemble(
    home: Path, *, client: str, scope: str, root: str | None, top: Path, watch: list[str]
) -> Intent:
    """Before install runs `memory assemble`: back up the instructions file and record what
    every watched file holds now, so what assemble writes can be told and taken out later."""
    seen = assembled.scan(top, watch[:-1], watch[-1])
    manifest = load_manifest(home)
    installation = manifest.find(client, scope, root)
    owner = installation_key(client, scope, root)
    backups: dict[str, str] = {}
    try:
        for name in watch[:-1]:
            data = seen.get(name)
            recorded = installation.file(top / name) if installation else None
            # a recorded one keeps its first backup; one another installation assembled, as
            # it left it, shares that one's (`assembled.record`)
            if (
                data is not None
                and recorded is None
                and manifest.in_step(owner, top / name, sha256(data)) is None
            ):
                backups[name] = store_backup(home, top / name, data, owner)
    except OSError as exc:
        raise state_error(exc, "the assemble") from None
    intent = Intent(
        operation="assemble",
        client=client,
        scope=scope,
        root=root,
        startedAt=now(),
        top=str(top),
        watch=watch,
        seen=assembled.digests(seen),
        backups=backups,
    )
    record_intent(home, intent)
    return intent


def finish_assemble(home: Path, intent: Intent) -> None:
    """After assemble (or after a kill during it): record what it wrote, mark the intent done."""
    assert intent.top is not None
    failpoint("assemble.written")
    try:
        assembled.record(
            home,
            client=intent.client,
            scope=intent.scope,
            root=intent.root,
            top=Path(intent.top),
            watch=intent.watch,
            before=intent.seen,
            backups=dict(intent.backups),
        )
    except OSError as exc:
        raise state_error(exc, "the assemble") from None
    clear_intent(home)
