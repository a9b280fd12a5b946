"""Operations on the org index (docs/org.md): repositories, sync, search, status, tokens."""
