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
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from teamlore.core import errors
from teamlore.core.locations import state_dir_path

BRIEF_MAX_BYTES = 6000
TEAM_MAX_BYTES = 2500
MAX_SCENES = 15
ASSEMBLED_MARKER = "<!-- BEGIN THREADSHARE MEMORY"  # the block `memory assemble` writes
INSTRUCTIONS_FILE = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "pi": "AGENTS.md"}
TRUNCATED = "\n[teamlore: brief truncated; use the memory tools for more]"


def cap(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes (on a character boundary), marked when cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len(TRUNCATED.encode("utf-8"))
    return data[:room].decode("utf-8", "ignore").rstrip() + TRUNCATED


def worktree_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a directory or a worktree file)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def personal_section(home: Path, cwd: Path) -> str:
    from teamlore.personal import reader

    candidates, _ = reader.workspace_contexts(home, str(cwd))
    if reader.read_memory(home, candidates).empty:
        return ""  # nothing stored: the `[personal]` settings need not even be loaded
    view = reader.read_memory(home, reader.readable_contexts(home, candidates))
    if view.empty:
        return ""
    return str(view.to_json()["text"])


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
    if scenes:
        lines += ["", "Scenes:"]
        lines += [f"- {name}: {summary}" for _, name, summary in sorted(scenes)[:MAX_SCENES]]
    if len(lines) == 1 and not entries:
        return ""
    return cap("\n".join(lines), TEAM_MAX_BYTES)


def compose_brief(cwd: Path, client: str, home: Path | None = None) -> str:
    """The whole brief for a session started in `cwd` ("" when there is nothing to say)."""
    state = home if home is not None else state_dir_path()
    sections = []
    root = worktree_root(cwd)
    if root is not None:
        with contextlib.suppress(errors.TeamloreError, ValueError, OSError):
            sections.append(team_section(root, client))
    with contextlib.suppress(errors.TeamloreError, ValueError, OSError):
        sections.append(personal_section(state, cwd))
    text = "\n\n".join(s for s in sections if s)
    return cap(text, BRIEF_MAX_BYTES) if text else ""
