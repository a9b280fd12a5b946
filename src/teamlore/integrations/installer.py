"""Install and uninstall: apply `FileEdits` to client config files, recorded in the manifest.

Both run in two phases: every file is read, parsed and edited in memory first (a file that does
not parse, a dangling symlink, a conflicting entry or an unwritable folder refuses the whole
request with nothing written; a symlinked config is edited in its target, the link kept); then
the change runs as one transaction (`transaction`): the intent record is written first, each
file by compare-and-swap, then the manifest. A file another program wrote between our read and
our write is never overwritten: the plan is made again from the new bytes once, and a second
change refuses with CLIENT_CONFIG_CHANGED. `dry_run` stops after the first
phase and returns the diffs.

Whole files (`FileEdits.kind == "file"`, the Pi extension): teamlore owns the file it wrote.
Install creates it, or replaces it while it still holds exactly the bytes install wrote; a file
that exists but is not ours (never written by teamlore, or edited since) is refused with
INTEGRATION_CONFLICT, or with `--force` backed up and replaced (uninstall puts it back).
Uninstall removes the file, or restores that backup, while it holds our bytes, and keeps it
when it was edited since (it is the user's now).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.paths import display_path
from teamlore.integrations import config_files as cf
from teamlore.integrations import leftovers
from teamlore.integrations import transaction as tx
from teamlore.integrations.entries import FileEdits, KeyEdit, hook_group
from teamlore.integrations.manifest import (
    FileRecord,
    HookRecord,
    Installation,
    KeyRecord,
    Manifest,
    SharedKeys,
    backup_path,
    dumped,
    installation_key,
    load_manifest,
    read_backup,
    sha256,
    store_backup,
)

# what uninstall does with a file whose recorded backup is gone (an older teamlore deleted it)
BACKUP_LOST_REMOVED = "removed (backup lost)"
BACKUP_LOST_KEPT = "kept (backup lost)"
BACKUP_LOST_BLOCK_REMOVED = "block removed (backup lost)"
# a file another installation still holds, as it wrote it too
KEPT_FOR_ANOTHER = "kept (another installation's too)"
KEPT_CHANGED = "kept (changed since install)"  # the file, or its entries (`_Pending.kept`)
# an instructions file without its managed block (`memory.assemble.without_block`), or None
Unassemble = Callable[[bytes], bytes | None]


@dataclass
class _Pending:
    """One file's outcome, computed before anything is written."""

    document: cf.ConfigDocument
    new: bytes | None  # None: remove the file
    record: FileRecord | None
    action: str
    private: bool = False
    adopted: bool = False  # holds entries of this installation no record covered (`Adoption`)
    kept: dict[tuple[str, ...], str | None] = field(default_factory=dict)  # key: whose (leftovers)

    @property
    def changed(self) -> bool:
        return self.new != self.document.original

    def describe(self, with_diff: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"path": str(self.document.path), "action": self.action}
        if self.document.link_target is not None:
            out["linkTarget"] = str(self.document.link_target)
        if self.kept:
            out["kept"] = [{"key": ".".join(k), "stateDir": d} for k, d in self.kept.items()]
        if with_diff:
            out["diff"] = self.document.diff(self.new) if self.changed else ""
            if self.changed and (refused := cf.unwritable_reason(self.document.written)):
                out["unwritable"] = refused  # a dry run shows the edit and the real run's refusal
        return out


# -- install ----------------------------------------------------------------------------------


def _apply_keys(
    edits: FileEdits,
    document: cf.ConfigDocument,
    previous: FileRecord | None,
    force: bool,
    adopt: Adoption,
    sharing: SharedKeys,
) -> list[KeyRecord]:
    ours = {tuple(e.key): e for e in (previous.entries if previous else []) if e.type == "key"}
    # another installation's value over this one's stays (but for --force) and its record keeps
    # this one's beneath (`Manifest.hand_over` gives it the key once this one no longer wants it)
    beneath = {key: ours.pop(key) for key in list(ours) if sharing.beneath(key)}
    wanted = {edit.key for edit in edits.keys}
    wanted |= {edit.overridden_by for edit in edits.keys if edit.overridden_by is not None}
    for key, record in ours.items():  # entries of an earlier install this one no longer wants
        if key not in wanted:
            _restore_key(document, record)
    # a parent install creates (`mcpServers`) uninstall removes once empty; one that was there
    # before, even empty, stays (None, a record saved without it, means created)
    found = {e.key[:-1] for e in edits.keys if cf.get_key(document.doc, e.key[:-1])[0]}
    created = {
        e.key[:-1]
        for e in edits.keys
        if e.key[:-1] not in found
        or any(r.createdParent is not False and key[:-1] == e.key[:-1] for key, r in ours.items())
    }
    records: list[KeyRecord] = []
    for edit in edits.keys:
        if edit.key in beneath and not force:  # with force, over that value as over any other
            records.append(beneath[edit.key])
            continue
        if edit.kept_off and _settled_flag(edit, document, ours, force, adopt, records):
            continue
        present, current = cf.get_key(document.doc, edit.key)
        holder = sharing.holder(edit.key) if present and edit.key not in ours else None
        value = edit.value
        if edit.key in ours:
            record = ours[edit.key]
            value = _with_the_users_keys(edit, current) if present else value
        elif holder is not None:
            if edit.guarded and current != edit.value and not force:
                raise _conflict(document.path, edit, current, adopt.home, holder)
            record = KeyRecord(  # over the other installation's value, which uninstall puts back
                key=list(edit.key),
                hadPrevious=True,
                previous=current,
                previousText=cf.raw_value(document.doc, edit.key),
                createdParent=False,
                writtenOver=holder.key,
            )
        elif present and adopt.lost and leftovers.written_by_this_install(edit, current):
            # this installation's entry whose record was lost: install's own from now on
            record = KeyRecord(key=list(edit.key), createdParent=_only_ours(edits, document, edit))
            value = _with_the_users_keys(edit, current)
            adopt.taken = True
        elif adopt.taken and adopt.sole_hooks and not edit.guarded and current == edit.value:
            # the hooks flag beside adopted entries, with no hook but teamlore's to serve: the
            # lost install set it, so uninstall removes it (a flag other hooks need stays)
            record = KeyRecord(key=list(edit.key), createdParent=_only_ours(edits, document, edit))
        elif present and not force and leftovers.in_the_way(edit, current, adopt.home):
            raise _conflict(document.path, edit, current, adopt.home)
        else:  # (one as install writes it, which no record here covers, is the user's: kept)
            record = KeyRecord(
                key=list(edit.key),
                hadPrevious=present,
                previous=current,
                previousText=cf.raw_value(document.doc, edit.key) if present else None,
                createdParent=edit.key[:-1] in created,
            )
        if not present or current != value:
            cf.set_key(document.doc, edit.key, value, document.kind)
        records.append(record)
    return records


def _deciding(edit: KeyEdit, document: cf.ConfigDocument) -> tuple[tuple[str, ...], Any]:
    """The key that decides whether a flag is on, and its value (None: no key says): the one
    overriding `edit`'s when it is set to true or false (Codex reads `[features] hooks` over
    `codex_hooks`, as doctor does), else `edit`'s own."""
    if edit.overridden_by is not None:
        present, value = cf.get_key(document.doc, edit.overridden_by)
        if present and isinstance(value, bool):
            return edit.overridden_by, value
    return edit.key, cf.get_key(document.doc, edit.key)[1]


def _settled_flag(
    edit: KeyEdit,
    document: cf.ConfigDocument,
    ours: dict[tuple[str, ...], KeyRecord],
    force: bool,
    adopt: Adoption,
    records: list[KeyRecord],
) -> bool:
    """A flag the user may have switched off (Codex's hooks): True when it is settled here,
    left as the user set it, else the caller sets it as any other key. Switched off (in its
    own key or the one overriding it) it stays off without `force`, and install's own `true`
    beside that `false` goes; under `force` a `false` in the overriding key is turned on as
    well, recorded so uninstall puts it back. A `false` an earlier install turned on stays on,
    named in `adopt.kept_on` so install can say how to go back."""
    deciding, on = _deciding(edit, document)
    current = cf.get_key(document.doc, edit.key)[1]
    if on is False and not force:
        adopt.kept_off.append(".".join(deciding))  # the user's choice: not recorded either
        if edit.key in ours and current is not False:
            _restore_key(document, ours[edit.key])
        return True
    switch = edit.overridden_by
    if switch is not None:
        there, value = cf.get_key(document.doc, switch)
        if there and value is False:  # only under force here
            record = ours.get(switch) or KeyRecord(
                key=list(switch), hadPrevious=True, previous=False, createdParent=False
            )
            cf.set_key(document.doc, switch, True, document.kind)
            records.append(record)
        elif switch in ours and value is True:
            records.append(ours[switch])
            if not force:
                adopt.kept_on.append(".".join(switch))
    if current is False and deciding != edit.key and not force:
        return True  # the overriding key turns it on: the user's `false` here means nothing
    earlier = ours.get(edit.key)
    if earlier is not None and earlier.previous is False and current is True and not force:
        adopt.kept_on.append(".".join(edit.key))
    return False


def _only_ours(edits: FileEdits, document: cf.ConfigDocument, edit: KeyEdit) -> bool:
    """Whether the object holding `edit`'s key holds nothing but keys this install writes
    there: then install made it (`"mcpServers": {}`, `[features]`), as far as can be told
    without a record, and uninstall removes it once empty."""
    parent = edit.key[:-1]
    holder = cf.get_key(document.doc, parent)[1]
    ours = {e.key[-1] for e in edits.keys if e.key[:-1] == parent}
    return isinstance(holder, dict) and set(holder) <= ours


@dataclass
class Adoption:
    """User scope, while `lost` (no manifest here: a record may be lost): entries and hooks as
    this install writes them (this teamlore, state dir `home`, options) are install's own
    (`leftovers`); else the user's, recorded as what was there. `taken`: some were, in this
    file; `sole_hooks`: the hooks files hold no hook but teamlore's. `kept_off`: the flags
    (`features.codex_hooks`) left false as the user set them, so nothing that needs them was
    added; `kept_on`: those an earlier install turned on over the user's `false` (--force)."""

    home: Path | None  # None: project scope, where a teammate's committed entry is theirs
    lost: bool = False
    taken: bool = False
    sole_hooks: bool = False
    kept_off: list[str] = field(default_factory=list)
    kept_on: list[str] = field(default_factory=list)


def _conflict(
    path: Path, edit: KeyEdit, current: Any, home: Path | None, holder: Installation | None = None
) -> errors.TeamloreError:
    name = ".".join(edit.key)
    force = "or pass --force to replace it (uninstall puts it back)"
    if holder is not None:
        return _conflict_with(path, name, holder, "project" if home is None else "user")
    there = leftovers.installed_elsewhere(current, home) if home is not None else None
    if there is not None:
        why = f"which teamlore installed for another state dir ({there}); uninstall it there first,"
    elif home is not None and leftovers.starts_this_teamlore(edit, current):
        why = (
            "which starts this teamlore but no install recorded here wrote (by hand, or with"
            " other options and its record lost); rename or remove it,"
        )
    else:
        why = "which teamlore did not write; rename or remove it,"
    said = f"{display_path(path)} already has {name}, {why} {force}"
    return leftovers.conflict(said, edit, current, home)


def _conflict_with(path: Path, name: str, holder: Installation, scope: str) -> errors.TeamloreError:
    """The key holds the entry teamlore's own other installation wrote (both scopes use this
    one file, as Codex's do when the project is the home folder)."""
    other = f"teamlore's {holder.scope}-scope installation"
    if holder.root is not None:
        other += f" for {display_path(holder.root)}"
    return errors.TeamloreError(
        errors.INTEGRATION_CONFLICT,
        f"{display_path(path)} already has {name}, which {other} wrote (both scopes use this"
        f" one file here); keep that one, or pass --force to put this {scope}-scope entry in its"
        " place (uninstalling either then leaves the other's)",
    ).advising(
        f"Keep {other} as it is, or `teamlore install --client {holder.client} --scope {scope}"
        " --force` to put this one over it."
    )


def _with_the_users_keys(edit: KeyEdit, current: Any) -> Any:
    """The value install writes over its own entry: the keys it sets, plus each key the user
    added to that entry since (`enabled = false` turns the server off; a later install must
    not turn it back on)."""
    if not edit.owns or not isinstance(current, dict) or not isinstance(edit.value, dict):
        return edit.value
    return {**edit.value, **{k: v for k, v in current.items() if k not in edit.owns}}


def _apply_hooks(
    edits: FileEdits, document: cf.ConfigDocument, previous: FileRecord | None, adopt: Adoption
) -> list[HookRecord]:
    earlier = [e for e in (previous.entries if previous else []) if isinstance(e, HookRecord)]
    _remove_hooks(document, earlier)
    if not edits.hooks:
        return []
    doc = document.doc
    # what install creates (the `hooks` object, a `hooks.<event>` list) uninstall removes once
    # empty; what was there before, even empty (`"hooks": {}`), stays
    # (None, a record saved without it, means created: `manifest.dumped`)
    created_hooks = doc.find(("hooks",)) is None or any(
        e.createdHooks is not False for e in earlier
    )
    records: list[HookRecord] = []
    for hook in edits.hooks:
        groups = cf.hook_groups(doc, hook.event)
        if any(cf.group_has_command(g, hook.command) for g in groups):
            if adopt.lost:  # this installation's hook (its command pins it)
                # its list and the `hooks` object holding only teamlore's hooks were made by
                # the install whose record was lost: uninstall removes them once empty
                sole = leftovers.only_teamlore_hooks(doc)
                records.append(
                    HookRecord(
                        event=hook.event,
                        command=hook.command,
                        createdEvent=sole or leftovers.only_teamlore_hooks(doc, hook.event),
                        createdHooks=sole,
                    )
                )
                adopt.taken = True
            continue  # project scope: a teammate's hook, theirs to keep
        created_event = doc.find(("hooks", hook.event)) is None or any(
            e.createdEvent is not False and e.event == hook.event for e in earlier
        )
        cf.add_hook(doc, hook.event, hook_group(hook))
        records.append(
            HookRecord(
                event=hook.event,
                command=hook.command,
                createdEvent=created_event,
                createdHooks=created_hooks,
            )
        )
    return records


def _remove_hooks(document: cf.ConfigDocument, records: list[HookRecord]) -> None:
    """Remove the hooks of `records`, then the containers install created that this empties."""
    for entry in records:
        cf.remove_hook(document.doc, entry.event, entry.command, drop_event=entry.createdEvent)
    if any(entry.createdHooks is not False for entry in records):
        cf.drop_empty_hooks(document.doc)


def _owned(original: bytes | None, previous: FileRecord | None) -> bool:
    """A whole file is teamlore's while it holds exactly what install last wrote."""
    return previous is not None and sha256(original) == previous.installedSha256


def _plan_whole_file(
    edits: FileEdits, previous: FileRecord | None, force: bool
) -> tuple[cf.ConfigDocument, bytes]:
    assert edits.content is not None
    original = cf.read_bytes(edits.path)
    mine = original is None or original == edits.content or _owned(original, previous)
    if not mine and not force:
        edited = " was edited since teamlore wrote it" if previous else " is not teamlore's"
        raise errors.TeamloreError(
            errors.INTEGRATION_CONFLICT,
            f"{edits.path}{edited}; move it away, or pass --force to replace it "
            "(uninstall puts it back)",
        )
    return cf.ConfigDocument(edits.path, "json", original, None), edits.content


def _plan_install(
    home: Path,
    manifest: Manifest,
    owner: str,
    existing: Installation | None,
    files: list[FileEdits],
    force: bool,
    kept_off: list[str],
    kept_on: list[str],
    *,
    user_scope: bool = False,
    lost: bool = False,
) -> list[tuple[FileEdits, _Pending, list[KeyRecord | HookRecord]]]:
    """Each file's outcome; `kept_off` gets the flags left off (then no hook is added),
    `kept_on` those an earlier install turned on over the user's `false`."""
    pending: list[tuple[FileEdits, _Pending, list[KeyRecord | HookRecord]]] = []
    sole_hooks = user_scope and leftovers.sole_teamlore_hooks(files)
    for edits in files:
        previous = existing.file(edits.path) if existing else None
        entries: list[KeyRecord | HookRecord] = []
        adopt = Adoption(home if user_scope else None, user_scope and lost, sole_hooks=sole_hooks)
        if kept_off and edits.hooks:  # the hooks feature stays off: no hook that needs it
            if previous is None and not edits.keys:
                continue
            edits = replace(edits, hooks=[])
        if edits.kind == "file":
            document, new = _plan_whole_file(edits, previous, force)
        else:
            document = cf.load(edits.path, edits.kind)
            sharing = SharedKeys(manifest, owner, edits.path)
            entries = [
                *_apply_keys(edits, document, previous, force, adopt, sharing),
                *_apply_hooks(edits, document, previous, adopt),
            ]
            new = document.render()
        action = (
            "unchanged"
            if new == document.original
            else ("updated" if document.original is not None else "created")
        )
        item = _Pending(document, new, previous, action, edits.private, adopted=adopt.taken)
        pending.append((edits, item, entries))
        kept_off += [f"{display_path(document.path)}: {key}" for key in adopt.kept_off]
        kept_on += [f"{display_path(document.path)}: {key}" for key in adopt.kept_on]
    return pending


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
    lost: bool = False,
) -> dict[str, Any]:
    """Apply `files`; with `dry_run` only report (and, with `check_writable`, also refuse what
    could not be written, so a caller can vet several clients before writing any). The caller
    holds `transaction.locked(home)` and has completed any interrupted transaction; `lost`:
    `Adoption.lost`, as the state dir was when the command began."""
    root_key = str(root) if root is not None else None
    for attempt in (1, 2):
        manifest = load_manifest(home)
        existing = manifest.find(client, scope, root_key)
        kept_off: list[str] = []
        kept_on: list[str] = []
        owner = installation_key(client, scope, root_key)
        pending = _plan_install(
            home,
            manifest,
            owner,
            existing,
            files,
            force,
            kept_off,
            kept_on,
            user_scope=scope == "user",
            lost=lost,
        )
        result: dict[str, Any] = {
            "client": client,
            "scope": scope,
            "root": root_key,
            "dryRun": dry_run,
            "files": [p.describe(dry_run) for _, p, _ in pending],
        }
        if kept_off:
            result["keptOff"] = kept_off
        if kept_on:
            result["keptOn"] = kept_on
        if check_writable:
            cf.check_all_writable(p.document.written for _, p, _ in pending if p.changed)
        if dry_run:
            return result
        intent = _install_intent(home, client, scope, root_key, options, manifest, pending)
        if _nothing_to_do(existing, intent, [p for _, p, _ in pending]):
            return result  # the manifest keeps its bytes (and its `installedAt`)
        try:
            _run(home, intent, [p for _, p, _ in pending])
            return result
        except tx.FileChanged as changed:
            if attempt == 2:
                raise _changed_meanwhile(changed.path) from None
    raise AssertionError("unreachable")


def _nothing_to_do(
    existing: Installation | None, intent: tx.Intent, pending: list[_Pending]
) -> bool:
    """An install that changes no file and records what the manifest already holds."""
    if existing is None or intent.installation is None or intent.dropBackups:
        return False
    if any(item.changed for item in pending):
        return False
    now = intent.installation.model_copy(update={"installedAt": existing.installedAt})
    return dumped(Manifest(installations=[now])) == dumped(Manifest(installations=[existing]))


def _changed_meanwhile(path: str) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.CLIENT_CONFIG_CHANGED,
        f"{display_path(path)} changed while teamlore was writing it (another program, such as"
        " the client itself, wrote it); its change was kept and nothing was changed; run the"
        " command again",
    )


def _install_intent(
    home: Path,
    client: str,
    scope: str,
    root_key: str | None,
    options: dict[str, Any],
    manifest: Manifest,
    pending: list[tuple[FileEdits, _Pending, list[KeyRecord | HookRecord]]],
) -> tx.Intent:
    """The intent record and, stored first, the backups it refers to."""
    existing = manifest.find(client, scope, root_key)
    owner = installation_key(client, scope, root_key)
    records: list[FileRecord] = []
    intents: list[tx.FileIntent] = []
    drop: list[str] = []
    for edits, item, entries in pending:
        before = item.record
        original = item.document.original
        backup = before.backup if before else None
        existed = before.existed if before else original is not None
        created_dirs = before.createdDirs if before else []
        replaced = edits.kind == "file" and original not in (None, item.new)
        # a file another installation wrote and nothing changed since (user and project scope
        # in a home that is a git repository): what was there before teamlore is what that
        # installation recorded, and the last of them to go puts it back
        shared = (
            manifest.in_step(owner, edits.path, sha256(original))
            if before is None and original is not None and not replaced
            else None
        )
        if shared is not None:
            backup, existed, created_dirs = shared.backup, shared.existed, shared.createdDirs
        elif (
            original is not None
            and before is None
            and (item.adopted or manifest.held_by_another(owner, edits.path, edits.kind))
        ):
            # the bytes before already held this installation's entries, or another one's
            # that the user edited the file around since: no backup, so uninstall removes
            # them one by one instead of putting those bytes back (with the other's entries)
            existed = True
        elif original is not None and (
            before is None or (replaced and not _owned(original, before))
        ):
            # the bytes before teamlore (or, for a whole file replaced with --force, the
            # user's file it replaces) are what uninstall puts back
            replaced_backup = backup
            try:
                backup = store_backup(home, edits.path, original, owner)
            except OSError as exc:
                raise tx.state_error(exc, "the install") from None
            if (
                before
                and replaced_backup
                and replaced_backup != backup
                and not manifest.keeps_backup(owner, before)
            ):
                # one name per installation and file: the new one took the old one's place
                # (a record of an older teamlore names it after the file alone)
                drop.append(replaced_backup)
            existed = True
        elif before is not None and sha256(original) != before.installedSha256:
            # changed since our last write: the old backup no longer describes "before
            # teamlore", so uninstall will remove our entries instead of restoring bytes
            if backup and not manifest.keeps_backup(owner, before):
                drop.append(backup)
            backup, existed = None, original is not None or existed
        planned = tx.file_intent(
            item.document.written, private=edits.private, before=original, intended=item.new
        )
        intents.append(planned)
        records.append(
            FileRecord(
                path=str(edits.path),
                kind=edits.kind,
                existed=existed,
                backup=backup,
                installedSha256=sha256(item.new),
                createdDirs=[*created_dirs, *planned.createDirs],
                entries=entries,
                foundBefore=leftovers.found_before(home, scope, edits, original, before),
            )
        )
    kept = [
        f for f in (existing.files if existing else []) if f.path not in {r.path for r in records}
    ]
    installation = Installation(
        client=client,
        scope=scope,
        root=root_key,
        installedAt=tx.now(),
        options=options,
        files=[*kept, *records],
    )
    return tx.Intent(
        operation="install",
        client=client,
        scope=scope,
        root=root_key,
        startedAt=installation.installedAt,
        files=intents,
        installation=installation,
        dropBackups=drop,
    )


def _run(home: Path, intent: tx.Intent, pending: list[_Pending]) -> None:
    """Record `intent` (a full disk refuses here, with no client file touched), then apply."""
    tx.record_intent(home, intent)
    befores = {str(p.document.written): p.document.original for p in pending}
    tx.apply(home, intent, befores)


# -- uninstall --------------------------------------------------------------------------------


def _restore_key(document: cf.ConfigDocument, record: KeyRecord) -> None:
    key = tuple(record.key)
    if record.hadPrevious:
        cf.set_key(document.doc, key, record.previous, document.kind, raw=record.previousText)
    else:
        cf.delete_key(document.doc, key, prune=record.createdParent is not False)


def _undo(
    home: Path,
    record: FileRecord,
    unassemble: Unassemble | None,
    manifest: Manifest,
    installation: Installation,
) -> _Pending:
    """What uninstall makes of one recorded file. A config that is a symlink (now, or since
    before install) is edited in its target and the link kept: never removed, so a file install
    created and then moved into a dotfiles repository loses only teamlore's entries. A `shared`
    file, one another installation holds too (`Manifest.in_step`), keeps the bytes from before
    teamlore for the last of them: this one takes out only its own entries, and an assembled
    file, whose block the other one wrote too, stays as it is. A key another installation wrote
    its value over (`sharing`, or one of another state dir: `leftovers`) keeps it, theirs now."""
    path = Path(record.path)
    shared = _shared(manifest, installation.key, record)
    sharing = SharedKeys(manifest, installation.key, path)
    beneath = {
        tuple(e.key) for e in record.entries if isinstance(e, KeyRecord) and sharing.beneath(e.key)
    }
    shared = shared or bool(beneath)
    kind: cf.Kind = record.kind if record.kind in ("json", "toml") else "json"
    target = cf.link_target(path) if record.kind in ("json", "toml") else None
    data = cf.read_bytes(target or path)
    document = cf.ConfigDocument(path, kind, data, None, link_target=target)
    if data is None:
        return _Pending(document, None, record, "already-gone")
    if shared and record.kind in ("text", "file"):
        return _Pending(document, data, record, KEPT_FOR_ANOTHER)
    user_scope = installation.scope == "user"
    gone = leftovers.previous_of_no_installation(None, record.entries, user_scope, home, path)
    if sha256(data) == record.installedSha256 and not shared and not gone:
        if record.existed and record.backup:
            if backup_path(home, record.backup).is_file():
                backup = read_backup(home, record.backup, record.path)
                return _Pending(document, backup, record, "restored")
            if record.kind in ("text", "file"):
                return _backup_lost(document, data, record, target, unassemble)
        whole = not record.existed or record.kind == "file"  # a file holding only our bytes
        if whole and target is None:
            return _Pending(document, None, record, "removed")
    if record.kind in ("text", "file"):  # changed since install: the user's now (docs/agents.md)
        return _Pending(document, data, record, KEPT_CHANGED)
    document.doc = cf.parse(path, kind, data)
    kept = leftovers.changed_to_another_state_dir(
        document.doc, record.entries, user_scope, home, path
    ) | leftovers.edited_hooks(document.doc, record.entries, home)
    for entry in leftovers.to_restore(document.doc, record.entries, user_scope, home, path):
        if not isinstance(entry, KeyRecord) or tuple(entry.key) in beneath | set(kept):
            continue  # a hook, or a key another installation's value is in now
        if not _turned_off_since(document, entry):
            _restore_key(document, entry)
    hooks, whole = leftovers.hooks_to_remove(record, user_scope, home)
    _remove_hooks(document, hooks)
    new = document.render()
    if whole and target is None and leftovers.emptied(new):  # a file that installation made
        return _Pending(document, None, record, "removed")
    same = KEPT_FOR_ANOTHER if beneath else KEPT_CHANGED if kept else "edited"
    return _Pending(document, new, record, same if new == data else "edited", kept=kept)


def _backup_lost(
    document: cf.ConfigDocument,
    data: bytes,
    record: FileRecord,
    target: Path | None,
    unassemble: Unassemble | None,
) -> _Pending:
    """This backup is gone (an older teamlore dropped it on a second `install --force` over a
    file of the user's, or when another installation into the same file stored and dropped its
    own copy under the same name): what it held cannot come back. A whole file of ours is
    removed all the same (the Pi extension would go on queueing prompts); an assembled file,
    holding the user's text too, loses only the managed block (`unassemble`), or stays when it
    has none it can take out. A config falls through to removing our entries one by one."""
    if record.kind == "file" and target is None:
        return _Pending(document, None, record, BACKUP_LOST_REMOVED)
    rest = unassemble(data) if unassemble is not None and record.kind == "text" else None
    if rest is not None:
        return _Pending(document, rest, record, BACKUP_LOST_BLOCK_REMOVED)
    return _Pending(document, data, record, BACKUP_LOST_KEPT)


def _turned_off_since(document: cf.ConfigDocument, record: KeyRecord) -> bool:
    """Whether a flag install turned on (`[features] codex_hooks = true`) is `false` now: the
    user turned it off since, so it is theirs and stays, as install leaves such a `false`."""
    return cf.get_key(document.doc, tuple(record.key)) == (True, False)


def uninstall(
    home: Path,
    *,
    client: str,
    scope: str,
    root: Path | None,
    dry_run: bool = False,
    check_writable: bool = False,
    unassemble: Unassemble | None = None,
) -> dict[str, Any]:
    """Remove what install wrote (the caller holds the lock and completed any interrupted
    transaction); a file changed meanwhile is re-planned once, then CLIENT_CONFIG_CHANGED.
    A `dry_run` with `check_writable` refuses what could not be written, as install's does.
    `unassemble` takes the managed block out of an assembled file whose backup is lost."""
    root_key = str(root) if root is not None else None
    for attempt in (1, 2):
        manifest = load_manifest(home)
        installation = manifest.find(client, scope, root_key)
        if installation is None:
            where = f" for {display_path(root_key)}" if root_key else ""
            raise errors.TeamloreError(
                errors.NOTHING_INSTALLED, f"teamlore is not installed for {client} ({scope}{where})"
            )
        pending = [_undo(home, r, unassemble, manifest, installation) for r in installation.files]
        result: dict[str, Any] = {
            "client": client,
            "scope": scope,
            "root": root_key,
            "dryRun": dry_run,
            "files": [p.describe(dry_run) for p in pending],
        }
        if check_writable or not dry_run:
            cf.check_all_writable(p.document.written for p in pending if p.changed)
        if dry_run:
            return result
        try:
            intent = _uninstall_intent(client, scope, root_key, manifest, installation, pending)
            _run(home, intent, pending)
            return result
        except tx.FileChanged as changed:
            if attempt == 2:
                raise _changed_meanwhile(changed.path) from None
    raise AssertionError("unreachable")


def _shared(manifest: Manifest, key: str, record: FileRecord) -> bool:
    """Whether another installation holds `record`'s file as this one left it (in step)."""
    return manifest.in_step(key, Path(record.path), record.installedSha256) is not None


def _uninstall_intent(
    client: str,
    scope: str,
    root_key: str | None,
    manifest: Manifest,
    installation: Installation,
    pending: list[_Pending],
) -> tx.Intent:
    files = []
    for item in pending:
        assert item.record is not None
        files.append(
            tx.file_intent(
                item.document.written,
                private=True,
                before=item.document.original,
                intended=item.new,
                remove_dirs=(
                    item.record.createdDirs
                    if item.action in ("removed", BACKUP_LOST_REMOVED)
                    else []
                ),
            )
        )
    return tx.Intent(
        operation="uninstall",
        client=client,
        scope=scope,
        root=root_key,
        startedAt=tx.now(),
        files=files,
        installation=None,
        dropBackups=[
            f.backup
            for f in installation.files
            if f.backup and not manifest.keeps_backup(installation.key, f)
        ],
    )
