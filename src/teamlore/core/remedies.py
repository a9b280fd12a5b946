"""What a person (or an agent) does now about each refusal: the `next` of an error
(docs/seed-conformance.md, "What teamlore returns"). One short line per code; a command it names
is a real `teamlore` command with real flags (tests/core/test_remedies.py checks them against
docs/cli.md). Codes whose summary already ends in its remedy (`...; run promote from the plan's
worktree`) take that one (core/errors.py) and need no line here.
"""

from __future__ import annotations

REVIEW_AGAIN = "Review again (`teamlore memory review`), then confirm anew."

# why teamlore advises a discard, given as its `--reason` (a discard cannot be undone, so one
# run without a terminal needs a reason: `memory discard` refuses it otherwise, exit 2)
CANNOT_BE_PROMOTED = "it cannot be promoted as it is"
BLOCKED_BY_LINT = "blocked by lint"
MEMORY_CHANGED = "team memory changed since it was synthesized"
NOT_ADJUDICATED = "not adjudicated"  # a staged draft whose adjudication waits or failed
CONFIRMATION_TAKEN_BACK = "its confirmation is taken back"  # no operation undoes a stored one


def discard_command(candidate: str, reason: str, *, extract_again: bool = False) -> str:
    """`teamlore memory discard` of `candidate` (an id as the views show it) runnable as printed,
    with or without a terminal: with the `--reason` it needs there (why teamlore advises it);
    `--extract-again` (its turns go back) last."""
    again = " --extract-again" if extract_again else ""
    import shlex  # advice only: a short command's start stays within its budget

    quoted = f"--candidate {shlex.quote(candidate)} --reason {shlex.quote(reason)}"
    return f"teamlore memory discard {quoted}{again}"


NEXT: dict[str, str] = {
    # usage
    "USAGE": "Run the command with `--help` to see its arguments, then call it again.",
    "INVALID_ARGUMENT": "Correct the value the message names (`--help` shows what it accepts).",
    # state and storage
    "STATE_DIR_UNSAFE": "Make the state dir yours and private (chmod 700), or set TEAMLORE_HOME.",
    "CONFIG_INVALID": "Fix config.toml at the line the message names, or move it aside.",
    "DB_CORRUPT": "Rebuild the index with `teamlore sync --rebuild`, or restore it from a backup.",
    "DB_SCHEMA_TOO_NEW": "A newer teamlore wrote it: upgrade (or go back: docs/architecture.md).",
    "DISK_FULL": "Free space on the disk the message names, then retry.",
    "PERMISSION_DENIED": "Fix the owner or mode of the folder the message names (`ls -ld`).",
    "PATH_TOO_LONG": "Give a shorter path (TEAMLORE_HOME, the option or config.toml entry).",
    "STATE_INVALID": "Move the file the message names aside, then run the command again.",
    "LOCK_BUSY": "Let the other teamlore process end (stop a watch with Ctrl-C), then retry.",
    "STATE_READ_ONLY": "Make the state dir writable (its mount, mode or owner) and retry.",
    "SECRET_DAMAGED": "Restore the state dir's `secret` from a backup; else move the dir aside.",
    # sessions
    "SOURCE_UNREADABLE": "Check that the session folder exists and is readable, then sync again.",
    "SOURCE_NOT_FOUND": "Correct the `--source PROVIDER=PATH` path, then sync again.",
    "UNKNOWN_PROVIDER": "Use one of the providers teamlore reads: codex, claude or pi.",
    "SESSION_NOT_FOUND": "Find the session's key with `teamlore sessions list`.",
    "TURN_NOT_FOUND": "See the session's turns with `teamlore sessions show KEY`.",
    "TOOL_NOT_FOUND": "See the turn's tool calls with `teamlore sessions show KEY --turn N`.",
    "WATCH_UNSUPPORTED": "Run commands without it: they work the same, each in its own process.",
    "WATCH_SOCKET_PATH_TOO_LONG": "Use a shorter TEAMLORE_HOME, or run commands without watch.",
    "WATCH_SOCKET_GONE": "Start `teamlore watch` again; until then commands run on their own.",
    "WATCH_NOTIFY_FAILED": "Fix what the message says, then start `teamlore watch` again.",
    # repositories
    "NOT_A_GIT_REPOSITORY": "Run it inside a git worktree, or give the path of one.",
    "BARE_REPOSITORY": "Use a worktree of that repository (`git worktree add`), not the bare one.",
    "REPOSITORY_NOT_TRUSTED": "If you trust it: `git config --global --add safe.directory PATH`.",
    "GIT_FAILED": "Run the same git command in that worktree to see why it failed, then retry.",
    "OWNER_NOT_FOUND": "Register the worktree with `teamlore sync --repository PATH`.",
    "OWNER_AMBIGUOUS": "Name the worktree with `--repository PATH` (`teamlore repo list`).",
    # team memory store
    # the summary states the problem, this the step (said once: not in the message too)
    "MEMORY_NOT_INITIALIZED": "Run `teamlore memory init` in this worktree, then run this again.",
    "MEMORY_FILE_INVALID": "Fix the file the message names; `teamlore memory lint` checks it.",
    "LINT_BLOCKED": "Remove what it names, or discard it (--extract-again keeps its lesson).",
    "UNSAFE_PATH": "Make the path the message names a real folder or file (no symlink); retry.",
    "QUERY_EMPTY": "Give the query at least one word or identifier to search for.",
    "INDEX_OUTDATED": "Run `teamlore sync` once; it re-analyzes the index.",
    "PAYLOAD_TOO_LARGE": "Send less in one request: fewer items or shorter text.",
    "MEMORY_DOCUMENT_NOT_FOUND": "Find its kind and id with `teamlore memory search`.",
    "COMMIT_NOT_FOUND": "Fetch the commit (`git fetch`) or check the hash, then try again.",
    # org
    "ORG_DATABASE_UNAVAILABLE": "Check the `--database` URL and that its server is running.",
    "ORG_DATABASE_URL_INVALID": "Use postgresql://[USER@]HOST[:PORT]/DB, a password in ~/.pgpass.",
    "ORG_URL_HAS_CREDENTIALS": "Give the token in TEAMLORE_ORG_TOKEN (or --org-token-env NAME).",
    "ORG_REPOSITORY_UNKNOWN": "See the org's repositories with `teamlore org status`.",
    "ORG_REPOSITORY_EXISTS": "Each clone is in once (`teamlore org list`); else another `--name`.",
    "ORG_TOKEN_UNKNOWN": "See the live tokens with `teamlore org token list`.",
    "ORG_TOKEN_EXISTS": "Pick another name; to rotate it, `teamlore org token revoke NAME` first.",
    "ORG_PORT_UNAVAILABLE": "Pick a free port with `teamlore org serve --port N`.",
    # models
    "MODEL_NOT_CONFIGURED": "Add base_url, model and api_key_env to a [models.NAME] profile.",
    "MODEL_AUTH_FAILED": "Check the API key in the profile's api_key_env variable.",
    "MODEL_RATE_LIMITED": "Wait a few minutes, or raise the endpoint's rate limit, then retry.",
    "MODEL_UNAVAILABLE": "Check the endpoint is up and reachable, then run the command again.",
    "MODEL_TIMEOUT": "Retry later, or raise the profile's timeout_s.",
    "MODEL_BAD_RESPONSE": "Use a model that answers JSON reliably, or retry the command.",
    "MODEL_REQUEST_REJECTED": "Check the profile's model name and endpoint; the message says why.",
    "EMBEDDINGS_UNAVAILABLE": "Search with `teamlore memory search --lexical` meanwhile.",
    # extraction and adjudication
    "TASK_NOT_FOUND": "Get a fresh task with `teamlore memory recall`.",
    "TASK_NOT_CLAIMABLE": "Recall again (`teamlore memory recall`) and take the tasks it returns.",
    "LEASE_LOST": "Recall again (`teamlore memory recall`) and redo the task within its lease.",
    # a team task submitted again; a personal importId / submissionId reused with another
    # payload says its own (personal/queue.py)
    "SUBMISSION_CONFLICT": "The first submission stands; recall again (`teamlore memory recall`).",
    "BINDING_MISMATCH": "Echo the task's binding exactly as teamlore issued it.",
    "STAGE_REQUEST_INVALID": "Fix the field the message names; a draft's shape: recall's "
    "guidance.draftShape.",
    "BATCH_TOO_LARGE": "Send at most 8 candidates per batch (64 drafts per adjudication).",
    "EVIDENCE_NOT_IN_TASK": "Cite only evidence ids from this task's evidenceCatalog.",
    "STATEMENT_UNCITED": "Give every statement at least one evidence id from the task.",
    "ADJUDICATION_INVALID": "Decide every draft once, with targets from its own recall results.",
    "ADJUDICATION_FAILED": "Review the failed drafts with `teamlore memory review`.",
    "APPROVED_PROJECTION_PARTIAL": "Fix the file it names as `teamlore memory lint` says; retry.",
    # personal memory
    "CONTEXT_UNAVAILABLE": "Use a context memory_status lists; `teamlore personal config --scope`.",
    "INVALID_IMPORT_ID": "Use 1-128 characters of A-Z, a-z, 0-9, _ or - for importId.",
    "INVALID_IMPORT_LABEL": "Give a short, single-line source label.",
    "INVALID_IMPORT_BASIS": "Use one of the basis values the tool's schema lists.",
    "INVALID_IMPORT_AUTHOR": "Pass `--author` as user, agent, third_party, mixed or unknown.",
    "INVALID_TEXT_SIZE": "Send non-empty text within the limit the message names.",
    "INIT_DISABLED": "Allow it with `teamlore personal config --allow agent_observation`.",
    "IMPORT_DISABLED": "Allow it with `teamlore personal config --allow document_import`.",
    "SUBMISSION_DISABLED": "Allow it with `teamlore personal config --allow user_explicit`.",
    "WRITER_DISABLED": "Choose a model with `teamlore personal config --model-profile NAME`.",
    "UNSUPPORTED_FILE_TYPE": "Import a regular .md or .markdown file (not a symlink).",
    "FILE_NOT_FOUND": "Check the file's path, then run the command again.",
    "PATH_NOT_FOUND": "Check the path, then run the command again.",
    "CWD_GONE": "Go to a folder that exists (`cd`), then run the command again.",
    "PATH_NOT_UTF8": "Rename the folder to a UTF-8 name (`convmv -f latin1 -t utf8`).",
    "INVALID_ENCODING": "Save the file as UTF-8 without NUL bytes, then import it again.",
    "EMPTY_DOCUMENT": "Import a file that has some text in it.",
    "DOCUMENT_TOO_LARGE": "Split the file into parts under 256 KiB and import each.",
    "IMPORT_CHUNK_TOO_LARGE": "Split the long paragraph or code block into parts under 32 KiB.",
    # a secret's; personal data's (pii.*) says how to let it pass (personal/safety.py)
    "SENSITIVE_CONTENT_REJECTED": "Remove it and send again.",
    "PERSONAL_DOCUMENT_INVALID": "Fix the document's sections by hand; `teamlore personal show`.",
    "PERSONAL_DOCUMENT_TOO_LARGE": "Shorten the document by hand so it stays under 16 KiB.",
    "UNSAFE_FILE": "Replace the symlink or hard link in personal/ with a regular file.",
    "JOB_NOT_FOUND": "See the Writer's jobs with `teamlore personal status`.",
    "NOTHING_TO_RETRY": "Check the job's state with `teamlore personal status`.",
    "INVALID_DECISION": "Nothing to do: the Writer retries; `teamlore personal status` shows it.",
    "INVALID_REQUEST_REFERENCE": "Nothing to do: the Writer retries with a fresh request.",
    "INVALID_EVIDENCE_REFERENCE": "Nothing to do: the Writer retries, then dead-letters the job.",
    "MISSING_EVIDENCE": "Nothing to do: the Writer retries; `teamlore personal status` shows it.",
    "INVALID_TARGET_REFERENCE": "Nothing to do: the Writer retries against the current documents.",
    "DUPLICATE_SECTION_OPERATION": "Nothing to do: the Writer retries the batch.",
    "UNAUTHORIZED_SCOPE": "Allow the scope with `teamlore personal config --scope`, or leave it.",
    "UNAUTHORIZED_WRITE": "Nothing was written; check `teamlore personal config` for that scope.",
    "UNAUTHORIZED_PROVENANCE": "Allow that class with `teamlore personal config --allow CLASS`.",
    "UNAUTHORIZED_SOURCE": "Send the observation through memory_init, an import or a user turn.",
    "UNAUTHORIZED_FORGET_EVIDENCE": "Delete the section by hand if it should go; imports never do.",
    "UNAUTHORIZED_IMPORT_OVERWRITE": "Edit that section by hand; an import only adds beside it.",
    "UNREGISTERED_PROJECT": "Register the worktree with `teamlore sync --repository PATH`.",
    "SENSITIVE_INPUT": "Remove the secret from what you send; it was not queued.",
    "OVERSIZED_OBSERVATION": "Send a shorter observation (with the documents, under 128 KiB).",
    "STALE_LEASE": "Nothing to do: another Writer run picks the job up again.",
    "STALE_REVISION": "Nothing to do: the Writer retries against the changed document.",
    "RECOVERY_CONFLICT": "Keep your hand edit or the staged one, then `teamlore personal retry`.",
    "MODEL_CALL_FAILED": "Check the model profile, then `teamlore personal retry` the job.",
    # recall's window; `sessions search|list` say theirs (`SESSIONS_WINDOW_NEXT`)
    "WINDOW_INVALID": (
        "Give `since` and `until`, since first (recall: canonical UTC, 366 days at most)."
    ),
    "RECALL_REQUEST_INVALID": "Fix the field the message names (docs/extraction.md lists them).",
    # promotion
    # the README's flow: a person makes plans with `confirm`; `prepare` takes a request (a
    # script's, an agent's: MCP callers are named its tool)
    "PLAN_NOT_FOUND": (
        "Make a plan with `teamlore memory confirm` (from a request: `memory prepare`)."
    ),
    "PLAN_DIGEST_MISMATCH": "Review the plan again (`teamlore memory review`) and use its digest.",
    "PLAN_STATE_INVALID": "Check the plan with `teamlore memory status`; prepare again if void.",
    "PLAN_CORRUPT": "Make a new plan with `teamlore memory confirm` (or `memory prepare`).",
    "PROMOTION_ROLLBACK_REQUIRED": "Restore what `git status` shows changed, then promote again.",
    "PROMOTION_TARGET_DRIFT": "Review again (`teamlore memory review`) and prepare a new plan.",
    "CANDIDATE_NOT_FOUND": "See what awaits review with `teamlore memory review`.",
    "CANDIDATE_LOCKED": "Finish the plan it names: `teamlore memory promote --plan ID`.",
    "CONFIRMATION_DRIFT": "Confirm the changed statement again with `teamlore memory confirm`.",
    "UNVERIFIED_CLAIM": "Confirm the statement with `teamlore memory confirm`, or discard it.",
    "TARGET_DRIFT": "Discard it with `teamlore memory discard --extract-again`, then recall.",
    "DUPLICATE_ENTRY": "Discard it (`teamlore memory discard`); --extract-again to adjudicate.",
    "PREPARE_REQUEST_INVALID": "Fix the field the message names; `teamlore memory prepare --help`.",
    "CONSOLIDATION_INVALID": "Fix the patch as details.reason says, then stage it again.",
    "CONSOLIDATION_PENDING": "Promote or discard the pending one (`teamlore memory review`).",
    "CONSOLIDATION_DRIFT": "Synthesize again with `teamlore memory synthesize`.",
    "UNREGISTERED_WORKSPACE": "Register the worktree with `teamlore sync --repository PATH`.",
    "READ_DISABLED": "Use `teamlore mcp --global`, or allow its scope: `teamlore personal config`.",
    "STATUS_UNAVAILABLE": "Ask the server launched with the tier that made it (init or relay).",
    "INVALID_SUBMISSION_ID": "Use the submissionId and conversationId your relay call returned.",
    "INVALID_CLIENT_ID": "Use 1-128 characters of A-Z, a-z, 0-9, _ or - for `--client-id`.",
    # assemble
    "ASSEMBLY_MERGE_UNRESOLVED": "Resolve the merge in the lines named, then assemble again.",
    "ASSEMBLY_STALE": "Run `teamlore memory assemble --provider NAME`; commit what it wrote.",
    "ASSEMBLY_TARGET_INVALID": "Make CLAUDE.md / AGENTS.md a regular UTF-8 file, then assemble.",
    "ASSEMBLY_CONFLICT": "Move your edit into .threadshare/memory/skills, then assemble again.",
    "ASSEMBLY_STATE_INVALID": "Delete the Skill assembly record, then `teamlore memory assemble`.",
    "SKILL_TARGET_DRIFT": "Discard it with `teamlore memory discard --extract-again`, then recall.",
    # runner
    "RUNNER_BINARY_NOT_FOUND": "Install the runner's CLI (claude or codex) and put it on PATH.",
    "RUNNER_PROFILE_INVALID": "Fix the profile the message names, or use a built-in runner.",
    "RUNNER_SPAWN_FAILED": "Check the runner's CLI starts by hand (`claude --version`).",
    "RUNNER_VERSION_PROBE_FAILED": "Check the runner's CLI starts by hand, then reverify it.",
    "RUNNER_TIMEOUT": "Approve again later, or raise the limit it names, reverify and plan again.",
    "RUNNER_EXIT_NONZERO": "Fix what the message quotes, then approve the plan again.",
    "RUNNER_OUTPUT_TOO_LARGE": "Plan less: `teamlore memory extract --runner NAME --limit 1`.",
    "RUNNER_OUTPUT_INVALID": "Approve the same plan again; use a stronger model if it repeats.",
    "RUNNER_OUTPUT_REJECTED": "Approve the same plan again; nothing of this answer was staged.",
    "RUNNER_OUTPUT_SECRET": (
        "Exclude the session it names (`teamlore sessions exclude KEY`), else plan again."
    ),
    "RUNNER_NOT_CONFORMANT": "Run the `reverify-runner` command the message names, then approve.",
    "RUNNER_CONFORMANCE_FAILED": "Update the runner's CLI, then `teamlore memory reverify-runner`.",
    "RUNNER_PLAN_NOT_FOUND": "Make a plan with `teamlore memory extract --runner NAME`.",
    "RUNNER_PLAN_INVALID": "Make a new plan with `teamlore memory extract --runner NAME`.",
    "RUNNER_PLAN_MISMATCH": "Make a new plan with `teamlore memory extract --runner NAME`.",
    "RUNNER_PLAN_OUTDATED": "Make a new plan with `teamlore memory extract --runner NAME`.",
    "RUNNER_PLAN_INDETERMINATE": "Make a new plan (`teamlore memory extract --runner NAME`).",
    "RUNNER_PLAN_BUSY": "Wait for the other run of this plan to finish.",
    "RUNNER_PLAN_ALREADY_RUN": "Review what it staged with `teamlore memory review`.",
    # review page
    "UI_TOKEN_REQUIRED": "Open the one-time URL `teamlore ui` printed.",
    "UI_CSRF_INVALID": "Reload the page and submit the form again.",
    "UI_HOST_REFUSED": "Open the page at the 127.0.0.1 URL `teamlore ui` printed.",
    "UI_ORIGIN_REFUSED": "Use the page `teamlore ui` opened, not another site.",
    "UI_PORT_UNAVAILABLE": "Pick a free port with `teamlore ui --port N`.",
    # agent clients
    "CLIENT_NOT_FOUND": "Install the agent CLI (claude or codex) and put it on PATH.",
    "CLIENT_CONFIG_INVALID": "Fix the config file at the line the message names, then retry.",
    "CLIENT_CONFIG_UNSAFE": "Point the link at a settings file, or use a regular file; then retry.",
    "CLIENT_CONFIG_UNWRITABLE": "Fix the config file's owner or mode, then retry.",
    "CLIENT_CONFIG_CHANGED": "Close the program that edits the config file, then retry.",
    "INTEGRATION_CONFLICT": "Remove or rename your entry, or `teamlore install --force`.",
    "NOTHING_INSTALLED": "Check what is installed with `teamlore doctor`.",
    # a summary ends in its remedy, said here in full (the text view prints it after the
    # message: "narrow it" alone would not say how)
    "REBUILD_LOSES_HISTORY": "Confirm with `teamlore sync --rebuild --discard-history`.",
    "REPOSITORY_NOT_REGISTERED": "Register it: `teamlore sync --repository PATH` (`.` for here).",
    "QUERY_TOO_BROAD": "Narrow the window (`--since`, `--until`) or add `--query` terms.",
    "TASK_STALE": "Recall again (`teamlore memory recall`) and work from the new task.",
    "ADJUDICATION_STALE": "Stage the drafts again (`teamlore memory stage`).",
    "PLAN_VOIDED": REVIEW_AGAIN,
    "PROMOTION_CANDIDATE_DRIFT": REVIEW_AGAIN,
    "PROMOTION_ASSESSMENT_DRIFT": REVIEW_AGAIN,
    "PROMOTION_POLICY_DRIFT": REVIEW_AGAIN,
    "CANDIDATE_STALE": "Review again (`teamlore memory review`) to see its state now.",
    "SKILLS_TOO_MANY": "Remove Skills from .threadshare/memory/skills until 256 remain.",
    # a staged Skill's turns are extracted: a recall alone offers nothing (staging itself,
    # whose task is still open, advises recalling again)
    "MEMORY_CONTEXT_DRIFT": (
        "Discard it with `teamlore memory discard --extract-again`, then recall."
    ),
}

# WINDOW_INVALID's `next` for `sessions search` and `sessions list`, whose window is any two ISO
# dates or instants (no 366-day limit, no canonical form: that is recall's)
SESSIONS_WINDOW_NEXT = "Give `--since` before `--until` (ISO dates or instants, any span)."

# the same, for a refusal an MCP tool returns, where `NEXT` sends a person to `--help`: a tool's
# caller has its input schema instead (core/errors.py, `tool_next_step`)
TOOL_NEXT: dict[str, str] = {
    "USAGE": "List the server's tools (tools/list) and call one of them as its schema says.",
    "INVALID_ARGUMENT": "Correct the argument the message names, as the tool's schema says.",
    "PREPARE_REQUEST_INVALID": "Fix the field the message names, as the tool's schema says.",
}

# a `next` that names a teamlore command for which an MCP tool exists names that tool too when a
# tool returns the refusal (core/errors.py, `naming_tools`): the agent reading it is already
# connected to the server, and may also run the CLI in its host, so it gets both; keys are the
# command's words after `teamlore ` (a `next` may leave that word out: "`memory status` lists")
TOOL_FOR_COMMAND: dict[str, str] = {
    "memory recall": "threadshare_memory_recall",
    "memory stage": "threadshare_memory_stage",
    "memory search": "threadshare_memory_search",
    "memory status": "threadshare_memory_status",
    "memory review": "threadshare_memory_review",
    "memory prepare": "threadshare_memory_prepare",
    "memory promote": "threadshare_memory_promote",
    "memory discard": "threadshare_memory_discard",
    "memory synthesize": "threadshare_memory_synthesize",
    "memory assemble": "threadshare_memory_assemble",
    "memory extract": "threadshare_memory_extract_preview",
    "personal show": "memory_read",
    "org search": "threadshare_org_search",
    "org status": "threadshare_org_status",
}
