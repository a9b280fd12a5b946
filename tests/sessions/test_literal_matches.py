"""A turn holding the whole query as typed ranks above every turn found by meaning alone
(docs/hybrid-search.md, "Words are never outvoted", rule 10)."""

from __future__ import annotations

from pathlib import Path

from support import shared_fixtures
from teamlore.models.embeddings import bundled_embedder
from teamlore.sessions import queries
from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source
from teamlore.sessions.providers import get_adapter
from teamlore.sessions.turn_vectors import embed_pending_turns


def test_the_turn_holding_an_exact_error_message_outranks_its_meaning_only_neighbours(
    home: Path,
) -> None:
    """Real sessions nobody here wrote. The Claude session's first turn holds the tool error
    `<tool_use_error>File does not exist.</tool_use_error>`; the Codex session has turns about
    a script that "doesn't create the exported-session.jsonl file", which the static model
    places nearer the quoted message. Without the rule the turn holding the message came 3rd,
    after two turns holding none of it."""
    fixtures = shared_fixtures("sessions")
    files = [
        fixtures / "claude" / "entire-cli-2.0.64.jsonl",
        fixtures / "codex" / "rtchess-0.60.1.jsonl",
    ]
    sources = [Source(path.parent.name, path) for path in files]
    adapters = {source.provider: get_adapter(source.provider) for source in sources}
    indexer = Indexer(open_index(home), adapters, home=home)
    indexer.sync(sources)
    embedder = bundled_embedder()
    embed_pending_turns(indexer.conn, embedder)

    hits = queries.search_turns(indexer.conn, '"File does not exist"', embedder=embedder).hits

    assert [(h["provider"], h["turn"], h["matchedBy"]) for h in hits[:2]] == [
        ("claude", 1, ["lexical"]),
        ("codex", 51, ["vector"]),
    ]
    assert "File does not exist" in hits[0]["snippet"]
