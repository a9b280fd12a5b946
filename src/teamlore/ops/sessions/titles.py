"""What a listing calls a session (`sessions list`'s `title / cwd` column, the Sessions page of
`teamlore ui`): the provider's title, else the subagent's, else the one derived from its first
prompt (ops/sessions/lineage.py computes both). No imports: a listing's renderer loads it alone."""

from __future__ import annotations

from typing import Any


def subagent_title(session: dict[str, Any]) -> str | None:
    """An untitled subagent's transcript (its parent's folder) named by the description of the
    call that started it, then its parent: what tells sibling subagents apart comes first, since
    a narrow column keeps a title's start (`Poem about Thai green curry (subagent of e784…`)."""
    parent, subagent = session.get("parentSessionKey"), session.get("subagent") or {}
    if not parent:
        return None
    if subagent.get("kind") == "compaction":
        return f"compaction summary of {parent[:12]}"
    described = subagent.get("description")
    return f"{described} (subagent of {parent[:12]})" if described else f"subagent of {parent[:12]}"


# what starts the title of a subagent's or the compaction summariser's row: the end of a title
# cut to its column (`(subagent of 7e728b87be18)`) is gone at 80 columns, its start is not
SUBAGENT_MARK = "↳ "


def listed_title(session: dict[str, Any]) -> str | None:
    """What the `title / cwd` column says of a session, its folder when None: the provider's
    title, else the subagent's, else the one derived from its first prompt; a subagent's (and
    the compaction summariser's) starts with `SUBAGENT_MARK`."""
    title = session.get("title") or subagent_title(session) or session.get("derivedTitle")
    return SUBAGENT_MARK + title if title and session.get("parentSessionKey") else title
