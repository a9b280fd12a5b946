"""L2/L3 consolidation: approved entries → scenes and doctrine (docs/memory.md, "Consolidation").

The agent-native path: `synthesize` hands the agent a ConsolidationTask@v1 (the approved entries
new since the last successful run, every scene and the doctrine); the agent answers with a
ConsolidationPatch@v1 that `stage` validates and materializes in one transaction (one
quarantined `consolidation-patch` candidate, or a `no_op` run); review shows each operation as
current vs proposed; prepare and promote write all of the patch's files in one plan.

- `source`: what the approved tree holds now (entries, scenes, doctrine) and the baseline;
- `task`: the ConsolidationTask@v1 and its binding;
- `patch`: the patch rules, heat and capacity, and the materialized files;
- `synthesize`, `staging`, `review`, `prepare`: the operations;
- `journal`: what a promotion of a consolidation re-checks and records;
- `kind`: the `consolidation-patch` candidate kind, registered with promotion when it is
  imported (`ops.memory.review.load_candidate_kinds`).

A package's `__init__` imports none of its modules (docs/architecture.md, "Packages and their
direction"): the operations import them from several threads at once.
"""
