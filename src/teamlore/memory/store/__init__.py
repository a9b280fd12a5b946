"""The team-memory store: the `.threadshare/memory/` tree and what indexes it.

`layout` (paths and document kinds), `frontmatter` and `documents` (the file dialect), `slugs`
(entry ids), `lint` (what may reach git), `state_db` (the private workflow DB), `projection`
(approved entries indexed from the tree) and `search` (over the projection).
"""
