"""A client's config file (JSON or TOML), read safely, edited in place, written atomically.

A config that is a symlink (a dotfiles repository) is read and written through it, as both
clients do: the link's regular target is edited (atomically, in the target's own folder) and the
link stays a link. A dangling link, a link loop, a link to anything but a regular file and any
other non-regular file are refused (CLIENT_CONFIG_UNSAFE), as is a file that does not parse
(CLIENT_CONFIG_INVALID, naming the line), before anything is written. A file that begins with a
UTF-8 byte order mark keeps it: both clients read such a file (measured with Claude Code 2.1.332
and Codex 0.171.0). TOML goes through tomlkit, so the user's comments, ordering and formatting
survive an edit; JSON is edited as text (`json_text`), so every byte teamlore did not change
stays as it was.
"""

from __future__ import annotations

import difflib
import errno
import json
import os
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, InlineTable, Item, Null, Table, Whitespace

from teamlore.core import errors, safe_write
from teamlore.core.paths import display_path
from teamlore.core.text.diffs import unified_diff
from teamlore.core.text.files import all_crlf, conflict_start, with_line_ends_of
from teamlore.integrations.json_text import JsonText

Kind = Literal["json", "toml"]
PRIVATE_MODE = 0o600
BOM = b"\xef\xbb\xbf"


@dataclass
class ConfigDocument:
    """One config file: its bytes on disk (None when absent) and the parsed, editable doc."""

    path: Path
    kind: Kind
    original: bytes | None
    doc: Any  # JsonText for JSON, tomlkit.TOMLDocument for TOML
    link_target: Path | None = None  # `path` is a symlink to this regular file: edited there

    @property
    def written(self) -> Path:
        """The file a write replaces: the link's target, else `path` itself."""
        return self.link_target or self.path

    def render(self) -> bytes:
        mark = BOM if (self.original or b"").startswith(BOM) else b""  # kept as it was
        if self.kind == "toml":  # tables teamlore adds get the file's own line ends
            saved = (self.original or b"").removeprefix(BOM).decode("utf-8", "replace")
            text = with_comments_kept(saved, with_line_ends_of(saved, tomlkit.dumps(self.doc)))
            self._check_meaning(text)
            return mark + text.encode("utf-8")
        rendered: bytes = self.doc.render()
        return mark + rendered

    def _check_meaning(self, text: str) -> None:
        """The written TOML must mean what the edited document holds. It may not: a table added
        under a parent whose keys are written dotted at the top level (`features.x = true` after
        it) would take those keys into the new table, changing what the user's settings mean."""
        written = json.dumps(tomlkit.parse(text).unwrap(), sort_keys=True, default=str)
        if written != json.dumps(plain(self.doc), sort_keys=True, default=str):
            raise errors.TeamloreError(
                errors.CLIENT_CONFIG_INVALID,
                f"{display_path(self.path)}: teamlore cannot add its tables without changing what"
                " your other settings mean (keys written dotted at the top level, such as"
                " `features.web_search = true`, would fall under them); write those as tables"
                " (`[features]`, `[mcp_servers.NAME]`) and run it again; nothing was changed",
            )

    def diff(self, new: bytes | None) -> str:
        """A unified diff from the bytes on disk to `new` (None: the file is removed)."""
        old_text = (self.original or b"").decode("utf-8", "replace")
        new_text = (new or b"").decode("utf-8", "replace")
        if all_crlf(old_text) and (new is None or all_crlf(new_text)):
            # one kind of line end before and after: shown as lines, not as `\x0d` on each
            old_text, new_text = old_text.replace("\r\n", "\n"), new_text.replace("\r\n", "\n")
        return unified_diff(
            old_text,
            new_text,
            fromfile=str(self.path) if self.original is not None else "/dev/null",
            tofile=str(self.path) if new is not None else "/dev/null",
        )


def with_comments_kept(before: str, after: str) -> str:
    """`after` with each comment an edit removed from the end of a removed table put back where
    it was. tomlkit keeps the comment lines above a table header inside the table before it, so
    removing teamlore's table (or the `[features]` install created) would take with it the
    comment a person wrote over their next table, or at the end of the file."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    bare_old = [line.rstrip("\r\n") for line in old]  # a last line may lack its line end
    bare_new = [line.rstrip("\r\n") for line in new]
    missing = Counter(bare_old) - Counter(bare_new)  # a comment kept elsewhere stays single
    end = "\r\n" if all_crlf(before) else "\n"
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, bare_old, bare_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out += new[j1:j2]
        if tag not in ("delete", "replace"):
            continue
        for line in _trailing_comments(old[i1:i2]):
            bare = line.rstrip("\r\n")
            if bare and missing[bare] <= 0:
                continue
            missing[bare] -= 1 if bare else 0
            if out and not out[-1].endswith("\n"):
                out[-1] += end
            out.append(line)
    if out and not out[-1].endswith("\n") and after.endswith("\n"):
        out[-1] += end
    return "".join(out)


def _trailing_comments(lines: list[str]) -> list[str]:
    """The comment lines (and the blank lines between them) that end `lines`."""
    start = len(lines)
    while start > 0 and (not lines[start - 1].strip() or lines[start - 1].lstrip().startswith("#")):
        start -= 1
    run = lines[start:]
    while run and not run[0].strip():
        run = run[1:]
    return run


def check_regular_or_absent(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNWRITABLE, f"{display_path(path)}: {exc.strerror}"
        ) from None
    if stat.S_ISLNK(info.st_mode):  # a config's link is resolved first (`link_target`)
        target = display_path(os.path.realpath(path))
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNSAFE,
            f"{display_path(path)} is a symbolic link (to {target}), which teamlore does not"
            " replace; nothing was changed",
        )
    if not stat.S_ISREG(info.st_mode):
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNSAFE,
            f"{display_path(path)} is {_not_a_file(info.st_mode)}; the client keeps its settings"
            " in a file there: move it aside, then run it again; nothing was changed",
        )


def link_target(path: Path) -> Path | None:
    """The regular file the symlink `path` leads to (None: `path` is no symlink). A dangling
    link or a loop is refused: the client could not read its settings through it either."""
    if not path.is_symlink():
        return None
    shown = display_path(path)
    try:
        target = Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        gone = display_path(os.path.realpath(path))
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNSAFE,
            f"{shown} is a symbolic link to {gone}, which does not exist; create that file (or"
            " remove the link), then run it again; nothing was changed",
        ) from None
    except OSError as exc:
        why = "a loop of symbolic links" if exc.errno == errno.ELOOP else exc.strerror
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNSAFE,
            f"{shown} is a symbolic link that cannot be followed ({why}); point it at the file"
            " that holds your settings, then run it again; nothing was changed",
        ) from None
    info = os.stat(target)
    if not stat.S_ISREG(info.st_mode):
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNSAFE,
            f"{shown} is a symbolic link to {display_path(target)}, which is"
            f" {_not_a_file(info.st_mode)}; nothing was changed",
        )
    return target


def _not_a_file(mode: int) -> str:
    """What a config path that is no regular file is, in a refusal's words."""
    return "a directory" if stat.S_ISDIR(mode) else "not a regular file"


def read_bytes(path: Path) -> bytes | None:
    check_regular_or_absent(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNWRITABLE, f"{display_path(path)}: {exc.strerror}"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def parse(path: Path, kind: Kind, data: bytes | None) -> Any:
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        line = (data or b"")[: exc.start].count(b"\n") + 1
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_INVALID,
            f"{display_path(path)}: line {line}: not UTF-8 text; nothing was changed",
        ) from None
    text = text.removeprefix("\ufeff")  # both clients skip it; `render` puts it back
    try:
        return JsonText(text, path) if kind == "json" else tomlkit.parse(text)
    except errors.TeamloreError:  # JSON: located by JsonText
        _refuse_merge_conflict(path, text)
        raise
    except TOMLKitError as exc:
        _refuse_merge_conflict(path, text)
        reason = str(exc).splitlines()[0][:200]
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_INVALID,
            f"{display_path(path)} does not parse ({reason}); nothing was changed",
        ) from None


def _refuse_merge_conflict(path: Path, text: str) -> None:
    """A config that does not parse because git left a merge unresolved in it (a dotfiles
    repository) is named as such: the parser's own words would point at a marker line."""
    start = conflict_start(text)
    if start is not None:
        line = text.count("\n", 0, start) + 1
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_INVALID,
            f"{display_path(path)}: line {line}: an unresolved git merge conflict (`<<<<<<<` …"
            " `>>>>>>>`); resolve it, then run it again; nothing was changed",
        ) from None


def load(path: Path, kind: Kind) -> ConfigDocument:
    """`path` read and parsed; a symlink is read through (`link_target`)."""
    target = link_target(path)
    data = read_bytes(target or path)
    return ConfigDocument(path, kind, data, parse(path, kind, data), link_target=target)


def write_atomically(path: Path, data: bytes, *, private: bool) -> list[Path]:
    """Replace `path` with `data` (never through a symlink, mode kept; a new file is 0600 when
    `private`). Returns the directories it had to create, outermost first."""
    created: list[Path] = []
    probe = path.parent
    while not probe.exists():
        created.append(probe)
        probe = probe.parent
    created.reverse()
    existed = path.exists()
    try:
        for directory in created:
            os.mkdir(directory, 0o700 if private else 0o755)
        safe_write.write_file(path.parent, path.name, data, create_dirs=False)
        if not existed and private:
            os.chmod(path, PRIVATE_MODE)
    except OSError as exc:
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNWRITABLE, f"cannot write {display_path(path)}: {exc.strerror}"
        ) from None
    return created


def remove_file(path: Path) -> None:
    check_regular_or_absent(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNWRITABLE, f"cannot remove {display_path(path)}: {exc.strerror}"
        ) from None


def check_writable(path: Path) -> None:
    """Refuse early (nothing written yet) when `path` or the folder it is written in is not
    writable, naming the one that is not: a config is replaced through a new file in its
    folder, so a folder of mode 555 stops the write of a file of mode 644."""
    folder = path.parent
    while not folder.exists():  # the folders install would create: the first that exists
        folder = folder.parent
    if path.exists() and not os.access(path, os.W_OK):
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNWRITABLE,
            f"{display_path(path)} is not writable; nothing was changed",
        )
    if not os.access(folder, os.W_OK):
        shown = display_path(folder)
        raise errors.TeamloreError(
            errors.CLIENT_CONFIG_UNWRITABLE,
            f"folder {shown} is not writable, so teamlore cannot write {display_path(path)} (it"
            " replaces a config through a new file in its folder); nothing was changed",
        ).advising(f"Fix the folder's owner or mode (`ls -ld {shown}`), then retry.")


def unwritable_reason(path: Path) -> str | None:
    """What `check_writable` would refuse `path` with, or None: for a dry run, which shows the
    edit and says it."""
    try:
        check_writable(path)
    except errors.TeamloreError as refused:
        return f"{refused.message} ({refused.code})"
    return None


def check_all_writable(paths: Iterable[Path]) -> None:
    """`check_writable` for each of `paths`: a refusal comes before any of them is written."""
    for path in paths:
        check_writable(path)


# -- editing parsed documents ---------------------------------------------------------------


def plain(value: Any) -> Any:
    """A tomlkit item (or anything) as plain Python data, for comparisons and the manifest."""
    if isinstance(value, Item | tomlkit.TOMLDocument):
        return value.unwrap()
    return value


def get_key(doc: Any, key: tuple[str, ...]) -> tuple[bool, Any]:
    if isinstance(doc, JsonText):
        return doc.get(key)
    node = doc
    for part in key:
        if not hasattr(node, "get") or part not in node:
            return False, None
        node = node[part]
    return True, plain(node)


def _toml_value(value: Any, *, inline: bool) -> Any:
    if isinstance(value, dict):
        table: Any = tomlkit.inline_table() if inline else tomlkit.table()
        for key, item in value.items():
            table[key] = _toml_value(item, inline=inline or not isinstance(item, dict))
        return table
    return value


def raw_value(doc: Any, key: tuple[str, ...]) -> str | None:
    """JSON: the exact text of the value at `key` (None for TOML, or when absent)."""
    return doc.raw(key) if isinstance(doc, JsonText) else None


def set_key(
    doc: Any, key: tuple[str, ...], value: Any, kind: Kind, *, raw: str | None = None
) -> None:
    if isinstance(doc, JsonText):
        doc.set(key, value, raw=raw)
        return
    node = doc
    added: tuple[Any, str] | None = None  # the first parent this call creates, and its name
    for depth, part in enumerate(key[:-1]):
        if part not in node:
            # a parent that only holds tables renders as `[a.b]`, not `[a]` + `[a.b]`; inside
            # an inline table (`mcp_servers = { … }`, as some people write it) it is inline too
            inline = isinstance(node, InlineTable)
            super_table = depth < len(key) - 2 or None
            node[part] = tomlkit.inline_table() if inline else tomlkit.table(super_table)
            added = added or (node, part)
        node = node[part]
    if isinstance(node, InlineTable):  # a table cannot live inside an inline table
        node[key[-1]] = _toml_value(value, inline=True)
        return
    if not isinstance(value, dict) and key[-1] not in node and isinstance(node, Table):
        _add_after_last_key(node, key[-1], value)
        return
    # nested dicts become sub-tables ([x.tools.y]); `env`-like maps of strings stay inline
    node[key[-1]] = _toml_table(value) if isinstance(value, dict) else value
    if isinstance(value, dict) and len(key) > 1 and not _means_what_it_holds(doc):
        # a parent written as dotted keys at the top level (`mcp_servers.other.command = …`)
        # with more top-level keys after it: a table added inside it would take those keys in.
        # Added after the file's last table instead, it leaves them where they were
        holder, name = added or (node, key[-1])
        del holder[name]
        tail: Any = _toml_table(value)
        for part in reversed(key[1:]):
            parent = tomlkit.table(is_super_table=True)
            parent.append(part, tail)
            tail = parent
        doc.append(key[0], tail)


def _add_after_last_key(table: Table, name: str, value: Any) -> None:
    """`name = value` added to `table` right after its last key (or its header). tomlkit keeps
    the comment lines above the next table's header, and the blank lines before it, inside this
    table: appended after them, the key would sit under the comment a person wrote for the
    next table (`# my other MCP servers`)."""
    body = table.value.body
    start = len(body)
    while start > 0 and body[start - 1][0] is None:  # comments, blank lines, deleted items
        start -= 1
    if start > 0 and isinstance(body[start - 1][1], Table | AoT):
        table[name] = value  # tomlkit puts a key before the table's sub-tables itself
        return
    after = body[start:]
    del body[start:]  # items without a key: the table's map of keys does not change
    table[name] = value
    body.extend(after)


def _means_what_it_holds(doc: Any) -> bool:
    """Whether `doc` written out and read back holds what `doc` holds."""
    return bool(tomlkit.parse(tomlkit.dumps(doc)).unwrap() == doc.unwrap())


def _toml_table(value: dict[str, Any], *, top: bool = True) -> Table:
    table = tomlkit.table()
    for name, item in value.items():
        if isinstance(item, dict) and all(isinstance(v, dict) for v in item.values()) and item:
            sub = tomlkit.table(is_super_table=True)
            for child, settings in item.items():
                sub[child] = _toml_table(settings, top=False)
            table[name] = sub
        else:
            table[name] = _toml_value(item, inline=True)
    if top:
        table.add(tomlkit.nl())  # a blank line before whatever table follows
    return table


def delete_key(doc: Any, key: tuple[str, ...], *, prune: bool = True) -> None:
    """Remove `key`, then (`prune`) every parent it leaves empty. TOML: an empty parent that
    has no header of its own (`[mcp_servers.x]` made `mcp_servers`) cannot be written, so it
    goes even when `prune` says keep it."""
    if isinstance(doc, JsonText):
        doc.delete(key, prune=prune)
        return
    last = _last_item_path(doc)
    chain = [doc]
    for part in key[:-1]:
        if part not in chain[-1]:
            return
        chain.append(chain[-1][part])
    removed: tuple[str, ...] = ()  # the outermost table that goes (a parent left empty)
    if key[-1] in chain[-1]:
        value = chain[-1][key[-1]]  # a table split out of order is a proxy, a dict too
        removed = key if isinstance(value, dict) and not isinstance(value, InlineTable) else ()
        del chain[-1][key[-1]]
    for depth in range(len(key) - 1, 0, -1):
        if len(chain[depth]) == 0 and (prune or not _means_what_it_holds(doc)):
            del chain[depth - 1][key[depth - 1]]
            removed = key[:depth]
        else:
            break
    if removed and last[: len(removed)] == removed:  # the file's last table went
        _trim_blank_lines_at_end(doc)


def _last_item_path(doc: Any) -> tuple[str, ...]:
    """The keys down to the last item of the file: the top level's last item and, while that
    is a table (`[a]`, or `[a.b]` inside super table `a`), the last item inside it. A deleted
    item leaves a Null behind; comments and blank lines have no key."""
    path: list[str] = []
    body = doc.body
    while True:
        named = [(name, item) for name, item in body if name is not None]
        named = [(name, item) for name, item in named if not isinstance(item, Null)]
        if not named:
            return tuple(path)
        name, item = named[-1]
        path.append(str(name.key))
        if not isinstance(item, Table):
            return tuple(path)
        body = item.value.body


def _trim_blank_lines_at_end(doc: Any) -> None:
    """Appending a table put a blank line after what came before it; once that appended table
    is gone again, the blank line would stay at the end of the file: drop it."""
    body = doc.body
    while True:  # `[a.b]` is a table inside table `a`; a deleted item leaves a Null behind
        items = [item for _, item in body if not isinstance(item, Null)]
        if not items or not isinstance(items[-1], Table):
            break
        body = items[-1].value.body
    if body is doc.body:
        # the file ends in plain keys (or keys written dotted): tomlkit put one blank line
        # before the appended table at the top level
        while body and isinstance(body[-1][1], Null):
            body.pop()
        if body and body[-1][0] is None and body[-1][1].as_string() == "\n":
            body.pop()
        return
    while body and body[-1][0] is None and isinstance(body[-1][1], Whitespace):
        body.pop()


def hook_groups(doc: JsonText, event: str) -> list[Any]:
    hooks = doc.find(("hooks",))
    if hooks is None or hooks.kind != "object":
        return []
    return doc.items(("hooks", event))


def group_has_command(group: Any, command: str) -> bool:
    if not isinstance(group, dict):
        return False
    return any(
        isinstance(h, dict) and h.get("command") == command for h in group.get("hooks") or []
    )


def add_hook(doc: JsonText, event: str, group: dict[str, Any]) -> None:
    """Append `group` to `hooks.<event>` (CLIENT_CONFIG_INVALID when either is of another
    type: nothing changed)."""
    doc.append(("hooks", event), group)


def remove_hook(doc: JsonText, event: str, command: str, *, drop_event: bool | None) -> None:
    """Remove each hook of `hooks.<event>` that runs `command`, and only those: a hook the user
    added to the same group stays, and the group goes only when nothing is left in its `hooks`.
    The `hooks.<event>` list goes when it is left empty and `drop_event` (install created it;
    None: unknown, an older record) allows; the `hooks` object is left to `drop_empty_hooks`."""
    groups = hook_groups(doc, event)
    drop: list[int] = []
    for index, group in enumerate(groups):
        if not group_has_command(group, command):
            continue
        hooks = group["hooks"]
        ours = [
            i for i, h in enumerate(hooks) if isinstance(h, dict) and h.get("command") == command
        ]
        if len(ours) == len(hooks):
            drop.append(index)
        else:
            doc.remove_items(("hooks", event, index, "hooks"), ours)
    if not drop:
        return
    doc.remove_items(("hooks", event), drop)
    if len(drop) == len(groups) and drop_event is not False:
        doc.delete(("hooks", event), prune=False)


def drop_empty_hooks(doc: JsonText) -> None:
    """Remove the `hooks` object when nothing is left in it (the caller knows install made it)."""
    hooks = doc.find(("hooks",))
    if hooks is not None and hooks.kind == "object" and not doc.open(hooks).members:
        doc.delete(("hooks",))
