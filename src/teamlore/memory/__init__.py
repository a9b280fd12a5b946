"""Team memory, in packages that read as its pipeline (docs/architecture.md):

`extraction` (sessions → candidates) → `promotion` (review → plan → files in git) → `store` (the
tree, its lint, projection and search) → `consolidation` (scenes, doctrine) and `skills` →
`assemble` (what agents read). `status` summarises all of it for one worktree.
"""
