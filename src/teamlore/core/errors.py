"""Stable error codes.

Every refusal teamlore makes carries one of these codes, a one-line message a person understands,
and an exit code (1 for refusals and failures, 2 for usage errors). The codes are part of the
public contract: CLI JSON output and MCP tool errors both carry them, so they never change meaning.

On the wire a refusal is `{"error": {"code", "message", "problem", "next"}}` (+ `details`):
`code` and `message` are ours and stay; `problem` (the same one line) and `next` (what to do
about it) are the seed's diagnostic fields, so a client written from the seed reads ours
(docs/seed-conformance.md). `next` is the code's line in core/remedies.py, else the remedy its
summary names after its last "; " (`...; run promote from the plan's worktree`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from teamlore.core.remedies import NEXT, TOOL_FOR_COMMAND, TOOL_NEXT

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from pydantic import ValidationError


class ErrorCode(NamedTuple):
    code: str
    summary: str
    exit_code: int = 1


_REGISTRY: dict[str, ErrorCode] = {}


def _register(code: str, summary: str, exit_code: int = 1) -> ErrorCode:
    if code in _REGISTRY:
        raise ValueError(f"duplicate error code {code}")
    err = ErrorCode(code, summary, exit_code)
    _REGISTRY[code] = err
    return err


def registered_codes() -> dict[str, ErrorCode]:
    return dict(_REGISTRY)


# usage (exit 2)
USAGE = _register("USAGE", "the command was called with invalid arguments", 2)
INVALID_ARGUMENT = _register("INVALID_ARGUMENT", "an argument has an invalid value", 2)

# state and storage
STATE_DIR_UNSAFE = _register("STATE_DIR_UNSAFE", "the state directory is not private or not ours")
CONFIG_INVALID = _register("CONFIG_INVALID", "config.toml cannot be read")
DB_CORRUPT = _register("DB_CORRUPT", "a state database failed its integrity check")
DB_SCHEMA_TOO_NEW = _register(
    "DB_SCHEMA_TOO_NEW", "a state database was written by a newer teamlore"
)
LOCK_BUSY = _register("LOCK_BUSY", "another teamlore process holds the lock")
DISK_FULL = _register(
    "DISK_FULL",
    "the disk holding the state directory is full; nothing was changed, free space and retry",
)
STATE_READ_ONLY = _register(
    "STATE_READ_ONLY", "the state directory is read-only and this command needs to write to it"
)
PERMISSION_DENIED = _register(
    "PERMISSION_DENIED",
    "a file or folder teamlore needs cannot be read or written: check its owner and permissions",
)
PATH_TOO_LONG = _register(
    "PATH_TOO_LONG", "a path is longer than the file system allows a name or a path to be"
)
REBUILD_LOSES_HISTORY = _register(
    "REBUILD_LOSES_HISTORY",
    "the damaged index holds history a rebuild cannot recreate; confirm with --discard-history",
)
STATE_INVALID = _register(
    "STATE_INVALID",
    "a file teamlore keeps has the wrong type (a folder where a file belongs, or the reverse); "
    "move it aside and retry",
)
SECRET_DAMAGED = _register(
    "SECRET_DAMAGED", "the origin secret exists but is damaged; it is never replaced silently"
)

# sessions / L0
SOURCE_UNREADABLE = _register("SOURCE_UNREADABLE", "a session source cannot be read")
SOURCE_NOT_FOUND = _register(  # a typo in `--source` read as "no new sessions" (exit 0)
    "SOURCE_NOT_FOUND", "no session folder or .jsonl file is at the path `--source` names"
)
UNKNOWN_PROVIDER = _register("UNKNOWN_PROVIDER", "no adapter exists for that provider", 2)
SESSION_NOT_FOUND = _register("SESSION_NOT_FOUND", "no indexed session has that key")
TURN_NOT_FOUND = _register("TURN_NOT_FOUND", "the session has no turn with that ordinal")
TOOL_NOT_FOUND = _register("TOOL_NOT_FOUND", "the turn has no tool call with that number")
# the warm server (docs/watch.md)
WATCH_UNSUPPORTED = _register("WATCH_UNSUPPORTED", "teamlore watch needs Unix sockets")
WATCH_SOCKET_PATH_TOO_LONG = _register(
    "WATCH_SOCKET_PATH_TOO_LONG", "the state dir's path is too long for a Unix socket in it"
)
WATCH_SOCKET_GONE = _register(
    "WATCH_SOCKET_GONE", "the watch's socket was removed while it ran; no command could reach it"
)
WATCH_NOTIFY_FAILED = _register(
    "WATCH_NOTIFY_FAILED", "the watch could no longer watch the session folders, so it stopped"
)

# repositories
NOT_A_GIT_REPOSITORY = _register("NOT_A_GIT_REPOSITORY", "the path is not inside a git worktree")
BARE_REPOSITORY = _register("BARE_REPOSITORY", "the repository is bare and has no worktree")
GIT_FAILED = _register("GIT_FAILED", "a git plumbing command failed")
REPOSITORY_NOT_TRUSTED = _register(
    "REPOSITORY_NOT_TRUSTED", "git refuses a repository another user owns (safe.directory)"
)
REPOSITORY_NOT_REGISTERED = _register(
    "REPOSITORY_NOT_REGISTERED",
    "the repository is not registered; run `teamlore sync --repository PATH`",
)
OWNER_NOT_FOUND = _register("OWNER_NOT_FOUND", "no registered repository owns this location")
OWNER_AMBIGUOUS = _register("OWNER_AMBIGUOUS", "more than one repository could own this request")

# team memory store
MEMORY_NOT_INITIALIZED = _register(
    "MEMORY_NOT_INITIALIZED", "this worktree has no team memory tree (.threadshare/memory)"
)
MEMORY_FILE_INVALID = _register("MEMORY_FILE_INVALID", "a memory file does not follow the format")
LINT_BLOCKED = _register("LINT_BLOCKED", "lint found content that must not reach the repository")
UNSAFE_PATH = _register("UNSAFE_PATH", "a path escapes the memory tree or crosses a symlink")
QUERY_EMPTY = _register("QUERY_EMPTY", "the query has no searchable terms", 2)
INDEX_OUTDATED = _register(
    "INDEX_OUTDATED", "the index was built by another analyzer version; `teamlore sync` rebuilds it"
)
QUERY_TOO_BROAD = _register("QUERY_TOO_BROAD", "the selection matches too many turns; narrow it")
PAYLOAD_TOO_LARGE = _register("PAYLOAD_TOO_LARGE", "the request payload exceeds the size limit")
MEMORY_DOCUMENT_NOT_FOUND = _register(
    "MEMORY_DOCUMENT_NOT_FOUND", "no reviewed memory document of that kind and id in this worktree"
)
COMMIT_NOT_FOUND = _register("COMMIT_NOT_FOUND", "the repository has no commit with that hash")

INTERNAL = _register("INTERNAL", "teamlore hit an unexpected internal error")


# a run of non-space characters longer than this in a message (a value echoed back: a 3,000
# character query, session key or date) keeps its start and end around a count of what is cut
LONG_RUN_CHARS = 160
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN_CHARS + 1},}}")
RUN_HEAD_CHARS, RUN_TAIL_CHARS = 100, 40


def _shortened(run: re.Match[str]) -> str:
    text = run.group()
    cut = len(text) - RUN_HEAD_CHARS - RUN_TAIL_CHARS
    return f"{text[:RUN_HEAD_CHARS]}…[{cut:,} characters]…{text[-RUN_TAIL_CHARS:]}"


ECHOED_CHARS = 100


def echoed(value: str) -> str:
    """A value a refusal quotes back (an unknown name or format): whole when short, else its
    start and a count of what is cut, so a megabyte of input never comes back as the answer."""
    if len(value) <= ECHOED_CHARS:
        return value
    return f"{value[:ECHOED_CHARS]}…[{len(value) - ECHOED_CHARS:,} more characters]"


def one_line(message: str) -> str:
    """`message` as a refusal shows it: one line, and no run of characters so long that the
    line stops being readable."""
    return _LONG_RUN.sub(_shortened, message.replace("\n", " "))


class TeamloreError(Exception):
    """A refusal with a stable code. `message` is one line, for a person (`one_line`)."""

    def __init__(self, error: ErrorCode, message: str | None = None, **details: Any) -> None:
        self.error = error
        self.message = one_line(message or error.summary)
        self.details = details
        # the `next` of this refusal when it depends on the case (`advising`), else the code's
        self.remedy: str | None = None
        super().__init__(f"{error.code}: {self.message}")

    def advising(self, remedy: str | None) -> TeamloreError:
        """This refusal with a `next` of its own: what to do depends on the case (where the
        setting the message names came from)."""
        self.remedy = remedy
        return self

    @property
    def code(self) -> str:
        return self.error.code

    @property
    def exit_code(self) -> int:
        return self.error.exit_code

    def to_json(self, *, for_tool: bool = False) -> dict[str, Any]:
        """The refusal on the wire; `for_tool`: as an MCP tool result, whose caller has a
        tool's input schema where a person has `--help` (`tool_next_step`)."""
        if for_tool:
            step = naming_tools(self.remedy or tool_next_step(self.error))
        else:
            step = self.remedy or next_step(self.error)
        out: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "problem": self.message,
            "next": step,
        }
        if self.details:
            out["details"] = self.details
        return out


_REMEDY = re.compile(
    r"; ((?:run|recall|review|narrow|confirm|free|retry|stage|sync|use|give|check|remove|"
    r"pass|add|choose|wait|update|fix|register|allow|set|ask|start|install|re-run)\b.*)$"
)
USAGE_NEXT = "Check the arguments (`--help` lists them) and try again."
INTERNAL_NEXT = "Report this as a teamlore bug with the command you ran; then try again."
REFUSAL_NEXT = "Fix what the problem says, then try again."


TOOL_USAGE_NEXT = "Check the arguments against the tool's input schema and call it again."


def tool_next_step(error: ErrorCode) -> str:
    """`next_step` for a refusal an MCP tool returns: the same, except where it sends a person
    to `--help`, which a tool's caller does not have."""
    if error.code in TOOL_NEXT:
        return TOOL_NEXT[error.code]
    step = next_step(error)
    return TOOL_USAGE_NEXT if step == USAGE_NEXT else step


# a command a `next` names in backticks: `teamlore memory promote --plan ID`, `memory status`
_NAMED_COMMAND = re.compile(r"`(?:teamlore )?([a-z][a-z-]*(?: [a-z][a-z-]*)?)(?: [^`]*)?`")


def naming_tools(step: str) -> str:
    """`step` for an MCP tool's caller: each teamlore command it names that a tool also does
    (`TOOL_FOR_COMMAND`) becomes that tool or the command, so an agent connected to the server
    calls the tool and one with a shell may still run the command."""

    def both(named: re.Match[str]) -> str:
        tool = TOOL_FOR_COMMAND.get(named[1])
        if tool is None:
            return named[0]
        command = named[0] if named[0].startswith("`teamlore ") else f"`teamlore {named[0][1:]}"
        return f"the tool `{tool}` or {command}"

    return _NAMED_COMMAND.sub(both, step)


def next_step(error: ErrorCode) -> str:
    """What a person (or an agent) does about a refusal with this code (the seed's `next`):
    its line in core/remedies.py, else the remedy its summary ends with."""
    if error.code in NEXT:
        return NEXT[error.code]
    remedy = _REMEDY.search(error.summary)
    if remedy:
        text = remedy[1]
        return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
    if error.code == "INTERNAL":
        return INTERNAL_NEXT
    return USAGE_NEXT if error.exit_code == 2 else REFUSAL_NEXT


def first_problem(
    exc: ValidationError,
    default_location: str = "request",
    *,
    plain: bool = False,
    patterns: Mapping[str, str] | None = None,
    schema: Callable[[], Mapping[str, Any]] | None = None,
) -> tuple[str, str]:
    """Where (dotted field path) and what (pydantic's message) of a validation error's first
    problem; `plain` says it in teamlore's words: no "Value error, " or "Assertion failed, ", a
    number out of bounds or a wrong choice as `_in_our_words` says it (`schema`: the request's
    JSON schema, for a bound the error does not name); `patterns` names what a value of a
    pattern looks like, said instead of the regex."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or default_location
    message = str(first.get("msg", "invalid value"))
    if plain:
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        message = _in_our_words(first, schema) or message
    named = (patterns or {}).get(str((first.get("ctx") or {}).get("pattern")))
    if first.get("type") == "string_pattern_mismatch" and named is not None:
        message = f"{first.get('input')!r} is not {named}"
    return where, message


def _in_our_words(problem: Any, schema: Callable[[], Mapping[str, Any]] | None) -> str | None:
    """`must be between 1 and 100` for a number out of its bounds (both, when the schema of its
    field states them), `'x' is not one of 'a', 'b'` for a wrong choice; None for the rest."""
    kind, ctx = problem.get("type"), problem.get("ctx") or {}
    if kind in ("literal_error", "enum"):
        choices = ", ".join(str(ctx.get("expected", "")).rsplit(" or ", 1))
        return f"{problem.get('input')!r} is not one of {choices}"
    if kind not in ("greater_than_equal", "less_than_equal"):
        return None
    low, high = ctx.get("ge"), ctx.get("le")
    loc = problem.get("loc", ())
    if schema is not None and len(loc) == 1:
        field = schema().get("properties", {}).get(loc[0], {})
        for shape in (field, *field.get("anyOf", ())):
            low, high = shape.get("minimum", low), shape.get("maximum", high)
    if low is not None and high is not None:
        return f"must be between {low} and {high}"
    return f"must be {low} or more" if low is not None else f"must be {high} or less"


def from_validation_error(
    exc: ValidationError,
    error: ErrorCode,
    *,
    prefix: str = "",
    default_location: str = "request",
    plain: bool = False,
    patterns: Mapping[str, str] | None = None,
    schema: Callable[[], Mapping[str, Any]] | None = None,
    **details: Any,
) -> TeamloreError:
    """The one mapping from a pydantic ValidationError to a refusal with a stable code:
    `<prefix><location>: <message>` of the first problem."""
    where, message = first_problem(
        exc, default_location, plain=plain, patterns=patterns, schema=schema
    )
    return TeamloreError(error, f"{prefix}{where}: {message}", **details)


# org index (docs/org.md)
ORG_DATABASE_UNAVAILABLE = _register(
    "ORG_DATABASE_UNAVAILABLE", "the org database cannot be reached or refused the connection"
)
ORG_DATABASE_URL_INVALID = _register("ORG_DATABASE_URL_INVALID", "libpq cannot parse that URL", 2)
ORG_URL_HAS_CREDENTIALS = _register("ORG_URL_HAS_CREDENTIALS", "the org URL holds credentials", 2)
ORG_REPOSITORY_UNKNOWN = _register(
    "ORG_REPOSITORY_UNKNOWN", "no repository of the org index has that name"
)
ORG_REPOSITORY_EXISTS = _register(
    "ORG_REPOSITORY_EXISTS", "the org index already has a repository of that name"
)
ORG_TOKEN_UNKNOWN = _register("ORG_TOKEN_UNKNOWN", "no live token of `org serve` has that name")
ORG_TOKEN_EXISTS = _register("ORG_TOKEN_EXISTS", "a live token of `org serve` has that name")
ORG_PORT_UNAVAILABLE = _register(
    "ORG_PORT_UNAVAILABLE", "org serve cannot listen on that address and port (in use?)"
)


# models (model adapters: OpenAI-compatible HTTP)
MODEL_NOT_CONFIGURED = _register(
    "MODEL_NOT_CONFIGURED", "no usable model profile: base URL, model or API key is missing"
)
MODEL_AUTH_FAILED = _register(
    "MODEL_AUTH_FAILED", "the model endpoint refused the credentials (HTTP 401/403)"
)
MODEL_RATE_LIMITED = _register(
    "MODEL_RATE_LIMITED", "the model endpoint kept answering 429 after every retry"
)
MODEL_UNAVAILABLE = _register(
    "MODEL_UNAVAILABLE", "the model endpoint failed (HTTP 5xx or connection error) after retries"
)
MODEL_TIMEOUT = _register("MODEL_TIMEOUT", "the model endpoint did not answer in time")
MODEL_BAD_RESPONSE = _register(
    "MODEL_BAD_RESPONSE", "the model endpoint answered with invalid, empty or unusable JSON"
)
MODEL_REQUEST_REJECTED = _register(
    "MODEL_REQUEST_REJECTED", "the model endpoint rejected the request (HTTP 4xx)"
)
EMBEDDINGS_UNAVAILABLE = _register(
    "EMBEDDINGS_UNAVAILABLE", "the embedding model cannot be loaded; lexical search still works"
)

# team memory: tasks, stage, dedup recall, adjudication (memory/tasks, staging, adjudication)
TASK_NOT_FOUND = _register("TASK_NOT_FOUND", "no task with that id exists for this repository")
TASK_NOT_CLAIMABLE = _register(
    "TASK_NOT_CLAIMABLE", "the task is leased by someone else, already submitted, or stale"
)
LEASE_LOST = _register(
    "LEASE_LOST", "the claim is no longer held: it expired, was reclaimed, or was never taken"
)
SUBMISSION_CONFLICT = _register(
    "SUBMISSION_CONFLICT", "this task was already submitted with different content"
)
TASK_STALE = _register(
    "TASK_STALE", "an input bound to the task changed since it was issued; recall again"
)
BINDING_MISMATCH = _register(
    "BINDING_MISMATCH", "the echoed binding is not the binding teamlore issued with the task"
)
STAGE_REQUEST_INVALID = _register(
    "STAGE_REQUEST_INVALID", "the stage document does not follow its contract"
)
BATCH_TOO_LARGE = _register(
    "BATCH_TOO_LARGE", "too many candidates in one batch (8) or drafts in one adjudication (64)"
)
EVIDENCE_NOT_IN_TASK = _register(
    "EVIDENCE_NOT_IN_TASK", "a statement cites an evidence id that this task did not issue"
)
STATEMENT_UNCITED = _register("STATEMENT_UNCITED", "a statement cites no evidence")
ADJUDICATION_INVALID = _register(
    "ADJUDICATION_INVALID", "the adjudication breaks a rule (coverage, targets, skip chains)"
)
ADJUDICATION_STALE = _register(
    "ADJUDICATION_STALE",
    "team memory changed after the adjudication task was issued; stage the drafts again",
)
ADJUDICATION_FAILED = _register(
    "ADJUDICATION_FAILED",
    "the adjudication was invalid twice; the drafts are marked failed for human handling",
)
APPROVED_PROJECTION_PARTIAL = _register(
    "APPROVED_PROJECTION_PARTIAL",
    "the approved projection is partial (a memory file could not be read); no adjudication "
    "is decided against it until a complete sync",
)


# personal memory (documents, observation queue, Writer, imports, reader)
# (SUBMISSION_CONFLICT above is shared: an idempotency key reused with another payload)
CONTEXT_UNAVAILABLE = _register(
    "CONTEXT_UNAVAILABLE", "that context was not granted to this process or is not allowed"
)
INVALID_IMPORT_ID = _register("INVALID_IMPORT_ID", "importId must be 1-128 ASCII [A-Za-z0-9_-]")
INVALID_IMPORT_LABEL = _register(  # a bad `--label` value: a usage error (exit 2)
    "INVALID_IMPORT_LABEL", "the source label is empty, too long or has control characters", 2
)
INVALID_IMPORT_BASIS = _register("INVALID_IMPORT_BASIS", "basis is not one of the known values")
INVALID_IMPORT_AUTHOR = _register(  # a bad `--author` value: a usage error (exit 2)
    "INVALID_IMPORT_AUTHOR",
    "declared author must be user, agent, third_party, mixed or unknown",
    2,
)
INVALID_TEXT_SIZE = _register("INVALID_TEXT_SIZE", "the text is empty or exceeds its byte limit")
INIT_DISABLED = _register("INIT_DISABLED", "agent imports (agent_observation) are not allowed")
IMPORT_DISABLED = _register("IMPORT_DISABLED", "document imports (document_import) are not allowed")
SUBMISSION_DISABLED = _register(
    "SUBMISSION_DISABLED", "relayed user turns (user_explicit) are not allowed"
)
WRITER_DISABLED = _register(
    "WRITER_DISABLED", "no model profile is chosen for the personal Writer: it does not run"
)
UNSUPPORTED_FILE_TYPE = _register(
    "UNSUPPORTED_FILE_TYPE", "only regular .md/.markdown files (no symlinks) can be imported"
)
FILE_NOT_FOUND = _register("FILE_NOT_FOUND", "the file does not exist")
PATH_NOT_FOUND = _register("PATH_NOT_FOUND", "the path given does not exist")
CWD_GONE = _register("CWD_GONE", "the current folder no longer exists")
PATH_NOT_UTF8 = _register("PATH_NOT_UTF8", "a folder's name is not UTF-8: the index cannot hold it")
INVALID_ENCODING = _register("INVALID_ENCODING", "the file is not valid UTF-8 or contains NUL")
EMPTY_DOCUMENT = _register("EMPTY_DOCUMENT", "the file has no content")
DOCUMENT_TOO_LARGE = _register("DOCUMENT_TOO_LARGE", "the file exceeds 256 KiB")
IMPORT_CHUNK_TOO_LARGE = _register(
    "IMPORT_CHUNK_TOO_LARGE", "a paragraph or fenced block exceeds the 32 KiB part budget"
)
SENSITIVE_CONTENT_REJECTED = _register(
    "SENSITIVE_CONTENT_REJECTED", "the content matches a secret rule and is never sent or stored"
)
PERSONAL_DOCUMENT_INVALID = _register(
    "PERSONAL_DOCUMENT_INVALID", "a personal memory document does not follow the section format"
)
PERSONAL_DOCUMENT_TOO_LARGE = _register(
    "PERSONAL_DOCUMENT_TOO_LARGE", "the change would exceed the 16 KiB document limit"
)
UNSAFE_FILE = _register(
    "UNSAFE_FILE",
    "a personal memory file is a symlink, hard-linked, not a regular file or too large",
)
JOB_NOT_FOUND = _register("JOB_NOT_FOUND", "no Writer job has that id")
NOTHING_TO_RETRY = _register("NOTHING_TO_RETRY", "that job is neither dead nor waiting to retry")
# Writer job failures and quarantine issues (persisted on jobs / observations)
INVALID_DECISION = _register("INVALID_DECISION", "the model answer is not a valid decision")
INVALID_REQUEST_REFERENCE = _register(
    "INVALID_REQUEST_REFERENCE", "the decision answers another request"
)
INVALID_EVIDENCE_REFERENCE = _register(
    "INVALID_EVIDENCE_REFERENCE", "the decision cites evidence that is not in the batch"
)
MISSING_EVIDENCE = _register("MISSING_EVIDENCE", "retain and forget need evidence")
INVALID_TARGET_REFERENCE = _register(
    "INVALID_TARGET_REFERENCE", "the decision names an unknown document or section"
)
DUPLICATE_SECTION_OPERATION = _register(
    "DUPLICATE_SECTION_OPERATION", "the decision touches one section twice"
)
UNAUTHORIZED_SCOPE = _register(
    "UNAUTHORIZED_SCOPE", "the decision writes outside the batch's scope or applicability"
)
UNAUTHORIZED_WRITE = _register("UNAUTHORIZED_WRITE", "the target document is not writable")
UNAUTHORIZED_PROVENANCE = _register(
    "UNAUTHORIZED_PROVENANCE", "this provenance class is not allowed in config"
)
UNAUTHORIZED_SOURCE = _register("UNAUTHORIZED_SOURCE", "the observation source has no provenance")
UNAUTHORIZED_FORGET_EVIDENCE = _register(
    "UNAUTHORIZED_FORGET_EVIDENCE", "imported material can never justify forgetting"
)
UNAUTHORIZED_IMPORT_OVERWRITE = _register(
    "UNAUTHORIZED_IMPORT_OVERWRITE",
    "an import may not replace or remove a user-sourced, unsourced or hand-edited section",
)
UNREGISTERED_PROJECT = _register("UNREGISTERED_PROJECT", "the project is not registered")
SENSITIVE_INPUT = _register("SENSITIVE_INPUT", "the observation matches a secret rule")
OVERSIZED_OBSERVATION = _register(
    "OVERSIZED_OBSERVATION", "one observation with the documents exceeds the 128 KiB request cap"
)
STALE_LEASE = _register("STALE_LEASE", "the Writer's lease on the job expired")
STALE_REVISION = _register("STALE_REVISION", "a document changed after it was projected")
RECOVERY_CONFLICT = _register(
    "RECOVERY_CONFLICT", "a document changed by hand during an interrupted commit"
)
MODEL_CALL_FAILED = _register("MODEL_CALL_FAILED", "the model adapter failed unexpectedly")

# a time window: recall's (memory/selection, memory/recall), sessions search|list's --since/--until
WINDOW_INVALID = _register(
    "WINDOW_INVALID",
    "the time window must start before it ends (recall's: canonical UTC instants, at most 366"
    " days apart)",
    2,
)
RECALL_REQUEST_INVALID = _register(
    "RECALL_REQUEST_INVALID", "the recall request does not follow MemoryExtractionRequest@v1", 2
)

# team memory: promotion (memory/promotion, ops/memory/promote)
PLAN_NOT_FOUND = _register("PLAN_NOT_FOUND", "no promotion plan with that id exists")
PLAN_DIGEST_MISMATCH = _register(
    "PLAN_DIGEST_MISMATCH", "the plan digest is not the digest of the plan that was reviewed"
)
PLAN_VOIDED = _register(
    "PLAN_VOIDED", "the plan was voided because something it bound changed; review again"
)
PLAN_STATE_INVALID = _register(
    "PLAN_STATE_INVALID", "the plan is not in a state that allows this step"
)
PLAN_CORRUPT = _register(
    "PLAN_CORRUPT", "the stored plan does not match its digest or its approved file bytes"
)
PROMOTION_OWNER_MISMATCH = _register(
    "PROMOTION_OWNER_MISMATCH",
    "the plan belongs to another repository or worktree; run promote from the plan's worktree",
)
PROMOTION_TARGET_DRIFT = _register(
    "PROMOTION_TARGET_DRIFT",
    "a target file changed after the plan was made (git pull, hand edit, another promotion); "
    "the plan is voided, review again",
)
PROMOTION_CANDIDATE_DRIFT = _register(
    "PROMOTION_CANDIDATE_DRIFT",
    "a candidate of the plan changed revision or state after the plan was made; review again",
)
PROMOTION_ASSESSMENT_DRIFT = _register(
    "PROMOTION_ASSESSMENT_DRIFT",
    "the evidence assessments of the plan changed after it was made; review again",
)
PROMOTION_POLICY_DRIFT = _register(
    "PROMOTION_POLICY_DRIFT",
    "the lint policy changed after the plan was made (or its content no longer lints clean); "
    "review again",
)
PROMOTION_ROLLBACK_REQUIRED = _register(
    "PROMOTION_ROLLBACK_REQUIRED",
    "a target changed in the middle of an apply and could not be restored automatically",
)

# team memory: review, prepare, discard (memory/review, memory/prepare, memory/discard)
CANDIDATE_NOT_FOUND = _register(
    "CANDIDATE_NOT_FOUND", "no candidate with that id awaits review in this worktree"
)
CANDIDATE_STALE = _register(
    "CANDIDATE_STALE", "the candidate changed or left the state this action needs; review again"
)
CANDIDATE_LOCKED = _register(
    "CANDIDATE_LOCKED",
    "the candidate is in a promotion plan that was approved and is not applied yet",
)
CONFIRMATION_DRIFT = _register(
    "CONFIRMATION_DRIFT",
    "a confirmed statement's text, citations or assessment changed; the confirmation is void",
)
UNVERIFIED_CLAIM = _register(
    "UNVERIFIED_CLAIM", "a statement is neither a typed fact nor confirmed by a person"
)
TARGET_DRIFT = _register(
    "TARGET_DRIFT", "an entry the candidate updates or merges changed since adjudication"
)
DUPLICATE_ENTRY = _register(
    "DUPLICATE_ENTRY",
    "an approved entry the candidate was not adjudicated against says the same as its new entry",
)
PREPARE_REQUEST_INVALID = _register(
    "PREPARE_REQUEST_INVALID", "the request does not follow PrepareRequest@v1", 2
)

# team memory: consolidation (memory/consolidation: synthesize, patch staging, revalidation)
COVERAGE_INCOMPLETE = _register(
    "COVERAGE_INCOMPLETE",
    "the approved memory tree could not be read completely; fix the files `memory status` lists",
)
CONSOLIDATION_INVALID = _register(
    "CONSOLIDATION_INVALID",
    "the consolidation patch breaks a rule (details.reason names it); nothing was staged",
)
CONSOLIDATION_PENDING = _register(
    "CONSOLIDATION_PENDING",
    "another consolidation awaits review; promote or discard it before staging a new one",
)
CONSOLIDATION_DRIFT = _register(
    "CONSOLIDATION_DRIFT",
    "approved entries, scenes, doctrine or the consolidation baseline changed since synthesize; "
    "synthesize again",
)

# personal memory: MCP launch and tools (ops/personal/memory.py)
UNREGISTERED_WORKSPACE = _register(
    "UNREGISTERED_WORKSPACE", "the workspace is not inside a registered repository"
)
READ_DISABLED = _register("READ_DISABLED", "this process may not read personal memory (no context)")
STATUS_UNAVAILABLE = _register(
    "STATUS_UNAVAILABLE", "that status lookup needs a capability this process was not launched with"
)
INVALID_CLIENT_ID = _register("INVALID_CLIENT_ID", "the client id must be [A-Za-z0-9_-]{1,128}", 2)
INVALID_SUBMISSION_ID = _register(  # a lookup's ids or their combination: a usage error (exit 2)
    "INVALID_SUBMISSION_ID",
    "submissionId/conversationId must be [A-Za-z0-9_-]{1,128}; importId is looked up alone",
    2,
)

# team memory: assemble and Skills (memory/assemble, memory/skills)
ASSEMBLY_MARKERS_INVALID = _register(
    "ASSEMBLY_MARKERS_INVALID",
    "the instructions file has missing, duplicate or out-of-order teamlore memory markers; "
    "fix the markers by hand (or remove both) and run assemble again",
)
ASSEMBLY_MERGE_UNRESOLVED = _register(
    "ASSEMBLY_MERGE_UNRESOLVED",
    "the instructions file holds an unresolved git merge outside the managed block or across "
    "its markers; resolve it by hand, then run assemble again",
)
ASSEMBLY_STALE = _register(
    "ASSEMBLY_STALE",
    "an assembled file (CLAUDE.md / AGENTS.md, a Skill projection) is not what assemble writes "
    "from the memory tree now, or holds an unresolved git merge",
)
ASSEMBLY_TARGET_INVALID = _register(
    "ASSEMBLY_TARGET_INVALID",
    "the instructions file (CLAUDE.md / AGENTS.md) is a symlink, not a regular file, or not UTF-8",
)
ASSEMBLY_CONFLICT = _register(
    "ASSEMBLY_CONFLICT",
    "a projected SKILL.md was edited outside teamlore; move your edit into "
    ".threadshare/memory/skills/<name>/SKILL.md or delete the projection, then run assemble again",
)
ASSEMBLY_STATE_INVALID = _register(
    "ASSEMBLY_STATE_INVALID", "the private record of projected Skills is corrupt"
)
SKILLS_TOO_MANY = _register(
    "SKILLS_TOO_MANY", "the memory tree holds more than 256 Skills; remove some first"
)
MEMORY_CONTEXT_DRIFT = _register(
    "MEMORY_CONTEXT_DRIFT",
    "the team memory (entries, scenes, doctrine) changed since a Skill was drafted against it",
)
SKILL_TARGET_DRIFT = _register(
    "SKILL_TARGET_DRIFT",
    "the SKILL.md a Skill candidate creates or updates is not in the state the candidate expected",
)

# team memory: the batch runner (runner/, docs/runner.md)
RUNNER_BINARY_NOT_FOUND = _register(
    "RUNNER_BINARY_NOT_FOUND", "the runner's CLI is not installed or not executable"
)
RUNNER_PROFILE_INVALID = _register(
    "RUNNER_PROFILE_INVALID",
    "a runner profile does not follow RestrictedExtractionRunner@v1 and may not run",
)
RUNNER_SPAWN_FAILED = _register("RUNNER_SPAWN_FAILED", "the runner process could not be started")
RUNNER_VERSION_PROBE_FAILED = _register(
    "RUNNER_VERSION_PROBE_FAILED", "the runner's CLI did not report its version"
)
RUNNER_TIMEOUT = _register(
    "RUNNER_TIMEOUT", "the runner did not finish within its wall-clock limit; it was killed"
)
RUNNER_EXIT_NONZERO = _register("RUNNER_EXIT_NONZERO", "the runner exited with a non-zero status")
RUNNER_OUTPUT_TOO_LARGE = _register(
    "RUNNER_OUTPUT_TOO_LARGE", "the runner printed more than its output cap; it was killed"
)
RUNNER_OUTPUT_INVALID = _register(
    "RUNNER_OUTPUT_INVALID", "the runner's answer is not the expected contract"
)
RUNNER_OUTPUT_REJECTED = _register(
    "RUNNER_OUTPUT_REJECTED",
    "the runner's answer follows the contract but cites evidence the task did not give",
)
RUNNER_OUTPUT_SECRET = _register(
    "RUNNER_OUTPUT_SECRET", "the runner's answer contains a secret; nothing was staged"
)
RUNNER_NOT_CONFORMANT = _register(
    "RUNNER_NOT_CONFORMANT",
    "this runner profile (binary, version, model, endpoint, limits) has no passing "
    "conformance record; run `teamlore memory reverify-runner`",
)
RUNNER_CONFORMANCE_FAILED = _register(
    "RUNNER_CONFORMANCE_FAILED", "the runner failed the conformance probe"
)
RUNNER_PLAN_NOT_FOUND = _register(
    "RUNNER_PLAN_NOT_FOUND", "no pending runner plan or manifest of this worktree has that digest"
)
RUNNER_PLAN_INVALID = _register(
    "RUNNER_PLAN_INVALID", "the stored plan file is damaged or was edited by hand"
)
RUNNER_PLAN_MISMATCH = _register(
    "RUNNER_PLAN_MISMATCH",
    "what would be sent now differs from the approved plan; make a new plan and approve it",
)
RUNNER_PLAN_OUTDATED = _register(
    "RUNNER_PLAN_OUTDATED",
    "the plan was made by another teamlore version, which plans the same inputs differently "
    "(another plan format)",
)
RUNNER_PLAN_BUSY = _register(
    "RUNNER_PLAN_BUSY", "another teamlore process is running this plan right now"
)
RUNNER_PLAN_ALREADY_RUN = _register(
    "RUNNER_PLAN_ALREADY_RUN", "this plan already ran; its result is staged"
)
RUNNER_PLAN_INDETERMINATE = _register(
    "RUNNER_PLAN_INDETERMINATE",
    "teamlore stopped while this plan was being sent, so the provider may have received it; "
    "it is never sent again: make a new plan and approve that",
)

# the local review page (ui/): refusals of requests that did not come from the person's browser
UI_TOKEN_REQUIRED = _register(
    "UI_TOKEN_REQUIRED", "open the page with the one-time URL `teamlore ui` printed"
)
UI_HOST_REFUSED = _register(
    "UI_HOST_REFUSED", "the request named another host than 127.0.0.1 (DNS rebinding guard)"
)
UI_ORIGIN_REFUSED = _register("UI_ORIGIN_REFUSED", "the request came from another web origin")
UI_PORT_UNAVAILABLE = _register(
    "UI_PORT_UNAVAILABLE", "the review page cannot listen on that port of 127.0.0.1 (in use?)"
)
UI_CSRF_INVALID = _register(
    "UI_CSRF_INVALID", "the form's CSRF token is missing or wrong; reload the page and try again"
)

# agent integrations: install / uninstall / doctor (integrations/, docs/agents.md)
CLIENT_NOT_FOUND = _register(
    "CLIENT_NOT_FOUND", "the agent CLI (claude or codex) is not installed or not on PATH"
)
CLIENT_CONFIG_INVALID = _register(
    "CLIENT_CONFIG_INVALID", "an agent config file does not parse; nothing was changed"
)
CLIENT_CONFIG_UNSAFE = _register(
    "CLIENT_CONFIG_UNSAFE",
    "an agent config file is not a regular file, or a symlink that leads to none (dangling, a "
    "loop, a folder)",
)
CLIENT_CONFIG_UNWRITABLE = _register(
    "CLIENT_CONFIG_UNWRITABLE", "an agent config file or its folder cannot be written"
)
CLIENT_CONFIG_CHANGED = _register(
    "CLIENT_CONFIG_CHANGED",
    "another program changed an agent config file while teamlore was writing it; nothing changed",
)
INTEGRATION_CONFLICT = _register(
    "INTEGRATION_CONFLICT", "an entry with teamlore's name exists that teamlore did not write"
)
NOTHING_INSTALLED = _register(
    "NOTHING_INSTALLED", "teamlore has no recorded installation for that client and scope"
)
