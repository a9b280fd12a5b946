"""The private install manifest: what `teamlore install` added, so `uninstall` removes exactly
that and nothing else.

It lives in the state dir (`integrations/manifest.json`, 0600, dir 0700) with a byte-exact
backup of every file as it was before teamlore first touched it (`integrations/backups/`).
Per installation (client, scope, project root) and file it records whether the file existed,
the SHA-256 of the bytes install wrote, and each entry: a key (`mcpServers.teamlore`,
`mcp_servers.teamlore`, `features.codex_hooks`) with the value it replaced, if any, or a hook
command. Uninstall restores the backup byte for byte when the file still holds exactly what
install wrote; when the file changed since (the client or the user edited it), it removes only
the recorded entries and puts back what they replaced.

Two installations may hold one file (user scope with `--assemble` and project scope both hold
the repository's CLAUDE.md; in a home that is a git repository both hold
`~/.claude/settings.json`). A backup is named per installation and file (`backup_name`), so no
installation overwrites another's. The second one into a file the first left as it wrote it
shares the first one's record of what was there before (`Manifest.in_step`): every write keeps
their `installedSha256` in step, the backup stays while either refers to it, and the last one
to go puts the bytes back. The second one into a config edited since the first wrote it keeps
no copy (it would hold the first one's entries: `held_by_another`; one an older teamlore kept
is read as none) and takes out its entries one by one; a hooks list the first one made is the
second one's to remove once the first goes (`hand_over`). Two installations may even write one
key (Codex's user and project scope both write `[mcp_servers.teamlore]` when the project is the
home folder): the second one's record says whose value it wrote over (`KeyRecord.writtenOver`),
so uninstalling the first leaves the key to the second (`hand_over`), and uninstalling the second
puts the first one's value back.
"The same file" is one identity everywhere (`same_file`): the path with its symlinks resolved,
as a HOME reached through a link is not and a project root is; the record keeps the path as
given, which is what output shows.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from teamlore.core import errors, safe_write
from teamlore.core.paths import FILE_MODE, display_path, ensure_private_dir, read_private_file
from teamlore.core.shapes.strict import STRICT

MANIFEST_FORMAT = "teamlore-integrations@v1"
Client = Literal["claude", "codex", "pi"]
Scope = Literal["user", "project"]


class _Strict(BaseModel):
    model_config = STRICT


class KeyRecord(_Strict):
    type: Literal["key"] = "key"
    key: list[str]
    hadPrevious: bool = False
    previous: Any = None
    previousText: str | None = None  # JSON: the replaced value's exact text (e.g. keeps 1e400)
    # whether install created the object / table holding the key (`mcpServers`, `[mcp_servers]`),
    # which uninstall then removes once nothing else is left in it (None: a record from before
    # teamlore kept this; removed when empty, as when True). Saved only when False, as the
    # hook fields are
    createdParent: bool | None = None
    # the installation (`Installation.key`) whose entry this one's replaced in the same key:
    # user and project scope write one Codex config.toml in a home that is a git repository.
    # Its value is in the key until this one goes; `previous` is that one's. Saved only when set
    writtenOver: str | None = None


class HookRecord(_Strict):
    type: Literal["hook"] = "hook"
    event: str
    command: str
    # whether install created the `hooks.<event>` list / the `hooks` object, which uninstall
    # then removes once nothing else is left in it (None: a record from before teamlore kept
    # this; such a container is removed when empty, as when True). Saved only when False
    # (`save_manifest`): a manifest without them stays readable by an older teamlore
    createdEvent: bool | None = None
    createdHooks: bool | None = None


class FileRecord(_Strict):
    path: str
    # text: a file `memory assemble` wrote for install; file: a whole file install owns (the Pi
    # extension): replaced only while it holds what install wrote, removed by uninstall
    kind: Literal["json", "toml", "text", "file"]
    existed: bool
    backup: str | None = None
    installedSha256: str
    createdDirs: list[str] = Field(default_factory=list)
    entries: list[KeyRecord | HookRecord] = Field(default_factory=list)
    # a hooks file install found holding another state dir's hooks: which of the containers
    # holding only those (`hooks.<event>`, `hooks`, "" for the file) that one's installation
    # found there itself (`leftovers.found_before`), so uninstall keeps them once it is gone.
    # Saved only when set
    foundBefore: list[str] | None = None


class Installation(_Strict):
    client: Client
    scope: Scope
    root: str | None = None  # the project root for project scope
    installedAt: str
    options: dict[str, Any] = Field(default_factory=dict)
    files: list[FileRecord] = Field(default_factory=list)

    def matches(self, client: str, scope: str, root: str | None) -> bool:
        return (self.client, self.scope, self.root) == (client, scope, root)

    @property
    def key(self) -> str:
        """What tells this installation from every other one (the backups it stores are named
        after it)."""
        return installation_key(self.client, self.scope, self.root)

    def file(self, path: Path) -> FileRecord | None:
        return next((f for f in self.files if same_file(f.path, path)), None)


class Manifest(_Strict):
    format: Literal["teamlore-integrations@v1"] = "teamlore-integrations@v1"
    installations: list[Installation] = Field(default_factory=list)
    # backup name -> config path of each copy an older teamlore kept that this load read as
    # none (`_without_copies_of_anothers_entries`): doctor names it as that, not as a stray
    _older_copies: dict[str, str] = PrivateAttr(default_factory=dict)

    def older_copy_of(self, backup: str) -> str | None:
        """The config `backup` was a copy of, when it is one an older teamlore kept with another
        installation's entries in it, which this load read as none (None: it is not). Once a
        manifest so read is saved, the record names no copy, and one left beside it (a kill
        before the stray backups went) is still found by its name: the one that installation
        stores for that config (`backup_name`), which it never stores for a config whose record
        keeps none."""
        return self._older_copies.get(backup) or next(
            (
                record.path
                for installation in self.installations
                for record in installation.files
                if record.kind in ("json", "toml")
                and record.backup is None
                and backup_name(Path(record.path), installation.key) == backup
            ),
            None,
        )

    def find(self, client: str, scope: str, root: str | None) -> Installation | None:
        return next((i for i in self.installations if i.matches(client, scope, root)), None)

    def owner_of(self, path: Path) -> list[Installation]:
        return [i for i in self.installations if i.file(path) is not None]

    def in_step(self, key: str, path: Path, installed: str | None) -> FileRecord | None:
        """Another installation's record of `path` that holds `installed` (the SHA-256 of the
        bytes teamlore last wrote there): that file is shared, and its record says what was
        there before any teamlore touched it (its `existed`, `backup`, `createdDirs`)."""
        for installation in self.installations:
            record = installation.file(path) if installation.key != key else None
            if record is not None and record.installedSha256 == installed:
                return record
        return None

    def held_by_another(self, key: str, path: Path, kind: str) -> bool:
        """Whether another installation than `key` has entries in the config `path` (a json or
        toml file). Bytes read from it now hold those entries, so they are no copy of the file
        from before teamlore to put back (the caller asks `in_step` first: a file still as that
        one wrote it shares its copy instead)."""
        return kind in ("json", "toml") and any(
            installation.key != key
            and (record := installation.file(path)) is not None
            and bool(record.entries)
            for installation in self.installations
        )

    def keeps_backup(self, key: str, record: FileRecord) -> bool:
        """Whether `record`'s backup is also another installation's, in step with it: that
        one was installed into the same file after this one and shares its copy of the file
        from before teamlore (`in_step`), so the backup stays until the last of them goes."""
        other = self.in_step(key, Path(record.path), record.installedSha256)
        return other is not None and record.backup is not None and other.backup == record.backup

    def holder(self, key: str, path: Path, entry: list[str]) -> Installation | None:
        """The installation other than `key` whose value is in the key `entry` of `path`, as
        the records tell: of those holding it, the one no other wrote over (None: none holds
        it)."""
        holding = [
            (installation, record)
            for installation in self.installations
            if installation.key != key
            for record in _key_records(installation, path, entry)
        ]
        over = {record.writtenOver for _, record in holding}
        return next((i for i, _ in holding if i.key not in over), None)

    def written_over(
        self, key: str, path: Path, entry: list[str]
    ) -> tuple[Installation, KeyRecord] | None:
        """The other installation, and its record of the key `entry` of `path`, that says it
        wrote its value over the one of `key`'s installation."""
        for installation in self.installations:
            for record in _key_records(installation, path, entry):
                if installation.key != key and record.writtenOver == key:
                    return installation, record
        return None

    def hand_over(self, before: Installation, after: Installation | None) -> None:
        """`before`'s installation is now `after` (None: uninstalled). Each key another
        installation had written over it that it no longer holds, or now holds over that one's
        (`install --force` again), is that one's from now on as what `before` found there (the
        value before teamlore): what that one puts back when it goes. Running it again (after a
        crash) changes nothing more."""
        for file in before.files:
            path = Path(file.path)
            for entry in file.entries:
                if not isinstance(entry, KeyRecord):
                    continue
                found = self.written_over(before.key, path, entry.key)
                if found is None:
                    continue
                above, record = found
                held = _key_records(after, path, entry.key) if after is not None else []
                if held and all(r.writtenOver != above.key for r in held):
                    continue  # still beneath that one's value
                record.hadPrevious, record.previous = entry.hadPrevious, entry.previous
                record.previousText = entry.previousText
                record.createdParent = entry.createdParent
                record.writtenOver = entry.writtenOver
        self._hand_over_containers(before, after)

    def _hand_over_containers(self, before: Installation, after: Installation | None) -> None:
        """The hooks containers (`hooks`, `hooks.<event>`) `before`'s installation created and
        no longer holds a hook in: another installation's hook in them kept them from being
        removed, so that one removes them once empty. Its record says it found them there
        (installed into the file after, edited by the user between: no shared backup puts the
        file back)."""
        for file in before.files:
            mine = [e for e in file.entries if isinstance(e, HookRecord)]
            kept = after.file(Path(file.path)) if after is not None else None
            still = [e for e in (kept.entries if kept else []) if isinstance(e, HookRecord)]
            events = {e.event for e in mine if e.createdEvent is not False}
            events -= {e.event for e in still if e.createdEvent is not False}
            hooks = any(e.createdHooks is not False for e in mine) and all(
                e.createdHooks is False for e in still
            )
            for record in self._others_hooks(before.key, Path(file.path)):
                if record.event in events:
                    record.createdEvent = None  # as created (saved without the field)
                if hooks:
                    record.createdHooks = None

    def _others_hooks(self, key: str, path: Path) -> list[HookRecord]:
        records = [i.file(path) for i in self.installations if i.key != key]
        return [e for r in records if r for e in r.entries if isinstance(e, HookRecord)]

    def keep_in_step(self, key: str, path: Path, before: str | None, after: str | None) -> None:
        """The installation `key` wrote `after` over `before` in `path`: another installation's
        record of it that held `before` (it shares the file: `in_step`) now holds `after`, so
        the last installation to go still finds the file as teamlore left it and puts back the
        bytes from before. Running it again (after a crash) changes nothing more."""
        if before is None or after is None or before == after:
            return
        for installation in self.installations:
            record = installation.file(path) if installation.key != key else None
            if record is not None and record.installedSha256 == before:
                record.installedSha256 = after


@dataclass(frozen=True)
class SharedKeys:
    """The keys one installation (`owner`) shares with the others recorded in one file: in a
    home that is a git repository, Codex's user and project scope both write
    `[mcp_servers.teamlore]` in `~/.codex/config.toml`. Whose value is in a key is what the
    records say (`KeyRecord.writtenOver`)."""

    manifest: Manifest
    owner: str
    path: Path

    def holder(self, key: Sequence[str]) -> Installation | None:
        return self.manifest.holder(self.owner, self.path, list(key))

    def beneath(self, key: Sequence[str]) -> bool:
        """Whether another installation wrote its value over this one's in `key`."""
        return self.manifest.written_over(self.owner, self.path, list(key)) is not None


def _key_records(installation: Installation, path: Path, entry: list[str]) -> list[KeyRecord]:
    record = installation.file(path)
    return [
        e for e in (record.entries if record else []) if isinstance(e, KeyRecord) and e.key == entry
    ]


def same_file(recorded: str, path: Path | str) -> bool:
    """Whether `recorded` (a path as a record keeps it) names the file at `path`, through any
    symlinks on the way to either."""
    return recorded == str(path) or os.path.realpath(recorded) == os.path.realpath(path)


def sha256(data: bytes | None) -> str:
    return hashlib.sha256(data or b"").hexdigest()


def integrations_dir(home: Path) -> Path:
    return home / "integrations"


def manifest_path(home: Path) -> Path:
    return integrations_dir(home) / "manifest.json"


def load_manifest(home: Path) -> Manifest:
    path = manifest_path(home)
    if not path.exists():
        return Manifest()
    try:
        return _without_copies_of_anothers_entries(
            Manifest.model_validate_json(read_private_file(path))
        )
    except ValidationError as exc:
        unknown = [e for e in exc.errors() if _written_by_newer(e)]
        if unknown:
            where = ".".join(str(part) for part in unknown[0]["loc"])
            raise errors.TeamloreError(
                errors.DB_SCHEMA_TOO_NEW,
                f"{display_path(path)} was written by a newer teamlore ({where} is unknown to"
                " this one); upgrade teamlore to install, uninstall or check integrations",
            ) from None
        raise _damaged(path, exc) from None
    except ValueError as exc:
        raise _damaged(path, exc) from None


def _without_copies_of_anothers_entries(manifest: Manifest) -> Manifest:
    """`manifest` with no whole-file copy of a config that holds an earlier installation's
    entries. An older teamlore, installed into a config edited since another installation of
    it wrote there, kept a copy of it as it found it, that one's entries in it (the shape
    `held_by_another` now keeps from being written): putting it back would bring those entries
    back once that one is gone, with nothing left to remove them. Such a record is read as this
    teamlore writes it (no copy: its uninstall takes out its entries one by one); the copy,
    referred to by nothing then, goes with the stray backups (`stray_backups`), and the next
    save of the manifest, in the transaction of any install or uninstall, keeps the record so."""
    earlier: list[FileRecord] = []
    for installation in manifest.installations:
        for record in installation.files:
            if (
                record.kind in ("json", "toml")
                and record.backup
                and any(
                    same_file(other.path, record.path)
                    and other.entries
                    and other.backup != record.backup
                    for other in earlier
                )
            ):
                manifest._older_copies[record.backup] = record.path
                record.backup, record.existed = None, True
        earlier += installation.files
    return manifest


def _written_by_newer(error: Any) -> bool:
    """A field this version does not know, or a later format tag."""
    if error["type"] == "extra_forbidden":
        return True
    value = error.get("input")
    return (
        tuple(error["loc"]) == ("format",)
        and isinstance(value, str)
        and (value.startswith("teamlore-integrations@") and value != MANIFEST_FORMAT)
    )


def _damaged(path: Path, exc: Exception) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.STATE_INVALID,
        f"{display_path(path)} is damaged ({type(exc).__name__}): it records what `teamlore"
        " install` added so `uninstall` can remove it; move it aside, then `teamlore install"
        " --client …` takes over teamlore's entries in your own client configs and `uninstall`"
        " removes them (a repository's you remove by hand)",
    )


def write_state_file(home: Path, relative: str, data: bytes) -> None:
    """Durably replace `integrations/<relative>` (0600): temp file, fsync, rename, fsync of the
    folder (the intent record, the manifest and the backups all go through here)."""
    folder = ensure_private_dir(integrations_dir(home))
    if "/" in relative:
        ensure_private_dir(folder / relative.rsplit("/", 1)[0])
    safe_write.write_file(folder, relative, data, create_dirs=False, new_file_mode=FILE_MODE)


def save_manifest(home: Path, manifest: Manifest) -> None:
    data = orjson.dumps(dumped(manifest), option=orjson.OPT_INDENT_2)
    write_state_file(home, "manifest.json", data + b"\n")


def dumped(manifest: Manifest) -> dict[str, Any]:
    """`manifest` as saved: a hook's `createdEvent` / `createdHooks` and a key's
    `createdParent` only when False (absent reads as None, which uninstall treats as True), a
    key's `writtenOver` and `previousText` and a file's `foundBefore` only when set, so
    the manifest of an install that found no container to keep stays readable by an older
    teamlore, whose strict reader refuses fields it does not know."""
    data = manifest.model_dump(mode="json")
    for installation in data["installations"]:
        for record in installation["files"]:
            if record.get("foundBefore", "") is None:
                del record["foundBefore"]
            for entry in record["entries"]:
                for name in ("createdEvent", "createdHooks", "createdParent"):
                    if name in entry and entry[name] is not False:
                        del entry[name]
                for name in ("writtenOver", "previousText"):
                    if entry.get(name, "") is None:
                        del entry[name]
    return data


def backup_path(home: Path, name: str) -> Path:
    return integrations_dir(home) / "backups" / name


def installation_key(client: str, scope: str, root: str | None) -> str:
    return f"{client}\0{scope}\0{root or ''}"


def store_backup(home: Path, target: Path, data: bytes, owner: str) -> str:
    """Keep `data` (the file before teamlore touched it) for the installation `owner`
    (`Installation.key`); returns the backup's name."""
    name = backup_name(target, owner)
    write_state_file(home, f"backups/{name}", data)
    return name


def backup_name(target: Path, owner: str) -> str:
    """One name per installation and file: a second installation into the same file (user and
    project scope in one repository, a home that is a git repository) stores its own copy, and
    never overwrites, nor deletes, the first one's. A teamlore before this named a backup after
    its file alone (`sha256(path)[:24].orig`); a record keeps the name it was stored under, so
    those are found all the same."""
    named = f"{owner}\0{target}".encode()
    return f"{sha256(named)[:24]}.orig"


def read_backup(home: Path, name: str, target: str) -> bytes:
    """The backup of `target` (a client file as it was before teamlore touched it). One that is
    there but cannot be read is named, with what to do: make it readable, or move it aside
    (uninstall then goes without it, as when a backup is lost: docs/agents.md)."""
    path = backup_path(home, name)
    try:
        return read_private_file(path)
    except OSError as exc:
        shown = display_path(path)
        what = f"{shown}, the copy of {display_path(target)} from before install, cannot be read"
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise errors.TeamloreError(
                errors.PERMISSION_DENIED, f"{what} ({exc.strerror})", path=str(path)
            ).advising(
                f"Make {shown} yours and readable (`ls -l {shown}`), then run the command again."
            ) from None
        raise errors.TeamloreError(
            errors.STATE_INVALID, f"{what} ({exc.strerror})", path=str(path)
        ).advising(
            f"Move {shown} aside, then run the command again: uninstall then takes teamlore's"
            " changes out without it (the file is not put back byte for byte)."
        ) from None


def drop_backup(home: Path, name: str | None) -> None:
    if name:
        backup_path(home, name).unlink(missing_ok=True)


def stray_backups(home: Path, manifest: Manifest | None = None) -> list[Path]:
    """The backups (and half-written temp files) in `backups/` no installation refers to: an
    install killed after storing them and before its intent record, which changed no client
    file, or a copy an older teamlore kept that this load read as none
    (`Manifest.older_copy_of`). Only meaningful while no transaction is pending (its record
    refers to its own)."""
    folder = integrations_dir(home) / "backups"
    installations = manifest.installations if manifest is not None else []
    kept = {f.backup for i in installations for f in i.files if f.backup}
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # no folder yet, or one doctor may not read (its own check says so)
        return []
    return [
        folder / name
        for name in names
        if name not in kept and (name.endswith(".orig") or name.startswith(safe_write.TEMP_PREFIX))
    ]
