"""The managed block's BEGIN/END markers in CLAUDE.md / AGENTS.md: finding them, refusing a file
whose markers were damaged (ASSEMBLY_MARKERS_INVALID), and what `memory assemble --repair`
makes of such a file (docs/assemble.md, "The managed block").

A block assemble writes opens with BEGIN, a blank line and its own `## Team memory` heading
(`BLOCK_HEADING`). Git's merge of CLAUDE.md can split the block, and a person resolving it by
deleting the conflict lines may keep the END and the old block's text while the BEGIN goes with
the other side's lines. `--repair` then takes a lone END as the end of an old block that began
at the last `## Team memory` heading before it (after the marker before it, when that one is not
an old block's END: the text after a block is the person's), and removes both with what lies
between. When it cannot tell where an old block began or ended (a lone BEGIN before a
`## Team memory` heading, a lone END with none before it while one is left elsewhere), it
refuses with nothing changed rather than leave a second `## Team memory` section beside the
new block. The heading may be the person's own (a `## Team memory` section of theirs above the
block, the block's heading gone with its BEGIN): a lone END does not go back over a line the file
holds outside its block as git has it (`kept`, memory/assembled_git.py `lines_outside_block`),
and the heading left then refuses the repair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from teamlore.core import errors
from teamlore.memory.store.layout import MANAGED_BLOCK_BEGIN, MANAGED_BLOCK_END

BLOCK_HEADING = "## Team memory"  # the first line inside every block assemble writes
_HEADING_LINE = re.compile(rf"^{re.escape(BLOCK_HEADING)}[ \t]*\r?$", re.MULTILINE)
_INSTRUCTIONS = {"CLAUDE.md": "claude", "AGENTS.md": "codex"}


@dataclass(frozen=True, slots=True)
class Marker:
    start: int
    end: int
    begins: bool


def markers(text: str) -> list[Marker]:
    """Each BEGIN and END marker of `text`, in the order they come."""
    found = [
        Marker(m.start(), m.end(), marker == MANAGED_BLOCK_BEGIN)
        for marker in (MANAGED_BLOCK_BEGIN, MANAGED_BLOCK_END)
        for m in re.finditer(re.escape(marker), text)
    ]
    return sorted(found, key=lambda m: m.start)


def intact(found: list[Marker]) -> bool:
    """No block yet, or exactly one BEGIN before exactly one END."""
    return not found or (len(found) == 2 and found[0].begins and not found[1].begins)


def line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def line_numbers(text: str, found: list[Marker]) -> list[int]:
    return [line_at(text, m.start) for m in found]


def lines_named(numbers: list[int]) -> str:
    """`line 9`, `lines 9, 15`."""
    return f"line{'' if len(numbers) == 1 else 's'} {', '.join(str(n) for n in numbers)}"


def headings_outside(text: str, found: list[Marker]) -> list[int]:
    """Where (offsets) a `## Team memory` heading line stands outside the file's one intact
    block (everywhere when it has no block)."""
    block = (found[0].start, found[1].end) if found and intact(found) else None
    return [
        m.start()
        for m in _HEADING_LINE.finditer(text)
        if block is None or not block[0] <= m.start() < block[1]
    ]


def _command(file_name: str, *extra: str) -> str:
    provider = _INSTRUCTIONS.get(file_name, "claude|codex")
    return " ".join(("teamlore memory assemble -p", provider, *extra))


def damaged(text: str, found: list[Marker], file_name: str) -> errors.TeamloreError:
    """ASSEMBLY_MARKERS_INVALID for a file whose markers are not one BEGIN before one END."""
    begins = sum(m.begins for m in found)
    count = f"{begins} BEGIN and {len(found) - begins} END marker(s)"
    order = " (END before BEGIN)" if begins == len(found) - begins == 1 else ""
    numbers = line_numbers(text, found)
    repair = _command(file_name, "--repair")
    return errors.TeamloreError(
        errors.ASSEMBLY_MARKERS_INVALID,
        f"{file_name} has {count}{order} on {lines_named(numbers)}; it was not changed. Run "
        f"`{repair}` to replace the old block and drop the stray markers (text outside the "
        "block is kept), or fix those lines by hand",
        file=file_name,
        lines=numbers,
    ).advising(
        f"Run `{repair}` (a lone END goes with the old block's text back to its "
        f"`{BLOCK_HEADING}` heading), check the file, and commit; or fix the marker lines by "
        "hand and run assemble again."
    )


def repaired(
    text: str,
    block: str,
    found: list[Marker],
    file_name: str,
    kept: frozenset[str] = frozenset(),
) -> str:
    """`text` with one `block` where the first damaged part was: each BEGIN with the first END
    after it, and each lone END with the old block's text back to its heading, replaced; a
    stray marker removed alone; every other byte kept. Refused (nothing changed) when a
    `## Team memory` section would be left beside the new block. `kept`: lines (stripped) the
    person's text holds, which a lone END's old block never takes."""
    regions = _damaged_regions(text, found, kept)
    pieces, cursor, placed = [], 0, 0
    for number, (start, end) in enumerate(regions):
        pieces.append(text[cursor:start])
        if number == 0:
            placed = sum(map(len, pieces))
            pieces.append(block + ("\n" if text[start:end].endswith("\n") else ""))
        elif text.startswith("\n", end) and (start == 0 or text[start - 1] == "\n"):
            end += 1  # a removed old block leaves no empty line behind
        cursor = end
    pieces.append(text[cursor:])
    result = "".join(pieces)
    left = [
        at
        for at in headings_outside(result, [])
        if not placed <= at < placed + len(block)  # the new block's own heading
    ]
    if left:
        first = line_at(result, left[0])
        raise errors.TeamloreError(
            errors.ASSEMBLY_MARKERS_INVALID,
            f"{file_name}: repairing its markers (on {lines_named(line_numbers(text, found))}) "
            f"would leave a second `{BLOCK_HEADING}` section (line {first} after the repair) "
            "beside the new block: --repair cannot tell where the old block's text begins or "
            "ends there; it was not changed",
            file=file_name,
            lines=line_numbers(text, found),
        ).advising(
            f"Delete the old block's text by hand (its `{BLOCK_HEADING}` section and any BEGIN "
            f"or END marker left with it; keep your own lines), then run `{_command(file_name)}`."
        )
    return result


def _damaged_regions(text: str, found: list[Marker], kept: frozenset[str]) -> list[tuple[int, int]]:
    """What `--repair` removes: each BEGIN through the first END after it (an old block: its
    text was generated); a lone END with the text back to the last `## Team memory` heading
    line before it (an old block whose BEGIN went, when no old block ends just before it: the
    text after a block is the person's; and when no line after that heading is one of `kept`:
    the heading is then the person's own); each other stray marker alone (its line when it
    stands alone)."""
    regions: list[tuple[int, int]] = []
    index = 0
    closed_block = False  # the marker before is an old block's END
    floor = 0  # where the text after the marker before begins
    while index < len(found):
        marker = found[index]
        following = found[index + 1] if index + 1 < len(found) else None
        if marker.begins and following is not None and not following.begins:
            regions.append((marker.start, following.end))
            floor, closed_block = following.end, True
            index += 2
            continue
        start, end = _whole_line_if_alone(text, marker)
        if not marker.begins and not closed_block:
            headings = [m.start() for m in _HEADING_LINE.finditer(text, floor, marker.start)]
            if headings and not _holds_kept(text, headings[-1], marker.start, kept):
                start = headings[-1]
        regions.append((start, end))
        floor, closed_block = marker.end, False
        index += 1
    return regions


def _holds_kept(text: str, heading: int, end: int, kept: frozenset[str]) -> bool:
    """Whether a line after the heading line at `heading`, before `end`, is one of `kept`."""
    after = text.find("\n", heading, end)
    if not kept or after < 0:
        return False
    return any(line.strip() in kept for line in text[after + 1 : end].split("\n"))


def _whole_line_if_alone(text: str, marker: Marker) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, marker.start) + 1
    line_end = text.find("\n", marker.end)
    line_end = len(text) if line_end < 0 else line_end + 1
    if text[line_start:line_end].strip() == text[marker.start : marker.end]:
        return line_start, line_end
    return marker.start, marker.end
