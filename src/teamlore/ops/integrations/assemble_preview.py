"""The team memory files `install` assembles (CLAUDE.md / AGENTS.md and the Skill folder): when
install assembles them, and what `install --dry-run` shows of them.

The dry run works them out with `memory.assemble.preview`, the plan the real assemble writes
(`memory.assemble.plan`), and lists each file it would change beside the client's config files,
with its diff; it creates nothing, not even the state dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.integrations import config_files as cf
from teamlore.ops.integrations.session_brief import worktree_root
from teamlore.ops.registry import REGISTRY, OpContext, load_operations


def assemble_folder(
    ctx: OpContext, client: str, root: Path | None
) -> tuple[Path | None, dict[str, Any]]:
    """The worktree install assembles the team memory of, or None and why it does not."""
    if client not in ("claude", "codex"):  # Pi: its extension adds the brief to each prompt
        return None, {"ran": False, "reason": f"{client} reads no assembled file"}
    where = root or worktree_root(ctx.cwd.resolve())
    if where is None or not (where / ".threadshare" / "memory").is_dir():
        return None, {"ran": False, "reason": "no team memory in this folder"}
    load_operations()
    if "memory.assemble" not in REGISTRY.operations:
        return None, {"ran": False, "reason": "memory assemble is not available in this teamlore"}
    return where, {}


def preview_assemble(
    ctx: OpContext, client: str, root: Path | None, home: Path
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the real install's assemble reports (without running it: `ran` false, `wouldRun`
    true), and a dry run's row for each file it would change."""
    from teamlore.memory.assemble import _about, preview
    from teamlore.ops.owner import resolve_owner

    where, skipped = assemble_folder(ctx, client, root)
    if where is None:
        return skipped, []
    try:
        # the Skill record assemble keeps is named by a key of the state dir's secret: none
        # yet, no record (and the secret is not made by a dry run)
        key = None
        if (home / "secret").is_file():
            identity = resolve_owner(OpContext(cwd=where, home=home))
            where, key = identity.worktree_root, identity.worktree_key
        planned = preview(where, client, home=home, worktree_key=key)
    except errors.TeamloreError as err:
        return {"ran": False, "reason": f"{err.code}: {err.message}", "refused": True}, []
    rows = []
    for relative, current, data in planned.writes():
        document = cf.ConfigDocument(where / relative, "json", current, None)
        action = "created" if current is None else "updated"
        rows.append({"path": str(document.path), "action": action, "diff": document.diff(data)})
    return {"ran": False, "wouldRun": True, "result": _about(client, planned.wanted)}, rows
