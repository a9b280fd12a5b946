"""The session operations (`index`: sync, status, sessions list|show|search; exclusions,
repositories, the origin secret)."""

# turns per page of `sessions show` without --turn (docs/sessions.md, "Showing a session"); here
# so that the CLI's option declares it without importing the operations (`memory search` runs
# in the same lean module and needs none of them: docs/architecture.md, "A short CLI process")
SHOW_PAGE_TURNS = 100
# sessions `sessions list` shows without --limit, newest first (the result says how many more)
LIST_PAGE_SESSIONS = 100
