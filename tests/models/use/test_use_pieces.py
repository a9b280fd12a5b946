"""The multilingual model's piece table (models/use/pieces.py): a process asks it only for the
strings its earlier queries did not hold, and asks again when the table is written again."""

from __future__ import annotations

from pathlib import Path

import pytest

from teamlore.models.use import pieces
from teamlore.models.use.pieces import PIECES_FILE, LookedUp, write_pieces


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The strings each read of a piece table asked for (the real reads, counted)."""
    asked: list[set[str]] = []
    read = pieces._read_pieces

    def counted(path: Path, strings: set[str]) -> dict[str, tuple[int, float]]:
        asked.append(set(strings))
        return read(path, strings)

    monkeypatch.setattr(pieces, "_read_pieces", counted)
    return asked


def test_a_process_asks_the_table_only_for_strings_it_has_not_asked_before(
    tmp_path: Path, reads: list[set[str]]
) -> None:
    table = tmp_path / PIECES_FILE
    write_pieces(table, ["▁re", "lease", "▁release", "▁tag"], [-3.0, -2.0, -1.0, -1.5])
    looked = LookedUp()
    first = looked.pieces(table, {"▁re", "lease", "▁release", "▁rel"})
    assert sorted(first) == [("lease", 1, -2.0), ("▁re", 0, -3.0), ("▁release", 2, -1.0)]
    again = looked.pieces(table, {"▁release", "▁rel", "▁tag"})
    assert sorted(again) == [("▁release", 2, -1.0), ("▁tag", 3, -1.5)]
    assert reads == [{"▁re", "lease", "▁release", "▁rel"}, {"▁tag"}]
    assert sorted(looked.pieces(table, {"▁rel", "lease"})) == [("lease", 1, -2.0)]
    assert len(reads) == 2  # every string known: the table is not opened


def test_a_table_written_again_is_asked_again(tmp_path: Path, reads: list[set[str]]) -> None:
    table = tmp_path / PIECES_FILE
    write_pieces(table, ["▁release"], [-1.0])
    looked = LookedUp()
    assert looked.pieces(table, {"▁release"}) == [("▁release", 0, -1.0)]
    table.unlink()
    write_pieces(table, ["▁tag", "▁release"], [-1.5, -0.5])  # another model version's table
    assert looked.pieces(table, {"▁release"}) == [("▁release", 1, -0.5)]
    assert len(reads) == 2


def test_a_full_memory_of_strings_starts_again(tmp_path: Path, reads: list[set[str]]) -> None:
    table = tmp_path / PIECES_FILE
    write_pieces(table, ["a", "b"], [-1.0, -2.0])
    looked = LookedUp(limit=1)
    looked.pieces(table, {"a", "b"})
    assert looked.pieces(table, {"a"}) == [("a", 0, -1.0)]  # over the limit: asked again
    assert reads == [{"a", "b"}, {"a"}]
