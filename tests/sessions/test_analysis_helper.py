"""The analysis helper (sessions/analysis_helper.py, docs/sessions.md "The analysis helper"):
turn texts analyzed in a second process during a bulk sync store exactly the rows the
in-process path stores, a failing file still leaves nothing, a crash while rows are with the
helper resumes to the same index, and a helper that dies or hangs never stalls or fails the
sync (its work is done in-process)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessions.index_snapshot import GOLDEN, PROVIDERS, build, snapshot
from sessions.test_indexer import MiniAdapter, session_file
from support import run_killed_at, shared_fixtures
from teamlore.sessions import analysis_helper
from teamlore.sessions import indexer as indexer_module
from teamlore.sessions.analysis_helper import DIE_POINT, HANG_POINT, MODE_ENV, Mode
from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source
from teamlore.sessions.providers import get_adapter


def sync_fixtures(home: Path, mode: Mode, *, batch_bytes: int = 1 << 20) -> Indexer:
    """The real fixture files synced in-process, several commits (each waits for the helper)."""
    fixtures = shared_fixtures("sessions")
    home.mkdir(parents=True, exist_ok=True)
    indexer = Indexer(
        open_index(home), {p: get_adapter(p) for p in PROVIDERS}, home=home, analysis=mode
    )
    indexer.batch_bytes = batch_bytes
    indexer.sync([Source(p, fixtures / p) for p in PROVIDERS])
    return indexer


def rows_of(indexer: Indexer) -> dict[str, Any]:
    return snapshot(indexer.conn, shared_fixtures("sessions"))


@pytest.fixture(scope="module")
def rows_synced_alone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The rows the in-process path (no helper) writes for the fixture files: what a sync with
    the helper, a broken one or one resumed after a crash must leave. Synced once, only read."""
    return rows_of(sync_fixtures(tmp_path_factory.mktemp("alone"), "off"))


@pytest.fixture()
def helper_processes(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every helper a sync starts, to check that none is left running."""
    started: list[Any] = []

    class Recorded(analysis_helper._Helper):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            started.append(self.proc)

    monkeypatch.setattr(analysis_helper, "_Helper", Recorded)
    return started


@pytest.mark.parametrize("in_flight", ["pipelined", "one file at a time"])
def test_the_helper_writes_the_rows_the_in_process_path_writes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    helper_processes: list[Any],
    rows_synced_alone: dict[str, Any],
    in_flight: str,
) -> None:
    if in_flight == "one file at a time":  # the sync waits for each answer before going on
        monkeypatch.setattr(analysis_helper, "IN_FLIGHT_MAX_CHARS", 0)
    helped = sync_fixtures(tmp_path / "helped", "on")
    assert helped.search_rows.fallback is None
    assert helped.search_rows.helper_rows > 0  # the helper did analyze, not the fallback
    assert rows_of(helped) == rows_synced_alone
    assert [p.returncode for p in helper_processes] == [0]  # stopped at the end of the sync


def test_a_sync_with_the_helper_stores_the_golden_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODE_ENV, "on")  # as `teamlore sync` runs it, from the first file
    assert build(shared_fixtures("sessions")) == orjson.loads(GOLDEN.read_bytes())


@pytest.mark.parametrize("mode", ["on", "off"])
def test_a_batch_reaches_the_search_index_as_one_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    """FTS5 flushes its pending terms at every savepoint and whenever they outgrow `hashsize`:
    the rows are written together before the commit, with `hashsize` raised meanwhile (here
    the default is made tiny, so that the fixtures outgrow it) and restored after."""
    monkeypatch.setattr(analysis_helper, "FTS_HASH_BYTES", 4096)
    # one batch: a busy machine must not reach the batch's time limit (a second commit)
    monkeypatch.setattr(indexer_module, "BATCH_SECONDS", 3600.0)
    monkeypatch.setattr(indexer_module, "BATCH_WALL_SECONDS", 3600.0)
    indexer = sync_fixtures(tmp_path, mode, batch_bytes=64 << 20)
    conn = indexer.conn
    assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] > 100
    assert conn.execute("SELECT count(DISTINCT segid) FROM turns_fts_idx").fetchone()[0] == 1
    hashsize = conn.execute("SELECT v FROM turns_fts_config WHERE k = 'hashsize'").fetchone()
    assert hashsize[0] == 4096


def test_small_syncs_do_not_start_the_helper(tmp_path: Path, helper_processes: list[Any]) -> None:
    src = tmp_path / "sessions"
    session_file(src / "a.jsonl", {"t": "user", "text": "a small sync"})
    home = tmp_path / "state"
    home.mkdir()
    indexer = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home, analysis="auto")
    indexer.sync([Source("mini", src)])
    assert helper_processes == []
    assert indexer.conn.execute("SELECT count(*) FROM turns_fts").fetchone()[0] == 1


# the helper shortens a sync up to a load of ~0.44 on 2 cores, ~2.9 on 4 (docs/sessions.md,
# "The analysis helper"); above it, it would only take a larger share of a busy machine
@pytest.mark.parametrize(
    ("cores", "load", "started"),
    [
        (2, 0.2, True),
        (2, 0.4, True),
        (2, 0.5, False),
        (2, 1.0, False),
        (4, 2.8, True),
        (4, 3.0, False),
    ],
)
def test_a_bulk_sync_starts_the_helper_only_with_a_core_to_spare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: int, load: float, started: bool
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    conn = open_index(tmp_path)
    rows = analysis_helper.SearchRows(conn, "auto", None, analysis_helper.HELPER_MIN_BYTES)
    assert (rows._helper is not None) == started
    rows.close()
    small = analysis_helper.SearchRows(conn, "auto", None, analysis_helper.HELPER_MIN_BYTES - 1)
    assert small._helper is None


def test_on_waits_for_the_helper_only_when_the_sync_is_too_small_to_outlast_its_start(
    tmp_path: Path,
) -> None:
    """`on` starts the helper whatever the load. A small sync waits until it is ready (else it
    would be done before the helper); a bulk one analyzes its first files meanwhile, as `auto`
    does, instead of idling while the helper imports."""
    conn = open_index(tmp_path)
    small = analysis_helper.SearchRows(conn, "on", None, analysis_helper.HELPER_MIN_BYTES - 1)
    assert small._helper is not None and small._helper.greeted
    small.close()
    bulk = analysis_helper.SearchRows(conn, "on", None, analysis_helper.HELPER_MIN_BYTES)
    assert bulk._helper is not None and not bulk._helper.greeted
    conn.execute("BEGIN IMMEDIATE")
    bulk.write_file_rows([(1, "the first turn", "providermini", "the first turn")])
    bulk.file_released()
    bulk.settle()
    conn.execute("COMMIT")
    bulk.close()
    assert bulk.fallback is None
    assert conn.execute("SELECT count(*) FROM turns_fts").fetchone()[0] == 1


@pytest.mark.parametrize("point", [DIE_POINT, HANG_POINT], ids=["dies", "hangs"])
def test_a_dead_or_hung_helper_leaves_the_work_to_the_sync(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    helper_processes: list[Any],
    rows_synced_alone: dict[str, Any],
    point: str,
) -> None:
    monkeypatch.setenv("TEAMLORE_FAILPOINT", point)  # read by the helper process only
    monkeypatch.setattr(analysis_helper, "TIMEOUT_SECONDS", 0.5)
    broken = sync_fixtures(tmp_path / "broken", "on")
    assert broken.search_rows.fallback is not None
    assert broken.search_rows.helper_rows == 0
    assert rows_of(broken) == rows_synced_alone
    assert len(helper_processes) == 1 and helper_processes[0].returncode is not None


def test_a_file_failing_with_the_helper_on_leaves_no_rows(tmp_path: Path) -> None:
    src = tmp_path / "sessions"
    for name in ("a", "b", "c"):
        session_file(src / f"{name}.jsonl", {"t": "user", "text": f"work on file {name}"})

    class Exploding(MiniAdapter):
        def new_state(self, path: Path) -> dict[str, Any]:
            # a state that cannot be saved: the file fails after its turn was written
            return {"records": 0, "unsaveable": {path.name}} if path.stem == "b" else {"records": 0}

    home = tmp_path / "state"
    home.mkdir()
    indexer = Indexer(open_index(home), {"mini": Exploding()}, home=home, analysis="on")
    stats = indexer.sync([Source("mini", src)])
    assert stats.files_failed == 1
    conn = indexer.conn
    assert [r[0] for r in conn.execute("SELECT status FROM source_files ORDER BY path")] == [
        "ok",
        "failed",
        "ok",
    ]
    assert [r[0] for r in conn.execute("SELECT user_text FROM turns ORDER BY id")] == [
        "work on file a",
        "work on file c",
    ]
    assert indexer.search_rows.helper_rows == 2  # the failed file sent nothing
    assert (
        conn.execute(
            "SELECT count(*) FROM turns_fts WHERE rowid NOT IN (SELECT id FROM turns)"
        ).fetchone()[0]
        == 0
    )
    assert conn.execute("SELECT count(*) FROM turns_fts").fetchone()[0] == 2


@pytest.mark.parametrize("mode", ["on", "off"])
def test_rows_of_a_batch_sqlite_rolled_back_are_never_written(tmp_path: Path, mode: Mode) -> None:
    """A batch SQLite rolled back whole (its turns are gone): the search rows of its files,
    analyzed or still with the helper, are dropped; the next batch's are written."""
    conn = open_index(tmp_path)
    rows = analysis_helper.SearchRows(conn, mode)
    conn.execute("BEGIN IMMEDIATE")
    rows.write_file_rows([(1, "lost turn", "providermini", "lost turn")])
    rows.file_released()
    rows.write_file_rows([(2, "open file", "providermini", "open file")])
    rows.batch_rolled_back()
    rows.write_file_rows([(3, "kept turn", "providermini", "kept turn")])
    rows.file_released()
    rows.settle()
    conn.execute("COMMIT")
    rows.close()
    assert [tuple(r) for r in conn.execute("SELECT rowid FROM turns_fts")] == [(3,)]
    assert rows.fallback is None


def test_settling_outside_a_batch_leaves_the_search_index_settings_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After SQLite rolled a batch back whole, the next file may settle before a batch begins,
    with rows of the lost batch still with the helper: there is nothing to write, so FTS5's
    `hashsize` is not raised and restored in two commits of their own (a crash between them
    would leave it raised)."""
    monkeypatch.setattr(analysis_helper, "FTS_HASH_BYTES", 4)
    conn = open_index(tmp_path)
    rows = analysis_helper.SearchRows(conn, "on")
    conn.execute("BEGIN IMMEDIATE")
    rows.write_file_rows([(1, "lost turn", "providermini", "lost turn")])
    rows.file_released()
    conn.execute("ROLLBACK")
    rows.batch_rolled_back()
    rows.settle()
    rows.close()
    assert rows.fallback is None
    assert conn.execute("SELECT count(*) FROM turns_fts").fetchone()[0] == 0
    assert conn.execute("SELECT v FROM turns_fts_config WHERE k = 'hashsize'").fetchone() is None


def test_a_sync_busy_past_the_timeout_between_two_files_keeps_its_helper(tmp_path: Path) -> None:
    """The helper read all the pipe held while the sync parsed a long file (here: slept past the
    timeout); the rest of the frame is written when the sync comes back. The helper is not late:
    only a helper that does not answer in time is given up."""
    conn = open_index(tmp_path)
    rows = analysis_helper.SearchRows(conn, "on")
    helper = rows._helper
    assert helper is not None and helper.greeted
    fcntl.fcntl(helper._in, fcntl.F_SETPIPE_SZ, 4096)  # a frame larger than the pipe holds
    conn.execute("BEGIN IMMEDIATE")
    rows.timeout_seconds = 0.05
    long_text = "rounding the cart total " * 4096  # ~96 KiB
    rows.write_file_rows([(1, long_text, "providermini", long_text)])
    rows.file_released()  # the frame is written as far as the pipe takes it
    time.sleep(0.5)  # the sync parses the next file, longer than the timeout
    rows.timeout_seconds = 30.0
    rows.write_file_rows([(2, "a short turn", "providermini", "a short turn")])
    rows.file_released()
    rows.settle()
    conn.execute("COMMIT")
    rows.close()
    assert rows.fallback is None
    assert rows.helper_rows == 2
    assert conn.execute("SELECT count(*) FROM turns_fts").fetchone()[0] == 2


CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from sessions.test_analysis_helper import sync_fixtures
    sync_fixtures(Path({home!r}), "on", batch_bytes={batch_bytes})
""")


@pytest.mark.parametrize(
    ("point", "batch_bytes"),
    [
        ("sync.after-file", 64 << 20),  # the first file's rows are with the helper
        ("sync.before-commit", 1 << 20),  # settled, not committed
        ("sync.after-commit", 1 << 20),  # one batch committed, the rest to resume
    ],
)
def test_a_crash_while_rows_are_with_the_helper_resumes_to_the_same_index(
    tmp_path: Path, rows_synced_alone: dict[str, Any], point: str, batch_bytes: int
) -> None:
    shared_fixtures("sessions")  # skip here: in the child a skip would be a traceback
    home = tmp_path / "state"
    home.mkdir()
    script = CRASH_SCRIPT.format(
        tests=str(Path(__file__).parents[1]), home=str(home), batch_bytes=batch_bytes
    )
    run_killed_at(point, script)
    resumed = sync_fixtures(home, "on")
    assert resumed.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert rows_of(resumed) == rows_synced_alone


def vectors_of(home: Path) -> list[tuple[Any, ...]]:
    conn = open_index(home)
    try:
        rows = conn.execute(
            "SELECT t.revision, v.vector, v.slot, b.bits FROM turn_vectors v"
            " JOIN turns t ON t.id = v.turn_id LEFT JOIN turn_vector_blocks b ON b.id = v.block_id"
            " ORDER BY t.id"
        ).fetchall()
        return [tuple(r) for r in rows]
    finally:
        conn.close()


@pytest.mark.parametrize("helper", ["works", "dies"])
def test_the_helper_embeds_the_turns_with_the_vectors_the_sync_would_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: str
) -> None:
    from teamlore.models.embeddings import BundledEmbedder
    from teamlore.ops.registry import OpContext, run_operation

    embedded_here: list[str] = []
    embed = BundledEmbedder.embed

    def counting(self: BundledEmbedder, texts: Any) -> Any:
        embedded_here.extend(texts)
        return embed(self, texts)

    monkeypatch.setattr(BundledEmbedder, "embed", counting)
    fixtures = shared_fixtures("sessions")
    if helper == "dies":
        monkeypatch.setenv("TEAMLORE_FAILPOINT", DIE_POINT)
    homes = {}
    for mode in ("on", "off"):
        monkeypatch.setenv(MODE_ENV, mode)
        homes[mode] = home = tmp_path / mode
        home.mkdir()
        ctx = OpContext(cwd=tmp_path, home=home)
        result = run_operation("sync", ctx, {"sources": [f"{p}={fixtures / p}" for p in PROVIDERS]})
        assert result["vectors"]["status"] == "done"
        if mode == "on" and helper == "works":
            assert embedded_here == []  # every vector came from the helper
        if mode == "on" and helper == "dies":
            assert len(embedded_here) == result["vectors"]["embeddedTurns"]  # made here instead
            monkeypatch.delenv("TEAMLORE_FAILPOINT")
    assert 0 < result["vectors"]["embeddedTurns"] <= len(embedded_here)
    assert vectors_of(homes["on"]) == vectors_of(homes["off"])


def test_the_helper_is_ready_before_its_model_loads_and_loads_it_between_requests() -> None:
    # ready as soon as it can analyze; the model loads in steps while no request waits, with
    # only what the bundled model needs: not config.toml's models (pydantic) or the CLI
    from teamlore.models.embeddings import bundled_embedder

    space = bundled_embedder().space.key
    code = textwrap.dedent(
        f"""
        from teamlore.sessions.analysis_helper import _Embeds
        embeds = _Embeds({space!r})
        assert embeds.has_work() and not embeds.loaded
        steps = 0
        while embeds.has_work():
            embeds.work()
            steps += 1
        assert embeds.loaded and embeds.usable and steps == 2, steps
        embeds.add(["a turn about rounding a cart total"], {space!r})
        embeds.work()
        dimensions, made = embeds.take()
        assert dimensions == 256 and len(made) == 256 + 32  # int8, then the sign bits
        """
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert {"numpy", "tokenizers", "teamlore.models.embeddings"} <= modules
    assert not modules & {"pydantic", "teamlore.core.config", "typer", "rich"}


def test_the_helper_embeds_whole_batches_and_the_rest_when_asked_for_all() -> None:
    """A sync sends a file's few turns at a time: the helper embeds `EMBED_BATCH` of them at
    once (small batches cost about twice as much per text), the rest on the sync's last
    request, which asks for every vector."""
    from teamlore.models.embeddings import bundled_embedder
    from teamlore.sessions.analysis_helper import EMBED_BATCH, _Embeds

    space = bundled_embedder().space.key
    embeds = _Embeds(space)
    while embeds.has_work():
        embeds.work()  # the model loads
    texts = [f"turn {n}: renamed the cache key of the price lookup" for n in range(EMBED_BATCH + 5)]

    embeds.add(texts[:3], space)
    waits_with_a_few = not embeds.has_work()
    embeds.add(texts[3:], space)
    while embeds.has_work():
        embeds.work()
    dimensions, made = embeds.take()
    embeds.embed(len(embeds.queue))  # the sync's last request
    _, rest = embeds.take()

    assert waits_with_a_few
    size = dimensions + dimensions // 8  # int8, then the sign bits
    assert (len(made), len(rest)) == (EMBED_BATCH * size, 5 * size)
