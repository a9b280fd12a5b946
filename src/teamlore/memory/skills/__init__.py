"""Skills: the team's repeatable procedures (`skills/<name>/SKILL.md`, docs/assemble.md).

`kind` registers the `skill` candidate kind with promotion when it is imported
(`ops.memory.review.load_candidate_kinds`); this file imports none of the package's modules
(docs/architecture.md, "Packages and their direction").
"""
