"""teamlore's entries in a client's files that no install record of this state dir covers.

Two ways a person gets there (docs/agents.md, "Entries no install record covers"):

- the record was lost: the state dir was deleted or its manifest moved aside. The entries still
  hold what this install writes (the same teamlore, state dir and options), so in user scope
  install takes them over as its own (`written_by_this_install`) and uninstall then removes
  them;
- they were installed for another state dir: `TEAMLORE_HOME` was set at install and is not now,
  or the other way round. Their launch names that state dir (`TEAMLORE_HOME=…`, none for the
  default one), and the command that removes them is run with it.

`found_in` reads the files install would edit and names what it finds, so `uninstall` (nothing
recorded), `install` (an entry it did not write) and `doctor` (not installed) say the truth and
the command that helps.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.locations import state_dir_location
from teamlore.core.paths import display_path
from teamlore.integrations import claude, codex
from teamlore.integrations import config_files as cf
from teamlore.integrations.entries import FileEdits, KeyEdit
from teamlore.integrations.manifest import (
    FileRecord,
    HookRecord,
    Installation,
    KeyRecord,
    Manifest,
    load_manifest,
    manifest_path,
    read_backup,
    same_file,
)

HOOK_EVENTS = ("SessionStart", "Stop")
HOOK_VERBS = ("session-start", "session-end")
PORTABLE = "teamlore"  # a project-scope entry's command: `teamlore` on PATH


@dataclass(frozen=True)
class Found:
    path: Path
    what: str  # `mcp_servers.teamlore`, `SessionStart hook`
    state_dir: str | None  # the TEAMLORE_HOME its launch names; None: the default state dir


def starts_this_teamlore(edit: KeyEdit, current: Any) -> bool:
    """Whether `current`, under a name install writes, launches what `edit` launches: the same
    command with the same environment (so the same teamlore and state dir)."""
    wanted = edit.value
    return (
        bool(edit.owns)
        and isinstance(current, dict)
        and isinstance(wanted, dict)
        and "command" in wanted
        and current.get("command") == wanted["command"]
        and (current.get("env") or {}) == (wanted.get("env") or {})
    )


def written_by_this_install(edit: KeyEdit, current: Any) -> bool:
    """Whether `current` holds exactly what `edit` writes, give or take keys the user added
    (`enabled = false`): an entry this install would write, whoever's record is lost."""
    return (
        starts_this_teamlore(edit, current)
        and {k: v for k, v in current.items() if k in edit.owns} == edit.value
    )


def in_the_way(edit: KeyEdit, current: Any, home: Path | None) -> bool:
    """Whether `current`, under a name install writes and no record covers, refuses install
    (INTEGRATION_CONFLICT): a value of the user's but, in user scope (`home`), one this install
    would write (it records it as what was there, so uninstall puts it back)."""
    return (
        edit.guarded
        and current != edit.value
        and (home is None or not written_by_this_install(edit, current))
    )


def _server_state_dir(value: Any) -> tuple[bool, str | None]:
    """(whether `value` is a server entry that starts teamlore, the TEAMLORE_HOME it sets)."""
    if not isinstance(value, dict):
        return False, None
    command = str(value.get("command") or "")
    args = [str(a) for a in value.get("args") or []]
    teamlore = os.path.basename(command) == "teamlore" or any(
        a.startswith("teamlore.cli") for a in args
    )
    env = value.get("env")
    home = env.get("TEAMLORE_HOME") if isinstance(env, dict) else None
    return teamlore, str(home) if home else None


def _hook_state_dir(command: str) -> tuple[bool, str | None]:
    """(whether `command` runs `teamlore hook session-start|session-end`, its TEAMLORE_HOME)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False, None
    home = next((w.split("=", 1)[1] for w in words if w.startswith("TEAMLORE_HOME=")), None)
    for index, word in enumerate(words[:-1]):
        if word == "hook" and words[index + 1] in HOOK_VERBS:
            before = words[:index]
            runs = any(
                os.path.basename(w) == "teamlore" or w.startswith("teamlore.cli") for w in before
            )
            return runs, home or None
    return False, None


def portable(value: Any) -> bool:
    """Whether the server entry `value` has the form a project-scope install writes: `teamlore`
    on PATH and no `TEAMLORE_HOME` (a user-scope one pins an interpreter). It names no state
    dir: whichever state dir's project-scope installation wrote it (or a teammate, by hand)."""
    if not isinstance(value, dict):
        return False
    env = value.get("env")
    return value.get("command") == PORTABLE and not (isinstance(env, dict) and env)


def _portable_hook(command: str) -> bool:
    """Whether the hook `command` has the form a project-scope install writes (`teamlore …`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and words[0] == PORTABLE


def _scope_of(is_portable: bool) -> str:
    """The scope of the installations that write an entry of that form."""
    return "project" if is_portable else "user"


def _a_user_config(path: Path) -> bool:
    """Whether `path` is one of the clients' user-scope config files: the only ones another
    state dir's user-scope installation can have written into, which a project-scope one
    writes too when the project is the home folder (Codex's `~/.codex/config.toml`, Claude
    Code's `~/.claude/settings.json`)."""
    files = (*codex.config_files("user", None), *claude.server_files("user", None))
    return any(same_file(str(f), path) for f in files)


def found_in(files: list[FileEdits]) -> list[Found]:
    """teamlore's server entries (under the names install writes) and hooks in `files`. A file
    that cannot be read is skipped: the command that edits it names the problem."""
    found: list[Found] = []
    for edits in files:
        if edits.kind not in ("json", "toml"):
            continue
        try:
            document = cf.load(edits.path, edits.kind)
        except (errors.TeamloreError, OSError):  # unreadable (`sudo codex` left it root's)
            continue
        if document.original is None:
            continue
        for edit in edits.keys:
            present, value = cf.get_key(document.doc, edit.key)
            teamlore, home = _server_state_dir(value)
            if edit.owns and present and teamlore:
                found.append(Found(edits.path, ".".join(edit.key), home))
        if not edits.hooks or edits.kind != "json":
            continue
        for event in HOOK_EVENTS:
            for group in cf.hook_groups(document.doc, event):
                hooks = group.get("hooks") if isinstance(group, dict) else None
                for hook in hooks if isinstance(hooks, list) else []:
                    if not isinstance(hook, dict):
                        continue
                    teamlore, home = _hook_state_dir(str(hook.get("command") or ""))
                    if teamlore:
                        found.append(Found(edits.path, f"{event} hook", home))
    return found


def only_teamlore_hooks(doc: Any, event: str | None = None) -> bool:
    """Whether the `hooks` object (or its `event` list) holds at least one hook and no hook
    but a teamlore one."""
    hooks = doc.find(("hooks",))
    if hooks is None or hooks.kind != "object":
        return False
    events = [event] if event is not None else list(cf.get_key(doc, ("hooks",))[1])
    commands: list[object] = []
    for name in events:
        for group in cf.hook_groups(doc, name):
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list) or not entries:
                return False
            commands += [h.get("command") if isinstance(h, dict) else None for h in entries]
    return bool(commands) and all(_hook_state_dir(str(c or ""))[0] for c in commands)


def sole_teamlore_hooks(files: list[FileEdits]) -> bool:
    """Whether the hooks files among `files` hold teamlore's hooks and nothing else: then a
    hooks feature flag beside teamlore's entries was set for them."""
    hooked = [edits for edits in files if edits.hooks and edits.kind == "json"]
    for edits in hooked:
        try:
            document = cf.load(edits.path, "json")
        except (errors.TeamloreError, OSError):
            return False
        if document.original is None or not only_teamlore_hooks(document.doc):
            return False
    return bool(hooked)


def default_state_dir() -> str:
    return state_dir_location({k: v for k, v in os.environ.items() if k != "TEAMLORE_HOME"})


def same_state_dir(named: str | None, home: Path) -> bool:
    """Whether the state dir an entry names (None: the default one) is `home`."""
    where = named if named is not None else default_state_dir()
    return os.path.realpath(os.path.expanduser(where)) == os.path.realpath(home)


def uninstall_there(named: str | None, client: str) -> str:
    """The command that uninstalls (user scope) with the state dir an entry names."""
    if named is None:
        return f"env -u TEAMLORE_HOME teamlore uninstall --client {client}"
    return f"TEAMLORE_HOME={shlex.quote(named)} teamlore uninstall --client {client}"


def installed_elsewhere(value: Any, home: Path) -> str | None:
    """For a server entry that starts teamlore with another state dir than `home`: that state
    dir as a person reads it (None: not such an entry)."""
    teamlore, named = _server_state_dir(value)
    if not teamlore or same_state_dir(named, home):
        return None
    return display_path(named) if named else "the default state dir"


def changed_to_another_state_dir(
    doc: Any, entries: list[KeyRecord | HookRecord], user_scope: bool, home: Path, path: Path
) -> dict[tuple[str, ...], str | None]:
    """The server entries of an installation of `home` whose value in `doc` (the config at
    `path`) is now another installation's, which no record here can see: uninstall keeps them,
    as changed since install: {key: that one's state dir as a person reads it, None for a
    project-scope one's, which names none}. In a home that is a git repository one config is
    both scopes' (Codex's `~/.codex/config.toml`), so that is
    - a value starting teamlore with another state dir that records that entry there (a second
      `TEAMLORE_HOME`'s user-scope `install --force` wrote over it). One naming a state dir
      that records no such entry (this one before the person moved it, one deleted since) is
      this installation's still;
    - in user scope, a value in the portable form (`portable`), which a user-scope install never
      writes, when a project-scope install could have written it (`_portable_of_another`):
      another state dir's `install --force` did (this state dir's own is `SharedKeys`'s).
      Without that evidence it is an edit of the person's, and goes as this one's. In project
      scope that form is its own, or a teammate's: not kept.
    None in the config of a project that is not the home folder (`_a_user_config`)."""
    kept: dict[tuple[str, ...], str | None] = {}
    if not user_scope and not _a_user_config(path):
        return kept
    for entry in entries:
        if not isinstance(entry, KeyRecord):
            continue
        present, current = cf.get_key(doc, tuple(entry.key))
        if not present:
            continue
        if portable(current):
            if user_scope and _portable_of_another(current, path, entry.key, home):
                kept[tuple(entry.key)] = None
            continue
        there = installed_elsewhere(current, home)
        if there is not None and _records_entry(current, path, entry.key):
            kept[tuple(entry.key)] = there
    return kept


def edited_hooks(
    doc: Any, entries: list[KeyRecord | HookRecord], home: Path
) -> dict[tuple[str, ...], str | None]:
    """The hooks of `entries` the person edited since install: their recorded command is gone
    from `doc` and a hook of that event still runs this state dir's teamlore (`teamlore hook
    …`). Uninstall removes a hook by its command, so it keeps those, and says so:
    {("hooks", event): None}, beside `changed_to_another_state_dir`'s keys."""
    kept: dict[tuple[str, ...], str | None] = {}
    for entry in entries:
        if not isinstance(entry, HookRecord):
            continue
        groups = cf.hook_groups(doc, entry.event)
        if any(cf.group_has_command(g, entry.command) for g in groups):
            continue
        commands = [
            str(h.get("command"))
            for g in groups
            if isinstance(g, dict)
            for h in g.get("hooks") or []
            if isinstance(h, dict) and h.get("command")
        ]
        for command in commands:
            runs, named = _hook_state_dir(command)
            if runs and (_portable_hook(command) or same_state_dir(named, home)):
                kept[("hooks", entry.event)] = None
    return kept


def _portable_of_another(value: Any, path: Path, key: list[str], home: Path) -> bool:
    """Whether the portable server entry `value` under `key` in the user config `path` is
    another state dir's project-scope installation's, not `home`'s own one's: on evidence only,
    the config is also a project's (`_a_project_config_too`), or the default state dir (the
    one such an entry starts) records that key there in a project-scope installation."""
    if _records_entry(value, path, key, str(home)):
        return False
    if _a_project_config_too(path):
        return True
    records = _records_of(value, path, absent_unknown=True)
    return records is not None and _holds(records, key)


def _a_project_config_too(path: Path) -> bool:
    """Whether the user config `path` is also the one a project-scope install writes: the
    folder its client folder is in is a git repository (a home that is one: Codex's
    `~/.codex/config.toml` is then that project's `.codex/config.toml`)."""
    root = path.parent.parent
    if not (root / ".git").exists():
        return False
    files = (*codex.config_files("project", root), *claude.server_files("project", root))
    return any(same_file(str(f), path) for f in files)


def previous_of_no_installation(
    doc: Any, entries: list[KeyRecord | HookRecord], user_scope: bool, home: Path, path: Path
) -> set[tuple[str, ...]]:
    """The keys of an installation of `home` in the config `path` (`doc`: as it is now, None:
    not read yet) that uninstall takes out instead of putting back what install found there: a
    server entry another installation of another state dir wrote before this one's
    `install --force` (a user-scope one names its state dir; a project-scope one, portable,
    names none and is looked for in the default state dir, the one it runs with), which that
    state dir no longer records (uninstalled since, its entry kept then as this one's), would
    start a state dir nothing installed any more; one naming a state dir with no manifest
    (never installed: a hand-written entry, one from dotfiles, or one deleted since) is the
    user's and comes back, as install promised, as does, in project scope, a portable one (a
    teammate's); none in the config of a project that is not the home folder (`_a_user_config`).
    Beside another state dir's entry, a flag (`features.codex_hooks`) install found on and that
    is gone now was set by the first installation into the file (its uninstall removed it): it
    is not set again however many installed over it since. Without `doc`, only the server
    entries."""
    gone: set[tuple[str, ...]] = set()
    if not user_scope and not _a_user_config(path):
        return gone
    beside_another = False
    for entry in entries:
        if not isinstance(entry, KeyRecord) or not entry.hadPrevious or entry.writtenOver:
            continue
        if not user_scope and portable(entry.previous):
            continue
        if installed_elsewhere(entry.previous, home) is None:
            continue
        records = _records_of(entry.previous, path, absent_unknown=True)
        beside_another = beside_another or records is not None
        if records is not None and not _holds(records, entry.key):
            gone.add(tuple(entry.key))
    if beside_another and doc is not None:
        gone |= {
            tuple(e.key)
            for e in entries
            if isinstance(e, KeyRecord)
            and e.previous is True
            and not cf.get_key(doc, tuple(e.key))[0]
        }
    return gone


def to_restore(
    doc: Any, entries: list[KeyRecord | HookRecord], user_scope: bool, home: Path, path: Path
) -> list[KeyRecord | HookRecord]:
    """`entries` as uninstall puts back what they replaced: each key of
    `previous_of_no_installation` is taken out (as one install found empty)."""
    gone = previous_of_no_installation(doc, entries, user_scope, home, path)
    return [
        e.model_copy(update={"hadPrevious": False, "previous": None, "previousText": None})
        if isinstance(e, KeyRecord) and tuple(e.key) in gone
        else e
        for e in entries
    ]


def hooks_to_remove(
    record: FileRecord, user_scope: bool, home: Path
) -> tuple[list[HookRecord], bool]:
    """The hooks of an installation of `home` in the hooks file of `record` as uninstall
    removes them, and whether the file goes once nothing is left in it. The hooks containers
    install found (`hooks`, `hooks.<event>`: its copy of the file says) holding nothing but
    hooks of another state dir's installation that records them no longer (uninstalled since,
    it left them for this one's hook) are removed once empty, as that one would have; the file
    too, when it held nothing else. Not those the first one found there itself
    (`FileRecord.foundBefore`: a file of the user's, `{}` or `{"hooks": {}}`). In a home that
    is a git repository one hooks file is both scopes' (`_hook_of_no_installation`)."""
    hooks = [e for e in record.entries if isinstance(e, HookRecord)]
    path = Path(record.path)
    if not hooks or record.kind != "json" or not record.backup:
        return hooks, False
    if not user_scope and not _a_user_config(path):
        return hooks, False
    try:
        found = cf.parse(path, "json", read_backup(home, record.backup, record.path))
    except errors.TeamloreError:  # lost or unreadable: the containers stay, as recorded
        return hooks, False
    events, top = found.get(("hooks",))[1], found.get(())[1]
    if not isinstance(events, dict) or not isinstance(top, dict):
        return hooks, False
    before = set(record.foundBefore or ())
    gone = {
        e
        for e in events
        if f"hooks.{e}" not in before
        and _only_hooks_of_no_installation(found, e, path, home, user_scope)
    }
    if not gone:
        return hooks, False
    every = gone == set(events) and "hooks" not in before  # it held nothing else
    as_created = [
        h.model_copy(
            update={
                "createdEvent": None if h.event in gone else h.createdEvent,
                "createdHooks": None if every else h.createdHooks,
            }
        )
        for h in hooks
    ]
    return as_created, every and set(top) == {"hooks"} and "" not in before


def found_before(
    home: Path, scope: str, edits: FileEdits, original: bytes | None, before: FileRecord | None
) -> list[str] | None:
    """`FileRecord.foundBefore` of the hooks file `edits` a user-scope install of `home` finds
    (`original`) with containers holding nothing but other state dirs' hooks (`hooks.<event>`,
    `hooks` when all of them do, "" for the file when it holds nothing else): those of them the
    installations of those state dirs found there themselves (`_found_by_itself`), which
    uninstall keeps once they are gone (`hooks_to_remove`), such as a file of the user's, `{}`
    or `{"hooks": {}}`. None: none of them, or not known (saved only when set: a manifest
    without it stays readable by an older teamlore). A reinstall keeps what the first install
    of the file found."""
    if before is not None:
        return before.foundBefore
    if scope != "user" or edits.kind != "json" or original is None:
        return None
    try:
        found = cf.parse(edits.path, "json", original)
    except errors.TeamloreError:
        return None
    candidates, installations = _others_containers(found, home)
    there: set[str] = set()
    for named, of_scope in installations:
        for record in _user_files(named, edits.path, scope=of_scope) or []:
            there |= _found_by_itself(named, record)
    kept = sorted(candidates & there)
    return kept or None


def _others_containers(found: Any, home: Path) -> tuple[set[str], set[tuple[str | None, str]]]:
    """The containers of the hooks file `found` holding nothing but other state dirs' hooks
    than `home`'s (`hooks.<event>`, `hooks` when all of them do, "" for the file when it holds
    nothing else), and the installations those hooks name: (state dir, scope)."""
    events, top = found.get(("hooks",))[1], found.get(())[1]
    if not isinstance(events, dict) or not isinstance(top, dict):
        return set(), set()
    theirs = {e: _other_state_dirs(found, e, home) for e in events}
    theirs = {e: named for e, named in theirs.items() if named}
    candidates = {f"hooks.{e}" for e in theirs}
    if theirs and len(theirs) == len(events):  # an empty `hooks` holds no one's hooks
        candidates |= {"hooks", ""} if set(top) == {"hooks"} else {"hooks"}
    return candidates, {n for names in theirs.values() for n in names}


def _found_by_itself(named: str | None, record: FileRecord) -> set[str]:
    """The containers of a hooks file (`hooks.<event>`, `hooks`, "" for the file) that the
    installation of the state dir `named` whose record is `record` found there, as it says
    (`existed`, `createdHooks` / `createdEvent`: false), but for those it found holding nothing
    but the hooks of state dirs installed before it (its copy of the file says) and did not
    find there itself (its `foundBefore`): the first one into the file made them, not the user,
    however many installed after it."""
    if not record.existed:
        return set()
    mine = [e for e in record.entries if isinstance(e, HookRecord)]
    found = {"", *(record.foundBefore or ())}
    found |= {f"hooks.{h.event}" for h in mine if h.createdEvent is False}
    found |= {"hooks"} if any(h.createdHooks is False for h in mine) else set()
    other = _state_dir_path(named)
    if not record.backup:  # no copy: as its record says
        return found
    try:
        copy = cf.parse(Path(record.path), "json", read_backup(other, record.backup, record.path))
    except errors.TeamloreError:  # lost or unreadable: as its record says
        return found
    made_before, _ = _others_containers(copy, other)
    return found - (made_before - set(record.foundBefore or ()))


def _other_state_dirs(found: Any, event: str, home: Path) -> set[tuple[str | None, str]]:
    """The installations the `hooks.<event>` list of `found` names (state dir, the scope that
    writes such a hook), when it holds hooks and nothing but teamlore's hooks of other state
    dirs than `home` (else none)."""
    commands = _hook_commands(found, event)
    named = {(_hook_state_dir(c)[1], _scope_of(_portable_hook(c))) for c in commands}
    if not only_teamlore_hooks(found, event) or any(same_state_dir(n, home) for n, _ in named):
        return set()
    return named


def _only_hooks_of_no_installation(
    found: Any, event: str, path: Path, home: Path, user_scope: bool
) -> bool:
    """Whether the `hooks.<event>` list of `found` holds hooks, all of them teamlore's hooks of
    another state dir than `home` that records no such hook in `path`."""
    return only_teamlore_hooks(found, event) and all(
        _hook_of_no_installation(c, path, home, user_scope) for c in _hook_commands(found, event)
    )


def _hook_commands(found: Any, event: str) -> list[str]:
    """The commands of the hooks in the `hooks.<event>` list of `found`."""
    return [
        str(h.get("command") or "")
        for g in cf.hook_groups(found, event)
        for h in (g.get("hooks") if isinstance(g, dict) else None) or []
        if isinstance(h, dict)
    ]


def emptied(new: bytes | None) -> bool:
    """Whether `new` (a JSON file's bytes) holds an empty object and nothing else."""
    return new is not None and new.strip().lstrip(b"\xef\xbb\xbf").strip() == b"{}"


def _hook_of_no_installation(command: str, path: Path, home: Path, user_scope: bool) -> bool:
    """Whether the teamlore hook `command` names another state dir than `home` that records no
    such hook in `path` in its installations of the scope that writes that form of hook (a
    portable one, in project scope, is its own form: a teammate's, never one of these)."""
    named = _hook_state_dir(command)[1]
    is_portable = _portable_hook(command)
    if same_state_dir(named, home) or (is_portable and not user_scope):
        return False
    scope = _scope_of(is_portable)
    records = _user_records(named, path, absent_unknown=True, scope=scope)
    return records is not None and not any(
        isinstance(e, HookRecord) and e.command == command for e in records
    )


def _records_entry(value: Any, path: Path, key: list[str], named: str | None = None) -> bool:
    """Whether the state dir the server entry `value` names (`named`: that one instead) records
    `key` in `path` in one of its installations of the scope that writes such a value; a
    manifest that cannot be read counts as one that does."""
    records = _records_of(value, path, named=named)
    return records is None or _holds(records, key)


def _holds(records: list[KeyRecord | HookRecord], key: list[str]) -> bool:
    return any(isinstance(e, KeyRecord) and e.key == key for e in records)


def _records_of(
    value: Any, path: Path, *, named: str | None = None, absent_unknown: bool = False
) -> list[KeyRecord | HookRecord] | None:
    """What the installations that could have written the server entry `value` in `path`
    record there: those of the state dir it names (`named`: that one instead), of the scope
    that writes its form (`portable`: project, else user). None: that manifest cannot be read,
    or (`absent_unknown`) is not there."""
    there = named if named is not None else _server_state_dir(value)[1]
    scope = _scope_of(portable(value))
    return _user_records(there, path, absent_unknown=absent_unknown, scope=scope)


def _user_records(
    named: str | None, path: Path, *, absent_unknown: bool = False, scope: str = "user"
) -> list[KeyRecord | HookRecord] | None:
    """What the `scope` installations of the state dir `named` (None: the default one) record
    in `path` (None: its manifest cannot be read, or, with `absent_unknown`, is not there: that
    state dir never ran install, or was deleted)."""
    records = _user_files(named, path, absent_unknown=absent_unknown, scope=scope)
    return None if records is None else [e for r in records for e in r.entries]


def _state_dir_path(named: str | None) -> Path:
    """The state dir an entry names (None: the default one)."""
    return Path(os.path.expanduser(named if named is not None else default_state_dir()))


def _user_files(
    named: str | None, path: Path, *, absent_unknown: bool = False, scope: str = "user"
) -> list[FileRecord] | None:
    """The records of `path` of the `scope` installations of the state dir `named` (None: its
    manifest cannot be read, or, with `absent_unknown`, is not there)."""
    other = _state_dir_path(named)
    if absent_unknown and not manifest_path(other).exists():
        return None
    try:
        manifest = load_manifest(other)
    except (errors.TeamloreError, OSError):
        return None
    records = [i.file(path) for i in manifest.installations if i.scope == scope]
    return [r for r in records if r is not None]


def recorded_by(manifest: Manifest, found: list[Found]) -> Installation | None:
    """The installation of this state dir that recorded every one of `found`: another scope
    writing the same files (Codex's user and project scope in a home that is a git repository)."""

    def records(installation: Installation, item: Found) -> bool:
        record = installation.file(item.path)
        return record is not None and any(
            (isinstance(e, KeyRecord) and ".".join(e.key) == item.what)
            or (isinstance(e, HookRecord) and f"{e.event} hook" == item.what)
            for e in record.entries
        )

    return next(
        (i for i in manifest.installations if all(records(i, item) for item in found)), None
    )


def conflict(said: str, edit: KeyEdit, current: Any, home: Path | None) -> errors.TeamloreError:
    """INTEGRATION_CONFLICT over the entry `current`, with the next step for whose it is: one
    teamlore installed for another state dir is uninstalled there (not "your entry")."""
    refusal = errors.TeamloreError(errors.INTEGRATION_CONFLICT, said)
    teamlore, named = _server_state_dir(current)
    if home is None or not teamlore or same_state_dir(named, home):
        return refusal
    client = "claude" if edit.key[0] == "mcpServers" else "codex"
    return refusal.advising(
        f"Run `{uninstall_there(named, client)}` (teamlore's entry for that state dir), then"
        " install again; or `teamlore install --force`."
    )


def explain(
    found: list[Found], home: Path, client: str, scope: str, manifest: Manifest | None = None
) -> tuple[str, str]:
    """What `found` is, as a clause after "teamlore is not installed for X", and its fix."""
    paths = sorted({display_path(f.path) for f in found})
    where = f"its entries in {' and '.join(paths)}"
    other = recorded_by(manifest, found) if manifest is not None else None
    if other is not None:
        there = f" for {display_path(other.root)}" if other.root else ""
        run = f" (in {display_path(other.root)})" if other.root else ""
        return (
            f"{where} are teamlore's {other.scope}-scope installation's{there} (both scopes use"
            " these files here)",
            f"`teamlore uninstall --client {other.client} --scope {other.scope}`{run} removes them",
        )
    if scope == "project":  # the portable form names no state dir; a teammate may have written it
        return (
            f"{where} were not installed by you (a teammate committed them, or the record is gone)",
            "teamlore leaves them; remove them by hand if this repository should not use teamlore",
        )
    elsewhere = [f for f in found if not same_state_dir(f.state_dir, home)]
    if elsewhere:  # each state dir they name (a person may have used two), in the order found
        named = list(dict.fromkeys(f.state_dir for f in elsewhere))
        states = ", ".join(display_path(n) if n else "the default one" for n in named)
        runs = " and ".join(f"`{uninstall_there(n, client)}`" for n in named)
        dirs = "another state dir" if len(named) == 1 else "other state dirs"
        return f"{where} were installed for {dirs} ({states})", f"{runs} removes them"
    return (
        f"{where} have no record in this state dir (it was deleted or moved aside)",
        f"`teamlore install --client {client}` takes them over; `teamlore uninstall --client"
        f" {client}` then removes them",
    )
