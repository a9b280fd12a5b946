"""The team-memory state database (`memory-state.sqlite3`; docs/architecture.md "State").

Workflow state that must survive anything: repository bindings, extraction/adjudication tasks and
their submissions, chunks, candidates (+ candidate FTS and projection), the approved projection
(glossary: approved entries + approved FTS, keyed by owner), runner conformance, evidence refs,
assessments, the promotion journal and the authorization log. Precious: never auto-deleted.

Adaptations to SQLite and to teamlore (the reference product's schema was written for a Rust
engine):
- keys (`repository_key`, `worktree_key`, `session_key`) and digests are lowercase hex TEXT, the
  form teamlore's keyed ids and digests have everywhere else; sha256 digests are hex64 and git
  blob ids hex40, enforced by CHECKs;
- times are INTEGER milliseconds since the epoch;
- FTS tables are ordinary FTS5 tables holding text already run through
  `teamlore.core.analyzer.analyze` (tokenize 'unicode61 remove_diacritics 0'); `contentless_delete`
  needs SQLite 3.43 and the stdlib build may be older, so rows are stored and deleted by rowid;
- `approved_entries` projects every kind of memory file (entry, scene, doctrine, skill), has an
  integer rowid shared with `approved_fts`, and keeps the file's relative path and title;
- `approved_projection` also records the projector version, the coverage of the last build
  (`build_coverage`), the entry count, the diagnostics of the last build and the sync time;
- `candidates.candidate_kind` distinguishes entry, skill and consolidation-patch candidates.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from teamlore.core import db, errors
from teamlore.core.paths import ensure_private_dir, state_dir

STATE_DB_NAME = "memory-state.sqlite3"
RECALL_ALGORITHM_VERSION = "recall-rrf@1"


def _hex(column: str, length: int | None = None) -> str:
    shape = f"{column} <> '' AND {column} NOT GLOB '*[^0-9a-f]*'"
    return f"({shape} AND length({column}) = {length})" if length else f"({shape})"


def _hex_or_null(column: str, length: int | None = None) -> str:
    return f"({column} IS NULL OR {_hex(column, length)})"


def _one_of(column: str, *values: str) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def _relative_path(column: str) -> str:
    wrapped = f"('/' || {column} || '/')"
    return (
        f"({column} <> '' AND substr({column}, 1, 1) <> '/' AND {wrapped} NOT LIKE '%/../%' "
        f"AND {wrapped} NOT LIKE '%/./%' AND {wrapped} NOT LIKE '%//%')"
    )


_OWNER = f"""
  repository_key TEXT NOT NULL CHECK {_hex("repository_key")},
  worktree_key TEXT NOT NULL CHECK {_hex("worktree_key")},"""

_STRENGTHS = ("direct", "observed", "candidate", "contextual", "unknown")

SCHEMA_V1 = f"""
CREATE TABLE memory_state_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE repository_bindings ({_OWNER}
  public_repository_identity TEXT,
  root_realpath TEXT NOT NULL CHECK (substr(root_realpath, 1, 1) = '/'),  -- sensitive: local only
  root_realpath_digest TEXT NOT NULL CHECK {_hex("root_realpath_digest", 64)},
  common_dir_device TEXT NOT NULL CHECK (common_dir_device <> ''),
  common_dir_inode TEXT NOT NULL CHECK (common_dir_inode <> ''),
  memory_root TEXT NOT NULL DEFAULT '.threadshare/memory' CHECK {_relative_path("memory_root")},
  status TEXT NOT NULL DEFAULT 'active' CHECK ({_one_of("status", "active", "inactive")}),
  PRIMARY KEY (repository_key, worktree_key)
);

CREATE TABLE tasks (
  task_id TEXT PRIMARY KEY CHECK (task_id <> ''),
  kind TEXT NOT NULL
    CHECK ({_one_of("kind", "extraction", "adjudication", "consolidation")}),{_OWNER}
  chunk_ref TEXT,
  draft_batch_ref TEXT,
  binding_json TEXT NOT NULL CHECK (json_valid(binding_json)),
  authorization_plan_digest TEXT CHECK {_hex_or_null("authorization_plan_digest", 64)},
  lease_holder TEXT,
  lease_epoch INTEGER NOT NULL DEFAULT 0 CHECK (lease_epoch >= 0),
  claim_token TEXT,
  lease_expires_at INTEGER,
  status TEXT NOT NULL DEFAULT 'pending'
    CHECK ({_one_of("status", "pending", "claimed", "submitted", "stale")}),
  created_at INTEGER NOT NULL,
  CHECK (kind <> 'extraction' OR chunk_ref IS NOT NULL),
  CHECK (status <> 'claimed' OR
         (lease_holder IS NOT NULL AND claim_token IS NOT NULL AND lease_expires_at IS NOT NULL))
);
CREATE INDEX tasks_owner_status ON tasks(repository_key, worktree_key, status);

-- one accepted submission per task; an identical replay returns outcome_json
CREATE TABLE submissions (
  task_id TEXT PRIMARY KEY REFERENCES tasks(task_id),
  response_digest TEXT NOT NULL CHECK {_hex("response_digest", 64)},
  outcome_json TEXT NOT NULL CHECK (json_valid(outcome_json)),
  received_at INTEGER NOT NULL
);

-- audit of refused submissions that carried a different digest
CREATE TABLE submission_conflicts (
  task_id TEXT NOT NULL REFERENCES tasks(task_id),
  response_digest TEXT NOT NULL CHECK {_hex("response_digest", 64)},
  received_at INTEGER NOT NULL
);
CREATE INDEX submission_conflicts_task ON submission_conflicts(task_id);

CREATE TABLE chunks (
  chunk_ref TEXT PRIMARY KEY CHECK (chunk_ref <> ''),  -- sessionKey:turnStart:turnEnd:chunkDigest
  {_OWNER}
  session_key TEXT NOT NULL CHECK {_hex("session_key")},
  turn_range TEXT NOT NULL CHECK (turn_range GLOB '[0-9]*-[0-9]*'),
  chunk_digest TEXT NOT NULL CHECK {_hex("chunk_digest", 64)},
  status TEXT NOT NULL DEFAULT 'pending'
    CHECK ({_one_of("status", "pending", "drafted", "extracted", "stale")}),
  provenance_snapshot_seq TEXT CHECK (provenance_snapshot_seq IS NULL OR
    (provenance_snapshot_seq <> '' AND provenance_snapshot_seq NOT GLOB '*[^0-9]*'))
);
CREATE INDEX chunks_owner_status ON chunks(repository_key, worktree_key, status);

CREATE TABLE candidates (
  candidate_id TEXT PRIMARY KEY CHECK (candidate_id <> ''),{_OWNER}
  chunk_ref TEXT NOT NULL,
  candidate_kind TEXT NOT NULL DEFAULT 'entry'
    CHECK ({_one_of("candidate_kind", "entry", "skill", "consolidation-patch")}),
  revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  payload_json TEXT NOT NULL CHECK (json_valid(payload_json)),  -- unsanitized: local only
  status TEXT NOT NULL DEFAULT 'draft'
    CHECK ({_one_of("status", "draft", "quarantined", "promoted", "discarded")}),
  adjudication TEXT NOT NULL DEFAULT 'pending'
    CHECK ({_one_of("adjudication", "pending", "done", "failed")}),
  updated_at INTEGER NOT NULL
);
CREATE INDEX candidates_owner_status ON candidates(repository_key, worktree_key, status);

-- analyzed searchable text of active candidates; rowid = candidates.rowid, same transaction
CREATE VIRTUAL TABLE candidate_fts USING fts5(
  searchable_text, tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TABLE candidate_projection ({_OWNER}
  generation INTEGER NOT NULL CHECK (generation >= 0),
  analyzer_version TEXT NOT NULL CHECK (analyzer_version <> ''),
  recall_algorithm_version TEXT NOT NULL CHECK (recall_algorithm_version <> ''),
  PRIMARY KEY (repository_key, worktree_key)
);

-- the one persistent projection (docs/glossary.md) of the approved memory files of a worktree
CREATE TABLE approved_entries (
  id INTEGER PRIMARY KEY,  -- = approved_fts rowid
  {_OWNER}
  kind TEXT NOT NULL CHECK ({_one_of("kind", "entry", "scene", "doctrine", "skill")}),
  entry_id TEXT NOT NULL CHECK (entry_id <> ''),
  path TEXT NOT NULL CHECK {_relative_path("path")},  -- relative to the memory root
  revision INTEGER NOT NULL CHECK (revision >= 1),
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  entry_type TEXT,
  status TEXT NOT NULL CHECK ({_one_of("status", "approved", "deprecated")}),
  superseded_by TEXT,
  title TEXT NOT NULL,
  frontmatter_json TEXT NOT NULL CHECK (json_valid(frontmatter_json)),
  body_text TEXT NOT NULL,
  UNIQUE (repository_key, worktree_key, kind, entry_id),
  UNIQUE (repository_key, worktree_key, path),
  CHECK (kind = 'entry' OR (status = 'approved' AND entry_type IS NULL AND superseded_by IS NULL))
);

CREATE VIRTUAL TABLE approved_fts USING fts5(
  searchable_text, tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TABLE approved_projection ({_OWNER}
  generation INTEGER NOT NULL CHECK (generation >= 0),
  source_tree_digest TEXT NOT NULL CHECK {_hex("source_tree_digest", 64)},
  coverage TEXT NOT NULL DEFAULT 'complete' CHECK ({_one_of("coverage", "complete", "partial")}),
  build_coverage TEXT NOT NULL CHECK ({_one_of("build_coverage", "complete", "partial", "none")}),
  analyzer_version TEXT NOT NULL CHECK (analyzer_version <> ''),
  recall_algorithm_version TEXT NOT NULL CHECK (recall_algorithm_version <> ''),
  projector_version TEXT NOT NULL CHECK (projector_version <> ''),
  entry_count INTEGER NOT NULL DEFAULT 0 CHECK (entry_count >= 0),
  diagnostics_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(diagnostics_json)),
  synced_at INTEGER NOT NULL,
  CHECK (build_coverage = 'complete' OR coverage = 'partial'),
  CHECK ((generation = 0) = (build_coverage = 'none')),
  PRIMARY KEY (repository_key, worktree_key)
);

CREATE TABLE runner_conformance (
  profile TEXT PRIMARY KEY CHECK (profile <> ''),
  cli_version_fingerprint TEXT NOT NULL CHECK (cli_version_fingerprint <> ''),
  test_version TEXT NOT NULL CHECK (test_version <> ''),
  passed_at INTEGER NOT NULL
);

-- sensitive: evidence pointers never leave this database
CREATE TABLE evidence_refs (
  candidate_id TEXT NOT NULL REFERENCES candidates(candidate_id) ON DELETE CASCADE,
  statement_id TEXT NOT NULL CHECK (statement_id <> ''),
  evidence_id TEXT NOT NULL CHECK (evidence_id <> ''),
  pointer_digest TEXT NOT NULL CHECK {_hex("pointer_digest", 64)},
  session_key TEXT CHECK {_hex_or_null("session_key")},
  turn_key TEXT CHECK {_hex_or_null("turn_key")},
  revision TEXT CHECK {_hex_or_null("revision", 64)},
  payload_sha256 TEXT CHECK {_hex_or_null("payload_sha256", 64)},
  relation TEXT,
  strength TEXT CHECK (strength IS NULL OR {_one_of("strength", *_STRENGTHS)}),
  limitations_json TEXT CHECK (limitations_json IS NULL OR json_valid(limitations_json)),
  task_id TEXT NOT NULL,
  PRIMARY KEY (candidate_id, statement_id, evidence_id)
);

CREATE TABLE assessments (
  candidate_id TEXT NOT NULL REFERENCES candidates(candidate_id) ON DELETE CASCADE,
  statement_id TEXT NOT NULL CHECK (statement_id <> ''),
  citations_digest TEXT NOT NULL CHECK {_hex("citations_digest", 64)},
  provenance_strength TEXT NOT NULL CHECK ({_one_of("provenance_strength", *_STRENGTHS)}),
  limitations_json TEXT NOT NULL CHECK (json_valid(limitations_json)),
  claim_support TEXT NOT NULL
    CHECK ({_one_of("claim_support", "unverified", "typed-fact", "human-confirmed")}),
  assessed_by TEXT NOT NULL CHECK ({_one_of("assessed_by", "deterministic", "human")}),
  statement_text_digest TEXT NOT NULL CHECK {_hex("statement_text_digest", 64)},
  revision INTEGER NOT NULL CHECK (revision >= 1),
  PRIMARY KEY (candidate_id, statement_id)
);

CREATE TABLE promotion_journal (
  plan_id TEXT PRIMARY KEY CHECK (plan_id <> ''),{_OWNER}
  plan_canonical_json TEXT NOT NULL CHECK (json_valid(plan_canonical_json)),
  plan_digest TEXT NOT NULL CHECK {_hex("plan_digest", 64)},
  candidate_ids_json TEXT NOT NULL CHECK (json_valid(candidate_ids_json)),
  assessment_digest TEXT NOT NULL CHECK {_hex("assessment_digest", 64)},
  policy_version TEXT NOT NULL CHECK (policy_version <> ''),
  status TEXT NOT NULL DEFAULT 'generated'
    CHECK ({_one_of("status", "generated", "approved", "applying", "applied", "voided")}),
  updated_at INTEGER NOT NULL
);
CREATE INDEX promotion_journal_owner_status
  ON promotion_journal(repository_key, worktree_key, status);

-- the exact approved bytes per file, and per-file progress of an apply
CREATE TABLE promotion_files (
  plan_id TEXT NOT NULL REFERENCES promotion_journal(plan_id) ON DELETE CASCADE,
  target_path TEXT NOT NULL CHECK {_relative_path("target_path")},
  target_blob_hash TEXT CHECK {_hex_or_null("target_blob_hash", 40)},  -- null: file absent
  sanitized_content BLOB NOT NULL,
  sanitized_digest TEXT NOT NULL CHECK {_hex("sanitized_digest", 64)},
  applied INTEGER NOT NULL DEFAULT 0 CHECK (applied IN (0, 1)),
  PRIMARY KEY (plan_id, target_path)
);

CREATE TABLE authorization_log (
  plan_digest TEXT NOT NULL CHECK {_hex("plan_digest", 64)},
  task_id TEXT,
  runner_input_digest TEXT CHECK {_hex_or_null("runner_input_digest", 64)},
  input_coverage_digest TEXT CHECK {_hex_or_null("input_coverage_digest", 64)},
  provider TEXT,
  model TEXT,
  endpoint TEXT,
  bytes INTEGER CHECK (bytes IS NULL OR bytes >= 0),
  decided_at INTEGER NOT NULL,
  via TEXT NOT NULL CHECK ({_one_of("via", "interactive", "digest", "manifest")}),
  manifest_digest TEXT CHECK {_hex_or_null("manifest_digest", 64)},
  CHECK (via <> 'manifest' OR manifest_digest IS NOT NULL)
);
CREATE INDEX authorization_log_plan ON authorization_log(plan_digest);
"""

# promotion apply progress (memory/promotion/apply.py): the approval, the outcome of a plan, and the
# original bytes of every target taken at precheck so a drift in the middle of an apply can be
# rolled back (cleared when the plan ends)
PROMOTION_PROGRESS_V2 = f"""
CREATE TABLE promotion_outcomes (
  plan_id TEXT PRIMARY KEY REFERENCES promotion_journal(plan_id) ON DELETE CASCADE,
  approved_digest TEXT CHECK {_hex_or_null("approved_digest", 64)},
  approved_at INTEGER,
  finished_at INTEGER,
  void_code TEXT CHECK (void_code IS NULL OR void_code <> ''),
  void_path TEXT,
  void_message TEXT
);

CREATE TABLE promotion_originals (
  plan_id TEXT NOT NULL REFERENCES promotion_journal(plan_id) ON DELETE CASCADE,
  target_path TEXT NOT NULL CHECK {_relative_path("target_path")},
  original_content BLOB,  -- null: the file was absent
  PRIMARY KEY (plan_id, target_path)
);
"""

# consolidation runs (memory/consolidation): one row per staged ConsolidationPatch@v1 —
# `pending_review` until its plan is applied (`applied`) or voided/discarded (`stale`); an empty
# patch is a `no_op`. `no_op` and `applied` runs are the baseline of the next synthesis; each run
# records the approved entries it consolidated (the task's entries).
CONSOLIDATION_RUNS_V3 = f"""
CREATE TABLE consolidation_runs (
  run_id TEXT PRIMARY KEY CHECK (run_id <> ''),
  task_id TEXT NOT NULL UNIQUE REFERENCES tasks(task_id),{_OWNER}
  binding_json TEXT NOT NULL CHECK (json_valid(binding_json)),
  entry_set_digest TEXT NOT NULL CHECK {_hex("entry_set_digest", 64)},
  candidate_id TEXT UNIQUE REFERENCES candidates(candidate_id),
  status TEXT NOT NULL
    CHECK ({_one_of("status", "pending_review", "no_op", "applied", "stale")}),
  entry_count INTEGER NOT NULL CHECK (entry_count >= 0),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  CHECK ((status = 'no_op') = (candidate_id IS NULL))
);
CREATE INDEX consolidation_runs_owner_status
  ON consolidation_runs(repository_key, worktree_key, status, updated_at, run_id);

CREATE TABLE consolidation_run_entries (
  run_id TEXT NOT NULL REFERENCES consolidation_runs(run_id) ON DELETE CASCADE,
  entry_id TEXT NOT NULL CHECK (entry_id <> ''),
  revision INTEGER NOT NULL CHECK (revision >= 1),
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  PRIMARY KEY (run_id, entry_id)
);
"""

# why a person discarded a candidate (memory/discard.py): private, local, for the record
DISCARD_REASONS_V4 = """
CREATE TABLE candidate_discards (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(candidate_id) ON DELETE CASCADE,
  reason TEXT NOT NULL CHECK (reason <> '' AND length(reason) <= 2000),
  discarded_at INTEGER NOT NULL
);
"""

# embedding vectors for hybrid search (memory/store/vectors.py, docs/hybrid-search.md): one per
# approved document, keyed like the document and bound to its content digest, so a rebuilt
# projection keeps them; one per live entry candidate. `space` names the backend and model;
# `vector` was little-endian float16 (replaced in V6). Derived: deleting a row only re-embeds it.
VECTORS_V5 = f"""
CREATE TABLE approved_vectors ({_OWNER}
  kind TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  space TEXT NOT NULL CHECK (space <> ''),
  vector BLOB NOT NULL CHECK (length(vector) > 0 AND length(vector) % 2 = 0),
  PRIMARY KEY (repository_key, worktree_key, kind, entry_id)
);

CREATE TABLE candidate_vectors (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(candidate_id) ON DELETE CASCADE,
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  space TEXT NOT NULL CHECK (space <> ''),
  vector BLOB NOT NULL CHECK (length(vector) > 0 AND length(vector) % 2 = 0)
);
"""

# vectors are stored quantized (a float32 scale + one int8 per dimension) and each owner's
# current vectors also as one pack (memory/store/vectors.py): the float16 tables of V5 are
# derived data, dropped and re-embedded on the next search
VECTOR_PACKS_V6 = f"""
DROP TABLE approved_vectors;
DROP TABLE candidate_vectors;

CREATE TABLE approved_vectors ({_OWNER}
  kind TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  space TEXT NOT NULL CHECK (space <> ''),
  vector BLOB NOT NULL CHECK (length(vector) > 4),
  PRIMARY KEY (repository_key, worktree_key, kind, entry_id)
);

CREATE TABLE candidate_vectors (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(candidate_id) ON DELETE CASCADE,
  content_digest TEXT NOT NULL CHECK {_hex("content_digest", 64)},
  space TEXT NOT NULL CHECK (space <> ''),
  vector BLOB NOT NULL CHECK (length(vector) > 4)
);

CREATE TABLE approved_vector_packs ({_OWNER}
  space TEXT NOT NULL CHECK (space <> ''),
  generation INTEGER NOT NULL CHECK (generation >= 0),
  dimensions INTEGER NOT NULL CHECK (dimensions >= 0),
  ids BLOB NOT NULL,      -- approved_entries.id, int64 little-endian, ascending
  flags BLOB NOT NULL,    -- one byte per row: 1 = entry, 2 = deprecated
  scales BLOB NOT NULL,   -- float32 little-endian per row
  vectors BLOB NOT NULL,  -- int8, rows x dimensions
  PRIMARY KEY (repository_key, worktree_key)
);
"""

# each approved document also gets a vector of its headline alone (its title, else its body's
# first sentence), memory search's second vector ranking (docs/hybrid-search.md "Fusion"); a
# document without a headline the model can read stores its whole-text vector there. NULL (never
# written by the sync) leaves the document out of that ranking.
# The vectors of V6 have none: derived data, dropped and re-embedded on the next search
HEADLINE_VECTORS_V7 = """
DELETE FROM approved_vector_packs;
DELETE FROM approved_vectors;
ALTER TABLE approved_vectors ADD COLUMN headline_vector BLOB
  CHECK (headline_vector IS NULL OR length(headline_vector) > 4);
ALTER TABLE approved_vector_packs ADD COLUMN headline_scales BLOB NOT NULL DEFAULT x'';
ALTER TABLE approved_vector_packs ADD COLUMN headline_vectors BLOB NOT NULL DEFAULT x'';
"""

# memory search sizes its BM25 window by the documents it must skip (memory/store/search.py)
DEPRECATED_INDEX_V8 = """
CREATE INDEX approved_entries_deprecated ON approved_entries (repository_key, worktree_key)
  WHERE status = 'deprecated';
"""

# what the last consistent scan of an owner's memory tree saw (memory/store/projection.py,
# "unchanged-tree fast path"): the tree digest of the bytes it read, one digest of its directory
# listings, skip markers and file identities (device, inode, size, mtime_ns, ctime_ns), the
# newest mtime/ctime among those files and when the scan started (the racily-clean test).
# Derived: deleting a row only costs one full read of the tree.
SOURCE_STATS_V9 = f"""
CREATE TABLE approved_source_stats ({_OWNER}
  source_tree_digest TEXT NOT NULL CHECK {_hex("source_tree_digest", 64)},
  stats_digest TEXT NOT NULL CHECK {_hex("stats_digest", 64)},
  newest_ns INTEGER NOT NULL CHECK (newest_ns >= 0),
  recorded_ns INTEGER NOT NULL CHECK (recorded_ns > 0),
  PRIMARY KEY (repository_key, worktree_key)
);
"""

# a headline's first sentence ends only once it holds a word (projection.headline): with V9's
# rule a body opening "1. Run…" or "e.g. …" had the headline "1." or "e.g.". Vectors are derived:
# dropped and re-embedded on the next search
HEADLINE_RULE_V10 = """
DELETE FROM approved_vector_packs;
DELETE FROM approved_vectors;
"""

# each write of a pack draws a fresh random token, so a process that keeps a decoded pack
# (memory/store/vectors.py, `PackCache`) sees with one small query whether the stored pack is
# still the one it decoded, whatever connection or process rewrote it (docs/hybrid-search.md).
# The token sits before the matrices: a column after them is reached only by walking their
# overflow pages (0.7 ms at 10,000 entries). Packs are derived: the next search writes them again
PACK_TOKENS_V11 = f"""
DROP TABLE approved_vector_packs;
CREATE TABLE approved_vector_packs ({_OWNER}
  space TEXT NOT NULL CHECK (space <> ''),
  generation INTEGER NOT NULL CHECK (generation >= 0),
  token INTEGER NOT NULL,  -- random, new with every write of the pack
  dimensions INTEGER NOT NULL CHECK (dimensions >= 0),
  ids BLOB NOT NULL,      -- approved_entries.id, int64 little-endian, ascending
  flags BLOB NOT NULL,    -- one byte per row: 1 = entry, 2 = deprecated
  scales BLOB NOT NULL,   -- float32 little-endian per row
  vectors BLOB NOT NULL,  -- int8, rows x dimensions
  headline_scales BLOB NOT NULL,   -- as scales, of the headline vectors (0: none)
  headline_vectors BLOB NOT NULL,  -- as vectors
  PRIMARY KEY (repository_key, worktree_key)
);
"""

# sessions the user keeps out of extraction (docs/sessions.md "Keeping a session out"): recall,
# the batch runner and its previews never select their turns
EXCLUDED_SESSIONS_V12 = """
CREATE TABLE excluded_sessions (
  session_key TEXT PRIMARY KEY CHECK (length(session_key) > 0),
  excluded_at INTEGER NOT NULL
);
"""

# a pack's flags gain 4 = the document holds Chinese (memory/store/vectors.py): memory search
# asks a model whether it reads a document without reading the document's text. Packs are
# derived: the next search writes them again, with the flag
CHINESE_FLAG_V13 = """
DELETE FROM approved_vector_packs;
"""

# a pack stores its matrices in one block of columns per model of a paired model
# (models/vector_math.py, `Int8Rows`): `blocks` gives their widths, "512,256" ("" for one
# block). It is read only with the matrices, so it may sit after them (unlike `token`, V11).
# Packs are derived: the next search writes them again
PACK_BLOCKS_V14 = """
DELETE FROM approved_vector_packs;
ALTER TABLE approved_vector_packs ADD COLUMN blocks TEXT NOT NULL DEFAULT '';
"""

# what linting each file of an owner's memory tree found, bound to a digest of the file's bytes,
# its kind and the lint rules' code (memory/store/lint_cache.py), so `memory status` re-lints
# only new and edited files. Derived: deleting a row only costs linting that file again
LINT_RESULTS_V15 = f"""
CREATE TABLE lint_results ({_OWNER}
  path TEXT NOT NULL CHECK {_relative_path("path")},
  digest TEXT NOT NULL CHECK {_hex("digest", 64)},
  findings BLOB NOT NULL,  -- JSON: [[rule, severity, line, message], …]
  entry_id TEXT,           -- an entry's id and superseded_by (the tree-wide superseded check)
  superseded_by TEXT,
  PRIMARY KEY (repository_key, worktree_key, path)
);
"""

# what a conformance pass verified (runner/conformance.py): the runner profile as a plan
# discloses it (model, endpoint, limits, binary and version), so a refusal says what changed
# since. NULL for a pass recorded before this: its refusal says only that something changed
RUNNER_VERIFIED_PROFILE_V16 = """
ALTER TABLE runner_conformance ADD COLUMN verified_profile TEXT
  CHECK (verified_profile IS NULL OR json_valid(verified_profile));
"""

# the transcript budget a chunk was cut to (memory/extraction/chunking.py): a recall may ask for
# less than the default (`chunkBytes`), and re-deriving the chunk for stage needs the same
CHUNK_BUDGET_V17 = """
ALTER TABLE chunks ADD COLUMN budget_bytes INTEGER NOT NULL DEFAULT 40960
  CHECK (budget_bytes BETWEEN 8192 AND 40960);
"""

# how many times a person put a chunk's turns back to be extracted again (`memory discard
# --extract-again`, memory/extraction/extracted_turns.py): bound into its next task's identity
EXTRACTION_ROUND_V18 = """
ALTER TABLE chunks ADD COLUMN extraction_round INTEGER NOT NULL DEFAULT 0
  CHECK (extraction_round >= 0);
"""

# the entries a consolidation pass over its task budget left for the next one
# (memory/consolidation/staging.py): the scenes do not rest on them, whatever the tree's
# `consolidated.json` reads later. NULL: the pass left none (or was staged before this)
CONSOLIDATION_DEFERRED_V19 = """
ALTER TABLE consolidation_runs ADD COLUMN deferred_entry_ids TEXT
  CHECK (deferred_entry_ids IS NULL OR json_valid(deferred_entry_ids));
"""

MIGRATIONS: list[str] = [
    SCHEMA_V1,
    PROMOTION_PROGRESS_V2,
    CONSOLIDATION_RUNS_V3,
    DISCARD_REASONS_V4,
    VECTORS_V5,
    VECTOR_PACKS_V6,
    HEADLINE_VECTORS_V7,
    DEPRECATED_INDEX_V8,
    SOURCE_STATS_V9,
    HEADLINE_RULE_V10,
    PACK_TOKENS_V11,
    EXCLUDED_SESSIONS_V12,
    CHINESE_FLAG_V13,
    PACK_BLOCKS_V14,
    LINT_RESULTS_V15,
    RUNNER_VERIFIED_PROFILE_V16,
    CHUNK_BUDGET_V17,
    EXTRACTION_ROUND_V18,
    CONSOLIDATION_DEFERRED_V19,
]

TABLES = (
    "memory_state_meta",
    "repository_bindings",
    "tasks",
    "submissions",
    "submission_conflicts",
    "chunks",
    "candidates",
    "candidate_fts",
    "candidate_projection",
    "approved_entries",
    "approved_fts",
    "approved_projection",
    "runner_conformance",
    "evidence_refs",
    "assessments",
    "promotion_journal",
    "promotion_files",
    "authorization_log",
    "promotion_outcomes",
    "promotion_originals",
    "consolidation_runs",
    "consolidation_run_entries",
    "approved_vectors",
    "candidate_vectors",
    "approved_vector_packs",
    "approved_source_stats",
    "excluded_sessions",
    "lint_results",
)


def state_db_path(home: Path | None = None) -> Path:
    return (ensure_private_dir(home) if home is not None else state_dir()) / STATE_DB_NAME


def open_state_db(home: Path | None = None, *, for_read: bool = False) -> sqlite3.Connection:
    """Open (creating and migrating if needed) `memory-state.sqlite3` in the state dir. With
    `for_read`, a full disk or a read-only state dir gives the existing database read-only
    (`db.connect_for_read`)."""
    path = state_db_path(home)
    # what it holds (candidates, plans, the promotion journal) nothing can make again: a copy is
    # kept before an upgrade migrates it (docs/architecture.md, "Upgrading and going back")
    conn = (
        db.connect_for_read(path, MIGRATIONS, keep_copy=True)
        if for_read
        else db.connect(path, MIGRATIONS, keep_copy=True)
    )
    if db.is_read_only(conn):
        if memory_state_uuid_or_none(conn) is None:
            conn.close()
            raise errors.TeamloreError(db.cannot_write(path))
        return conn
    if memory_state_uuid_or_none(conn) is None:
        with db.write_tx(conn):
            conn.execute(
                "INSERT INTO memory_state_meta(key, value) VALUES ('memory_state_uuid', ?) "
                "ON CONFLICT(key) DO NOTHING",
                (_new_uuid(),),
            )
            conn.execute(
                "INSERT INTO memory_state_meta(key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(db.schema_version(conn)),),
            )
    return conn


def memory_state_uuid_or_none(conn: sqlite3.Connection) -> str | None:
    row = conn.execute(
        "SELECT value FROM memory_state_meta WHERE key = 'memory_state_uuid'"
    ).fetchone()
    return None if row is None else str(row[0])


def memory_state_uuid(conn: sqlite3.Connection) -> str:
    """The random id of this state database (binds tasks to the database that issued them)."""
    value = memory_state_uuid_or_none(conn)
    if value is None:
        raise LookupError("memory-state database has no uuid; open it with open_state_db")
    return value


def candidate_analyzer_version(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> str | None:
    """The analyzer version that wrote the owner's candidate FTS documents; None without any
    (a question cheap enough for every search to ask before loading the staging code, which
    is why it is here and not beside the extraction tasks)."""
    row = conn.execute(
        "SELECT analyzer_version FROM candidate_projection"
        " WHERE repository_key = ? AND worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    return None if row is None else str(row[0])


def _new_uuid() -> str:
    # uuid (and the platform module it imports) loads only when a state DB is created: a short
    # read process opens an existing one (docs/architecture.md, "A short CLI process")
    import uuid

    return str(uuid.uuid4())
