"""The PostgreSQL org store (docs/org.md "A team server"): psycopg 3 with a connection pool.

Words: each document's analyzed text (`core.analyzer`: CJK runs as unigrams + bigrams,
identifiers split and kept whole) becomes a tsvector built lexeme by lexeme, with positions, so
PostgreSQL's own parser and dictionaries never re-split it: Chinese is found by the same bigrams
as in SQLite, and one- or two-character queries work. A GIN index answers the match; `ts_rank_cd`
orders the candidates after the number of query terms each holds (the rule of memory search).

Meaning: vectors are stored as memory search stores them (a float32 scale + int8 per dimension,
`bytea`) and ranked in the serving process (docs/org.md "Vectors" has the figures that chose this
over ranking a `float4[]` column in SQL; Debian bookworm's server has no pgvector).

`org sync` holds a session advisory lock for its whole run and writes who holds it into
`org_meta`, so a second sync waits, then says who holds it. Schema migrations run under a
transaction-scoped advisory lock, numbered in `org_schema`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from teamlore.core import errors
from teamlore.core.analyzer import Query, QueryTerm
from teamlore.core.timeutil import now_instant
from teamlore.org.store import (
    ADD_A_TOKEN_UNLESS_ITS_NAME_IS_LIVE,
    SCHEMA_VERSION,
    SYNC_LOCK_KEY,
    Backend,
    Document,
    LexicalHit,
    Repository,
    SearchFilter,
    StoredHit,
    StoredVectors,
    Token,
    read_repository,
    repository_taken,
    sync_busy,
    token_exists,
)

CONNECT_TIMEOUT_S = 5
# every connection speaks UTF8 whatever PGCLIENTENCODING or the URL says (the index's text is
# Chinese as well as English, which LATIN1 and the like cannot carry)
_CONNECT: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "client_encoding": "UTF8"}
POOL_MAX = 4
# how long an operation waits for a pooled connection before ORG_DATABASE_UNAVAILABLE (`org
# serve`'s 503): a few milliseconds are enough for a server that is up, so a server that is
# down is said at once, not after the pool's retries (docs/org.md "Serving")
POOL_WAIT_S = 2.0
POOL_WAIT_ENV = "TEAMLORE_ORG_POOL_WAIT_S"  # another wait, in seconds (the tests' shorter one)
# how long the pool retries a lost connection in the background (1, 2, 4 s apart) before it
# leaves the next request to try again at once: a server that comes back is used within seconds
RECONNECT_S = 10.0
_MIGRATION_LOCK = SYNC_LOCK_KEY + 1
_ADD_REPOSITORY_LOCK = SYNC_LOCK_KEY + 2  # two `org add` at once: one checks, then the other
MAX_POSITION = 16383  # tsvector positions (PostgreSQL clamps beyond)
MAX_POSITIONS = 255  # per lexeme

MIGRATIONS = [
    """
CREATE TABLE org_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO org_meta VALUES ('generation', '0');
INSERT INTO org_meta VALUES ('index_id', md5(random()::text || clock_timestamp()::text));
CREATE TABLE org_repositories (
  name text PRIMARY KEY,
  path text NOT NULL,
  remote text,
  added_at text NOT NULL,
  state text NOT NULL,
  head_commit text,
  memory_tree text,
  synced_at text,
  problem text,
  findings jsonb NOT NULL DEFAULT '[]'
);
CREATE TABLE org_documents (
  id bigserial PRIMARY KEY,
  repository text NOT NULL REFERENCES org_repositories(name) ON DELETE CASCADE,
  path text NOT NULL,
  kind text NOT NULL,
  doc_id text NOT NULL,
  blob text NOT NULL,
  entry_type text,
  status text NOT NULL,
  title text NOT NULL,
  body text NOT NULL,
  lexemes tsvector NOT NULL,
  space text,
  vector bytea,
  headline_vector bytea,
  UNIQUE (repository, path)
);
CREATE INDEX org_documents_lexemes ON org_documents USING gin (lexemes);
CREATE TABLE org_tokens (
  name text PRIMARY KEY,
  digest text NOT NULL UNIQUE,
  created_at text NOT NULL,
  revoked_at text
);
""",
    # 2: one row per token, not per name: a revoked token keeps its dates when its name is
    # given to a new one (a unique index holds the names of the live tokens)
    """
ALTER TABLE org_tokens DROP CONSTRAINT org_tokens_pkey;
ALTER TABLE org_tokens ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
CREATE UNIQUE INDEX org_tokens_live ON org_tokens (name) WHERE revoked_at IS NULL;
""",
]

_HIT_COLUMNS = "id, repository, kind, doc_id, path, entry_type, status, title, body"


# the pool logs each failed connection attempt with libpq's words (a role name among them) on
# stderr; teamlore says once, in its own words, why it cannot connect (`unavailable`)
_POOL_LOG = logging.getLogger("psycopg.pool")
_POOL_LOG.addHandler(logging.NullHandler())
_POOL_LOG.propagate = False

_QUOTED = re.compile(r'(?:\s+after)?\s*"([^"]*)"')  # `after "the string"`, `"="`, `"pass%"`
_URL = re.compile(r"postgres(?:ql)?://", re.I)
_URL_BEFORE_QUERY = re.compile(r"postgres(?:ql)?://([^?]*)", re.I)
_NAMED_ROLE = re.compile(r'\b(role|user) "[^"]*"')
# psycopg's words before libpq's (`connection is bad: `, `connection failed: `): not a person's
_CONNECTION_PREFIX = re.compile(r"^connection (?:failed|is bad): ")
_FAILED_AT = re.compile(r"^(?:connection (?:failed|is bad): )?connection to server .*? failed: ")


def _pool_wait() -> float:
    """POOL_WAIT_S, or TEAMLORE_ORG_POOL_WAIT_S when set."""
    given = os.environ.get(POOL_WAIT_ENV)
    if not given:
        return POOL_WAIT_S
    try:
        wait = float(given)
    except ValueError:
        wait = 0.0
    if not 0 < wait <= 600:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"{POOL_WAIT_ENV} must be a number of seconds in (0, 600]"
        )
    return wait


def _settings(database: str) -> dict[str, Any]:
    """The settings of a connection string, else ORG_DATABASE_URL_INVALID: libpq's words
    without the pieces of the string it quotes (a user, a password, the whole string)."""
    try:
        settings = conninfo_to_dict(database)
    except psycopg.ProgrammingError as exc:
        problem = _QUOTED.sub(_punctuation_only, str(exc).strip().splitlines()[0]).rstrip(": ")
        if re.match(r"[a-z][a-z0-9+.-]*:", database, re.I) and not re.match(_URL, database):
            problem += "; a URL starts with postgresql://"
        raise errors.TeamloreError(
            errors.ORG_DATABASE_URL_INVALID, f"cannot parse the org database's URL: {problem}"
        ) from None
    if _bare_at_or_slash(database):
        raise errors.TeamloreError(
            errors.ORG_DATABASE_URL_INVALID,
            "cannot parse the org database's URL: its user name, password or database name "
            "holds a bare '@' or '/' (percent-encode them: %40, %2F)",
        )
    return settings


def _bare_at_or_slash(database: str) -> bool:
    """A URL whose user name or password holds an `@` or a `/` as typed: libpq reads the rest
    of it as the host, the port or the database (`postgresql://bob:pa/ss@db/org` is host
    `bob`, port `pa`, database `ss@db/org`), so the password would show wherever the server's
    address is shown. The `@` that ends the credentials is the only one a URL may hold before
    its query, and no `/` comes before it."""
    url = _URL_BEFORE_QUERY.match(database)
    if url is None:
        return False
    before_query = url[1]
    last_at = before_query.rfind("@")
    return before_query.count("@") > 1 or "/" in before_query[: max(last_at, 0)]


def _punctuation_only(quoted: re.Match[str]) -> str:
    """A quoted piece of libpq's message: kept when it is one sign (`missing "="`), else cut."""
    sign = quoted[1]
    return quoted[0] if len(sign) == 1 and not sign.isalnum() else ""


def server_address(database: str) -> str:
    """`host:port/dbname` of a connection string, without user or password: what the string
    leaves out is what libpq takes from PGHOST, PGHOSTADDR, PGPORT and PGDATABASE."""
    try:
        given = conninfo_to_dict(database)
    except psycopg.ProgrammingError:
        return "an unparsable connection string"
    defaults = _environment_defaults()
    parts = {key: given.get(key) or defaults.get(key) for key in _ADDRESS_SETTINGS}
    host = parts["host"] or parts["hostaddr"] or "localhost"
    return f"{host}:{parts['port'] or 5432}/{parts['dbname'] or ''}".rstrip("/")


_ADDRESS_SETTINGS = ("host", "hostaddr", "port", "dbname")


def _environment_defaults() -> dict[str, str]:
    """libpq's value, now, of each address setting a string may leave out (never the user's:
    libpq's default database is the user's name, which is withheld)."""
    return {
        option.keyword.decode(): option.val.decode()
        for option in pq.Conninfo.get_defaults()
        if option.val and option.keyword.decode() in _ADDRESS_SETTINGS
    }


# where the connection string came from, as a refusal's `next` names it
FLAG_SOURCE = "`--database`"
NOT_UTF8 = (
    "Create a new UTF8 database under another name (`createdb -E UTF8 -T template0 NAME`) and "
    'use its URL, or drop this one first (docs/org.md "A team server").'
)
LACKING_PRIVILEGE = (
    'Use the role that owns the org database (docs/org.md "A team server"), or grant this '
    "one the privilege the message names."
)


def unavailable(
    database: str, exc: BaseException, source: str = FLAG_SOURCE
) -> errors.TeamloreError:
    """ORG_DATABASE_UNAVAILABLE naming host and port and why, never the role or password, and
    where the URL to check came from (`--database` or TEAMLORE_ORG_DATABASE)."""
    remedy = f"Check the {source} URL and that its server is running."
    if source != FLAG_SOURCE:
        remedy = (
            f"Check the URL in {source} and that its server is running "
            "(unset it to use the embedded index)."
        )
    return errors.TeamloreError(
        errors.ORG_DATABASE_UNAVAILABLE,
        f"cannot use the org database at {server_address(database)}: {_why(database, exc)}",
        server=server_address(database),
    ).advising(remedy)


def _why(database: str, exc: BaseException) -> str:
    """libpq's reason on one line: `Connection refused (is the server running …?)`; the
    address it repeats is dropped (the message names it), a role it names is withheld."""
    lines = [
        _FAILED_AT.sub("", _CONNECTION_PREFIX.sub("", line.strip()))
        for line in str(exc).splitlines()
        if line.strip()
    ]
    if not lines:
        return type(exc).__name__
    reason = lines[0].removeprefix("FATAL:").strip()
    hints = [line[0].lower() + line[1:] for line in lines[1:2] if line.endswith("?")]
    if hints:
        reason += f" ({hints[0]})"
    reason = _NAMED_ROLE.sub(r"\1 (name withheld)", reason)
    password = _password(database)
    return reason.replace(password, "***") if password else reason


def _password(database: str) -> str | None:
    try:
        password = conninfo_to_dict(database).get("password")
    except psycopg.ProgrammingError:
        return None
    return str(password) if password else None


@dataclass
class PostgresStore:
    pool: ConnectionPool[psycopg.Connection[Any]]
    database: str
    backend: Backend = "postgresql"
    source: str = FLAG_SOURCE  # where `database` came from

    @classmethod
    def open(cls, database: str, source: str = FLAG_SOURCE) -> PostgresStore:
        _settings(database)  # an unparsable string is refused at once, not retried by the pool
        _probe(database, source)
        try:
            pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                database,
                min_size=1,
                max_size=POOL_MAX,
                kwargs={**_CONNECT, "application_name": "teamlore"},
                timeout=_pool_wait(),
                reconnect_timeout=RECONNECT_S,
                # a connection the server dropped while idle (a restart) is replaced before use
                check=ConnectionPool.check_connection,
                open=False,
            )
            pool.open(wait=True, timeout=CONNECT_TIMEOUT_S + 1)
        except (psycopg.Error, PoolTimeout) as exc:
            raise unavailable(database, exc, source) from None
        store = cls(pool, database, source=source)
        with store._conn() as conn:
            _migrate(conn)
        return store

    @property
    def where(self) -> str:
        return f"postgresql ({server_address(self.database)})"

    @property
    def public_where(self) -> str:
        return "postgresql"  # the server's address is for whoever set the index up

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; its transaction commits when the block ends. None within the
        pool's wait (`POOL_WAIT_S`): ORG_DATABASE_UNAVAILABLE."""
        try:
            with self.pool.connection() as conn:
                yield conn
        except PoolTimeout:
            why = PoolTimeout(self._why_no_connection())
            raise unavailable(self.database, why, self.source) from None
        except psycopg.OperationalError as exc:
            raise unavailable(self.database, exc, self.source) from None
        except psycopg.errors.InsufficientPrivilege as exc:
            refused = unavailable(self.database, exc, self.source)
            raise refused.advising(LACKING_PRIVILEGE) from None

    def _why_no_connection(self) -> str:
        """Every connection held by other requests (a burst of slow searches), or none to be
        had (the server is down): the 503 is the same, the reason is not."""
        waited = f"no connection within {self.pool.timeout:g} s"
        stats = self.pool.get_stats()
        in_use = stats.get("pool_size", 0) - stats.get("pool_available", 0)
        if in_use >= self.pool.max_size:
            return f"{waited}: all {self.pool.max_size} are in use by other requests; try again"
        return f"{waited} (is the server running?)"

    # ---------------------------------------------------------------------------- repositories

    def add_repository(self, repository: Repository) -> None:
        with self._conn() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_ADD_REPOSITORY_LOCK,))
            taken = conn.execute(
                "SELECT name, path, remote FROM org_repositories "
                "WHERE path = %s OR name = %s OR lower(remote) = lower(%s)",
                (repository.path, repository.name, repository.remote),
            ).fetchall()
            repository_taken(
                repository, [(str(name), str(path), remote) for name, path, remote in taken]
            )
            conn.execute(
                "INSERT INTO org_repositories (name, path, remote, added_at, state) "
                "VALUES (%s, %s, %s, %s, 'new')",
                (repository.name, repository.path, repository.remote, repository.added_at),
            )

    def remove_repository(self, name: str) -> int:
        with self._conn() as conn:
            conn.execute("DELETE FROM org_documents WHERE repository = %s", (name,))
            removed = conn.execute("DELETE FROM org_repositories WHERE name = %s", (name,))
            _bump(conn)
            return removed.rowcount

    def repositories(self) -> list[Repository]:
        with self._conn() as conn:
            counts = dict(
                conn.execute(
                    "SELECT repository, count(*) FROM org_documents GROUP BY repository"
                ).fetchall()
            )
            rows = conn.execute(
                "SELECT name, path, remote, added_at, state, head_commit, memory_tree, "
                "synced_at, problem, findings FROM org_repositories ORDER BY name"
            ).fetchall()
        return [
            read_repository(
                name=row[0],
                path=row[1],
                remote=row[2],
                added_at=row[3],
                state=row[4],
                commit=row[5],
                tree=row[6],
                synced_at=row[7],
                problem=row[8],
                findings=list(row[9]),
                documents=int(counts.get(row[0], 0)),
            )
            for row in rows
        ]

    def record(self, repository: Repository) -> None:
        with self._conn() as conn:
            _record(conn, repository)

    # ------------------------------------------------------------------------------- documents

    def stored_blobs(self, repository: str) -> dict[str, str]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT path, blob FROM org_documents WHERE repository = %s", (repository,)
            ).fetchall()
        return {row[0]: row[1] for row in rows}

    def unembedded(self, repository: str, space: str) -> set[str]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT path FROM org_documents WHERE repository = %s "
                "AND (vector IS NULL OR space IS DISTINCT FROM %s)",
                (repository, space),
            ).fetchall()
        return {row[0] for row in rows}

    def apply(self, repository: Repository, upserts: list[Document], deletes: list[str]) -> None:
        with self._conn() as conn:
            paths = [*deletes, *(d.path for d in upserts)]
            conn.execute(
                "DELETE FROM org_documents WHERE repository = %s AND path = ANY(%s)",
                (repository.name, paths),
            )
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO org_documents (repository, path, kind, doc_id, blob, entry_type, "
                    "status, title, body, lexemes, space, vector, headline_vector) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s, %s, %s)",
                    [
                        (
                            d.repository,
                            d.path,
                            d.kind,
                            d.doc_id,
                            d.blob,
                            d.entry_type,
                            d.status,
                            d.title,
                            d.body,
                            tsvector_text(d.analyzed),
                            d.space,
                            d.vector,
                            d.headline_vector,
                        )
                        for d in upserts
                    ],
                )
            _record(conn, repository)
            if upserts or deletes:
                _bump(conn)

    def generation(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT value FROM org_meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def stamp(self) -> tuple[str, int]:
        with self._conn() as conn:
            rows = dict(conn.execute("SELECT key, value FROM org_meta").fetchall())
        return str(rows["index_id"]), int(rows["generation"])

    @contextmanager
    def sync_lock(
        self, wait_seconds: float, holder: str, waiting: Callable[[str], None] | None = None
    ) -> Iterator[None]:
        """A session advisory lock on a connection of its own for the whole sync; while another
        process holds it, poll until `wait_seconds`, then LOCK_BUSY naming the holder."""
        with self._conn() as conn:
            conn.autocommit = True
            deadline = time.monotonic() + wait_seconds
            told = waiting is None
            while not _try_lock(conn):
                if time.monotonic() >= deadline:
                    raise sync_busy(_sync_holder(conn))
                if not told and waiting is not None:
                    waiting(_sync_holder(conn))
                    told = True
                time.sleep(0.1)
            try:
                conn.execute(
                    "INSERT INTO org_meta VALUES ('sync_holder', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (f"{holder}, since {now_instant()}",),
                )
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SYNC_LOCK_KEY,))
                conn.autocommit = False

    # ---------------------------------------------------------------------------------- search

    def lexical(self, query: Query, where: SearchFilter, window: int) -> list[LexicalHit]:
        """The `window` documents holding the most query terms, then the strongest by
        `ts_rank_cd`: the GIN index finds the documents holding any term. Every tsquery is a
        parameter (never text in the statement)."""
        terms = [tsquery_text(term) for term in query.terms]
        held = " + ".join("(lexemes @@ %s::tsquery)::int" for _ in terms)
        conditions, params = _filter_sql(where)
        statement = (
            f"SELECT id, {held} AS held, ts_rank_cd(lexemes, q) AS strength "
            "FROM org_documents, CAST(%s AS tsquery) AS q "
            f"WHERE lexemes @@ q{conditions} ORDER BY held DESC, strength DESC, id LIMIT %s"
        )
        any_term = " | ".join(f"({term})" for term in terms)
        with self._conn() as conn:
            rows = conn.execute(statement, (*terms, any_term, *params, window)).fetchall()
        return [LexicalHit(int(row[0]), int(row[1]), float(row[2])) for row in rows]

    def hits(self, docs: list[int]) -> dict[int, StoredHit]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {_HIT_COLUMNS} FROM org_documents WHERE id = ANY(%s)", (docs,)
            ).fetchall()
        return {int(row[0]): StoredHit(*row) for row in rows}

    def vectors(self, space: str) -> StoredVectors:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT id, vector, headline_vector, repository, kind, status FROM org_documents "
                "WHERE space = %s AND vector IS NOT NULL ORDER BY id",
                (space,),
            ).fetchall()
        return StoredVectors(
            [int(row[0]) for row in rows],
            [bytes(row[1]) for row in rows],
            [None if row[2] is None else bytes(row[2]) for row in rows],
            [(row[3], row[4], row[5]) for row in rows],
        )

    def counts(self) -> dict[str, Any]:
        with self._conn() as conn:
            documents, embedded = conn.execute(
                "SELECT count(*), count(vector) FROM org_documents"
            ).fetchone() or (0, 0)
            pgvector = conn.execute(
                "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            version = conn.execute("SHOW server_version").fetchone()
        return {
            "documents": int(documents),
            "embedded": int(embedded),
            "vectorStorage": "bytea, ranked in the serving process",
            "pgvectorAvailable": bool(pgvector and pgvector[0]),
            "serverVersion": version[0] if version else None,
        }

    # ---------------------------------------------------------------------------------- tokens

    def add_token(self, name: str, digest: str, created_at: str) -> None:
        with self._conn() as conn:
            added = conn.execute(
                "INSERT INTO org_tokens (name, digest, created_at) VALUES (%s, %s, %s) "
                f"{ADD_A_TOKEN_UNLESS_ITS_NAME_IS_LIVE}",
                (name, digest, created_at),
            ).rowcount
        if not added:
            raise token_exists(name)

    def revoke_token(self, name: str, revoked_at: str) -> bool:
        with self._conn() as conn:
            changed = conn.execute(
                "UPDATE org_tokens SET revoked_at = %s WHERE name = %s AND revoked_at IS NULL",
                (revoked_at, name),
            ).rowcount
        return bool(changed)

    def token_named(self, digest: str) -> str | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT name FROM org_tokens WHERE digest = %s AND revoked_at IS NULL", (digest,)
            ).fetchone()
        return None if row is None else str(row[0])

    def tokens(self) -> list[Token]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT name, created_at, revoked_at FROM org_tokens ORDER BY name, id"
            ).fetchall()
        return [Token(*row) for row in rows]


def _probe(database: str, source: str) -> None:
    """One direct connection first: a server that is down or refuses us is told at once with
    libpq's reason (a pool that cannot open retries until its timeout, then says only that).
    A setting libpq refuses before it tries any server (a port outside 1–65535, an sslmode it
    does not know) is the URL's fault: ORG_DATABASE_URL_INVALID, as an unparsable string is;
    told before connecting (`_checked_settings`), as psycopg looks a host name up with the
    port first and would say the lookup failed (`localhost:abc`)."""
    try:
        _checked_settings(database)
        with psycopg.connect(database, **_CONNECT) as conn:
            encoding, name = _encoding(conn), conn.info.dbname
    except psycopg.Error as exc:
        refused = _refused_setting(exc)
        if refused is not None:
            raise errors.TeamloreError(
                errors.ORG_DATABASE_URL_INVALID,
                f"the org database's URL has a setting libpq refuses: {refused}",
            ) from None
        raise unavailable(database, exc, source) from None
    if encoding != "UTF8":  # before anything is created or written
        raise errors.TeamloreError(
            errors.ORG_DATABASE_UNAVAILABLE,
            f"cannot use the org database at {server_address(database)}: its encoding is "
            f"{encoding}; teamlore needs a UTF8 database: create a new one "
            f"(createdb -E UTF8 -T template0 {name}_utf8) or drop this one first",
            server=server_address(database),
        ).advising(NOT_UTF8)


def _sync_holder(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT value FROM org_meta WHERE key = 'sync_holder'").fetchone()
    return str(row[0]) if row else "holder unknown"


def _encoding(conn: psycopg.Connection[Any]) -> str:
    """The database's encoding: SQL_ASCII (`createdb` in a cluster `initdb` made in the C
    locale) stores bytes unchecked, and psycopg hands its text back as bytes."""
    row = conn.execute("SHOW server_encoding").fetchone()
    return str(row[0]) if row else "unknown"


# libpq's words for a setting it refuses before it connects (`invalid port number: "99999"`,
# `invalid sslmode value: "bogus"`, `invalid integer value "x" for connection option "port"`,
# `could not match 3 port numbers to 2 hosts`), after the address it may put in front
_REFUSED_SETTING = re.compile(r'^(invalid (?:[\w" ]+ )?(?:value|number)\b.*|could not match .*)$')


# the settings libpq takes one of a few words for (as libpq 16-18 take them), checked when the
# libpq here knows the setting
_CHOICES = {
    "sslmode": ("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
    "gssencmode": ("disable", "prefer", "require"),
    "channel_binding": ("disable", "prefer", "require"),
    "target_session_attrs": (
        "any", "read-write", "read-only", "primary", "standby", "prefer-standby"
    ),
    "load_balance_hosts": ("disable", "random"),
    "sslcertmode": ("disable", "allow", "require"),
    "sslnegotiation": ("postgres", "direct"),
}  # fmt: skip
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def _checked_settings(database: str) -> None:
    """Refuse, in libpq's words, the settings libpq refuses whatever the host: a port that is
    no integer or outside 1-65535, a word a setting does not take. Raises psycopg.Error as the
    connection would (a string that does not parse is left to it)."""
    try:
        settings = conninfo_to_dict(database)
    except psycopg.Error:
        return
    for port in str(settings.get("port") or "").split(","):
        if not port:
            continue  # the default port
        if _INTEGER.fullmatch(port) is None or not -(2**31) <= int(port) < 2**31:
            raise psycopg.OperationalError(
                f'invalid integer value "{port}" for connection option "port"'
            )
        if not 1 <= int(port) <= 65535:
            raise psycopg.OperationalError(f'invalid port number: "{port.strip()}"')
    known = _setting_names()
    for name, choices in _CHOICES.items():
        value = settings.get(name)
        if name in known and value is not None and str(value) not in choices:
            raise psycopg.OperationalError(f'invalid {name} value: "{value}"')


def _refused_setting(exc: BaseException) -> str | None:
    """What is wrong with a setting of the URL, in libpq's words without the values it quotes
    (a setting's name stays), or None when libpq tried a server and failed there."""
    lines = str(exc).strip().splitlines()
    first = _FAILED_AT.sub("", _CONNECTION_PREFIX.sub("", lines[0].strip())) if lines else ""
    if _REFUSED_SETTING.match(first) is None:
        return None
    refused = _QUOTED.sub(_setting_name_or_sign, first).rstrip(": ")
    return f"{refused} (a port is 1-65535)" if refused == "invalid port number" else refused


def _setting_name_or_sign(quoted: re.Match[str]) -> str:
    """A quoted piece of libpq's message: kept when it names a setting (`"port"`), else as
    `_punctuation_only` keeps it."""
    return quoted[0] if quoted[1] in _setting_names() else _punctuation_only(quoted)


def _setting_names() -> frozenset[str]:
    return frozenset(option.keyword.decode() for option in pq.Conninfo.get_defaults())


def _try_lock(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (SYNC_LOCK_KEY,)).fetchone()
    return bool(row and row[0])


def _migrate(conn: psycopg.Connection[Any]) -> None:
    """Create or migrate the tables, unless they are at our schema already: then nothing is
    written or created, so a role that may only read them (SELECT) can search and serve."""
    if _schema_version(conn) == SCHEMA_VERSION:
        return
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    conn.execute("CREATE TABLE IF NOT EXISTS org_schema (version integer NOT NULL)")
    current = _schema_version(conn)
    if current > SCHEMA_VERSION:
        raise errors.TeamloreError(
            errors.DB_SCHEMA_TOO_NEW, f"the org database has schema {current}, newer than ours"
        ).advising("Upgrade teamlore to the version that last wrote the org database.")
    for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
        conn.execute(script)  # no parameters: psycopg sends the script as one simple query
        conn.execute("INSERT INTO org_schema VALUES (%s)", (number,))


def _schema_version(conn: psycopg.Connection[Any]) -> int:
    """The highest migration applied, 0 before the first (no `org_schema` yet)."""
    if conn.execute("SELECT to_regclass('org_schema')").fetchone() == (None,):
        return 0
    row = conn.execute("SELECT max(version) FROM org_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _record(conn: psycopg.Connection[Any], repository: Repository) -> None:
    conn.execute(
        "UPDATE org_repositories SET remote = %s, state = %s, head_commit = %s, "
        "memory_tree = %s, synced_at = %s, problem = %s, findings = %s WHERE name = %s",
        (
            repository.remote,
            repository.state,
            repository.commit,
            repository.tree,
            repository.synced_at,
            repository.problem,
            Jsonb(repository.findings),
            repository.name,
        ),
    )


def _bump(conn: psycopg.Connection[Any]) -> None:
    conn.execute("UPDATE org_meta SET value = (value::bigint + 1)::text WHERE key = 'generation'")


def _filter_sql(where: SearchFilter) -> tuple[str, list[Any]]:
    text, params = "", []
    if where.repositories:
        text += " AND repository = ANY(%s)"
        params.append(list(where.repositories))
    if where.kinds:
        text += " AND kind = ANY(%s)"
        params.append(list(where.kinds))
    if not where.include_deprecated:
        text += " AND status = 'approved'"
    return text, params


# --------------------------------------------------------------------------------------------
# the analyzer's tokens as tsvector / tsquery text (docs/org.md "Chinese on PostgreSQL")


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_text(analyzed: str) -> str:
    """The analyzed text as tsvector input: every token a lexeme, with its positions."""
    positions: dict[str, list[int]] = {}
    for position, token in enumerate(analyzed.split(), start=1):
        kept = positions.setdefault(token, [])
        if len(kept) < MAX_POSITIONS:
            kept.append(min(position, MAX_POSITION))
    return " ".join(
        f"{_lexeme(token)}:{','.join(map(str, sorted(set(found))))}"
        for token, found in positions.items()
    )


def tsquery_text(term: QueryTerm) -> str:
    """One query term as tsquery input (the FTS5 expression `QueryTerm.expr` builds, in
    PostgreSQL's syntax: a phrase's tokens follow each other, a prefix ends in `:*`; a Chinese
    word's forms in the other script are alternatives)."""
    if term.variants:
        return " | ".join(f"({tsquery_text(form)})" for form in term.forms())
    if term.kind == "phrase":
        return " <-> ".join(_lexeme(p) for p in term.parts)
    star = ":*" if term.kind == "prefix" else ""
    parts = " & ".join(
        _lexeme(p) + (star if i == len(term.parts) - 1 else "") for i, p in enumerate(term.parts)
    )
    if term.whole and len(term.parts) > 1:
        return f"{_lexeme(term.whole)}{star} | ({parts})"
    return parts
