"""The SessionStart brief: what `teamlore hook session-start` puts into a new agent session.

One bounded text (at most `BRIEF_MAX_BYTES`), from two sources:

- personal memory for the session's folder: the global context plus the project context of the
  registered repository containing it (what `teamlore personal show --workspace` shows, read
  through the personal reader; allowed scopes apply);
- team memory, only when the repository has a `.threadshare/memory` tree but the client's
  instructions file (CLAUDE.md / AGENTS.md) has no assembled block yet (`memory assemble`
  writes one): the doctrine and the scene list, so the agent knows what to search for.

Nothing here writes, creates the state dir or runs git: a hook must be cheap and leave no trace.
Any failure makes the section empty (the hook prints nothing rather than half a brief).

Personal memory over the budget is cut per document, never through a data block: the short
documents are kept whole first, a long one is cut at its last section boundary that fits (a
line, then a character, when no section fits; an open code fence is closed), every
`<common-memory>` block is closed, and a note after the last block names what was left out and
the command that prints all of it (`personal_note`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from teamlore.core import errors
from teamlore.core.locations import state_dir_path

# Claude Code takes a hook's additionalContext whole up to 10,000 characters (a longer one
# becomes a short preview: ../shared/research/peers-digest.md, "Hooks"); no character takes
# fewer UTF-8 bytes than the UTF-16 units a JavaScript string counts, so a byte budget under it
# holds for every script
BRIEF_MAX_BYTES = 9800
PERSONAL_MAX_BYTES = 6000
# the team part holds whole a doctrine `memory lint` accepts (DOCTRINE_MAX_CHARS, 1,200
# characters: 3,600 bytes of Chinese, 4,800 at most) with the pointer line, then the scene list
# (MAX_SCENES lines of a name and a summary of at most 40 characters: 15 Chinese ones fit after
# a 1,200-character Chinese doctrine; a scene that does not fit is left out whole, and said
# so). tests/ops/test_session_brief_team.py keeps the limits agreeing. The personal part has
# at most PERSONAL_MAX_BYTES, and what the team part leaves of the brief
TEAM_MAX_BYTES = 6200
MAX_SCENES = 15
ASSEMBLED_MARKER = "<!-- BEGIN THREADSHARE MEMORY"  # the block `memory assemble` writes
INSTRUCTIONS_FILE = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "pi": "AGENTS.md"}
TRUNCATED = "\n[teamlore: brief truncated; use the memory tools for more]"
NOTE_TITLE_CHARS = 40  # a section title quoted in the truncation note
MCP_CLIENTS = ("claude", "codex")  # install gives them `memory_read` (global context only)


_SENTENCE_ENDS = ("\n", "。", "！", "？", "；", ". ", "! ", "? ", "; ")


def cap(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, marked when cut: after its last sentence (or
    line) that fits, never inside one; a character boundary only when not one sentence fits."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len(TRUNCATED.encode("utf-8"))
    head = data[:room].decode("utf-8", "ignore")
    end = max(head.rfind(mark) + len(mark.rstrip(" ")) for mark in _SENTENCE_ENDS)
    if end > len(head) // 2:
        head = head[:end]
    return head.rstrip() + TRUNCATED


def _fit_scenes(lines: list[str], room: int, total: int) -> str:
    """The scene lines (hottest first) that fit in `room` bytes whole under a `Scenes:` title,
    and a line saying how many of the `total` scenes are not listed, when any is not."""
    shown: list[str] = []
    for line in lines:
        if _size(_scene_list([*shown, line], total)) > room:
            break
        shown.append(line)
    return _scene_list(shown, total) if shown else ""


def _scene_list(shown: list[str], total: int) -> str:
    left = total - len(shown)
    noun = "scene" if left == 1 else "scenes"
    note = [f"[teamlore: {left} more {noun} not listed; use the memory tools for more]"]
    return "\n".join(["", "", "Scenes:", *shown, *(note if left else [])])


def worktree_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a directory or a worktree file)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def personal_section(home: Path, cwd: Path, client: str = "claude", limit: int = 0) -> str:
    """Personal memory for `cwd`, within `limit` UTF-8 bytes when one is given (`fit_personal`)."""
    from teamlore.personal import reader

    candidates, _ = reader.workspace_contexts(home, str(cwd))
    stored = reader.read_memory(home, candidates)  # each file read (and scanned) once
    if stored.empty:
        return ""  # nothing stored: the `[personal]` settings need not even be loaded
    view = stored.within(reader.readable_contexts(home, candidates))
    if view.empty:
        return ""
    text = str(view.to_json()["text"])
    if not limit or len(text.encode("utf-8")) <= limit:
        return text
    documents = [
        (d.target, reader.escape_content(d.content)) for d in view.documents if not d.empty
    ]
    # the note on masked secrets goes after the cut note, as it goes after the blocks uncut
    masked = [reader.masked_note(view.masked)] if view.masked else []
    return fit_personal(
        documents, limit, lambda cuts: "\n\n".join([personal_note(cuts, cwd, client), *masked])
    )


class Cut(NamedTuple):
    """What the brief left out of one document (`sections`: how many it has). A tuple, not a
    dataclass: a hook's process does not import `dataclasses` (tests/cli/test_import_budget.py)."""

    target: str
    sections: int
    whole: int  # sections kept whole, from the first
    partial: bool  # the next section was cut into (its first lines kept)
    title: str  # the first section not kept whole ("" when the document has no sections)


NoteMaker = Callable[[list[Cut]], str]
_CUT_MARK = " …"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _sections(escaped: str) -> tuple[str, list[tuple[str, str]]]:
    """(preamble, [(title, text)]) of a document, split at `## ` headings outside code fences;
    a document without any is one untitled part."""
    from teamlore.personal.documents import _FenceTracker

    preamble, parts = "", []
    fences = _FenceTracker()
    for line in escaped.splitlines(keepends=True):
        inside = fences.feed(line.rstrip("\r\n"))
        if not inside and line.startswith("## "):
            parts.append((line[3:].strip(), line))
        elif parts:
            parts[-1] = (parts[-1][0], parts[-1][1] + line)
        else:
            preamble += line
    if not parts:  # no sections: cut the text itself, after its first line (the `# ` title)
        head, _, rest = preamble.partition("\n")
        return head + "\n", [("", rest)] if rest.strip() else []
    return preamble, parts


def _cut_lines(text: str, room: int) -> str:
    """The first lines of `text` within `room` bytes, then as many characters of the next line
    as fit (never half a character) marked ` …`; a code fence left open is closed."""
    from teamlore.personal.documents import _FenceTracker

    kept, closing = "", ""
    fences = _FenceTracker()
    for line in text.splitlines(keepends=True):
        line = line if line.endswith("\n") else line + "\n"
        was = (fences.char, fences.length)
        fences.feed(line.rstrip("\r\n"))
        close = fences.char * fences.length + "\n" if fences.open else ""
        if _size(kept + line + close) <= room:
            kept, closing = kept + line, close
            continue
        close = was[0] * was[1] + "\n" if was[1] else ""  # the state before this line
        spare = room - _size(kept + close + _CUT_MARK + "\n")
        part = line.rstrip("\r\n").encode("utf-8")[: max(spare, 0)].decode("utf-8", "ignore")
        words = part.rpartition(" ")[0]
        part = words if len(part) - len(words) < 40 else part  # a whole word, when near
        if part.strip():
            kept, closing = kept + part + _CUT_MARK + "\n", close
        break
    return kept + closing


def _cut_document(target: str, escaped: str, room: int) -> tuple[str | None, Cut]:
    """The document's block within `room` bytes: whole sections while they fit; when not even
    the first does, its first lines. None when nothing of it fits."""
    from teamlore.personal.reader import memory_block

    preamble, parts = _sections(escaped)
    room -= _size(memory_block(target, "")) + 1
    kept = preamble
    for index, (title, text) in enumerate(parts):
        if _size(kept + text) <= room:
            kept += text
            continue
        partial = ""
        if index == 0:  # not one whole section fits: as many of its lines as fit
            partial = _cut_lines(text, room - _size(kept))
        if index == 0 and not partial.strip():
            return None, Cut(target, len(parts), 0, False, title)
        block = memory_block(target, kept + partial)
        return block, Cut(target, len(parts), index, bool(partial.strip()), title)
    return memory_block(target, kept), Cut(target, len(parts), len(parts), False, "")


def fit_personal(documents: list[tuple[str, str]], limit: int, note: NoteMaker) -> str:
    """The personal memory's blocks within `limit` bytes, then the note on what was cut. The
    short documents are kept whole first; the room left goes to the longer ones, in order."""
    from teamlore.personal.reader import PREFACE, memory_block

    reserve = 0
    for _ in range(8):  # the note's own size decides how much room the blocks have
        room = limit - _size(PREFACE) - reserve
        whole: set[str] = set()
        for target, escaped in sorted(documents, key=lambda d: _size(d[1])):
            size = _size(memory_block(target, escaped)) + 2
            if size <= room:
                whole.add(target)
                room -= size
        blocks = [memory_block(t, e) for t, e in documents if t in whole]
        cuts: list[Cut] = []
        for target, escaped in documents:
            if target not in whole:
                block, cut = _cut_document(target, escaped, room - 2)
                if block is not None:
                    blocks.append(block)
                    room -= _size(block) + 2
                if cut.whole < cut.sections:
                    cuts.append(cut)
        tail = note(cuts)
        text = "\n\n".join([PREFACE, *blocks, tail])
        if _size(text) <= limit:
            return text
        reserve = max(reserve + 64, _size(tail) + 2)
    return ""


def _teamlore_command() -> str:
    """How the agent's shell runs this teamlore on this state dir: `teamlore` when that is the
    one on PATH, else its absolute path; with `TEAMLORE_HOME` unless the state dir is the
    default one (`pinned_state_dir`)."""
    import shlex  # only a brief that was cut names a command: `shutil` loads bz2, lzma, zlib
    import shutil

    script = Path(sys.executable).parent / "teamlore"
    on_path = shutil.which("teamlore")
    if on_path and script.is_file() and Path(on_path).resolve() == script.resolve():
        command = "teamlore"
    elif script.is_file():
        command = shlex.quote(str(script))
    else:
        command = f"{shlex.quote(sys.executable)} -m teamlore.cli.entry"
    from teamlore.core.locations import pinned_state_dir

    home = pinned_state_dir(os.environ)
    return f"TEAMLORE_HOME={shlex.quote(home)} {command}" if home else command


def personal_note(cuts: list[Cut], cwd: Path, client: str) -> str:
    """The truncation note, after every block: what was left out, and a way to read all of it
    that works here. `personal show` prints every document of this folder; the `memory_read`
    tool install gives Claude Code and Codex serves the global context only (profile and
    preferences), so it is named only when no project notes were cut."""
    parts = []
    for cut in cuts:
        name = "project notes" if cut.target.startswith("project:") else cut.target
        title = cut.title[:NOTE_TITLE_CHARS] + ("…" if len(cut.title) > NOTE_TITLE_CHARS else "")
        left = cut.sections - cut.whole
        if not cut.title or (not cut.whole and not cut.partial):
            parts.append(f"{name} ({'the rest' if cut.partial else 'all of it'})")
        elif cut.partial:
            after = f" and the {left - 1} after it" if left > 1 else ""
            parts.append(f'{name} (the rest of section "{title}"{after})')
        else:
            parts.append(f'{name} ({left} of {cut.sections} sections, from "{title}" on)')
    import shlex

    how = f"run `{_teamlore_command()} personal show --workspace {shlex.quote(str(cwd))}`"
    if client in MCP_CLIENTS and not any(c.target.startswith("project:") for c in cuts):
        how += ', or call the memory_read tool with contextId "global"'
    return (
        f"[teamlore: personal memory was cut to fit this brief; left out: {', '.join(parts)}."
        f" To read all of it, {how}.]"
    )


def team_section(root: Path, client: str) -> str:
    from teamlore.memory.store.layout import DOCTRINE_FILE, SCENES_DIR, memory_root

    tree = memory_root(root)
    if not tree.is_dir() or tree.is_symlink():
        return ""
    instructions = root / INSTRUCTIONS_FILE[client]
    with contextlib.suppress(OSError):
        text = instructions.read_text("utf-8", "replace") if instructions.is_file() else ""
        if ASSEMBLED_MARKER in text:
            return ""  # the agent already reads the assembled block
    # the memory documents' models load only when the brief has to read them
    from teamlore.memory.store.documents import load_doctrine, load_scene

    entries = sum(1 for _ in (tree / "entries").glob("*.md"))
    noun = "entry" if entries == 1 else "entries"
    lines = [
        f"This repository has reviewed team memory ({entries} {noun} in .threadshare/memory);"
        " search it with the threadshare_memory_search tool before re-deriving project facts."
    ]
    doctrine_file = root / DOCTRINE_FILE
    if doctrine_file.is_file() and not doctrine_file.is_symlink():
        doctrine = load_doctrine(doctrine_file.read_bytes())
        lines += ["", "Doctrine:", doctrine.text.strip()]
    scenes = []
    for path in sorted((root / SCENES_DIR).glob("*.md")):
        if path.is_symlink() or not path.is_file():
            continue  # never block on a FIFO or follow a link out of the tree
        with contextlib.suppress(errors.TeamloreError, ValueError, OSError):
            scene = load_scene(path.read_bytes(), f"{SCENES_DIR}/{path.name}")
            scenes.append((-scene.heat, path.stem, scene.summary))
    if len(lines) == 1 and not entries and not scenes:
        return ""
    text = cap("\n".join(lines), TEAM_MAX_BYTES)
    listed = [f"- {name}: {summary}" for _, name, summary in sorted(scenes)[:MAX_SCENES]]
    return text + _fit_scenes(listed, TEAM_MAX_BYTES - _size(text), len(scenes))


def compose_brief(cwd: Path, client: str, home: Path | None = None) -> str:
    """The whole brief for a session started in `cwd` ("" when there is nothing to say)."""
    state = home if home is not None else state_dir_path()
    if os.environ.get("TEAMLORE_PAUSEPOINT"):  # tests only (core/failpoints.py)
        from teamlore.core.failpoints import failpoint

        failpoint("session-brief")
    sections = []
    root = worktree_root(cwd)
    if root is not None:
        with contextlib.suppress(errors.TeamloreError, ValueError, OSError):
            sections.append(team_section(root, client))
    team = "\n\n".join(s for s in sections if s)
    room = min(PERSONAL_MAX_BYTES, BRIEF_MAX_BYTES - (_size(team) + 2 if team else 0))
    with contextlib.suppress(errors.TeamloreError, ValueError, OSError):
        sections.append(personal_section(state, cwd, client, room))
    return "\n\n".join(s for s in sections if s)
