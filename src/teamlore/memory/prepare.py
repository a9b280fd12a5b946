"""Confirm and prepare: a PrepareRequest@v1 → confirmed statements → PromotionPlan@v1 (journal).

Row contract with `promote` (memory-state.sqlite3, seed 000 §2; written here in ONE
`BEGIN IMMEDIATE` transaction, read by promote):

promotion_journal — one row per plan, `status = 'generated'`:
  plan_id              the plan's `planId` (UUID v4, random)
  repository_key,      the owner resolved from the caller's worktree (same as
  worktree_key         plan.owner.repositoryKey / worktreeKey)
  plan_canonical_json  canonical JSON (`core.canonical.canonical_json`) of the complete
                       PromotionPlan@v1 wire form, `planDigest` included (non-null);
                       `PromotionPlan.from_wire(json.loads(...))` re-validates it
  plan_digest          `contracts.digests.plan_digest(plan)` (= plan["planDigest"])
  candidate_ids_json   canonical JSON array of the candidate ids, plan order
                       (plan["candidateRevisions"] has each id's bound `revision`)
  assessment_digest    `current_assessment_digest(conn, candidate_ids)` right after the
                       confirmations were written — promote recomputes it with the same function
                       and voids the plan on any difference
  policy_version       `memory.lint.LINT_POLICY_VERSION` at prepare time
  status, updated_at   'generated', epoch ms
promotion_files — one row per target file (every row is a write; no deletes are planned):
  plan_id, target_path repo-relative path under `.threadshare/memory/` (e.g.
                       `.threadshare/memory/entries/<id>.md`), equal to perFile[].targetPath
  target_blob_hash     git blob OID of the file's current working-tree bytes at prepare time
                       (`digests.git_blob_oid`), NULL when the file did not exist
  sanitized_content    the exact bytes to write (sanitized, linted, canonical entry file)
  sanitized_digest     sha256 of those bytes (= perFile[].sanitizedContentDigest)
  applied              0

Other effects of the same transaction: every statement of every planned candidate has its
assessment row set to its verified support — `typed-fact`/`deterministic` (a renderer
re-verified it) or `human-confirmed`/`human` (listed in the request with matching digests) —
with `revision + 1`; earlier `generated` plans that share a candidate become `voided`. Candidate
rows are not changed (their `revision` stays what the plan binds). A candidate in an `approved`
or `applying` plan cannot be prepared again (`CANDIDATE_LOCKED`).

Promote checks (its own module): owner, plan digest, candidate status `quarantined` + revision,
`current_assessment_digest`, policy version, and each target's blob OID; then writes the bytes.

Pipeline per candidate (`render_candidate`, shared with review so the preview is the plan):
statements → claim units (statements with the same citation set form one unit; one unit per
candidate keeps the candidate's content as the body, several units each get their statements'
texts) → entries: slug ids (`slugs.unique_entry_slug`, never an id already in the tree or the
plan; an `update`/`merge` of an approved entry rewrites that entry's file in place with its id),
provenance = weakest statement, limitations = union, claim support typed-fact | human-confirmed
| mixed, public evidence (repository identity + full commit hashes, repo-relative paths,
`occurred` dates of the cited turns) → sanitize (worktree paths become repo-relative, other home
paths a placeholder) → lint (`LINT_BLOCKED` on any blocking finding of the raw or the sanitized
text: secrets, session ids, provider paths) → bytes. Further approved targets of a merge are
rewritten `deprecated` with `superseded_by` the surviving id.
"""
