"""An organisation's memory across repositories (docs/org.md): the reviewed memory documents of
many clones, indexed in one store (embedded SQLite, or PostgreSQL for a team server), searched
with the ranking of `memory search` and attributed to their repository."""
