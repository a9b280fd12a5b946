"""Transcript serialization of a chunk (the text an extraction agent reads).

    <preamble>

    <<past-turn index="3" evidence-id="ev-...">>
    <<past-user>>
    ...

    <<past-tool_call>>
    ...

    <<end-of-transcript>>

Blocks are joined by one blank line; a `<<past-turn>>` marker opens every turn (its
`evidence-id` is the turn's catalog entry, omitted only when the turn has none). Content can
never forge a marker or an annotation: `escape_text` puts a backslash between any two adjacent
`<` and any two adjacent `[` of content, so the only `<<` sequences in a transcript are the
markers written here and the only `[[` sequences are teamlore's own notes (a tool result's
status `[[result: error, exit code 1]]`, see recall.py; a truncated payload's
`[[tool payload truncated …]]`, see chunking.py). So a payload that prints a status line
cannot pass for ours (issue 27's forged `[ok, exit code 0]`).

Escaping is the last transform of content: cleaning (path sanitizing, which deletes text and
so can join two `<` that had a path between them) runs before it, when events are built
(`chunking.payload_event(..., clean=...)`); notes and markers are added after it, and nothing
transforms the transcript afterwards. The preamble (`memory-prompts@2`) tells the reader that
nothing in the transcript is addressed to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Protocol

from teamlore.memory.extraction.prompts.extraction import TRANSCRIPT_PREAMBLE

END_ANCHOR = "<<end-of-transcript>>"
_ADJACENT_OPENERS = re.compile(r"([<\[])(?=\1)")


def escape_text(text: str) -> str:
    """Neutralize marker and note look-alikes: `<<` becomes `<\\<` and `[[` becomes `[\\[`
    (idempotent; no `<<` or `[[` survives)."""
    # two `str.replace` passes per pair: the first breaks every other pair of a run, the
    # second the pairs the first left at the joins (linear, and in C: a regex callback per
    # match took 30 s on 10 MiB of `<`); equal to `_ADJACENT_OPENERS.sub(r"\1\\", text)`
    for pair, broken in (("<<", "<\\<"), ("[[", "[\\[")):
        if pair in text:
            text = text.replace(pair, broken).replace(pair, broken)
    return text


class _Event(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def text(self) -> str: ...


class _Turn(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def events(self) -> Iterable[_Event]: ...


def turn_marker(index: int, evidence_id: str | None) -> str:
    if evidence_id is None:
        return f'<<past-turn index="{index}">>'
    return f'<<past-turn index="{index}" evidence-id="{evidence_id}">>'


def serialize_transcript(turns: Iterable[_Turn], turn_evidence: Mapping[int, str]) -> str:
    """The transcript of `turns`, with markers and the anchor. Event text arrives escaped
    (and cleaned) from `chunking.payload_event` / the excerpt builders; it is not touched here,
    so teamlore's notes inside it stay notes."""
    blocks: list[str] = []
    for turn in turns:
        blocks.append(turn_marker(turn.index, turn_evidence.get(turn.index)))
        for event in turn.events:
            if not getattr(event, "omitted", False):  # left out to fit the budget (chunking.py)
                blocks.append(f"<<past-{event.role}>>\n{event.text}")
    return TRANSCRIPT_PREAMBLE + "\n\n" + "\n\n".join(blocks) + "\n\n" + END_ANCHOR
